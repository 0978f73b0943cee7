"""What a room is searched by: its opener (the block's topic) or a message (the recall note's
query), less the names of who is in the room. Pure.

Rules:
- The display names of the humans present, and the names of the personas in the room, are
  taken out — the whole name and each word of it of two letters or more — with a possessive
  after them ("Dana's" goes whole). In an opener a name says whom it is about, and the block
  already groups its lines by whom they concern: left in, the name would match only the lines
  whose transcript happened to say it, and pull them ahead of the lines about what was asked.
- A name is found as everywhere else (``text.names.name_regex``): a whole word in any case,
  except a name that is also a common word ("Will", "May"), found only capitalised.
- The rest stays as written, its spaces and the commas the names leave tidied. What holds no
  word BM25 would search by but greetings (``lexical.terms`` less ``GREETINGS``: "Hi Dan!",
  "How are you, Warren?") is nothing, which the callers read as no topic: its vector would
  rank the lines by how much they sound like a greeting.
"""

from __future__ import annotations

import functools
import re
from typing import Iterable

from ..ids import persona_name
from ..text.names import name_regex
from .lexical import terms

GREETINGS = frozenset(terms("hi hey hello hiya howdy yo"))
"""The BM25 terms of the words that open a chat and say nothing about what it is about."""

_POSSESSIVE = r"(?:['\u2019]s?(?!\w))?"
_LOOSE_SPACE = re.compile(r"\s+")
_SPACE_BEFORE_MARK = re.compile(r"\s+([,.;:!?])")
_LEADING_MARKS = re.compile(r"^[\s,.;:!?]+")
_COMMA_BEFORE_MARK = re.compile(r",(?=[,.;:!?])")


@functools.lru_cache(maxsize=1024)
def _name_pattern(name: str) -> re.Pattern[str] | None:
    """One pattern for a name and the words of it, longest first, each with its possessive."""
    words = sorted({name, *name.split()}, key=len, reverse=True)
    parts = []
    for word in words:
        if len(word) < 2 or not any(c.isalpha() for c in word):
            continue
        found = name_regex(word)
        flags = "(?i:" if found.flags & re.IGNORECASE else "(?:"
        parts.append(f"{flags}{found.pattern}){_POSSESSIVE}")
    return re.compile("|".join(parts)) if parts else None


def without_names(text: str, names: Iterable[str]) -> str:
    """``text`` with each of ``names`` (and every word of one) taken out; spaces tidied."""
    folded = text.casefold()
    taken = False
    for name in names:
        if not any(word.casefold() in folded for word in name.split()):
            continue  # no word of it anywhere in the text: nothing to look for
        pattern = _name_pattern(name.strip())
        if pattern is not None:
            text, found = pattern.subn(" ", text)
            taken = taken or found > 0
    if not taken:
        return text.strip()
    text = _SPACE_BEFORE_MARK.sub(r"\1", _LOOSE_SPACE.sub(" ", text))
    text = _COMMA_BEFORE_MARK.sub("", text)
    return _LEADING_MARKS.sub("", text).strip()


def searched_text(text: str, humans: Iterable[str], personas: Iterable[str]) -> str:
    """What a room's opener or message is searched by: ``text`` without the display names of
    ``humans`` and the names of the ``personas`` (slugs); ``""`` when nothing else is said."""
    left = without_names(text, [*humans, *(persona_name(p) for p in personas)])
    return left if any(term not in GREETINGS for term in terms(left)) else ""
