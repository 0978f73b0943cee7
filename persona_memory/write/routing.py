"""Routing a candidate against what the persona already knows (design §2.2). Pure: no I/O.

Rules:
- An exact duplicate — same subject (and counterpart), same text once case, spacing and
  punctuation are folded — is NONE before any model call.
- Neighbours are the persona's open rows with the same subject (and counterpart) whose vector
  was made by the same embedder as the candidate's and whose cosine is at least
  ``min_cosine``; the best ``limit`` of them, best first (ties by id). Vectors of two models
  are never compared. Beside them come the open rows of the same subject (and counterpart)
  that fill a slot the candidate fills (where someone works, lives, …: read by the index's
  slot reader, ``write.slot_reader``), however unlike the sentences are: those not already
  offered, newest first, at most ``limit``. So a router sees at most ``2 × limit`` rows.
- Both are read from the persona's ``RouteIndex`` (``write.route_index``): a lookup for the
  duplicate, one matrix product per slice for the cosines, a lookup for the slot.
- No neighbour: ADD, without asking the mind.
- The mind sees neighbours only as "0", "1", …; its answer is mapped back to a row here. A
  number that was not offered, an unknown event, or UPDATE/CLOSE without a number is refused —
  never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum
from typing import Any

import attrs
import numpy as np

from ..core.row_products import row_products
from ..rows import MemoryRow
from .route_index import Chunk, RouteIndex
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


def exact_duplicate(candidate: Candidate, index: RouteIndex) -> MemoryRow | None:
    """The open row that already says exactly this about the same subject, if any."""
    found = index.texts.get((candidate.subject, candidate.counterpart, normalise_text(candidate.text)))
    return index.rows[found[0]] if found else None


_ASCII_DIGITS = re.compile(r"[0-9]+", re.ASCII)


def neighbours(
    candidates: Sequence[Candidate],
    vectors: np.ndarray,
    embedder: str,
    index: RouteIndex,
    *,
    limit: int,
    min_cosine: float,
) -> list[list[MemoryRow]]:
    """For each candidate, the open rows the router should compare it with: the best
    ``limit`` by cosine, most similar first (ties by id), then the rows filling a slot it
    fills that are not among them, newest first, at most ``limit``.

    ``vectors`` holds the candidates' vectors, one line each, made by ``embedder``.
    """
    offered: list[list[MemoryRow]] = [[] for _ in candidates]
    codes = [index.pair_code(c.subject, c.counterpart) for c in candidates]
    wanted = [i for i, code in enumerate(codes) if code is not None]
    chunks = index.spaces.get(embedder, ())
    if wanted and chunks and len(vectors):
        query = np.asarray(vectors, dtype=np.float32)[wanted]
        hits: list[list[tuple[float, int]]] = [[] for _ in candidates]
        columns_of: dict[int, list[int]] = {}
        for column, i in enumerate(wanted):
            columns_of.setdefault(codes[i], []).append(column)  # type: ignore[arg-type]
        for row_ids, pairs, scores, sorts, open_rows in _scored(chunks, query, 4 * limit, index.dead):
            by_candidate = np.ascontiguousarray(scores.T)  # the same numbers, a candidate's in a row
            for code, columns in columns_of.items():
                mask = pairs == code if open_rows is None else (pairs == code) & open_rows
                # every candidate of this subject at once: the rows near enough to each, in order
                which, where = np.divmod(np.flatnonzero((by_candidate[columns] >= min_cosine) & mask), len(mask))
                ends = np.searchsorted(which, np.arange(1, len(columns) + 1)).tolist()
                start = 0
                for n, column in enumerate(columns):
                    found, start = where[start : ends[n]], ends[n]
                    if not found.size:
                        continue
                    mine = by_candidate[column, found]
                    if sorts and len(found) > 4 * limit:  # only the best can be offered: sort those alone
                        best = np.argpartition(-mine, 4 * limit)[: 4 * limit]
                        found, mine = found[best], mine[best]
                    hits[wanted[column]].extend(zip((-mine).tolist(), row_ids[found].tolist()))
        for i in wanted:
            # the first ``limit`` open ones in order: what sorting the open ones and cutting gives
            best = []
            for _, row_id in sorted(hits[i]):
                if len(best) == limit:
                    break
                row = index.rows.get(row_id)
                if row is not None:
                    best.append(row)
            offered[i] = best
    for i, candidate in enumerate(candidates):
        taken = {row.id for row in offered[i]}
        extra: list[MemoryRow] = []
        for slot in index.slots_of(candidate.subject, candidate.text):
            for row_id in reversed(index.slots.get((candidate.subject, candidate.counterpart, slot), ())):
                if row_id not in taken and len(extra) < limit:
                    taken.add(row_id)
                    extra.append(index.rows[row_id])
        offered[i].extend(sorted(extra, key=lambda r: -r.id))  # type: ignore[operator]
    return offered


def _scored(
    chunks: Sequence[Chunk], query: np.ndarray, few: int, dead: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, bool, np.ndarray | None]]:
    """Each chunk's ids, pair codes and cosines with ``query`` (rows × candidates), whether
    its hits are cut to the best before sorting, and which of its rows are open (``None``:
    all, when nothing is ``dead``). Chunks of at most ``few`` rows (a slice's worth, added
    since the last merge) come as one: their products are taken one by one, so every number
    is what it would be alone, and no cut applies to them, as it never would to one of them
    alone — they are read in one pass per candidate instead of one per chunk."""
    def product(chunk: Chunk) -> np.ndarray:
        return row_products(chunk.matrix, query)

    out = [
        (c.ids, c.pairs, product(c), True, c.open_mask(dead) if dead.size else None)
        for c in chunks if len(c.ids) > few
    ]
    small = [c for c in chunks if len(c.ids) <= few]
    if small:
        row_ids = np.concatenate([c.ids for c in small]) if len(small) > 1 else small[0].ids
        out.append((
            row_ids,
            np.concatenate([c.pairs for c in small]) if len(small) > 1 else small[0].pairs,
            np.concatenate([product(c) for c in small]) if len(small) > 1 else product(small[0]),
            False,
            np.isin(row_ids, dead, invert=True) if dead.size else None,
        ))
    return out


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
