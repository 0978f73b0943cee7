"""The room registry: who is in each open room right now, and the pure transitions that change it.

Pure (h11-style): ``apply(rooms, event, generation)`` returns the new state of the room an
event concerns, or raises saying why the event cannot happen. ``RoomRegistry`` holds the table
of one process — the facade reads who hears a line from it, the supervisor routes each event
to its ``hearings`` — and commits a transition only after it was accepted, so a refused event
changes nothing. (The registry workers of a cluster share lives in PostgreSQL:
``cluster/registry.py`` applies the same transitions there, ``storage/room_registry.py`` is its
SQL.)

Rules:
- A room has one shape, ``RoomState``: the registry holds it, the actors build with it, the
  ``rooms`` table stores it. A ``RoomOpened`` becomes one in ``RoomState.opened`` and nowhere
  else; ``RoomState.opening`` is the way back.
- ``RoomOpened`` (re)opens a room with its cast; reopening an open room replaces its state.
  A room id's ``incognito`` is fixed at its first open: a reopen that flips it is refused.
- ``MemberJoined``/``MemberLeft`` need an open room; a human already present cannot join again,
  an absent one cannot leave; a private chat stays one persona and one human.
- ``RoomWentQuiet`` and ``RoomArchived`` need an open room; archiving closes it.
- Every open, join or leave gives the room a new, larger ``generation``: the version its
  blocks must have.
- Every persona in the room hears an accepted event; a room reopened without a persona that
  was in it is, for that persona, archived (``hearings``).
"""

from __future__ import annotations

import itertools
from types import MappingProxyType
from typing import Iterator, Mapping

import attrs

from .core.audience import Audience
from .core.query import searched_text
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
    """One room as the registry, the actors and the ``rooms`` table see it.

    ``generation`` is the version of who is present (0: a room read from the file, not open
    here); ``archived``: the room is closed (the state an archive is delivered with). ``names``
    and ``title`` are for rendering only.
    """

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
    title: str | None = None

    @classmethod
    def opened(cls, event: RoomOpened, generation: int) -> RoomState:
        """The room ``event`` opens, at ``generation``."""
        return cls(
            room_id=event.room_id,
            personas=event.personas,
            present=event.humans,
            private=event.private,
            incognito=event.incognito,
            kit=event.kit,
            topic=event.topic,
            names=event.names,
            generation=generation,
            title=event.title,
        )

    def opening(self) -> RoomOpened:
        """The open that brings a newcomer to this room as it stands (a cluster worker that
        takes over a persona)."""
        return RoomOpened(
            room_id=self.room_id, personas=self.personas, humans=self.present, private=self.private,
            incognito=self.incognito, kit=self.kit, topic=self.topic, names=dict(self.names),
            title=self.title,
        )

    def searched(self, text: str) -> str:
        """What ``text`` (the opener, a message) is searched by in this room: without the names
        of the humans present and of the personas (``core.query``); ``""``: nothing else."""
        humans = [self.names[u] for u in sorted(self.present) if u in self.names]
        return searched_text(text, humans, self.personas)

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
            return RoomState.opened(event, generation)
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


def incognito_is_fixed(room_id: str, incognito: bool) -> InvalidInput:
    """The error for a reopen that would flip a room's ``incognito``."""
    return InvalidInput(
        f"room {room_id!r} was first opened with incognito={incognito}; a room's incognito is "
        "fixed when it is created — open a new room id instead"
    )


@attrs.frozen
class Hearing:
    """What one persona is told of an accepted event: the event and the room as it now
    stands for that persona. ``gone``: the archive of a room reopened without it (the room
    itself stays open)."""

    persona: str
    event: RoomEvent
    room: RoomState
    gone: bool = False


def hearings(before: RoomState | None, event: RoomEvent, room: RoomState) -> tuple[Hearing, ...]:
    """Who hears ``event``, which took the room from ``before`` (``None``: it was not open) to
    ``room``: every persona in the room, then each persona a reopen left out, with the room
    as it knew it archived."""
    heard = [Hearing(persona, event, room) for persona in room.personas]
    if isinstance(event, RoomOpened) and before is not None:
        gone = attrs.evolve(before, archived=True, generation=room.generation)
        archive = RoomArchived(room_id=event.room_id)
        heard += [Hearing(p, archive, gone, gone=True) for p in before.personas if p not in room.personas]
    return tuple(heard)


