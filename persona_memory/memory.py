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

import contextlib
import logging
from functools import partial
from contextlib import asynccontextmanager
from datetime import datetime
from typing import AsyncIterator, Callable, Iterable

import attrs
import trio

from . import ids
from .actors.lane import ClearMemories, DeleteMemory, HumanEdit, UndoNotice
from .actors.persona import ActorContext, WritePath
from .clock import SystemClock, WallClock, as_utc
from .compose import block_rules, make_embedder, make_limiter, make_mind, make_slot_reader, recall_rules
from .embedding import Embedder
from .events.kinds import Delivered
from .events.webhooks import Target, run_webhooks
from .core.placement import BuiltBlock
from .errors import InvalidInput, MemoryClosed, NotInRoom, NotOnTrio, NotYourMemory, StorageError, UnknownRoom
from .metrics import Metrics, TimedEmbedder, TimedMind
from .messages import MemberJoined, MemberLeft, RoomArchived, RoomEvent, RoomOpened, RoomWentQuiet
from .minds.port import Mind
from .rooms import Presence
from .rows import MemoryRow, UserControls
from .settings import Settings
from .storage import writes
from .storage.leases import Fence, unfenced
from .storage.rooms import RoomFacts
from .storage.queries import TranscriptLine
from .storage.revocations import Revocations
from .storage.store import Store, open_store_of
from .supervisor import Supervisor, open_supervisor
from .write.pipeline import WritePipeline, WriteReport

log = logging.getLogger(__name__)

LINE_LIMIT = 20_000

_EVENTS = (RoomOpened, MemberJoined, MemberLeft, RoomWentQuiet, RoomArchived)


MAX_RECALL_TEXT = 20_000
"""The longest message ``recall`` takes: a chat message, not a document."""


@attrs.frozen
class Readiness:
    """``Memory.readiness()``: ready, or the problems that keep it from being ready."""

    ready: bool
    problems: tuple[str, ...]
    escalated: tuple[str, ...]


