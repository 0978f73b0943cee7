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
  rows already written today; past it the least important candidates are dropped.
- Every human with new rows about them (their own, or a promise to them) gets one notice for
  the whole plan — coalesced per persona per quiet spell — naming the rows it announces.
- The plan carries the cursor move from ``cursor_from`` to ``cursor_to``: whoever posts it
  commits everything, or nothing, and only while the cursor is still at ``cursor_from``.
- A plan is made while the model reads, and a human may act meanwhile: ``narrowed`` is the
  plan as it may still commit, given what its commit finds — rows the human deleted, humans
  who switched memory off or muted the persona. It drops a new row about such a human, or
  citing a line they said, or replacing a row that was deleted; it drops a closing of a row
  that is gone, of a row about such a human, or whose replacement was dropped; and it words
  the notices again for the rows that are left. The cursor move stays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from datetime import datetime

import attrs

from .. import ids
from ..ids import persona_name
from ..rows import MemoryRow
from .routing import Decision, Event
from .validation import Candidate

NOTICE_LIMIT = 500


@attrs.frozen
class Closing:
    row_id: int
    valid_to: str
    by_insert: int | None  # index into ``WritePlan.inserts`` of the row that replaces it


@attrs.frozen
class NoticeDraft:
    user_id: int
    text: str
    inserts: tuple[int, ...]  # indexes into ``WritePlan.inserts``


@attrs.frozen
class WritePlan:
    persona: str
    room_id: str
    cursor_from: int
    cursor_to: int
    inserts: tuple[MemoryRow, ...] = ()
    closings: tuple[Closing, ...] = ()
    notices: tuple[NoticeDraft, ...] = ()
    over_cap: tuple[Candidate, ...] = ()


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
        notices=tuple(_notices(persona, inserts)),
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
    for i, decision in sorted(adding, key=lambda item: (-item[1].candidate.importance, item[0])):
        uid = decision.candidate.about_user
        if uid is None:
            allowed.add(i)
        elif used.get(uid, 0) < cap:
            used[uid] = used.get(uid, 0) + 1
            allowed.add(i)
    return allowed


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


def _notices(persona: str, inserts: Sequence[MemoryRow]) -> list[NoticeDraft]:
    by_user: dict[int, list[int]] = {}
    for index, row in enumerate(inserts):
        uid = row.about_user
        if uid is not None:
            by_user.setdefault(uid, []).append(index)
    return [
        NoticeDraft(uid, notice_text(persona, uid, [inserts[i] for i in indexes]), tuple(indexes))
        for uid, indexes in sorted(by_user.items())
    ]


def notice_text(persona: str, user_id: int, rows: Sequence[MemoryRow]) -> str:
    """``Warren noted: owns a flat in Xuhui · has an interview on Thursday``."""
    name = persona_name(persona)
    ref = ids.user_ref(user_id)
    parts = []
    for row in rows:
        text = row.text.rstrip(" .")
        if text.startswith(ref + " "):
            text = text[len(ref) + 1 :]
        elif text.startswith(name + " "):
            text = text[len(name) + 1 :]
        parts.append(text.replace(ref + "'s", "your").replace(ref, "you"))
    text = f"{name} noted: " + " · ".join(parts)
    return text if len(text) <= NOTICE_LIMIT else text[: NOTICE_LIMIT - 1].rstrip() + "…"


def narrowed(
    plan: WritePlan,
    *,
    gone: Set[int],
    hidden: Set[int],
    about: Mapping[int, int | None],
    speakers: Mapping[int, int],
) -> WritePlan:
    """``plan`` as it may still commit (see the module's rules). Pure.

    Args:
        gone: ids of rows the plan closes that no longer exist (the human deleted them).
        hidden: humans who now have memory off or have muted ``plan.persona``.
        about: the human each row the plan closes concerns (``None``: the world or nobody).
        speakers: the human who said each cited line, by line id (persona lines left out).
    """
    if not gone and not hidden:
        return plan
    replaces = {c.by_insert: c.row_id for c in plan.closings if c.by_insert is not None}
    kept: list[int] = []
    for i, row in enumerate(plan.inserts):
        if row.about_user in hidden or replaces.get(i) in gone:
            continue
        if any(speakers.get(line_id) in hidden for line_id in row.evidence):
            continue
        kept.append(i)
    if len(kept) == len(plan.inserts) and not any(
        c.row_id in gone or about.get(c.row_id) in hidden for c in plan.closings
    ):
        return plan
    new_index = {old: new for new, old in enumerate(kept)}
    inserts = [plan.inserts[i] for i in kept]
    closings = tuple(
        attrs.evolve(c, by_insert=None if c.by_insert is None else new_index[c.by_insert])
        for c in plan.closings
        if c.row_id not in gone
        and about.get(c.row_id) not in hidden
        and (c.by_insert is None or c.by_insert in new_index)
    )
    return attrs.evolve(
        plan, inserts=tuple(inserts), closings=closings, notices=tuple(_notices(plan.persona, inserts))
    )
