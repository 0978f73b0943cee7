"""Routing a candidate against what the persona already knows (design §2.2). Pure: no I/O.

Rules:
- An exact duplicate — same subject (and counterpart), same text once case, spacing and
  punctuation are folded — is NONE before any model call.
- Neighbours are the persona's open rows with the same subject (and counterpart) whose vector
  was made by the same embedder as the candidate's and whose cosine is at least
  ``min_cosine``; the best ``limit`` of them, best first. Vectors of two models are never
  compared.
- No neighbour: ADD, without asking the mind.
- The mind sees neighbours only as "0", "1", …; its answer is mapped back to a row here. A
  number that was not offered, an unknown event, or UPDATE/CLOSE without a number is refused —
  never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Any

import attrs
import numpy as np

from ..rows import MemoryRow
from .validation import Candidate, normalise_text


class Event(Enum):
    ADD = "ADD"
    UPDATE = "UPDATE"
    CLOSE = "CLOSE"
    NONE = "NONE"


@attrs.frozen
class Decision:
    """What to do with one candidate; ``target`` is the row an UPDATE or CLOSE ends."""

    candidate: Candidate
    event: Event
    target: MemoryRow | None = None
    why: str = ""


class RoutingRefused(ValueError):
    """The router's answer cannot be used (an id not offered, an unknown event)."""


def same_subject(candidate: Candidate, row: MemoryRow) -> bool:
    return row.subject == candidate.subject and row.counterpart == candidate.counterpart


def exact_duplicate(candidate: Candidate, rows: Iterable[MemoryRow]) -> MemoryRow | None:
    """The open row that already says exactly this about the same subject, if any."""
    key = normalise_text(candidate.text)
    for row in rows:
        if row.valid_to is None and same_subject(candidate, row) and normalise_text(row.text) == key:
            return row
    return None


_ASCII_DIGITS = re.compile(r"[0-9]+", re.ASCII)


def neighbours(
    candidate: Candidate,
    vector: np.ndarray,
    embedder: str,
    rows: Iterable[MemoryRow],
    vectors: Mapping[int, np.ndarray],
    *,
    limit: int,
    min_cosine: float,
) -> list[MemoryRow]:
    """The open rows the router should compare ``candidate`` with, most similar first."""
    scored = []
    for row in rows:
        if row.valid_to is not None or row.embedder != embedder or not same_subject(candidate, row):
            continue
        row_vector = vectors.get(row.id)
        if row_vector is None:
            continue
        cosine = float(row_vector @ vector)
        if cosine >= min_cosine:
            scored.append((-cosine, row.id, row))
    scored.sort(key=lambda s: (s[0], s[1]))
    return [row for _, _, row in scored[:limit]]


def interpret(answer: Any, candidate: Candidate, offered: Sequence[MemoryRow]) -> Decision:
    """Map the mind's routing answer back to a decision about real rows.

    Raises:
        RoutingRefused: the answer names a neighbour that was not offered, an unknown event,
            or UPDATE/CLOSE without a neighbour.
    """
    if not isinstance(answer, dict):
        raise RoutingRefused(f"the routing answer is not an object: {answer!r}")
    raw_event = answer.get("event")
    try:
        if not isinstance(raw_event, str):
            raise ValueError(raw_event)
        event = Event(raw_event.strip().upper())
    except ValueError:
        raise RoutingRefused(f"unknown routing event {raw_event!r}") from None
    if event in (Event.ADD, Event.NONE):
        return Decision(candidate, event, why="router")
    label = answer.get("old_id")
    offered_labels = {str(k): k for k in range(len(offered))}
    text = str(label).strip() if isinstance(label, (str, int)) and not isinstance(label, bool) else None
    if text is None or text not in offered_labels:
        if text is not None and _ASCII_DIGITS.fullmatch(text):
            raise RoutingRefused(
                f"{event.value} names neighbour {label!r}, but only {len(offered)} were offered"
            )
        raise RoutingRefused(
            f"{event.value} needs old_id, one of the numbers offered "
            f"({', '.join(offered_labels) or 'none'}); got {label!r}"
        )
    index = offered_labels[text]
    if index >= len(offered):
        raise RoutingRefused(
            f"{event.value} names neighbour {label!r}, but only {len(offered)} were offered"
        )
    return Decision(candidate, event, target=offered[index], why="router")