class Memory:
    """The memory of every persona. Get one from ``open_memory``."""

    def __init__(self, supervisor: Supervisor, store: Store, clock: WallClock, metrics: Metrics | None = None) -> None:
        self._supervisor = supervisor
        self._router = supervisor.router  # room events and the calls an actor answers
        self._store = store
        self._clock = clock
        self.metrics = metrics or Metrics()  # what /metrics exposes (``metrics.py``)

    @property
    def supervisor(self) -> Supervisor:
        """The supervisor, for introspection (``live_personas``, ``restarts``)."""
        return self._supervisor

    @property
    def revocations(self) -> Revocations:
        """Where the web app keeps used login links and ended sessions (``web.auth``'s
        ``Revocations``): this memory's store's, so they hold across restarts and workers."""
        return self._store.revocations

    def _check_open(self) -> None:
        if self._supervisor.closed:
            raise MemoryClosed("the memory is closed; open it again with open_memory()")

    async def readiness(self) -> Readiness:
        """Whether the memory can do its work now: open, its store answering, and no persona
        escalated (a slice parked after its writer failed it too often). Never raises."""
        if self._supervisor.closed:
            return Readiness(False, ("the memory is shutting down",), ())
        try:
            escalated = tuple(await self._store.backlog.parked_personas())
        except StorageError as exc:
            return Readiness(False, (f"the store does not answer: {exc}",), ())
        problems = tuple(
            f"{persona}'s writer failed a slice too often; it is parked (persona-memory doctor shows why)"
            for persona in escalated
        ) + tuple(f"{persona} was stopped: {error}" for persona, error in sorted(self._supervisor.failed.items()))
        escalated = tuple(sorted({*escalated, *self._supervisor.failed}))
        return Readiness(not problems, problems, escalated)

    # ---- transcript --------------------------------------------------------------------

    async def post_line(
        self, room_id: str, speaker: str, text: str, at: datetime | None = None, *, require_present: bool = False
    ) -> int:
        """Append a line to a room's transcript; return its id (what ``evidence`` cites).

        The line records who is in the room now (the speaker included): only the personas
        present may ever read it, and a row citing it counts only the humans present as its
        witnesses. A line posted to an incognito room is not kept at all: the answer is 0. A
        line posted while its room is not open is kept, but no persona's write path reads it
        (a runtime may store a transcript before it opens the room).

        Args:
            speaker: ``"u:42"`` for a human, the slug for a persona.
            at: when it was said (UTC-aware, 1970..2199); ``None`` for now.
            require_present: refuse a line that no persona could ever read or that names a
                speaker the room does not hold, instead of keeping it (the runtime API over
                HTTP posts this way).

        Raises:
            UnknownRoom: with ``require_present``, the room is not open. Nothing was stored.
            NotInRoom: with ``require_present``, the speaker is neither a human present in the
                room nor one of its personas. Nothing was stored.
        """
        ids.check_room_id(room_id)
        ids.check_speaker(speaker)
        if not isinstance(text, str) or not text.strip() or len(text) > LINE_LIMIT:
            raise InvalidInput(f"text must be a non-empty string of at most {LINE_LIMIT} chars")
        ids.check_unicode(text, "text")
        when = self._clock.now() if at is None else as_utc(at)
        self._check_open()
        presence, incognito = await self._hearers(room_id)
        if require_present:
            _check_present(room_id, presence, speaker)
        if presence is None and incognito:
            return 0  # an incognito room keeps no line, open or not (its record may be pending)
        if presence is None:
            log.warning("a line was posted to room %r, which is not open: it is kept, but no "
                        "persona will read it (send RoomOpened first)", room_id)
        heard = None if presence is None else _heard_by(presence, speaker)
        return await self._store.transcript.post(room_id, speaker, text, when, heard)

    async def _hearers(self, room_id: str) -> tuple[Presence | None, bool | None]:
        """Who hears a line in ``room_id`` now (``None``: not open) and, when it is not open,
        whether the room id was opened incognito (``None``: never opened)."""
        rooms = self._router.rooms
        return rooms.presence(room_id), rooms.incognito(room_id)

    # ---- room events -------------------------------------------------------------------

    async def send(self, event: RoomEvent) -> None:
        """Report a room event (``RoomOpened``, ``MemberJoined``, …) to the room's personas.

        The room is recorded in the database in the background (see ``room_recorder``): the
        block never waits for that write, and a store that refuses writes still serves blocks.

        Raises:
            UnknownRoom: the event needs an open room (send ``RoomOpened`` first).
            InvalidInput: the event cannot happen (e.g. a second human in a private chat, or a
                reopen that flips the room's ``incognito``).
        """
        if not isinstance(event, _EVENTS):
            raise InvalidInput(f"send() takes a room event such as RoomOpened, got {event!r}")
        self._check_open()
        await self._take(event)

    async def _take(self, event: RoomEvent) -> None:
        """Check ``event``, record it and deliver it (here: the router, to the registry in memory)."""
        await self._router.send(event)

    async def block(self, persona: str, room_id: str) -> str:
        """The memory block for ``persona``'s system prompt in ``room_id`` (cached).

        Built at ``RoomOpened`` and rebuilt at join/leave; never per turn. ``""`` when the
        persona has nothing it may bring into this room.
        """
        ids.check_persona(persona)
        ids.check_room_id(room_id)
        self._check_open()
        return await self._router.block(persona, room_id)

    async def built_block(self, persona: str, room_id: str) -> BuiltBlock:
        """``block`` with what a runtime needs to place it: the generation of the room it was
        built for, its length and limit, and the ready system block for the common chat APIs
        (``core.placement``)."""
        ids.check_persona(persona)
        ids.check_room_id(room_id)
        self._check_open()
        generation, text, used = await self._router.built_block(persona, room_id)
        return BuiltBlock(persona, room_id, text, generation, self._router.rules.char_limit, used)

    async def recall(self, persona: str, room_id: str, text: str) -> str:
        """The recall note for a human's message (design §3, retrieval on demand).

        Run it on each human message and hand the note to the persona in that user turn. It
        searches only the rows the audience rule admits for the people present now, leaves
        out those already in the room's block, ranks them by the same hybrid relevance, and
        returns at most ``recall.limit`` lines within ``recall.char_limit`` characters under a
        one-line header — or ``""`` when nothing clears ``recall.min_score``, and always in an
        incognito room. It makes no model call, never changes the cached block, and touches
        the rows it returns.

        Raises:
            InvalidInput: ``text`` is not a string, or is over ``MAX_RECALL_TEXT`` characters.
        """
        ids.check_persona(persona)
        ids.check_room_id(room_id)
        if not isinstance(text, str):
            raise InvalidInput(f"recall text must be a str, not {type(text).__name__}")
        if len(text) > MAX_RECALL_TEXT:
            raise InvalidInput(
                f"recall text is {len(text)} characters; pass the message itself, at most {MAX_RECALL_TEXT}"
            )
        self._check_open()
        if not text.strip():
            self._router.room_of(persona, room_id)
            return ""
        with self.metrics.recall.time():
            return await self._router.recall(persona, room_id, text)

    async def drain(self) -> None:
        """Wait until every queued write has landed."""
        self._check_open()
        await self._router.drain()

    # ---- events ------------------------------------------------------------------------

    async def events_after(self, after_id: int, limit: int = 100) -> list[Delivered]:
        """The events committed after event ``after_id``, oldest first, at most ``limit``
        (``docs/events.md``): ids and switches, no text about a person.

        Raises:
            InvalidInput: ``after_id`` is not an int >= 0, or ``limit`` not 1..1000.
        """
        if isinstance(after_id, bool) or not isinstance(after_id, int) or after_id < 0:
            raise InvalidInput(f"after_id must be an event id (an int >= 0), got {after_id!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise InvalidInput(f"limit must be an int from 1 to 1000, got {limit!r}")
        self._check_open()
        return await self._store.outbox.after(after_id, limit)

    async def newest_event(self) -> int:
        """The id of the newest event so far (0: none yet); ``events_after`` it gives what
        happens from now on."""
        self._check_open()
        return await self._store.outbox.newest()

    # ---- the human's controls ----------------------------------------------------------

    async def set_memory_note(self, user_id: int, note: str) -> None:
        """Set what every persona should remember about ``user_id`` (≤ 400 chars; "" clears).
        The live blocks of the rooms they are in show it when this returns."""
        self._check_open()
        await self._store.controls.set_note(user_id, note, now=self._clock.now())
        await self._router.controls_changed(user_id)

    async def set_memory_on(self, user_id: int, on: bool) -> None:
        """The 'Personas remember me' switch. Off: no persona reads or writes about them — the
        live blocks of the rooms they are in drop them when this returns, and a write under
        way stores nothing about them or from their lines."""
        self._check_open()
        await self._store.controls.set_memory_on(user_id, on, now=self._clock.now())
        await self._router.controls_changed(user_id)

    async def set_muted(self, user_id: int, persona: str, muted: bool) -> None:
        """'This persona forgets me': stops that persona's reads and writes about them, in its
        live blocks and in a write under way too, when this returns."""
        self._check_open()
        await self._store.controls.set_muted(user_id, persona, muted, now=self._clock.now())
        await self._router.controls_changed(user_id, persona)

    async def memories_about(self, user_id: int) -> list[MemoryRow]:
        """Every row, open and closed, that any persona keeps about ``user_id``."""
        ids.check_user_id(user_id)
        self._check_open()
        return await self._store.memories.about(user_id)

    async def delete_memory(self, user_id: int, memory_id: int) -> None:
        """Physically delete one row about ``user_id`` (the human's delete), in turn with the
        writes of the persona that holds it. The next open no longer loads it.

        Raises:
            NotYourMemory: no such row, or it is not about ``user_id``. Nothing changes.
        """
        ids.check_user_id(user_id)
        ids.check_row_id(memory_id, "memory_id")
        self._check_open()
        persona = await self._store.memories.persona_of(user_id, memory_id)
        await self._edit(persona, DeleteMemory(user_id, memory_id))

    async def user_controls(self, user_id: int) -> UserControls:
        """The user's switches and note (the defaults if they never set anything)."""
        ids.check_user_id(user_id)
        self._check_open()
        return (await self._store.controls.of([user_id]))[user_id]

    async def personas_for(self, user_id: int) -> list[str]:
        """Personas that hold rows about the user, shared a room with them, or were muted."""
        ids.check_user_id(user_id)
        self._check_open()
        with contextlib.suppress(StorageError):  # refused: the page shows what the file holds
            await self._supervisor.recorder.flush()  # the rooms they shared, recorded
        return await self._store.personas_for(user_id)

    async def evidence(self, user_id: int, memory_id: int) -> list[TranscriptLine]:
        """The transcript lines a row about the user cites ("where did you get that?").

        Lines are shown only when the user witnessed the row's forming (they were in the room).

        Raises:
            NotYourMemory: no such row, or it is not about the user.
        """
        ids.check_user_id(user_id)
        row = await self._own_row(user_id, memory_id)
        if user_id not in row.witnessed:
            return []
        return await self._store.transcript.cited(row.room_id, list(row.evidence))

    async def meter(self, user_id: int, persona: str) -> tuple[int, int]:
        """(chars used, limit) of the block ``persona`` would build for a private chat with the
        user right now — the meter of the manage page. Reads only; touches nothing."""
        used, limit, _ = await self.private_block(user_id, persona)
        return used, limit

    async def private_block(self, user_id: int, persona: str) -> tuple[int, int, frozenset[int]]:
        """(chars used, limit, ids of the rows it loads) of the block ``persona`` would build
        for a private chat with the user right now: the meter, and which lines ride in it.
        Reads only; touches nothing."""
        ids.check_user_id(user_id)
        ids.check_persona(persona)
        self._check_open()
        return await self._router.meter(persona, user_id)

    async def room_facts(self, room_ids: Iterable[str]) -> dict[str, RoomFacts]:
        """What the human's page says about these rooms: each known one's title (``None`` if
        the runtime gave none), whether it is a private chat, and its personas."""
        wanted = [ids.check_room_id(r) for r in room_ids]
        self._check_open()
        with contextlib.suppress(StorageError):  # refused: the page shows what the file holds
            await self._supervisor.recorder.flush()  # the rooms opened so far, recorded
        return await self._store.rooms.facts(wanted)

    async def display_names(self, user_ids: Iterable[int]) -> dict[int, str]:
        """The latest display name the runtime gave each of these users (``RoomOpened.names``);
        a user it never named is left out."""
        wanted = [ids.check_user_id(u) for u in user_ids]
        self._check_open()
        with contextlib.suppress(StorageError):
            await self._supervisor.recorder.flush()
        return await self._store.names.of(wanted)

    async def clear_memories(self, user_id: int, persona: str | None = None) -> int:
        """Physically delete every row about the user — kept by ``persona``, or by all
        personas — each in turn with that persona's writes. Returns how many rows went."""
        ids.check_user_id(user_id)
        if persona is not None:
            ids.check_persona(persona)
        self._check_open()
        deleted = 0
        for holder in await self._store.memories.holders_about(user_id):
            if persona is None or holder == persona:
                deleted += await self._edit(holder, ClearMemories(user_id))
        return deleted

    async def export(self, user_id: int) -> dict:
        """Everything personas keep about the user, JSON-ready: every line (open and closed)
        with its dates, kind, origin and cited transcript lines; the note; the switches; the
        notices."""
        ids.check_user_id(user_id)
        self._check_open()
        rows = await self.memories_about(user_id)
        controls = await self.user_controls(user_id)
        memories = []
        for row in rows:
            memories.append(
                {
                    "id": row.id,
                    "persona": row.persona,
                    "kind": row.kind,
                    "text": row.text,
                    "importance": row.importance,
                    "open": row.valid_to is None,
                    "valid_from": row.valid_from,
                    "valid_to": row.valid_to,
                    "replaced_by": row.closed_by,
                    "noted": row.created.isoformat(),
                    "last_recalled": row.last_recalled.isoformat() if row.last_recalled else None,
                    "times_recalled": row.recall_count,
                    "room": row.room_id,
                    "witnessed_by": [f"u:{u}" for u in sorted(row.witnessed)],
                    "evidence": [
                        {"line": line.id, "speaker": line.speaker, "text": line.text, "at": line.at.isoformat()}
                        for line in await self.evidence(user_id, row.id)
                    ],
                }
            )
        return {
            "user": f"u:{user_id}",
            "exported": self._clock.now().isoformat(),
            "personas_remember_me": controls.memory_on,
            "memory_note": controls.memory_note,
            "muted_personas": sorted(controls.muted),
            "memories": memories,
            "notices": [
                {"id": n.id, "persona": n.persona, "text": n.text, "memories": list(n.memory_ids), "at": n.created.isoformat()}
                for n in await self.notices(user_id)
            ],
        }

    async def _own_row(self, user_id: int, memory_id: int) -> MemoryRow:
        ids.check_row_id(memory_id, "memory_id")
        self._check_open()
        for row in await self._store.memories.about(user_id):
            if row.id == memory_id:
                return row
        raise NotYourMemory(f"memory {memory_id} does not exist or is not about u:{user_id}")

    async def notices(self, user_id: int) -> list[writes.Notice]:
        """The user's toasts, newest first: who noted what, with the ids each announced."""
        ids.check_user_id(user_id)
        self._check_open()
        return await self._store.notices.of(user_id)

    async def undo(self, user_id: int, notice_id: int) -> list[int]:
        """Undo a toast: delete exactly the rows it announced (those about ``user_id``), and
        reopen any row they had closed. Returns the ids deleted.

        Raises:
            NotYourNotice: no such notice for this user, or it was undone already.
        """
        ids.check_user_id(user_id)
        ids.check_row_id(notice_id, "notice_id")
        self._check_open()
        persona = await self._store.notices.persona_of(user_id, notice_id)
        return await self._edit(persona, UndoNotice(user_id, notice_id))

    async def _edit(self, persona: str, edit: HumanEdit) -> object:
        """Run a human's edit at ``persona``'s actor, in turn with its writes (it purges the
        blocks it caches of what went)."""
        return await self._router.edit(persona, edit)

    async def sweep(self, *, parked_only: bool = False, personas: Iterable[str] | None = None) -> datetime | None:
        """Queue the write path wherever a persona's cursor fell behind its room's transcript
        (the daily sweep); parked slices whose retry time has come are retried too.

        Args:
            parked_only: retry only the parked slices that are due (the frequent check).
            personas: only these personas' rooms (``None``: every persona's; a cluster
                worker sweeps the personas it owns).

        Returns:
            The earliest retry time of a slice still parked, if any.
        """
        self._check_open()
        now = self._clock.now()
        if parked_only and not await self._store.backlog.parked_due(now):
            return None
        await self._supervisor.recorder.flush()  # the rooms opened so far, recorded
        later: list[datetime] = []
        only = None if personas is None else frozenset(personas)
        behind = await self._store.backlog.rooms_behind(
            next(iter(only)) if only is not None and len(only) == 1 else None
        )
        for item in behind:
            if only is not None and item.persona not in only:
                continue
            if item.parked_until is not None and item.parked_until > now:
                later.append(item.parked_until)
                continue
            if parked_only and item.parked_until is None:
                continue
            room = self._router.rooms.get(item.room.room_id)
            if room is None or item.persona not in room.personas:
                room = item.room  # as last recorded (generation 0: not open here)
            await self._router.queue_write(item.persona, room)
        return min(later, default=None)

    async def run_sweeps(self, interval: float, parked_check: float) -> None:
        """Until cancelled: a full sweep every ``interval`` seconds (the first one interval
        after opening), and every ``parked_check`` seconds a retry of the parked slices that
        are due — so a slice parked for a minute is retried after about a minute, not a day."""
        next_sweep = trio.current_time() + interval
        while True:
            await trio.sleep(max(0.0, min(parked_check, next_sweep - trio.current_time())))
            try:
                if trio.current_time() >= next_sweep:
                    next_sweep = trio.current_time() + interval
                    await self.sweep()
                else:
                    await self.sweep(parked_only=True)
            except MemoryClosed:
                return
            except Exception:  # a sweep that fails is retried at the next interval
                log.exception("the sweep failed; it runs again in %.0f s", parked_check)


def _check_present(room_id: str, presence: Presence | None, speaker: str) -> None:
    """Refuse a line for a room that is not open, or from a speaker the room does not hold."""
    if presence is None:
        raise UnknownRoom(
            f"room {room_id!r} is not open, so no persona could read the line; send RoomOpened "
            "(the event \"opened\") for it first. The line was not stored"
        )
    uid = ids.parse_user_ref(speaker)
    if speaker in presence.personas or (uid is not None and uid in presence.humans):
        return
    humans = ", ".join(ids.user_ref(h) for h in sorted(presence.humans)) or "none"
    raise NotInRoom(
        f"{speaker} is not in room {room_id!r} (its humans: {humans}; its personas: "
        f"{', '.join(presence.personas)}); send MemberJoined (\"member_joined\") for a human who "
        "came in. The line was not stored"
    )


def _heard_by(presence: Presence, speaker: str) -> Presence:
    """``presence`` with the speaker in it: whoever says a line is there."""
    uid = ids.parse_user_ref(speaker)
    if uid is not None and uid not in presence.humans:
        return attrs.evolve(presence, humans=presence.humans | {uid})
    if uid is None and speaker not in presence.personas:
        return attrs.evolve(presence, personas=(*presence.personas, speaker))
    return presence


def _require_trio() -> None:
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        raise NotOnTrio(
            "open_memory runs on trio and was entered outside it (asyncio?): enter it inside "
            "trio.run(...); from asyncio, use `async with "
            "persona_memory.open_memory_in_asyncio(settings)`, from plain threads "
            "persona_memory.open_memory_in_thread(settings), in this process; or run "
            "`persona-memory serve` and call its runtime API over HTTP (persona_memory.client)"
        ) from None


def open_memory(
    settings: Settings,
    *,
    clock: WallClock | None = None,
    embedder: Embedder | None = None,
    mind: Mind | None = None,
    write_path: WritePath | None = None,
    on_report: Callable[[WriteReport], None] | None = None,
) -> contextlib.AbstractAsyncContextManager[Memory]:
    """Open the store, start the supervisor and the sweep, and yield the ``Memory``.

    Args:
        settings: from ``load_settings``.
        clock: the wall clock (tests inject a ``ManualClock``); default the system clock.
        embedder: overrides the embedder ``settings`` name (tests inject a fake).
        mind: overrides the mind ``settings`` name (tests inject a ``FakeMind``).
        write_path: replaces the whole write path (tests of the actor system).
        on_report: called with what each run of the write path did (the demo prints it).

    Raises:
        ForeignDatabase: the store (the file at ``storage.path``, or the database at
            ``storage.url``) is not ours; it was not touched.
        ConfigError: an HTTP mind or embedder is configured without what it needs.
        NotOnTrio: entered from asyncio or outside any event loop.
    """
    return open_memory_as(
        Memory, settings, clock=clock, embedder=embedder, mind=mind, write_path=write_path, on_report=on_report
    )


MakeMemory = Callable[[Supervisor, Store, WallClock, Metrics], Memory]


@asynccontextmanager
async def open_memory_as(
    make: MakeMemory,
    settings: Settings,
    *,
    clock: WallClock | None = None,
    embedder: Embedder | None = None,
    mind: Mind | None = None,
    write_path: WritePath | None = None,
    on_report: Callable[[WriteReport], None] | None = None,
    fence: Fence = unfenced,
) -> AsyncIterator[Memory]:
    """``open_memory``, yielding ``make(supervisor, store, clock, metrics)``, with every write
    of a persona's carrying the epoch ``fence`` gives (a cluster worker: ``cluster/node.py``)."""
    _require_trio()
    clock = clock or SystemClock()
    limiter = make_limiter(settings)
    if embedder is None:
        embedder = await trio.to_thread.run_sync(make_embedder, settings, limiter)
    hooks = Target.all_from_env(settings.events)  # a missing secret is said before anything opens
    if mind is None and write_path is None:
        mind = make_mind(settings, limiter)
    try:
        async with open_store_of(settings.storage) as store:
            metrics = Metrics()
            timed_embedder = TimedEmbedder(embedder, metrics)
            if write_path is None:
                assert mind is not None

                def report(one: WriteReport) -> None:
                    metrics.observe_report(one)
                    if on_report is not None:
                        on_report(one)

                write_path = WritePipeline(
                    store, TimedMind(mind, metrics), timed_embedder, clock, settings.write,
                    slots=make_slot_reader(), on_report=report, fence=fence,
                    offload=getattr(mind, "processes", None),  # the offline reader's workers
                )
            context = ActorContext(
                store=store,
                embedder=timed_embedder,
                clock=clock,
                rules=block_rules(settings),
                write_path=write_path,
                recall=recall_rules(settings),
                park_seconds=settings.write.park_backoff_max_seconds,
                on_block_built=metrics.block_build.observe,
                fence=fence,
            )
            async with open_supervisor(context, settings.actors, settings.supervisor) as supervisor:
                metrics.watch(supervisor)
                memory = make(supervisor, store, clock, metrics)
                async with trio.open_nursery() as nursery:
                    await nursery.start(partial(run_webhooks, store.outbox, settings.events, clock, targets=hooks))
                    nursery.start_soon(
                        memory.run_sweeps,
                        settings.write.sweep_interval_seconds,
                        settings.write.park_backoff_initial_seconds,
                        name="sweep",
                    )
                    try:
                        yield memory
                    finally:
                        # Close intake and let the writes land first; the sweep may be in a
                        # database call meanwhile, and is cancelled after.
                        await supervisor.shut_down()
                        nursery.cancel_scope.cancel()
    finally:
        with trio.CancelScope(shield=True):
            if mind is not None:
                await mind.aclose()
            await embedder.aclose()
