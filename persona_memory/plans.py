"""A write plan: what one quiet spell's write posts, as a value — made by the write path
(``write.plan.make_plan``), posted by storage (``storage.writes.post_plan``). Pure: no I/O. A
leaf shared by both, so storage never imports the write domain.

Rules:
- The plan carries the cursor move from ``cursor_from`` to ``cursor_to``: whoever posts it
  commits everything, or nothing, and only while the cursor is still at ``cursor_from``.
- Every human with new rows about them (their own, or a promise to them) gets one notice for
  the whole plan — coalesced per persona per quiet spell — naming the rows it announces
  (``notice_text``).
- A plan is made while the model reads, and a human may act meanwhile: ``narrowed`` is the
  plan as it may still commit, given what its commit finds — rows the human deleted, humans
  who switched memory off or muted the persona. It drops a new row about such a human, or
  citing a line they said, or replacing a row that was deleted; it drops a closing of a row
  that is gone, of a row about such a human, or whose replacement was dropped; and it words
  the notices again for the rows that are left. The cursor move stays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set

import attrs

from . import ids
from .ids import persona_name
from .rows import MemoryRow

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
    over_cap: tuple[object, ...] = ()  # the candidates the daily cap left out, for the log


def notices_for(persona: str, inserts: Sequence[MemoryRow]) -> list[NoticeDraft]:
    """One notice for each human with new rows about them in ``inserts`` (see the rules)."""
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
        plan, inserts=tuple(inserts), closings=closings, notices=tuple(notices_for(plan.persona, inserts))
    )
