"""The facade the chat runtime codes against (``shared/API.md``), and ``open_memory``.

Rules:
- ``open_memory`` opens the store, starts the supervisor and yields a ``Memory``; leaving the
  block closes intake, lets queued writes land within ``supervisor.shutdown_deadline_seconds``
  (shielded from outside cancellation), then closes the store.
- Every method validates its arguments first: bad input raises a ``ValueError`` subclass that
  says what to fix, and nothing changes.
- Once ``open_memory``'s block is left, every method raises ``MemoryClosed``.
- Times come from the injected wall clock, never from trio's clock.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from datetime import datetime
from typing import AsyncIterator

import trio

from . import ids
from .actors.persona import ActorContext, WritePath
from .clock import SystemClock, WallClock, as_utc
from .compose import block_rules, make_embedder
from .embedding import Embedder
from .errors import InvalidInput, MemoryClosed
from .messages import MemberJoined, MemberLeft, RoomArchived, RoomEvent, RoomOpened, RoomWentQuiet
from .rows import MemoryRow
from .settings import Settings
from .storage.store import Store, StoredRoom, open_store
from .supervisor import Supervisor

LINE_LIMIT = 20_000

_EVENTS = (RoomOpened, MemberJoined, MemberLeft, RoomWentQuiet, RoomArchived)


class Memory:
    """The memory of every persona. Get one from ``open_memory``."""

    def __init__(self, supervisor: Supervisor, store: Store, clock: WallClock) -> None:
        self._supervisor = supervisor
        self.store = store
        self._clock = clock

    @property
    def supervisor(self) -> Supervisor:
        """The supervisor, for introspection (``live_personas``, ``restarts``)."""
        return self._supervisor

    def _check_open(self) -> None:
        if self._supervisor.closed:
            raise MemoryClosed("the memory is closed; open it again with open_memory()")

    # ---- transcript --------------------------------------------------------------------

    async def post_line(self, room_id: str, speaker: str, text: str, at: datetime | None = None) -> int:
        """Append a line to a room's transcript; return its id (what ``evidence`` cites).

        Args:
            speaker: ``"u:42"`` for a human, the slug for a persona.
            at: when it was said (UTC-aware); ``None`` for now.
        """
        ids.check_room_id(room_id)
        ids.check_speaker(speaker)
        if not isinstance(text, str) or not text.strip() or len(text) > LINE_LIMIT:
            raise InvalidInput(f"text must be a non-empty string of at most {LINE_LIMIT} chars")
        when = self._clock.now() if at is None else as_utc(at)
        self._check_open()
        return await self.store.post_line(room_id, speaker, text, when)

    # ---- room events -------------------------------------------------------------------

    async def send(self, event: RoomEvent) -> None:
        """Report a room event (``RoomOpened``, ``MemberJoined``, …) to the room's personas.

        Raises:
            UnknownRoom: the event needs an open room (send ``RoomOpened`` first).
            InvalidInput: the event cannot happen (e.g. a second human in a private chat).
        """
        if not isinstance(event, _EVENTS):
            raise InvalidInput(f"send() takes a room event such as RoomOpened, got {event!r}")
        self._check_open()
        if isinstance(event, RoomOpened):
            await self.store.save_room(
                StoredRoom(
                    room_id=event.room_id,
                    private=event.private,
                    incognito=event.incognito,
                    kit=event.kit,
                    topic=event.topic,
                    personas=event.personas,
                    humans=event.humans,
                ),
                self._clock.now(),
            )
        await self._supervisor.send(event)
        if isinstance(event, RoomArchived):
            await self.store.archive_room(event.room_id, self._clock.now())

    async def block(self, persona: str, room_id: str) -> str:
        """The memory block for ``persona``'s system prompt in ``room_id`` (cached).

        Built at ``RoomOpened`` and rebuilt at join/leave; never per turn. ``""`` when the
        persona has nothing it may bring into this room.
        """
        ids.check_persona(persona)
        ids.check_room_id(room_id)
        self._check_open()
        return await self._supervisor.block(persona, room_id)

    async def drain(self) -> None:
        """Wait until every queued write has landed."""
        self._check_open()
        await self._supervisor.drain()

    # ---- the human's controls ----------------------------------------------------------

    async def set_memory_note(self, user_id: int, note: str) -> None:
        """Set what every persona should remember about ``user_id`` (≤ 400 chars; "" clears)."""
        self._check_open()
        await self.store.set_memory_note(user_id, note)

    async def set_memory_on(self, user_id: int, on: bool) -> None:
        """The 'Personas remember me' switch. Off: no persona reads or writes about them."""
        self._check_open()
        await self.store.set_memory_on(user_id, on)

    async def set_muted(self, user_id: int, persona: str, muted: bool) -> None:
        """'This persona forgets me': stops that persona's reads and writes about them."""
        self._check_open()
        await self.store.set_muted(user_id, persona, muted)

    async def memories_about(self, user_id: int) -> list[MemoryRow]:
        """Every row, open and closed, that any persona keeps about ``user_id``."""
        ids.check_user_id(user_id)
        self._check_open()
        return await self.store.memories_about(user_id)


@asynccontextmanager
async def open_memory(
    settings: Settings,
    *,
    clock: WallClock | None = None,
    embedder: Embedder | None = None,
    write_path: WritePath | None = None,
) -> AsyncIterator[Memory]:
    """Open the store, start the supervisor, and yield the ``Memory``.

    Args:
        settings: from ``load_settings``.
        clock: the wall clock (tests inject a ``ManualClock``); default the system clock.
        embedder: overrides the embedder ``settings`` name (tests inject a fake).
        write_path: turns quiet rooms into rows; ``None`` leaves transcripts unread.

    Raises:
        ForeignDatabase: the file at ``storage.path`` is not ours; it was not touched.
    """
    clock = clock or SystemClock()
    if embedder is None:
        embedder = await trio.to_thread.run_sync(make_embedder, settings)
    try:
        async with open_store(
            settings.storage.path,
            busy_timeout_ms=settings.storage.busy_timeout_ms,
            read_connections=settings.storage.read_connections,
        ) as store:
            context = ActorContext(
                store=store,
                embedder=embedder,
                clock=clock,
                rules=block_rules(settings),
                write_path=write_path,
            )
            async with trio.open_nursery() as nursery:
                supervisor = Supervisor(nursery, context, settings.actors, settings.supervisor)
                nursery.start_soon(supervisor.run_retirement, name="retirement")
                try:
                    yield Memory(supervisor, store, clock)
                finally:
                    with trio.CancelScope(shield=True):
                        with trio.move_on_after(settings.supervisor.shutdown_deadline_seconds):
                            await supervisor.aclose()
                    nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            await embedder.aclose()
