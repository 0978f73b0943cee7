"""A slice's pure work as one job for the offline reader's worker process: read it, find the
names its candidates may mention, check them, embed and quantise what passed.

Between the backlog's read and routing, the write path's work is pure but for one read: the
check needs the known display names whose first word is a word of the candidates, which
depend on what was read. When the mind can read in a worker (``Mind.portable_extract``: the
offline reader), the names can be looked up there (``HeldNames``: every known name, read with
the backlog; ``storage.file_names.FileNames``: the SQLite file itself) and the embedder has a
``portable`` twin (the bundled WordLlama's), the whole of it is one hop to the worker
(``read_checked_and_embedded``) instead of five: there and back for the reading, the names
read on the store's thread, there and back for the check, and the embedding's thread. Where
one of them is missing, the worker may still take the check and the embedding of what it
kept (``checked_and_embedded``).

Rules:
- The answer is the one the loop's own steps give: the same reading, the same names (the
  query ``store.names.among`` makes, or its answer from every name held, in the same order),
  the same check, the rows ``embedder.embed`` gives for the same texts (the twin runs
  ``embed_sync``), and those rows quantised for storage as the loop would (``quantize_rows``).
- No candidate kept, nothing embedded: ``Embedded`` is ``None``, as the loop embeds nothing then.
- A check that cannot read the answer is the mind's nonsense, not a crash of the job: it comes
  back as ``Read.refused`` (the loop raises ``ProviderNonsense`` with it, as for its own check).
  A names read that fails raises, as the store's read would.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs
import numpy as np

from .quantized import quantize_rows
from .validation import Candidate, Dropped, SliceFacts, check_candidates

Embedding = Callable[[Sequence[str]], np.ndarray]
Names = Callable[[Iterable[str]], dict[int, str]]
"""The known display names whose first word is one of the words given (any case), by user id."""


@attrs.frozen(eq=False)
class Embedded:
    """The kept candidates' unit rows, in order, and each row quantised for storage."""

    matrix: np.ndarray
    quantized: list[tuple[bytes, float]]


def checked_and_embedded(
    answer: Any, facts: SliceFacts, embedding: Embedding | None
) -> tuple[list[Candidate], list[Dropped], Embedded | None]:
    """``check_candidates(answer, facts)`` and, with ``embedding``, the kept candidates'
    texts embedded by it (``None`` without it, or with nothing kept)."""
    kept, dropped = check_candidates(answer, facts)
    if embedding is None or not kept:
        return kept, dropped, None
    matrix = embedding([c.text for c in kept])
    return kept, dropped, Embedded(matrix, quantize_rows(matrix))


@attrs.frozen(eq=False)
class Read:
    """A slice read, checked and embedded in one job (``read_checked_and_embedded``); the
    mind's answer itself stays in the worker (each dropped candidate carries its own part)."""

    kept: list[Candidate] = attrs.field(factory=list)
    dropped: list[Dropped] = attrs.field(factory=list)
    embedded: Embedded | None = None
    refused: str | None = None  # why the check could not read the answer


def read_checked_and_embedded(
    read: Callable[[], Any], facts: SliceFacts, names: Names, embedding: Embedding | None
) -> Read:
    """``read()`` the slice; check its answer against ``facts`` with the names ``names`` finds
    for the candidates' words in front of ``facts.known_names``; embed what was kept."""
    answer = read()
    found = names(words_of(answer))
    facts = attrs.evolve(facts, known_names={**found, **facts.known_names})
    try:
        kept, dropped, embedded = checked_and_embedded(answer, facts, embedding)
    except Exception as exc:
        return Read(refused=f"{type(exc).__name__}: {exc}")
    return Read(kept, dropped, embedded)


@attrs.frozen
class HeldNames:
    """``store.names.among`` answered from every known name, held as ``(user id, name, first
    word)``: the same names, in the order its ``first_word`` index gives them."""

    entries: tuple[tuple[int, str, str], ...]

    def __call__(self, words: Iterable[str]) -> dict[int, str]:
        wanted = {w.casefold() for w in words if w}
        found = sorted((first, uid, name) for uid, name, first in self.entries if first in wanted)
        return {uid: name for _, uid, name in found}


_WORD = re.compile(r"[^\W\d_]+")


def words_of(answer: object) -> set[str]:
    """Every word of the candidates' texts in a mind's answer: what could be someone's name."""
    items = answer.get("memories") if isinstance(answer, dict) else answer
    words: set[str] = set()
    if isinstance(items, list):
        for item in items:
            text = item.get("text") if isinstance(item, dict) else None
            if isinstance(text, str):
                words.update(w.casefold() for w in _WORD.findall(text[:1000]))
    return words
