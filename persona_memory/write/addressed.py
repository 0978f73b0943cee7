"""Whom a chat line speaks to: the people it calls by name. Pure: no I/O.

A row about a person may cite only lines that person said or lines said to them
(``validation``'s group evidence rule); this module finds the second kind.

Rules:
- A line calls someone by name when it opens with the name, alone or after a word of
  greeting or reaction and maybe one more word ("Cara, how was Lisbon?", "Hey Cara!", "Wow,
  Cara!", "Thanks, Cara.", "Great news Cara!", "Thanks so much, Cara!",
  "Thanks u:17:", "Thanks Cara - …"), closes with it after a comma ("How was Lisbon, Cara?"), holds it between a
  comma and an end mark ("That's great, Cara! Tell me more."), or holds it after an ``@``
  ("@Cara"). A name said inside the sentence ("As Cara said, I'm moving") calls
  nobody.
- A name is someone's display name or any word of it, found as ``guards.name_regex`` finds
  names (any case; a name that is also a common word only capitalised), or their ``u:`` id or
  a persona's slug.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..text.names import name_regex
from ..text.plain import plain

_CALLED = r"(?P<who>u:\d+|[^\W\d_][\w'-]*(?:\s+[^\W\d_][\w'-]*)?)"
_GREETING = (
    r"(?:hey|hi|hello|hiya|yo|ok|okay|oh|so|thanks|thank you|dear|well|and|but|listen|look|sorry|"
    r"congrats|congratulations|morning|good morning|evening|good evening|welcome|welcome back|"
    r"wow|woah|whoa|yeah|yes|yep|yay|aw+|omg|haha+|great|nice|cool|awesome|amazing|sure|no|nope|"
    r"hmm+|ah+|ooh+|gosh|geez|cheers|right|true|exactly|totally|absolutely|of course)"
)
# the greeting may take one more word before the name: "Great news John!", "Thanks so much, Cara."
_OPENING = re.compile(
    rf"^[^\w@]*(?:{_GREETING}(?:\s+(?-i:[a-z]+))?\b[,!]?\s*)?@?{_CALLED}\s*(?:[,:!?.]|\s[-–—]|$)", re.IGNORECASE
)
_CLOSING = re.compile(rf",\s*@?{_CALLED}\s*[.!?]*[^\w]*$", re.IGNORECASE)
# A name between a comma and an end mark, inside the line: "That's great, Cara! Tell me more."
_INSIDE = re.compile(rf",\s*@?{_CALLED}\s*[.!?]+(?=\s|$)", re.IGNORECASE)
_AT = re.compile(r"@(?P<who>u:\d+|[^\W\d_][\w'-]*)")


def called(text: str, people: Mapping[str, Sequence[str]]) -> frozenset[str]:
    """The refs of ``people`` (ref → the names they go by) whom ``text`` calls by name."""
    text = plain(text)
    words = [m["who"] for pattern in (_OPENING, _CLOSING) if (m := pattern.search(text))]
    words += [m["who"] for m in _INSIDE.finditer(text)]
    words += [m["who"] for m in _AT.finditer(text)]
    found = set()
    for word in words:
        tries = (word, word.split()[0]) if " " in word else (word,)
        for ref, names in people.items():
            if any(t.casefold() == ref.casefold() for t in tries) or any(
                name_regex(form).fullmatch(t) for name in names for form in _forms(name) for t in tries
            ):
                found.add(ref)
    return frozenset(found)


def _forms(name: str) -> tuple[str, ...]:
    name = name.strip()
    parts = tuple(p for p in name.split() if len(p) >= 2)
    return (name, *parts) if len(parts) > 1 else (name,) if name else ()
