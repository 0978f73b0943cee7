"""A persona's memory actor: the one owner of its persona's block cache, row index and touches.

Rules:
- One task owns the actor's state. ``run`` handles the mailbox in order — room events, a
  human's edits, flush requests — and the writer's reports, which it applies itself before the
  next envelope. Nothing else changes the block cache, the row index or the pending touches.
- Open, join and leave (re)build that room's block at once; quiet and archive hand a
  ``QuietJob`` to the writer lane, so a slow write never stalls the mailbox.
- The writer only does I/O (``perform``): model calls and transactions. What it did comes back
  as a report — ``Wrote``, ``Edited``, ``Touched`` — applied here, in order. It may read the
  row index's route index for the router (``RowIndex.routing``: the index, or a snapshot to
  build it from on a worker thread); the index it built comes back with ``Wrote`` and is kept
  when it matches the row index.
- A block is cached per room with the room's generation. ``block()`` answers from the cache
  without touching the database; a caller asking for a newer generation waits for its build.
  A delivery older than the cached generation is stale and skipped — an archive included: it
  forgets only the life of the room it archived, never a newer one.
- A build that fails is cached as the failure: ``block()`` raises it, the actor lives on.
- A human's edit (delete, undo, clear-all) is a typed job the actor puts on the lane; once its
  report comes back, every cached block that showed a row now gone is rebuilt at once (the one
  exception to "rebuilt only on open, join or leave"), and only then does the caller hear back.
- When the actor stops (retired, shut down, or its writer escalated), every ``block()`` still
  waiting for a build raises ``MemoryClosed`` instead of waiting forever.
- Rows that loaded into a block (or a recall note) are touched later, in one write on the
  lane, coalesced: the stamps gather for ``TOUCH_GATHER_SECONDS`` (a flush hands them over at
  once), then go as one ``TouchJob`` at a time, carrying a snapshot of the stamps; stamps that
  found the lane full go with the next one, and the last ones are queued when the actor
  closes, so none is lost.
  Stamps that storage refuses (a read-only or full disk) are logged and dropped, never a
  crash: the blocks are served from what the actor holds.
- An incognito room's block is empty and costs no read; so is its recall note.
- The humans' switches and the persona's version are read fresh for every build and note —
  from the file when the store ran a write since the last read that could change them
  (``Store.changes``), or when a present human was not among those read; otherwise what that
  read gave still holds, and no thread hop is needed to know it. The persona's own write
  changes its rows, never a switch: when no one else wrote meanwhile and the actor applied
  what it posted, the last read still holds, at the new version.
- The recall note (``RecallRequested``) is computed here, in turn with the room's events, so
  it sees the people present now and the block built for them; it reads the humans'
  switches fresh, never changes a cached block, and its rows are touched like a block's.
- A topic the embedder cannot embed (the provider is down) costs the block its relevance term,
  never the block itself.
"""

from __future__ import annotations

import logging
import math
import time
from datetime import timedelta
from typing import Awaitable, Callable, Mapping, Protocol

import attrs
import outcome
import trio

from ..clock import WallClock
from ..core.block import BlockRules, build_from_table
from ..core.ranking import Topic
from ..core.recall import RecallRules, recall_note
from ..embedding import Embedder
from ..errors import InvalidInput, MemoryClosed, ProviderError, StorageError
from ..messages import MemberJoined, MemberLeft, RoomArchived, RoomOpened, RoomWentQuiet
from ..rooms import RoomState
from ..rows import UserControls
from ..storage import writes
from ..storage.leases import Fence, unfenced
from ..storage.store import Store
from .envelopes import (
    CatchUp,
    Closing,
    Delivered,
    EditRequested,
    Envelope,
    FlushRequested,
    RecallRequested,
    Wake,
)
from .lane import (
    ClearMemories,
    DeleteMemory,
    Edited,
    EditJob,
    FlushJob,
    QuietJob,
    Report,
    Touched,
    TouchJob,
    UndoNotice,
    WriteJob,
    WriteLane,
    Wrote,
)
from .row_index import RowIndex

try:
    from typing import assert_never
except ImportError:  # pragma: no cover
    from typing_extensions import assert_never

log = logging.getLogger(__name__)

TOUCH_GATHER_SECONDS = 1.0
"""Recall stamps gather this long before they are written, in one job: a touch written right
after each block or note competed with the next one (a recall note at 10,000 rows: 1.65 ms
p50 with a touch after every note, 0.97 ms without)."""


