// The note's live counter: "N / 400" while typing, red past the limit. The server counts and
// refuses on its own; this only tells the person early. Characters are counted as the server
// counts them (code points, a line break as one).
"use strict";
(function () {
  const box = document.getElementById("note");
  const counter = document.getElementById("note-count");
  if (!box || !counter) return;
  const limit = Number(box.dataset.limit);
  function update() {
    const used = Array.from(box.value.replace(/\r\n?/g, "\n")).length;
    counter.textContent = used + " / " + limit;
    counter.classList.toggle("over", used > limit);
  }
  box.addEventListener("input", update);
  update();
})();
