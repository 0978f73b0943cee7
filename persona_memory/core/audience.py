"""The audience rule (design §4): what a persona may have in its head in this room, right now.

The whole privacy model is this one predicate, evaluated in code before any model call. Code
decides what enters the context; the model only decides how to use it.

Rules, in order:
1. An incognito room loads nothing.
2. Only open rows (``valid_to`` is ``None``).
3. A ``world`` row is always visible.
4. A ``self`` row (a promise or open loop of the persona's) is visible when its counterpart is
   present (and has not switched memory off or muted this persona).
5. A row about a human is visible when that human is present, has memory on and has not muted
   this persona. It carries ``confidence`` when that human alone witnessed it (formed 1:1).
6. Anything else — above all a row about someone absent — does not exist for this room.
7. Proven scope (``v1_proven``): a room that is not a private chat gets world rows only.

One predicate, over plain values, everywhere it is asked: ``admitted`` decides once per room
whom it may hear about, ``row_key`` says whom a row concerns, and ``Admitted.admits(key)`` is
the answer for one row. ``visible_memories`` applies it row by row; the read path's table
groups its rows by the same ``row_key`` and takes the groups ``admits`` (``core.block.
candidates``, which the block and the recall note both use); the write side asks the same
``remembers`` of a human (``may_write_about``) and reads a line only when the persona
``hears`` it (``storage.store.TranscriptLine.heard_by``).
"""

from __future__ import annotations

from typing import Iterable, Mapping

import attrs

from .. import ids
from ..rows import MemoryRow, UserControls


@attrs.frozen
class Audience:
    """The room as the audience rule sees it: its flags and who is present now."""

    present: frozenset[int]
    private: bool = False
    incognito: bool = False


@attrs.frozen
class Visible:
    """A row allowed into this room, and whether it was told in confidence."""

    row: MemoryRow
    confidence: bool = False


def visible_memories(
    persona: str,
    audience: Audience,
    rows: Iterable[MemoryRow],
    controls: Mapping[int, UserControls],
    *,
    v1_proven: bool = True,
) -> list[Visible]:
    """Filter ``rows`` (one persona's) down to what this audience may see.

    Args:
        persona: the persona whose head this is.
        audience: the room's flags and the humans present right now.
        rows: candidate rows of this persona (closed ones are dropped here).
        controls: each present human's switches; a human missing here has the defaults.
        v1_proven: the proven-scope switch — groups get world rows only.

    Returns:
        The visible rows, in the order given, each tagged with ``confidence``.
    """
    let = admitted(persona, audience, controls, v1_proven=v1_proven)
    return [
        Visible(row, told_in_confidence(row))
        for row in rows
        if row.valid_to is None and let.admits(row_key(row.subject, row.counterpart))
    ]


NOBODY = -1
"""The key of a row that concerns no one a room can hold (a ``self`` row owed to nobody)."""


def row_key(subject: str, counterpart: str | None) -> int | None:
    """Whom a row concerns, as the rule judges it: ``None`` for the world, the human's id for a
    row about them (or, a ``self`` row, owed to them), ``NOBODY`` otherwise."""
    if subject == ids.WORLD:
        return None
    uid = ids.parse_user_ref(counterpart if subject == ids.SELF else subject)
    return NOBODY if uid is None else uid


@attrs.frozen
class Admitted:
    """Whom a room may hear about: the world (``world``) and these present humans."""

    world: bool
    humans: frozenset[int]

    def admits(self, key: int | None) -> bool:
        """Whether an open row whose ``row_key`` is ``key`` is visible here."""
        return self.world if key is None else key in self.humans


def admitted(
    persona: str,
    audience: Audience,
    controls: Mapping[int, UserControls],
    *,
    v1_proven: bool = True,
) -> Admitted:
    """The audience rule, decided once per room rather than once per row.

    An open row is visible when it is about the world and ``world`` is true, or when it is
    about (or, a ``self`` row, owed to) a human in ``humans``. Rules 1 and 3-7 live here;
    ``visible_memories`` and ``core.block`` apply the decision to rows.
    """
    if audience.incognito:
        return Admitted(world=False, humans=frozenset())
    if v1_proven and not audience.private:
        return Admitted(world=True, humans=frozenset())
    humans = frozenset(uid for uid in audience.present if remembers(persona, controls.get(uid)))
    return Admitted(world=True, humans=humans)


def remembers(persona: str, person: UserControls | None) -> bool:
    """Whether ``persona`` may hold a human in mind — read them or write them — given their
    switches (``None``: the defaults): not with memory off, not once muted."""
    return person is None or not person.hides_from(persona)


def hears(persona: str, personas: Iterable[str], *, kit: str | None, incognito: bool) -> bool:
    """Whether ``persona``'s write path may read a line said with these personas in the room:
    it was there, the room was not incognito (rule 1) and no kit was mounted (design §2)."""
    return not incognito and kit is None and persona in personas


def told_in_confidence(row: MemoryRow) -> bool:
    """Whether a row about a human was witnessed by that human alone (formed one-to-one)."""
    uid = row.about_user
    return row.subject != ids.SELF and uid is not None and len(row.witnessed) == 1 and uid in row.witnessed


def may_write_about(persona: str, user_id: int, controls: Mapping[int, UserControls]) -> bool:
    """The write-side twin: a human with memory off, or who muted ``persona``, is not written."""
    return remembers(persona, controls.get(user_id))