STATE_USERS_KEPT = 1024
"""At most about this many humans' switches are kept from earlier state reads (a read that
would keep more keeps only its own)."""


class WritePath(Protocol):
    """Turns a room's transcript since the persona's cursor into rows (the write path).

    ``block`` is the persona's current block for the people present (``""`` if none);
    ``routing_index`` gives the actor's rows as the router reads them, when asked (the write
    path uses it only while it matches the store's version). What it returns may carry ``posted`` (a ``storage.writes.Posted``: what it committed); the actor
    applies that to its row index instead of reading every row again.
    """

    async def __call__(
        self, persona: str, room: RoomState, *, archiving: bool, block: str, routing_index: Callable[[], object]
    ) -> object: ...


@attrs.frozen
class ActorContext:
    """What every persona actor is given by the composition root."""

    store: Store
    embedder: Embedder
    clock: WallClock
    rules: BlockRules
    write_path: WritePath | None = None
    recall: RecallRules = RecallRules()
    park_seconds: float = 21600.0  # how long a poison slice waits before the sweep retries it
    rooms_recorded: Callable[[], Awaitable[None]] | None = None  # the room recorder's flush
    on_block_built: Callable[[float], None] | None = None  # seconds one build took (metrics)
    fence: Fence = unfenced  # the epoch the persona's writes carry (a cluster worker's lease)


@attrs.frozen
class StateRead:
    """What the actor's last state read gave: the store's ``changes`` when it began, the
    persona's version and the switches of the humans read."""

    changes: int
    version: int | None
    controls: Mapping[int, UserControls]


@attrs.frozen
class CachedBlock:
    generation: int
    text: str = ""
    error: BaseException | None = None
    room: RoomState | None = None
    loaded: frozenset[int] = frozenset()
    used: int = 0  # the block's meter: characters of memory lines in it


