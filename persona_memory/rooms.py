"""The room registry's state and its transitions: who is in each room right now.

Pure (h11-style): ``apply(rooms, event)`` returns the new state of the room an event concerns,
or raises ``InvalidInput`` saying why the event cannot happen. The supervisor holds the table
and commits a transition only after it was accepted, so a refused event changes nothing.

Rules:
- ``RoomOpened`` (re)opens a room with its cast; reopening an open room replaces its state.
- ``MemberJoined``/``MemberLeft`` need an open room; a human already present cannot join again,
  an absent one cannot leave; a private chat stays one persona and one human.
- ``RoomWentQuiet`` and ``RoomArchived`` need an open room; archiving closes it.
- Every open, join or leave gives the room a new, larger ``generation``: the version its
  blocks must have.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

import attrs

from .core.audience import Audience
from .errors import InvalidInput, NotInRoom, UnknownRoom
from .messages import MemberJoined, MemberLeft, RoomArchived, RoomEvent, RoomOpened, RoomWentQuiet

try:
    from typing import assert_never
except ImportError:  # pragma: no cover - Python < 3.11
    from typing_extensions import assert_never


@attrs.frozen
class Presence:
    """Who is in a room — the humans and the personas — and how it stands (a kit mounted,
    incognito). Recorded with every transcript line: what a line's hearers were."""

    humans: frozenset[int]
    personas: tuple[str, ...]
    kit: str | None = None
    incognito: bool = False


@attrs.frozen
class RoomState:
    """One open room as the supervisor and the actors see it."""

    room_id: str
    personas: tuple[str, ...]
    present: frozenset[int]
    private: bool
    incognito: bool
    kit: str | None
    topic: str | None
    names: Mapping[int, str] = attrs.field(eq=False, factory=lambda: MappingProxyType({}))
    generation: int = 1
    archived: bool = False

    @property
    def audience(self) -> Audience:
        return Audience(present=self.present, private=self.private, incognito=self.incognito)

    @property
    def presence(self) -> Presence:
        """Who hears a line said in the room now."""
        return Presence(self.present, self.personas, self.kit, self.incognito)

    @property
    def writable(self) -> bool:
        """Whether the write path may ever read this room (not incognito, no kit mounted)."""
        return not self.incognito and self.kit is None


def apply(rooms: Mapping[str, RoomState], event: RoomEvent, generation: int) -> RoomState:
    """The state of ``event.room_id`` after ``event``.

    ``generation`` is the number a change of who is present gets: the caller hands out
    increasing numbers across all rooms, so a reopened room never reuses an old one.

    Raises:
        UnknownRoom: the event needs an open room and this one is not open.
        NotInRoom: a human leaves a room they are not in.
        InvalidInput: the event would break the room's shape (a second human in a private chat,
            a human joining twice).
    """
    match event:
        case RoomOpened():
            return RoomState(
                room_id=event.room_id,
                personas=event.personas,
                present=event.humans,
                private=event.private,
                incognito=event.incognito,
                kit=event.kit,
                topic=event.topic,
                names=event.names,
                generation=generation,
            )
        case MemberJoined():
            room = _open(rooms, event.room_id)
            if event.user_id in room.present:
                raise InvalidInput(f"u:{event.user_id} is already in room {room.room_id!r}")
            if room.private:
                raise InvalidInput(
                    f"room {room.room_id!r} is a private chat (one persona, one human); "
                    "open a group room to add u:{0}".format(event.user_id)
                )
            return attrs.evolve(room, present=room.present | {event.user_id}, generation=generation)
        case MemberLeft():
            room = _open(rooms, event.room_id)
            if event.user_id not in room.present:
                raise NotInRoom(f"u:{event.user_id} is not in room {room.room_id!r}")
            return attrs.evolve(room, present=room.present - {event.user_id}, generation=generation)
        case RoomWentQuiet():
            return _open(rooms, event.room_id)
        case RoomArchived():
            return attrs.evolve(_open(rooms, event.room_id), archived=True)
        case _:
            assert_never(event)


def _open(rooms: Mapping[str, RoomState], room_id: str) -> RoomState:
    room = rooms.get(room_id)
    if room is None:
        raise UnknownRoom(f"room {room_id!r} is not open; send RoomOpened for it first")
    return room
