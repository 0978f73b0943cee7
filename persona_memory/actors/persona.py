"""A persona's memory actor: the one owner of its persona's block cache, row index and touches.

Rules:
- One task owns the actor's state. ``run`` handles the mailbox in order — room events, a
  human's edits and switches, meter and recall requests, flush requests — and the writer's
  reports, which it applies itself before the next envelope. Nothing else changes the block
  cache, the row index or the pending touches.
- Open, join and leave (re)build that room's block at once; quiet and archive hand a
  ``QuietJob`` to the writer lane, which never waits (``WriteLane.offer``), so neither a slow
  write nor a full lane ever stalls the mailbox.
- The writer only does I/O (``perform``): model calls and transactions. What it did comes back
  as a report — ``Wrote``, ``Touched`` — applied here, in order. The router reads the rows
  from a snapshot the actor publishes on the lane before each room's write
  (``RowIndex.routing``: the route index, or what to build it from on a worker thread); the
  index the write path built comes back with ``Wrote`` and is kept when it matches the row
  index.
- A block is cached per room with the room's generation. ``block()`` answers from the cache
  without touching the database; a caller asking for a newer generation waits for its build.
  A delivery older than the cached generation is stale and skipped — an archive included: it
  forgets only the life of the room it archived, never a newer one.
- A build that fails is cached as the failure: ``block()`` raises it, the actor lives on.
- A human's edit (delete, undo, clear-all) runs here, at once — never behind the writer, which
  may be waiting on a model: a write under way re-checks at its commit what it may still write
  (``storage.writes.post_plan``). Every cached block that showed a row now gone is rebuilt
  before the caller hears back. A human's switch or note change (``ControlsChanged``) rebuilds
  every cached block of a room they are in. These privacy edits are the one exception to
  "rebuilt only on open, join or leave"; they rebuild with the rows as they stand.
- When the actor stops (retired, shut down, escalated), every ``block()`` still waiting for a
  build raises ``MemoryClosed``; when it was replaced after a crash (the supervisor restarts
  it with an empty cache), such a caller waits for the new actor's build instead.
- Rows that loaded into a block (or a recall note) are touched later, in one write on the
  lane, coalesced: the stamps gather for ``TOUCH_GATHER_SECONDS`` (a flush hands them over at
  once), then go as one ``TouchJob`` at a time, carrying a snapshot of the stamps; stamps that
  found the lane full go with the next one, and the last ones are queued when the actor
  closes, so none is lost.
  Stamps that storage refuses (a read-only or full disk) are logged and dropped, never a
  crash: the blocks are served from what the actor holds.
- An incognito room's block is empty and costs no read; so is its recall note.
- The humans' switches and the persona's version are read fresh for every build and note —
  from the file after a ``ControlsChanged`` (the facade's message for every switch and note it
  sets), when the store ran a write since the last read that could change rows
  (``Store.changes``, which the facade's switches do not bump), or when a present human was
  not among those read; otherwise what that read gave still holds, and no thread hop is
  needed to know it. The persona's own write changes its rows, never a switch: when no one else wrote
  meanwhile and the actor applied what it posted, the last read still holds, at the new
  version.
- The recall note (``RecallRequested``) and the meter (``MeterRequested``) are computed here,
  in turn with the room's events, from the actor's rows; they never change a cached block.
  A recall note's rows are touched like a block's; the meter touches nothing.
- The topic is the opener without the names of who is in the room (``RoomState.searched``):
  an opener that only greets is no topic. A topic the embedder cannot embed (the provider is
  down) costs the block its relevance term, never the block itself.
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
from ..core.audience import Audience
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
    ControlsChanged,
    Delivered,
    EditRequested,
    Envelope,
    FlushRequested,
    MeterRequested,
    RecallRequested,
    Wake,
)
from .lane import (
    ClearMemories,
    DeleteMemory,
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
after each block or note would compete with the next one, and slow the block or note a user
waits for."""


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

    def __init__(self, persona: str, context: ActorContext, lane: WriteLane, *, handled: int = 0) -> None:
        self.persona = persona
        self._ctx = context
        self._lane = lane
        self._index = RowIndex()
        self._blocks: dict[str, CachedBlock] = {}
        self._topics: dict[str, tuple[tuple, Topic | None]] = {}
        self._state: StateRead | None = None
        self._built = trio.Event()
        self._pending_touches: dict[int, tuple] = {}
        self._touch_queued = False
        self._touches_due = math.inf  # trio time the pending touches are to be handed over
        self._stopped = False
        self._successor: PersonaActor | None = None
        self.in_hand: Envelope | None = None  # the envelope being handled (for a restart)
        self.handled = handled
        self.last_active = trio.current_time()

    # ---- the mailbox -------------------------------------------------------------------

    async def run(
        self,
        mailbox: trio.MemoryReceiveChannel[Envelope],
        *,
        rooms: tuple[RoomState, ...] = (),
        redo: Envelope | None = None,
    ) -> None:
        """Handle envelopes and the writer's reports until the mailbox ends (the supervisor
        sent ``Closing`` and closed its side; the writer closed the lane's waker).

        A restarted actor is given the open ``rooms`` it is in, whose blocks it builds first,
        and ``redo``, the envelope its predecessor crashed on, which it handles next.
        """
        for room in rooms:
            await self._rebuild(room)
        if redo is not None:
            await self._handle_one(redo)
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
            await self._handle_one(envelope)
        self._apply_reports()

    async def _handle_one(self, envelope: Envelope) -> None:
        self.in_hand = envelope
        self._apply_reports()
        self.last_active = trio.current_time()
        await self._handle(envelope)
        self.in_hand = None
        if not isinstance(envelope, Wake):
            self.handled += 1
        self._apply_reports()
        self.last_active = trio.current_time()

    def stop(self, successor: PersonaActor | None = None) -> None:
        """The actor is gone: wake every ``block()`` still waiting — to ask ``successor`` (a
        restart), or to raise ``MemoryClosed``."""
        self._stopped = True
        self._successor = successor
        self._built.set()

    async def _handle(self, envelope: Envelope) -> None:
        match envelope:
            case Delivered(event=RoomOpened() | MemberJoined() | MemberLeft(), room=room):
                await self._rebuild(room)
            case Delivered(event=RoomWentQuiet(), room=room):
                self._write(QuietJob(room, block=self._cached_text(room.room_id)))
            case Delivered(event=RoomArchived(), room=room):
                self._write(QuietJob(room, archiving=True, block=self._cached_text(room.room_id)))
                cached = self._blocks.get(room.room_id)
                if cached is None or cached.generation <= room.generation:
                    self._blocks.pop(room.room_id, None)
                    self._topics.pop(room.room_id, None)
            case Delivered():
                raise AssertionError(f"unexpected event {envelope.event!r}")
            case CatchUp(room=room):
                self._write(QuietJob(room))
            case EditRequested(edit=edit, reply=reply):
                reply.set(await self._human_edit(edit))
            case ControlsChanged(user_id=user_id, done=done):
                await self._controls_changed(user_id)
                done.set()
            case MeterRequested(user_id=user_id, reply=reply):
                try:
                    reply.set(outcome.Value(await self._meter(user_id)))
                except Exception as exc:
                    reply.set(outcome.Error(exc))
            case RecallRequested(room=room, query=query, reply=reply):
                try:
                    reply.set(outcome.Value(await self._recall(room, query)))
                except Exception as exc:
                    log.exception("%s: the recall note for room %r failed", self.persona, room.room_id)
                    reply.set(outcome.Error(exc))
            case FlushRequested(done=done):
                self._queue_touches(now=True)
                self._lane.offer(FlushJob(done))
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
            case _:
                assert_never(report)

    def _write(self, job: QuietJob) -> None:
        """Queue a room's write (never waits: see ``WriteLane.offer``), with the rows as the
        router should read them published for the writer."""
        self._publish_routing()
        self._lane.offer(job)

    def _publish_routing(self) -> None:
        """Hand the writer a snapshot of the rows as the router reads them (``RowIndex.routing``:
        an immutable index, or what to build it from), once per row version."""
        published = self._lane.routing
        if published is None or getattr(published, "version", None) != self._index.version:
            self._lane.routing = self._index.routing()

    async def _human_edit(self, edit) -> outcome.Outcome:
        """Run a human's edit now, whatever the writer is doing, and rebuild every cached block
        that showed a row it deleted. A write under way re-checks at its commit what it may
        still write (``storage.writes.post_plan``), so the edit need not wait for it."""
        try:
            result = outcome.Value(await self._edit(edit))
        except (InvalidInput, StorageError) as exc:  # the caller's to see; nothing changed
            return outcome.Error(exc)
        await self._purge_deleted()
        return result

    async def _controls_changed(self, user_id: int) -> None:
        """A human's switches or note changed: forget the switches read, and rebuild every
        cached block of a room they are in (a privacy edit reaches live blocks at once)."""
        self._state = None
        for room_id, cached in list(self._blocks.items()):
            if cached.room is not None and user_id in cached.room.present:
                await self._refresh(room_id, cached)

    async def _meter(self, user_id: int) -> tuple[int, int, frozenset[int]]:
        """(chars used, limit, ids loaded) of the block a private chat with ``user_id`` would
        get now, from this actor's rows. Touches nothing."""
        controls = await self._fresh_state(frozenset({user_id}))
        return private_meter(self.persona, user_id, self._index.table, controls, self._ctx)

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
            if self._successor is not None:
                return await self._successor.built_block(room_id, generation)
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
        controls = await self._fresh_state(room.present)
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

    async def _fresh_state(self, present: frozenset[int]) -> Mapping[int, UserControls]:
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
            and present <= known.controls.keys()
        ):
            return known.controls
        version, controls = await store.read_state(self.persona, present)
        if version != self._index.version:
            self._index.load(*await store.memories.rows_said(self.persona))
        if known is not None and known.changes == changes and len(known.controls) < STATE_USERS_KEPT:
            controls = {**known.controls, **controls}  # both reads saw the same file
        self._state = StateRead(changes, self._index.version, controls)
        return controls

    async def _recall(self, room: RoomState, query: Topic) -> str:
        """The recall note for ``query`` in ``room`` (design §3, retrieval on demand)."""
        if room.incognito:
            return ""
        ctx = self._ctx
        controls = await self._fresh_state(room.present)
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
        no deleted line is served again (its generation stays: the room did not change). If
        the rows cannot be read, no cached block is served until its room's next build."""
        try:
            self._index.load(*await self._ctx.store.memories.rows_said(self.persona))
        except StorageError as exc:
            log.warning("%s: the rows could not be read after a delete (%s); its blocks wait "
                        "for the next open", self.persona, exc)
            self._index = RowIndex()
            for room_id, cached in list(self._blocks.items()):
                self._blocks[room_id] = attrs.evolve(cached, text="", error=exc, loaded=frozenset())
            return
        for room_id, cached in list(self._blocks.items()):
            if cached.room is None or cached.loaded <= self._index.open_rows.keys():
                continue
            await self._refresh(room_id, cached)

    async def _refresh(self, room_id: str, cached: CachedBlock) -> None:
        """Rebuild a cached block for the same room and generation (a privacy edit)."""
        assert cached.room is not None
        try:
            text, loaded, used = await self._build(cached.room)
            self._blocks[room_id] = attrs.evolve(cached, text=text, loaded=loaded, used=used, error=None)
        except Exception as exc:
            log.exception("%s: rebuilding room %r after a privacy edit failed", self.persona, room_id)
            self._blocks[room_id] = attrs.evolve(cached, text="", error=exc, loaded=frozenset())

    async def _topic(self, room: RoomState) -> Topic | None:
        if room.topic is None:
            return None
        # the topic is searched by its words without the names of who is there: it changes
        # with the opener, the cast and their names
        cast = (room.topic, room.personas, tuple((u, room.names.get(u)) for u in sorted(room.present)))
        known = self._topics.get(room.room_id)
        if known is not None and known[0] == cast:
            return known[1]
        text = room.searched(room.topic)
        if not text:
            self._topics[room.room_id] = (cast, None)
            return None
        try:
            vector = (await self._ctx.embedder.embed([text]))[0]
        except ProviderError as exc:
            log.warning(
                "%s: could not embed the topic of room %r (%s); ranking it without relevance",
                self.persona,
                room.room_id,
                exc,
            )
            return None
        topic = Topic.of(text, vector, self._ctx.embedder.name)
        self._topics[room.room_id] = (cast, topic)
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
                    await ctx.store.memories.touch(stamps, persona=self.persona, epoch=ctx.fence(self.persona))
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
                            self.persona, room, archiving=archiving, block=block, routing_index=self._routing_snapshot
                        )
                    posted = getattr(result, "posted", None)
                    routing = getattr(result, "routing", None)
                    if ctx.store.changes - before == own[0]:  # no one else wrote meanwhile
                        changes = (before, ctx.store.changes)
                self._lane.report(Wrote(room.room_id, posted, routing, changes))
            case FlushJob(done=done):
                done.set()
            case _:
                assert_never(job)

    def _routing_snapshot(self) -> object:
        """The rows as the router reads them: the snapshot the actor last published."""
        return self._lane.routing

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
        return await run_edit(self._ctx.store, self._ctx.clock, self.persona, edit)

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
            case TouchJob(stamps=stamps):
                log.warning("%s: %d recall stamps were dropped with the failing job", self.persona, len(stamps))
                self._lane.report(Touched(stamps, committed=False))
            case FlushJob(done=done):
                done.set()
            case _:
                assert_never(job)

    @property
    def idle(self) -> bool:
        return self._lane.idle and not self._pending_touches