@attrs.frozen
class Change:
    """An event the registry accepted: the room before it (``None``: not open) and after."""

    event: RoomEvent
    before: RoomState | None
    room: RoomState

    @property
    def hearings(self) -> tuple[Hearing, ...]:
        return hearings(self.before, self.event, self.room)


class RoomRegistry:
    """The open rooms of one process, and the ``incognito`` each room id was first opened with.

    It does no I/O: whoever creates it hands it the flags the file holds (``store.rooms.flags``),
    and it keeps those of every room opened since. It holds while one process writes a file at
    a time (the design's one owner per persona).
    """

    def __init__(self, first_incognito: Mapping[str, bool] | None = None) -> None:
        self._rooms: dict[str, RoomState] = {}
        self._incognito = dict(first_incognito or {})
        self._generations = itertools.count(1)

    # ---- reading ---------------------------------------------------------------------------

    def get(self, room_id: str) -> RoomState | None:
        """The open room ``room_id``, or ``None``."""
        return self._rooms.get(room_id)

    def __getitem__(self, room_id: str) -> RoomState:
        return self._rooms[room_id]

    def __contains__(self, room_id: object) -> bool:
        return room_id in self._rooms

    def __iter__(self) -> Iterator[str]:
        return iter(self._rooms)

    def __len__(self) -> int:
        return len(self._rooms)

    def hearers(self, room_id: str) -> tuple[str, ...]:
        """The personas that hear an event of ``room_id`` now: its cast (none if not open)."""
        room = self._rooms.get(room_id)
        return () if room is None else room.personas

    def may_hear(self, event: RoomEvent) -> tuple[str, ...]:
        """The personas ``event`` may be delivered to, as far as known before it is applied:
        the room's cast now and, for an open, the cast it names."""
        named = event.personas if isinstance(event, RoomOpened) else ()
        return tuple(dict.fromkeys((*named, *self.hearers(event.room_id))))

    def presence(self, room_id: str) -> Presence | None:
        """Who hears a line said in ``room_id`` now; ``None`` when it is not open."""
        room = self._rooms.get(room_id)
        return None if room is None else room.presence

    def incognito(self, room_id: str) -> bool | None:
        """Whether ``room_id`` is incognito; ``None`` if it was never opened."""
        room = self._rooms.get(room_id)
        return room.incognito if room is not None else self._incognito.get(room_id)

    def room_of(self, persona: str, room_id: str) -> RoomState:
        """The open room ``room_id``, with ``persona`` in it.

        Raises:
            UnknownRoom: the room is not open.
            NotInRoom: the persona is not in its cast.
        """
        room = _open(self._rooms, room_id)
        if persona not in room.personas:
            raise NotInRoom(f"persona {persona!r} is not in room {room_id!r} (it has {', '.join(room.personas)})")
        return room

    def rooms_of(self, persona: str) -> tuple[RoomState, ...]:
        """The open rooms ``persona`` is in."""
        return tuple(room for room in self._rooms.values() if persona in room.personas)

    def in_a_room(self) -> frozenset[str]:
        """Every persona in some open room."""
        return frozenset(p for room in self._rooms.values() for p in room.personas)

    # ---- transitions -----------------------------------------------------------------------

    def accept(self, event: RoomEvent) -> Change:
        """Apply ``event`` and commit it; what changed.

        Raises:
            UnknownRoom, NotInRoom, InvalidInput: as ``apply``, or a reopen that flips the room
                id's ``incognito``. Nothing changed.
        """
        before = self._rooms.get(event.room_id)
        if isinstance(event, RoomOpened):
            known = self.incognito(event.room_id)
            if known is not None and known != event.incognito:
                raise incognito_is_fixed(event.room_id, known)
        room = apply(self._rooms, event, next(self._generations))
        if isinstance(event, RoomArchived):
            del self._rooms[event.room_id]
        else:
            self._rooms[event.room_id] = room
        if isinstance(event, RoomOpened):
            self._incognito[event.room_id] = event.incognito
        return Change(event, before, room)

    def adopt(self, event: RoomEvent, room: RoomState, *, gone: bool = False) -> None:
        """Take the state ``room`` an event was applied to elsewhere (a cluster's shared
        registry), unless a later generation is here already. ``gone``: the archive of a room
        reopened without some persona, which leaves the room open."""
        current = self._rooms.get(room.room_id)
        newer = current is None or current.generation <= room.generation
        if gone or not newer:
            return
        if isinstance(event, RoomArchived):
            if current is not None:
                del self._rooms[room.room_id]
        else:
            self._rooms[room.room_id] = room
