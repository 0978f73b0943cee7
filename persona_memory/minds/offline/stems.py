"""Lexical likeness of two memory sentences: normalised content words and their overlap.

Rules:
- A sentence's *content stems* are its words, lower-cased, with ``u:`` ids, stop words and
  punctuation removed, each cut to a crude stem (``sold`` → ``sell``, ``plays`` → ``play``,
  ``moving`` → ``mov``): the same word in two forms gives the same stem, which is all routing
  and de-duplication need. A few words that name the same thing share a stem (``job`` and
  ``works``; ``flat`` and ``apartment``; ``husband`` and ``wife``). A negation ("not",
  "never", "no longer", "n't") is kept as the marker ``not``.
- Likeness is Jaccard overlap of two stem sets: 1.0 for the same words, 0.0 for none shared.
"""

from __future__ import annotations

import functools

import re

from .lexicon import STOPWORDS

_WORD = re.compile(r"u:\d+|\d{4}(?:-\d{2}){0,2}|[a-z0-9]+(?:'[a-z]+)?")
_NEGATIONS = frozenset({"not", "no", "never", "nor", "longer", "anymore"})
_IRREGULAR = {
    "sold": "sell",
    "bought": "buy",
    "went": "go",
    "gone": "go",
    "goes": "go",
    "left": "leave",
    "quit": "quit",
    "was": "be",
    "were": "be",
    "is": "be",
    "are": "be",
    "has": "have",
    "had": "have",
    "did": "do",
    "does": "do",
    "got": "get",
    "took": "take",
    "made": "make",
    "met": "meet",
    "ran": "run",
    "kids": "kid",
    "children": "kid",
    "child": "kid",
    "flats": "flat",
    "apartment": "flat",
    "apartments": "flat",
    "job": "work",
    "jobs": "work",
    "works": "work",
    "working": "work",
    "worked": "work",
    "divorced": "divorce",
    "married": "marry",
    "wife": "spouse",
    "husband": "spouse",
}


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A crude, consistent stem of one lower-case word (remembered: chat repeats its words)."""
    word = word.removesuffix("'s")
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or word[0].isdigit():
        return word
    for suffix, keep in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith("ss"):
                break
            word = word[: -len(suffix)] + keep
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


@functools.lru_cache(maxsize=1 << 12)
def content_stems(text: str) -> frozenset[str]:
    """The stems that carry a sentence's meaning (see the module rules). Remembered for the
    last few thousand texts: a reader asks it of each row twice (is it known, is it unique)."""
    out: set[str] = set()
    lowered = text.casefold().replace("’", "'")
    for word in _WORD.findall(lowered):
        if word.startswith("u:"):
            continue
        if word in _NEGATIONS or word.endswith("n't"):
            out.add("not")
            continue
        if word in STOPWORDS:
            continue
        out.add(stem(word))
    return frozenset(out)


def likeness(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap of two stem sets (0.0 when both are empty)."""
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)
