"""What travels in a persona actor's mailbox: a closed union, dispatched with ``match``.

- ``Delivered``: a room event, with the room as it now stands.
- ``EditRequested``: a human's edit (delete, undo, clear-all) for the actor to run in turn with
  its writes; the outcome goes to ``reply``.
- ``RecallRequested``: the recall note for a human's message in a room; the text goes to
  ``reply``.
- ``ControlsChanged``: a human's switches or note changed: rebuild the live blocks of the rooms
  they are in, then set ``done``.
- ``MeterRequested``: the meter of the block a private chat with a human would get; the
  answer goes to ``reply``.
- ``CatchUp``: the sweep found this persona's cursor behind in a room: queue its write.
- ``FlushRequested``: set ``done`` once everything sent before has been written.
- ``Wake``: the writer left reports (nothing else to do).
- ``Closing``: the supervisor is done with this actor: queue the last touches, close the lane.
"""

from __future__ import annotations

import attrs
import trio

from ..messages import RoomEvent
from ..rooms import RoomState


@attrs.frozen
class Delivered:
    """``event`` happened; ``room`` is the room's state right after it."""

    event: RoomEvent
    room: RoomState


@attrs.frozen(eq=False)
class FlushRequested:
    """Set ``done`` once everything this actor was sent before has been written."""

    done: trio.Event


@attrs.frozen(eq=False)
class EditRequested:
    """A human's edit of this persona's rows (a ``lane.HumanEdit``); the outcome goes to
    ``reply`` (a ``lane.Reply``) once the actor has applied it."""

    edit: object
    reply: object


@attrs.frozen(eq=False)
class RecallRequested:
    """The recall note for a message whose query is ``query`` (a ``ranking.Topic``) in
    ``room`` as it stands; the text goes to ``reply`` (a ``lane.Reply``)."""

    room: RoomState
    query: object
    reply: object


@attrs.frozen(eq=False)
class ControlsChanged:
    """``user_id``'s switches or note changed (already stored): every live block of a room they
    are in is rebuilt with them, then ``done`` is set."""

    user_id: int
    done: trio.Event


@attrs.frozen(eq=False)
class MeterRequested:
    """(chars used, limit, ids of the rows it loads) of the block a private chat with
    ``user_id`` would get now; the answer goes to ``reply`` (a ``lane.Reply``). Reads only."""

    user_id: int
    reply: object


@attrs.frozen
class CatchUp:
    """Queue the write path for ``room`` (the sweep found this persona's cursor behind)."""

    room: RoomState


@attrs.frozen
class Wake:
    """The writer left reports for the actor."""


@attrs.frozen
class Closing:
    """No more envelopes from the supervisor: finish the touches and close the lane."""


Envelope = (
    Delivered | CatchUp | FlushRequested | EditRequested | RecallRequested | ControlsChanged | MeterRequested
    | Wake | Closing
)
