"""What travels in a persona actor's mailbox: a room event with the room as it now stands,
or a request to flush. A closed union, dispatched with ``match``."""

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


Envelope = Delivered | FlushRequested
