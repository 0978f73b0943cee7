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
from typing import AsyncIterator, Callable

import trio

from . import ids
from .actors.persona import ActorContext, WritePath
from .clock import SystemClock, WallClock, as_utc
from .compose import block_rules, make_embedder, make_limiter, make_mind
from .embedding import Embedder
from .errors import InvalidInput, MemoryClosed
from .messages import MemberJoined, MemberLeft, RoomArchived, RoomEvent, RoomOpened, RoomWentQuiet
from .minds.port import Mind
from .rooms import RoomState
from .rows import MemoryRow
from .settings import Settings
from .storage import writes
from .storage.store import Store, StoredRoom, open_store
from .supervisor import Supervisor
from .write.pipeline import WritePipeline, WriteReport

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

    async def delete_memory(self, user_id: int, memory_id: int) -> None:
        """Physically delete one row about ``user_id`` (the human's delete), in turn with the
        writes of the persona that holds it. The next open no longer loads it.

        Raises:
            NotYourMemory: no such row, or it is not about ``user_id``. Nothing changes.
        """
        ids.check_user_id(user_id)
        if isinstance(memory_id, bool) or not isinstance(memory_id, int):
            raise InvalidInput(f"memory_id must be an int, got {memory_id!r}")
        self._check_open()
        persona = await self.store.read(lambda conn: writes.memory_persona(conn, user_id, memory_id))
        await self._supervisor.edit(persona, lambda: self.store.delete_memory(user_id, memory_id))

    async def notices(self, user_id: int) -> list[writes.Notice]:
        """The user's toasts, newest first: who noted what, with the ids each announced."""
        ids.check_user_id(user_id)
        self._check_open()
        return await self.store.read(lambda conn: writes.notices(conn, user_id))

    async def undo(self, user_id: int, notice_id: int) -> list[int]:
        """Undo a toast: delete exactly the rows it announced (those about ``user_id``), and
        reopen any row they had closed. Returns the ids deleted.

        Raises:
            NotYourNotice: no such notice for this user, or it was undone already.
        """
        ids.check_user_id(user_id)
        if isinstance(notice_id, bool) or not isinstance(notice_id, int):
            raise InvalidInput(f"notice_id must be an int, got {notice_id!r}")
        self._check_open()
        persona = await self.store.read(lambda conn: writes.notice_persona(conn, user_id, notice_id))
        now = self._clock.now()
        return await self._supervisor.edit(
            persona, lambda: self.store.write(lambda conn: writes.undo(conn, user_id, notice_id, now))
        )

    async def sweep(self) -> datetime | None:
        """Queue the write path wherever a persona's cursor fell behind its room's transcript
        (the daily sweep; parked slices whose retry time has come are retried too).

        Returns the earliest retry time of a slice still parked, if any.
        """
        self._check_open()
        now = self._clock.now()
        later: list[datetime] = []
        for item in await self.store.read(writes.rooms_behind):
            if item.parked_until is not None and item.parked_until > now:
                later.append(item.parked_until)
                continue
            room = self._supervisor.rooms.get(item.room.room_id)
            if room is None or item.persona not in room.personas:
                room = RoomState(
                    room_id=item.room.room_id,
                    personas=item.room.personas,
                    present=item.room.humans,
                    private=item.room.private,
                    incognito=item.room.incognito,
                    kit=item.room.kit,
                    topic=item.room.topic,
                    generation=0,
                )
            await self._supervisor.queue_write(item.persona, room)
        return min(later, default=None)

    async def run_sweeps(self, interval: float) -> None:
        """Sweep every ``interval`` seconds, sooner when a parked slice is due; until cancelled."""
        while True:
            wait = interval
            try:
                retry_at = await self.sweep()
            except MemoryClosed:
                return
            if retry_at is not None:
                wait = min(interval, max(1.0, (retry_at - self._clock.now()).total_seconds()))
            await trio.sleep(wait)


@asynccontextmanager
async def open_memory(
    settings: Settings,
    *,
    clock: WallClock | None = None,
    embedder: Embedder | None = None,
    mind: Mind | None = None,
    write_path: WritePath | None = None,
    on_report: Callable[[WriteReport], None] | None = None,
) -> AsyncIterator[Memory]:
    """Open the store, start the supervisor and the sweep, and yield the ``Memory``.

    Args:
        settings: from ``load_settings``.
        clock: the wall clock (tests inject a ``ManualClock``); default the system clock.
        embedder: overrides the embedder ``settings`` name (tests inject a fake).
        mind: overrides the mind ``settings`` name (tests inject a ``FakeMind``).
        write_path: replaces the whole write path (tests of the actor system).
        on_report: called with what each run of the write path did (the demo prints it).

    Raises:
        ForeignDatabase: the file at ``storage.path`` is not ours; it was not touched.
        ConfigError: an HTTP mind or embedder is configured without what it needs.
    """
    clock = clock or SystemClock()
    limiter = make_limiter(settings)
    if embedder is None:
        embedder = await trio.to_thread.run_sync(make_embedder, settings, limiter)
    if mind is None and write_path is None:
        mind = make_mind(settings, limiter)
    try:
        async with open_store(
            settings.storage.path,
            busy_timeout_ms=settings.storage.busy_timeout_ms,
            read_connections=settings.storage.read_connections,
        ) as store:
            if write_path is None:
                assert mind is not None
                write_path = WritePipeline(store, mind, embedder, clock, settings.write, on_report=on_report)
            context = ActorContext(
                store=store,
                embedder=embedder,
                clock=clock,
                rules=block_rules(settings),
                write_path=write_path,
            )
            async with trio.open_nursery() as nursery:
                supervisor = Supervisor(nursery, context, settings.actors, settings.supervisor)
                memory = Memory(supervisor, store, clock)
                nursery.start_soon(supervisor.run_retirement, name="retirement")
                nursery.start_soon(memory.run_sweeps, settings.write.sweep_interval_seconds, name="sweep")
                try:
                    yield memory
                finally:
                    with trio.CancelScope(shield=True):
                        with trio.move_on_after(settings.supervisor.shutdown_deadline_seconds):
                            await supervisor.aclose()
                    nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            if mind is not None:
                await mind.aclose()
            await embedder.aclose()
