"""What the write path writes, read row by row: the share of standalone rows, and a sample to judge.

    PYTHONPATH=. .venv/bin/python bench/quality.py ../shared/data/locomo-dev.json [--rows 200] [--seed 9]
    PYTHONPATH=. .venv/bin/python bench/quality.py ../shared/data/locomo-dev.json --shingles .

The conversations are played through the real write path exactly as ``bench/locomo.py`` plays
them (each session twice, as two private chats, the configured mind; offline by default). Then a
sample of the rows written about the humans (``--rows``, drawn with a fixed ``--seed``) is
checked, each row alone, by three automatic tests:

- **subject**: the row begins with whom it is about — a ``u:`` id (``u:42``, ``u:42's``), the
  persona's name, or another capitalised name ("Warren said…", "Dance gives u:42…"); not a
  pronoun, an article, a preposition, an adverb, a gerund or a clause ("It was…", "The…",
  "On Friday…", "Lately,…", "Running…", "When…"), nor a word followed by a comma.
- **no dangling reference**: every ``it``/``its``/``this``/``these``/``those``/``he``/``she``/
  ``him``/``her`` — "those letters" included: a demonstrative points outside the row as much
  as "it" does — and every ``there`` not followed by ``is/are/was/were``, and every ``that``
  at the end of the row or before punctuation, has something before it in the same row it can
  point at: a capitalised word after the first, a number, a quoted title, or a word after an
  article, a number or a possessive ("a bike", "their dog", "u:42's studio"). ``they``/``them``/
  ``their`` are not counted: the rows use them for their own subject.
- **one sentence**: at most 200 characters, ending in one full stop, no question mark, and no
  sentence break inside (``write.validation.is_one_sentence``).

A row is *standalone* when it passes all three. The checks are written here on purpose, apart
from the mind's own rules (``minds/offline/references.py``): a bench that asked the mind's code
whether the mind's rows are good would learn nothing. They are crude — a row can pass them and
still say little ("u:42 is swamped.") — so the bench also prints ``--show`` sampled rows with
their verdicts for a person to read.

``--shingles ROOT`` prints instead every run of 7 words shared by a ``.py`` or ``.md`` file under
ROOT and a turn of the dev file (lower-cased words ``[a-z0-9']+``): our tests and docstrings are
written in our own words, and the count must be 0.

LoCoMo (Maharana et al., ACL 2024) is CC BY-NC 4.0: it is read for evaluation only.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import attrs
import trio

import persona_memory as pm
from persona_memory.compose import make_embedder
from persona_memory.write.validation import is_one_sentence

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import play  # noqa: E402  (the same playing as the recall bench)

_TOKEN = re.compile(r"u:\d+(?:'s)?|\"[^\"]+\"|'[^']+'|[A-Za-z0-9]+(?:'[A-Za-z]+)?|[^\sA-Za-z0-9]")
_POINTING = frozenset({"it", "its", "it's", "this", "these", "those", "he", "she", "him", "her", "there", "that"})
_EXISTENTIAL = frozenset({"is", "are", "was", "were", "'s"})
_AFTER = frozenset(
    """a an the my your his her its our their some two three four five six seven eight nine ten
    every each another first second new old""".split()
)
_FUNCTION = frozenset(
    """a an the and or but if so of to in on at by for with from about into as than that this
    these those there here it its is are was were be been do does did have has had will would
    can could should may might must not no very too just really also i me my we us our you
    your he him his she her they them their what which who when where why how all any some
    such own same other more most much many""".split()
)
_BAD_OPENERS = frozenset(
    """it its it's this that these those there here they he she his her we our you your the a
    an some when if while after before since because as so and but or being one each every
    everything something nothing everyone someone on in at for with from to by of about
    during over under sometimes today yesterday tomorrow tonight now then still also just
    once last next even maybe perhaps overall plus anyway""".split()
)


@attrs.frozen
class Verdict:
    subject: bool
    referenced: bool
    one_sentence: bool

    @property
    def standalone(self) -> bool:
        return self.subject and self.referenced and self.one_sentence


def has_subject(text: str) -> bool:
    """The row begins with whom it is about (see the module docstring)."""
    first = text.split(" ", 1)[0]
    if re.fullmatch(r"u:\d+(?:'s)?", first):
        return True
    word = first.strip(".;:'\"")
    if word.endswith(",") or word.lower().endswith(("ing", "ly")):
        return False
    return bool(word[:1].isupper() and word.lower() not in _BAD_OPENERS)


def has_no_dangling_reference(text: str) -> bool:
    """Every pointing word has something before it in the row (see the module docstring)."""
    tokens = _TOKEN.findall(text)
    for i, token in enumerate(tokens):
        lower = token.lower()
        if lower not in _POINTING:
            continue
        following = tokens[i + 1].lower() if i + 1 < len(tokens) else ""
        if lower == "there" and following in _EXISTENTIAL:
            continue
        if lower == "that" and following[:1].isalnum():
            continue  # a determiner or a clause: not counted
        if not _points_at_something(tokens, i):
            return False
    return True


def _points_at_something(tokens: list[str], index: int) -> bool:
    if index > 0 and tokens[0][:1].isupper() and tokens[0].lower() not in _BAD_OPENERS:
        return True  # a named subject: "Warren said he would…"
    for j in range(1, index):
        token, before = tokens[j], tokens[j - 1].lower()
        if token[:1] in "\"'" and len(token) > 2 or token[:1].isdigit():
            return True
        if token[:1].isupper() and not token.startswith("u:"):
            return True
        if token[:1].isalpha() and token.lower() not in _FUNCTION and (
            before in _AFTER or before.endswith("'s") or before[:1].isdigit()
        ):
            return True
    return False


def one_sentence(text: str) -> bool:
    """At most 200 characters, one full stop at the end, no question (see the module docstring)."""
    return len(text) <= 200 and text.endswith(".") and not text.endswith("..") and "?" not in text and is_one_sentence(text)


def verdict(text: str) -> Verdict:
    return Verdict(has_subject(text), has_no_dangling_reference(text), one_sentence(text))


async def written_rows(path: str, config: str | None, conversations: int | None) -> list[pm.MemoryRow]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if conversations:
        data = data[:conversations]
    with tempfile.TemporaryDirectory() as tmp:
        overrides = {"storage.path": str(Path(tmp) / "quality.db"), "supervisor.shutdown_deadline_seconds": 600.0}
        settings = pm.load_settings(config, overrides)
        clock = pm.ManualClock(datetime(2023, 1, 1, tzinfo=timezone.utc))
        rows: list[pm.MemoryRow] = []
        async with pm.open_memory(settings, clock=clock, embedder=make_embedder(settings)) as memory:
            for i, sample in enumerate(data):
                conv, _, _ = await play(memory, clock, sample, i)
                for uid in sorted(conv.uids.values()):
                    rows += await memory.memories_about(uid)
    return sorted(rows, key=lambda r: (r.persona, r.id or 0))


def shingles(dev_path: str, root: str, n: int = 7) -> int:
    """Print and count the runs of ``n`` words shared by our files and the dev file's turns."""
    words = lambda text: re.findall(r"[a-z0-9']+", text.lower().replace("\u2019", "'"))
    grams: set[tuple[str, ...]] = set()
    for sample in json.loads(Path(dev_path).read_text(encoding="utf-8")):
        for key, turns in sample["conversation"].items():
            if re.fullmatch(r"session_\d+", key):
                for turn in turns:
                    w = words(turn["text"])
                    grams.update(tuple(w[i : i + n]) for i in range(len(w) - n + 1))
    found = 0
    for file in sorted([*Path(root).rglob("*.py"), *Path(root).rglob("*.md")]):
        if {".venv", ".git", "node_modules"} & set(file.parts):
            continue
        w = words(file.read_text(encoding="utf-8", errors="replace"))
        for i in range(len(w) - n + 1):
            if tuple(w[i : i + n]) in grams:
                found += 1
                print(f"{file}: {' '.join(w[i : i + n])}")
    print(f"{n}-word runs shared with the dev file: {found}")
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", help="a LoCoMo-format JSON file")
    parser.add_argument("--config", help="settings over the defaults (e.g. a real mind)")
    parser.add_argument("--conversations", type=int, help="play only the first N conversations")
    parser.add_argument("--rows", type=int, default=200, help="how many written rows to check")
    parser.add_argument("--show", type=int, default=20, help="how many of them to print")
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--shingles", metavar="ROOT", help="check ROOT's files for 7-word runs of the dev file")
    args = parser.parse_args(argv)
    if args.shingles:
        sys.exit(1 if shingles(args.path, args.shingles) else 0)
    rows = [r for r in trio.run(written_rows, args.path, args.config, args.conversations) if r.subject.startswith("u:")]
    sample = random.Random(args.seed).sample(rows, min(args.rows, len(rows)))
    verdicts = [verdict(r.text) for r in sample]
    share = lambda flag: 100.0 * sum(map(flag, verdicts)) / max(1, len(verdicts))
    print(f"rows written about the humans: {len(rows)}; sample of {len(sample)} (seed {args.seed})")
    print(f"subject present: {share(lambda v: v.subject):.1f}%  no dangling reference: "
          f"{share(lambda v: v.referenced):.1f}%  one sentence: {share(lambda v: v.one_sentence):.1f}%")
    for row, v in list(zip(sample, verdicts))[: args.show]:
        marks = "".join(mark if ok else "-" for mark, ok in (("S", v.subject), ("R", v.referenced), ("1", v.one_sentence)))
        print(f"  [{marks}] {row.importance} {row.kind:<12} {row.text}")
    every = [verdict(r.text) for r in rows]  # the sample moves when the rows do: this does not
    print(f"every row ({len(every)}): standalone "
          f"{100.0 * sum(v.standalone for v in every) / max(1, len(every)):.1f}%")
    print(f"standalone: {share(lambda v: v.standalone):.1f}%")


if __name__ == "__main__":
    main()
