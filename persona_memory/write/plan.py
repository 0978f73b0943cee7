"""Turning routing decisions into one write (design §2.2, §5, §7). Pure: no I/O.

Rules:
- A new row's ``witnessed`` is the set of humans who were in the room at every one of its
  evidence lines (``heard``: line id → the humans present when it was said).
- ADD inserts a row. UPDATE inserts a row and closes its neighbour: ``valid_to`` = the new
  row's ``valid_from``, else today; ``closed_by`` = the new row's id. CLOSE closes the neighbour
  with nothing replacing it. NONE does nothing. There is no delete.
- A neighbour already closed earlier in the same plan is not closed twice: a second UPDATE of
  it becomes an ADD, a second CLOSE nothing.
- The daily cap: at most ``daily_cap`` new rows per persona per human per day, counting the
  rows already written today; past it the least important candidates are dropped, and of
  equally important ones those that say least (fewest content words), then the latest.
- The plan itself — its notices, its cursor move, and how it narrows at commit — is the value
  ``plans.WritePlan`` (a leaf storage posts without importing the write domain).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime

import attrs

from ..plans import Closing, WritePlan, notices_for
from ..text.stopwords import STOPWORDS
from ..rows import MemoryRow
from .routing import Decision, Event
from .validation import Candidate


@attrs.frozen
class Vector:
    """A candidate's stored vector: int8 bytes, scale, and the embedder that made it."""

    blob: bytes
    scale: float
    embedder: str


def make_plan(
    decisions: Sequence[Decision],
    *,
    persona: str,
    room_id: str,
    cursor_from: int,
    cursor_to: int,
    now: datetime,
    heard: Mapping[int, frozenset[int]],
    vectors: Mapping[int, Vector],
    written_today: Mapping[int, int],
    daily_cap: int,
) -> WritePlan:
    """Build the write for one slice.

    Args:
        decisions: one per candidate, in the order extracted.
        heard: the humans present at each line of the slice, by line id.
        vectors: the candidate vectors, by position in ``decisions``.
        written_today: rows this persona already wrote today, per human.
    """
    today = now.date().isoformat()
    allowed = _within_cap(decisions, written_today, daily_cap)
    inserts: list[MemoryRow] = []
    closings: list[Closing] = []
    closed: set[int] = set()
    over_cap: list[Candidate] = []
    for position, decision in enumerate(decisions):
        event = decision.event
        if event is Event.NONE:
            continue
        if position not in allowed and event in (Event.ADD, Event.UPDATE):
            over_cap.append(decision.candidate)
            continue
        target = decision.target
        if event in (Event.UPDATE, Event.CLOSE) and (target is None or target.id in closed):
            if event is Event.CLOSE:
                continue
            event = Event.ADD
        if event is Event.CLOSE:
            assert target is not None and target.id is not None
            closed.add(target.id)
            closings.append(Closing(target.id, decision.candidate.valid_from or today, None))
            continue
        witnessed = witnesses(decision.candidate.evidence, heard)
        inserts.append(_row(decision.candidate, persona, room_id, now, witnessed, vectors.get(position)))
        if event is Event.UPDATE:
            assert target is not None and target.id is not None
            closed.add(target.id)
            closings.append(Closing(target.id, decision.candidate.valid_from or today, len(inserts) - 1))
    return WritePlan(
        persona=persona,
        room_id=room_id,
        cursor_from=cursor_from,
        cursor_to=cursor_to,
        inserts=tuple(inserts),
        closings=tuple(closings),
        notices=tuple(notices_for(persona, inserts)),
        over_cap=tuple(over_cap),
    )


def witnesses(evidence: Sequence[int], heard: Mapping[int, frozenset[int]]) -> frozenset[int]:
    """The humans present at every one of the ``evidence`` lines (none if a line is unknown)."""
    sets = [heard.get(line_id, frozenset()) for line_id in evidence]
    return frozenset.intersection(*sets) if sets else frozenset()


def _within_cap(decisions: Sequence[Decision], written_today: Mapping[int, int], cap: int) -> set[int]:
    """Positions of the adding decisions that fit under each human's daily cap."""
    adding = [
        (i, d) for i, d in enumerate(decisions) if d.event in (Event.ADD, Event.UPDATE)
    ]
    allowed = set()
    used = dict(written_today)
    ranked = sorted(adding, key=lambda item: (-item[1].candidate.importance, -_says(item[1].candidate.text), item[0]))
    for i, decision in ranked:
        uid = decision.candidate.about_user
        if uid is None:
            allowed.add(i)
        elif used.get(uid, 0) < cap:
            used[uid] = used.get(uid, 0) + 1
            allowed.add(i)
    return allowed


def _says(text: str) -> int:
    """How much a row says: its content words (three letters or more, not stop words)."""
    return sum(1 for word in _WORD.findall(text.lower()) if len(word) > 2 and word not in STOPWORDS)


_WORD = re.compile(r"[a-z][a-z'-]*")


def _row(
    candidate: Candidate,
    persona: str,
    room_id: str,
    now: datetime,
    witnessed: frozenset[int],
    vector: Vector | None,
) -> MemoryRow:
    return MemoryRow(
        persona=persona,
        subject=candidate.subject,
        counterpart=candidate.counterpart,
        witnessed=witnessed,
        room_id=room_id,
        kind=candidate.kind,
        text=candidate.text,
        importance=candidate.importance,
        valid_from=candidate.valid_from,
        evidence=candidate.evidence,
        created=now,
        embedding=vector.blob if vector else None,
        embedding_scale=vector.scale if vector else None,
        embedder=vector.embedder if vector else None,
    )


