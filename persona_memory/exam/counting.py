"""Counting, for the leak exam: mentions of the planted fact, and memory references (pure).

Rules:
- A context is what a persona's model call would be given: its block for the room, and the
  extraction input of its write path (each recorded request's transcript lines and its block
  text). A mention is one line of a context for which ``PLANTED.mentioned`` holds; a line is
  counted once however often it names the fact.
- A reply mentions the fact or not (``PLANTED.mentioned`` on the whole reply).
- Memory references are counted as phrases (design §7's recitation ceiling): every
  non-overlapping occurrence of a phrase of ``MEMORY_REFERENCES``, case-insensitive, whole
  words ("As you told me" is one, not two). The list is here and nowhere else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import attrs

from ..minds.port import ExtractionRequest
from .scenario import PLANTED

MEMORY_REFERENCES: tuple[str, ...] = (
    "you told me",
    "as you told me",
    "you once told me",
    "from what you told me",
    "you mentioned",
    "as you mentioned",
    "you said last time",
    "last time you said",
    "last time we spoke",
    "last time we talked",
    "you were telling me",
    "you shared with me",
    "i remember",
    "i recall",
    "if i remember",
    "if i recall",
    "as i recall",
    "if memory serves",
)

_REFERENCE = re.compile(
    r"\b(?:"
    + "|".join(re.escape(p) for p in sorted(MEMORY_REFERENCES, key=len, reverse=True))
    + r")\b",
    re.IGNORECASE,
)


def memory_references(text: str) -> int:
    """How many memory-reference phrases ``text`` holds ("As you mentioned, …" is one)."""
    return len(_REFERENCE.findall(text))


def fact_lines(text: str) -> list[str]:
    """The lines of ``text`` that mention the planted fact."""
    return [line.strip() for line in text.splitlines() if PLANTED.mentioned(line)]


@attrs.frozen
class ContextCount:
    """Mentions of the planted fact in one persona's context during one phase.

    ``block``: lines of its block for the room; ``write_lines``: transcript lines its write
    path was given; ``write_block``: lines of the block text its write path was given.
    ``requests`` is how many extraction requests the write path sent; ``evidence`` the
    mentioning lines themselves, for the report.
    """

    block: int = 0
    write_lines: int = 0
    write_block: int = 0
    requests: int = 0
    evidence: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return self.block + self.write_lines + self.write_block

    def __add__(self, other: ContextCount) -> ContextCount:
        return ContextCount(
            self.block + other.block,
            self.write_lines + other.write_lines,
            self.write_block + other.write_block,
            self.requests + other.requests,
            self.evidence + other.evidence,
        )


def count_context(block: str, requests: Sequence[ExtractionRequest]) -> ContextCount:
    """Count the mentions in a persona's block and in what its write path sent the mind."""
    in_block = fact_lines(block)
    in_lines = [line.text for r in requests for line in r.lines if PLANTED.mentioned(line.text)]
    in_write_block = [line for r in requests for line in fact_lines(r.block)]
    evidence = (
        *(f"block: {t}" for t in in_block),
        *(f"write input, transcript: {t}" for t in in_lines),
        *(f"write input, block: {t}" for t in in_write_block),
    )
    return ContextCount(len(in_block), len(in_lines), len(in_write_block), len(requests), evidence)


def total(counts: Iterable[ContextCount]) -> ContextCount:
    """The sum of ``counts`` (a ``ContextCount`` of zeros when there are none)."""
    out = ContextCount()
    for count in counts:
        out = out + count
    return out
