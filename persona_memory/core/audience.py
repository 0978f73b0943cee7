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
    out: list[Visible] = []
    for row in rows:
        if row.valid_to is not None:
            continue
        if row.subject == ids.WORLD:
            if let.world:
                out.append(Visible(row))
        elif row.about_user in let.humans:
            out.append(Visible(row, told_in_confidence(row)))
    return out


@attrs.frozen
class Admitted:
    """Whom a room may hear about: the world (``world``) and these present humans."""

    world: bool
    humans: frozenset[int]


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
    humans = frozenset(
        uid
        for uid in audience.present
        if (person := controls.get(uid)) is None or not person.hides_from(persona)
    )
    return Admitted(world=True, humans=humans)


def told_in_confidence(row: MemoryRow) -> bool:
    """Whether a row about a human was witnessed by that human alone (formed one-to-one)."""
    uid = row.about_user
    return row.subject != ids.SELF and uid is not None and len(row.witnessed) == 1 and uid in row.witnessed


def may_write_about(persona: str, user_id: int, controls: Mapping[int, UserControls]) -> bool:
    """The write-side twin: a human with memory off, or who muted ``persona``, is not written."""
    person = controls.get(user_id)
    return person is None or not person.hides_from(persona)