class PersonaActor:
    """One persona's memory. The supervisor runs ``run`` (the owner) and the lane's writer
    (``perform``, restarted when it crashes; ``abandon`` for a poison job)."""

    def __init__(self, persona: str, context: ActorContext, lane: WriteLane) -> None:
        self.persona = persona
        self._ctx = context
        self._lane = lane
        self._index = RowIndex()
        self._blocks: dict[str, CachedBlock] = {}
        self._topics: dict[str, tuple[str, Topic]] = {}
        self._state: StateRead | None = None
        self._built = trio.Event()
        self._pending_touches: dict[int, tuple] = {}
        self._touch_queued = False
        self._touches_due = math.inf  # trio time the pending touches are to be handed over
        self._edits_to_purge: list[tuple[EditJob, outcome.Outcome]] = []
        self._stopped = False
        self.handled = 0
        self.last_active = trio.current_time()

    # ---- the mailbox -------------------------------------------------------------------

    async def run(self, mailbox: trio.MemoryReceiveChannel[Envelope]) -> None:
        """Handle envelopes and the writer's reports until the mailbox ends (the supervisor
        sent ``Closing`` and closed its side; the writer closed the lane's waker)."""
        async with mailbox:
            while True:
                envelope = None
                with trio.move_on_at(self._touch_deadline()):
                    try:
                        envelope = await mailbox.receive()
                    except trio.EndOfChannel:
                        break
                if envelope is None:  # the gathered touches are due
                    self._queue_touches()
                    continue
                await self._take_reports()
                self.last_active = trio.current_time()
                await self._handle(envelope)
                if not isinstance(envelope, Wake):
                    self.handled += 1
                await self._take_reports()
                self.last_active = trio.current_time()
        await self._take_reports()

    async def _take_reports(self) -> None:
        """Apply the writer's reports; after an edit, purge the blocks, then answer its caller."""
        self._apply_reports()
        while self._edits_to_purge:
            job, result = self._edits_to_purge.pop(0)
            if not isinstance(result, outcome.Error):
                await self._purge_deleted()
            job.reply.set(result)

    def stop(self) -> None:
        """The actor is gone: wake every ``block()`` still waiting, to raise ``MemoryClosed``."""
        self._stopped = True
        self._built.set()

    async def _handle(self, envelope: Envelope) -> None:
        match envelope:
            case Delivered(event=RoomOpened() | MemberJoined() | MemberLeft(), room=room):
                await self._rebuild(room)
            case Delivered(event=RoomWentQuiet(), room=room):
                await self._lane.submit(QuietJob(room, block=self._cached_text(room.room_id)))
            case Delivered(event=RoomArchived(), room=room):
                await self._lane.submit(
                    QuietJob(room, archiving=True, block=self._cached_text(room.room_id))
                )
                cached = self._blocks.get(room.room_id)
                if cached is None or cached.generation <= room.generation:
                    self._blocks.pop(room.room_id, None)
                    self._topics.pop(room.room_id, None)
            case Delivered():
                raise AssertionError(f"unexpected event {envelope.event!r}")
            case CatchUp(room=room):
                await self._lane.submit(QuietJob(room))
            case EditRequested(edit=edit, reply=reply):
                await self._lane.submit(EditJob(edit, reply))
            case RecallRequested(room=room, query=query, reply=reply):
                try:
                    reply.set(outcome.Value(await self._recall(room, query)))
                except Exception as exc:
                    log.exception("%s: the recall note for room %r failed", self.persona, room.room_id)
                    reply.set(outcome.Error(exc))
            case FlushRequested(done=done):
                self._queue_touches(now=True)
                await self._lane.submit(FlushJob(done))
            case Wake():
                pass  # the reports were applied before and are applied after
            case Closing():
                self._queue_touches(final=True)
                self._lane.close()
            case _:
                assert_never(envelope)

    def _apply_reports(self) -> None:
        """Apply what the writer reported, in the order it happened; once its lane has no
        room's write queued or under way, take the writes into the read path's table (while
        it has, they wait to go in together, unless a read needs the table first)."""
        reports = self._lane.reports
        if not reports:
            return
        while reports:
            self._apply(reports.popleft())
        if not self._lane.writing:
            self._index.settle()

    def _apply(self, report: Report) -> None:
        match report:
            case Wrote(posted=posted, routing=routing, changes=changes):
                # Its own write, applied to the row index when it began at the index's
                # version; otherwise the next build sees a new version and reloads.
                if isinstance(posted, writes.Posted):
                    known, version = self._state, self._index.version
                    if self._index.apply_posted(posted) and changes is not None and known is not None \
                            and (known.changes, known.version) == (changes[0], version):
                        self._state = attrs.evolve(known, changes=changes[1], version=self._index.version)
                self._index.adopt(routing)
            case Touched(stamps=stamps, committed=committed):
                self._touch_queued = False
                for row_id, stamp in stamps.items():
                    if self._pending_touches.get(row_id) == stamp:
                        del self._pending_touches[row_id]
                if committed:
                    self._index.apply_touches(stamps)
                self._queue_touches()
            case Edited(job=job, result=result):
                self._edits_to_purge.append((job, result))
            case _:
                assert_never(report)

    def _cached_text(self, room_id: str) -> str:
        cached = self._blocks.get(room_id)
        return cached.text if cached is not None and cached.error is None else ""

    # ---- the read path -----------------------------------------------------------------

    async def block(self, room_id: str, generation: int) -> str:
        """The cached block of ``room_id`` at ``generation`` or newer (waits for its build)."""
        return (await self.built_block(room_id, generation))[1]

    async def built_block(self, room_id: str, generation: int) -> tuple[int, str, int]:
        """The cached block of ``room_id`` at ``generation`` or newer, with the generation it
        was built for and its meter's characters used (waits for its build).

        Raises:
            MemoryClosed: the actor stopped before that build.
        """
        while True:
            cached = self._blocks.get(room_id)
            if cached is not None and cached.generation >= generation:
                if cached.error is not None:
                    raise cached.error
                return cached.generation, cached.text, cached.used
            if self._stopped:
                raise MemoryClosed(
                    f"{self.persona}'s memory closed before its block for room {room_id!r} was built"
                )
            await self._built.wait()

    async def _rebuild(self, room: RoomState) -> None:
        cached = self._blocks.get(room.room_id)
        if cached is not None and cached.generation >= room.generation:
            return
        try:
            started = time.perf_counter()
            text, loaded, used = await self._build(room)
            if self._ctx.on_block_built is not None:
                self._ctx.on_block_built(time.perf_counter() - started)
            self._blocks[room.room_id] = CachedBlock(room.generation, text, room=room, loaded=loaded, used=used)
        except Exception as exc:
            log.exception("%s: building the block of room %r failed", self.persona, room.room_id)
            self._blocks[room.room_id] = CachedBlock(room.generation, error=exc)
        self._built.set()
        self._built = trio.Event()

    async def _build(self, room: RoomState) -> tuple[str, frozenset[int], int]:
        """The room's block: its text, the rows loaded into it, and its meter's used count."""
        if room.incognito:
            return "", frozenset(), 0
        ctx = self._ctx
        topic = await self._topic(room)
        controls = await self._fresh_state(room)
        now = ctx.clock.now()
        built = build_from_table(
            self.persona,
            room.audience,
            self._index.table,
            controls=controls,
            topic=topic,
            names=room.names,
            now=now,
            rules=ctx.rules,
        )
        self._touch_later(built.loaded_ids, now)
        return built.text, frozenset(built.loaded_ids), built.used

    async def _fresh_state(self, room: RoomState) -> Mapping[int, UserControls]:
        """The present humans' switches as they stand now, with the row index brought up to
        the persona's current version (reloaded only when someone else changed its rows).

        Read from the file unless nothing that read could see has changed since the last
        read (the store counts such writes: ``Store.changes``) and it covered everyone present.
        """
        store = self._ctx.store
        changes = store.changes
        known = self._state
        if (
            known is not None
            and known.changes == changes
            and known.version == self._index.version
            and room.present <= known.controls.keys()
        ):
            return known.controls
        version, controls = await store.read_state(self.persona, room.present)
        if version != self._index.version:
            self._index.load(*await store.persona_rows_said(self.persona))
        if known is not None and known.changes == changes and len(known.controls) < STATE_USERS_KEPT:
            controls = {**known.controls, **controls}  # both reads saw the same file
        self._state = StateRead(changes, self._index.version, controls)
        return controls

    async def _recall(self, room: RoomState, query: Topic) -> str:
        """The recall note for ``query`` in ``room`` (design §3, retrieval on demand)."""
        if room.incognito:
            return ""
        ctx = self._ctx
        controls = await self._fresh_state(room)
        cached = self._blocks.get(room.room_id)
        note = recall_note(
            self.persona,
            room.audience,
            self._index.table,
            controls=controls,
            query=query,
            shown=cached.loaded if cached is not None else (),
            rules=ctx.rules,
            recall=ctx.recall,
        )
        if note.ids:
            self._touch_later(note.ids, ctx.clock.now())
        return note.text

    async def _purge_deleted(self) -> None:
        """After a human's delete: rebuild every cached block that showed a row now gone, so
        no deleted line is served again (its generation stays: the room did not change)."""
        self._index.load(*await self._ctx.store.persona_rows_said(self.persona))
        for room_id, cached in list(self._blocks.items()):
            if cached.room is None or cached.loaded <= self._index.open_rows.keys():
                continue
            try:
                text, loaded, used = await self._build(cached.room)
                self._blocks[room_id] = attrs.evolve(cached, text=text, loaded=loaded, used=used)
            except Exception as exc:
                log.exception("%s: rebuilding room %r after a delete failed", self.persona, room_id)
                self._blocks[room_id] = attrs.evolve(cached, text="", error=exc, loaded=frozenset())

    async def _topic(self, room: RoomState) -> Topic | None:
        if room.topic is None:
            return None
        known = self._topics.get(room.room_id)
        if known is not None and known[0] == room.topic:
            return known[1]
        try:
            vector = (await self._ctx.embedder.embed([room.topic]))[0]
        except ProviderError as exc:
            log.warning(
                "%s: could not embed the topic of room %r (%s); ranking it without relevance",
                self.persona,
                room.room_id,
                exc,
            )
            return None
        topic = Topic.of(room.topic, vector, self._ctx.embedder.name)
        self._topics[room.room_id] = (room.topic, topic)
        return topic

    def _touch_later(self, row_ids, now) -> None:
        for row_id in row_ids:
            _, times = self._pending_touches.get(row_id, (now, 0))
            self._pending_touches[row_id] = (now, times + 1)
        if self._touches_due == math.inf:
            self._touches_due = trio.current_time() + TOUCH_GATHER_SECONDS
        self._queue_touches()

    def _touch_deadline(self) -> float:
        """When the mailbox wait should stop to hand the gathered touches over."""
        return self._touches_due if self._pending_touches and not self._touch_queued else math.inf

    def _queue_touches(self, *, final: bool = False, now: bool = False) -> None:
        """Hand the pending stamps to the writer, one ``TouchJob`` at a time, once they have
        gathered for ``TOUCH_GATHER_SECONDS`` (``now``: at once, for a flush). A full lane
        keeps them for the next try; ``final`` queues them even past one already queued, as
        the lane is about to close."""
        if not self._pending_touches or (self._touch_queued and not final):
            return
        if not (final or now) and trio.current_time() < self._touches_due:
            return
        if self._lane.submit_nowait(TouchJob(dict(self._pending_touches))):
            self._touch_queued = True
            self._touches_due = math.inf
        elif not final:
            self._touches_due = trio.current_time() + TOUCH_GATHER_SECONDS  # try again later
        else:
            log.warning("%s: the lane was full at close; %d recall stamps were not written",
                        self.persona, len(self._pending_touches))

    # ---- the writer lane: I/O only, reported back --------------------------------------

    async def perform(self, job: WriteJob) -> None:
        """Perform one job of this persona's lane (called by the supervised writer). It does
        the I/O and reports what it did; it never changes the actor's state."""
        ctx = self._ctx
        match job:
            case TouchJob(stamps=stamps):
                try:
                    await ctx.store.touch(stamps, persona=self.persona, epoch=ctx.fence(self.persona))
                except StorageError as exc:  # read-only or full: blocks go on, stamps do not
                    log.warning("%s: %d recall stamps were not written (%s)", self.persona, len(stamps), exc)
                    self._lane.report(Touched(stamps, committed=False))
                else:
                    self._lane.report(Touched(stamps))
            case QuietJob(room=room, archiving=archiving, block=block):
                posted = routing = changes = None
                if ctx.write_path is None:
                    log.info(
                        "%s: no write path configured; room %r stays unread past the cursor",
                        self.persona,
                        room.room_id,
                    )
                elif not room.incognito and await self._names_recorded(room):
                    # the write path reads only the lines it heard
                    before = ctx.store.changes
                    with ctx.store.own_writes() as own:
                        result = await ctx.write_path(
                            self.persona, room, archiving=archiving, block=block, routing_index=self._index.routing
                        )
                    posted = getattr(result, "posted", None)
                    routing = getattr(result, "routing", None)
                    if ctx.store.changes - before == own[0]:  # no one else wrote meanwhile
                        changes = (before, ctx.store.changes)
                self._lane.report(Wrote(room.room_id, posted, routing, changes))
            case EditJob(edit=edit):
                try:
                    result = outcome.Value(await self._edit(edit))
                except InvalidInput as exc:  # the caller's to see; the writer carries on
                    result = outcome.Error(exc)
                self._lane.report(Edited(job, result))
            case FlushJob(done=done):
                done.set()
            case _:
                assert_never(job)

    async def _names_recorded(self, room: RoomState) -> bool:
        """Whether every room record handed over so far is in the file (the write path's guard
        reads the users' names from it). If storage refuses them, the slice waits: its cursor
        stays, and the sweep tries it again."""
        if self._ctx.rooms_recorded is None:
            return True
        try:
            await self._ctx.rooms_recorded()
        except StorageError as exc:
            log.warning("%s: room %r is not written now: the rooms opened could not be recorded (%s)",
                        self.persona, room.room_id, exc)
            return False
        return True

    async def _edit(self, edit) -> object:
        store, now = self._ctx.store, self._ctx.clock.now()
        match edit:
            case DeleteMemory(user_id=user_id, memory_id=memory_id):
                return await store.delete_memory(user_id, memory_id, persona=self.persona)
            case UndoNotice(user_id=user_id, notice_id=notice_id):
                return await store.undo(user_id, notice_id, now, persona=self.persona)
            case ClearMemories(user_id=user_id):
                return await store.clear_about(user_id, self.persona, now)
            case _:
                raise AssertionError(f"unknown edit {edit!r}")

    async def abandon(self, job: WriteJob, error: Exception) -> None:
        """Give up on a job that kept crashing the writer (a poison job), keeping its error.

        A slice is parked with the error, for the sweep to retry after ``park_seconds`` and
        for an operator to see; an edit raises the error to its caller; touches are dropped.
        """
        reason = f"{type(error).__name__}: {error}"
        match job:
            case QuietJob(room=room):
                retry_at = self._ctx.clock.now() + timedelta(seconds=self._ctx.park_seconds)
                epoch = self._ctx.fence(self.persona)
                await self._ctx.store.write(
                    lambda conn: writes.park(conn, self.persona, room.room_id, reason, retry_at, epoch=epoch)
                )
                self._lane.report(Wrote(room.room_id))
            case EditJob():
                self._lane.report(Edited(job, outcome.Error(error)))
            case TouchJob(stamps=stamps):
                log.warning("%s: %d recall stamps were dropped with the failing job", self.persona, len(stamps))
                self._lane.report(Touched(stamps, committed=False))
            case FlushJob(done=done):
                done.set()
            case _:
                assert_never(job)

    @property
    def idle(self) -> bool:
        return self._lane.idle and not self._pending_touches and not self._edits_to_purge