async def run_edit(store: Store, clock: WallClock, persona: str, edit) -> object:
    """Run a human's edit (``DeleteMemory``, ``UndoNotice``, ``ClearMemories``) of
    ``persona``'s rows on the store; return its result (ids or counts of what went).

    Raises:
        NotYourMemory, NotYourNotice: the row or notice is not the human's; nothing changed.
    """
    now = clock.now()
    match edit:
        case DeleteMemory(user_id=user_id, memory_id=memory_id):
            return await store.memories.delete(user_id, memory_id, persona=persona)
        case UndoNotice(user_id=user_id, notice_id=notice_id):
            return await store.notices.undo(user_id, notice_id, now, persona=persona)
        case ClearMemories(user_id=user_id):
            return await store.memories.clear_about(user_id, persona, now)
        case _:
            raise AssertionError(f"unknown edit {edit!r}")


def private_meter(
    persona: str, user_id: int, table, controls: Mapping[int, UserControls], ctx: ActorContext
) -> tuple[int, int, frozenset[int]]:
    """(chars used, limit, ids loaded) of the block ``persona`` would build from ``table`` for
    a private chat with ``user_id``: the manage page's meter. Pure."""
    built = build_from_table(
        persona,
        Audience(present=frozenset({user_id}), private=True),
        table,
        controls=controls,
        topic=None,
        names={},
        now=ctx.clock.now(),
        rules=ctx.rules,
    )
    return built.used, built.limit, frozenset(built.loaded_ids)


async def meter_from_store(ctx: ActorContext, persona: str, user_id: int) -> tuple[int, int, frozenset[int]]:
    """``private_meter`` read straight from the store, for a persona that has no actor to ask
    (it was stopped): its rows and the human's switches, read once, kept nowhere."""
    index = RowIndex()
    index.load(*await ctx.store.memories.rows(persona))
    controls = await ctx.store.controls.of([user_id])
    return private_meter(persona, user_id, index.table, controls, ctx)
