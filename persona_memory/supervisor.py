"""The supervisor: one actor per persona, spawned when needed, restarted when it crashes, and
the supervision tree they run in. What it routes and to whom comes from the room registry
(``rooms.RoomRegistry``); the plumbing lives beside it: ordered intake (``actors/intake.py``),
outboxes and drain (``actors/outbox.py``), retirement (``actors/retirement.py``).

Rules:
- It owns the root nursery of the actors and every mailbox, outbox and writer lane: it
  creates them and it closes them. Each is bounded: the intake and the mailboxes hold
  ``actors.mailbox_size`` messages; a persona's outbox takes a new delivery only while it holds
  fewer than that — the sender waits, before anything is recorded, so a full one is
  backpressure, never loss; a writer lane holds ``actors.write_queue_size`` jobs and merges a
  room's writes past that (``lane.WriteLane``).
- It spawns a persona's actor on the first message for that persona, and retires an actor that
  has no open room, nothing queued and nothing to do for ``actors.idle_retire_seconds``.
- A room event is checked against the registry first (``RoomRegistry.accept``): a refused
  event raises to the sender and changes nothing. An accepted one goes, in intake order, to the
  mailbox of every persona that hears it (``rooms.hearings``), with the room's new state; and
  an open or an archive to the room recorder (``room_recorder``), which writes the rooms table
  in the background: no write stands between ``RoomOpened`` and its block.
- A caller waiting for an actor's answer (a recall note, an edit, a meter) waits on the answer
  alone; when the actor ends first, it wakes every such caller, which then raises
  ``MemoryClosed`` (or ``PersonaFailed``). A human's edit and a switch change go to the actor
  as messages and are handled in turn with room events, never behind its writer.
- A writer that raises is restarted with capped exponential backoff (``restart.RestartPolicy``)
  and performs the same job again. After ``supervisor.max_restarts`` crashes in the period the
  job is a poison job: it is parked with its error (a slice goes to ``parked_slices``) and the
  persona goes on with its next job.
- An actor whose own loop raises is restarted the same way, as a fresh actor with an empty
  cache that builds the blocks of its open rooms again and handles the envelope its
  predecessor crashed on (a caller waiting for that one's answer gets the error instead).
- Escalation is per persona, never the whole supervisor: an actor past the restart intensity,
  a writer whose storage is broken past it, or ``supervisor.max_restarts`` + 1 jobs parked in
  a row (no room's write succeeding between them) mark that persona failed. Its actor and
  writer stop; its calls raise ``PersonaFailed``; room events reach the other personas of its
  rooms; a human's edit of its rows runs on the store directly; ``readiness()`` lists it.
  Supervisors catch ``Exception`` only: cancellation always passes through.
- A writer that meets ``LeaseLost`` (a cluster worker no longer holds the persona's lease)
  is not restarted: the persona's actor is let go, as ``let_go`` does when the worker's lease
  loop says the persona is lost or handed over — cancelled at once, its queued work left to
  the stored cursors for the next owner. In a cluster worker, events arrive already checked
  and applied by the shared registry (``deliver_applied``, from ``cluster/inbox.py``).
- Shutdown: ``aclose`` refuses new messages, closes every mailbox, and waits while the actors
  drain their mailboxes and then their lanes, and the recorder its rooms. The caller puts the
  deadline around it.
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from typing import AsyncIterator

import attrs
import numpy as np
import outcome
import trio

from .actors import outbox
from .actors.envelopes import (
    CatchUp,
    Closing,
    ControlsChanged,
    Delivered,
    EditRequested,
    Envelope,
    MeterRequested,
    RecallRequested,
    Wake,
)
from .actors.intake import Intake
from .actors.lane import HumanEdit, QuietJob, Reply, WriteLane, run_writer
from .actors.outbox import Delivery, Running
from .actors.persona import ActorContext, PersonaActor, meter_from_store, run_edit
from .actors.retirement import run_retirement, to_retire
from .actors.room_recorder import RoomRecorder, run_room_recorder
from .core.ranking import Topic
from .errors import (
    LeaseLost,
    MemoryClosed,
    PersonaFailed,
    ProviderError,
    StorageError,
    WriterCrashedTooOften,
)
from .messages import RoomEvent
from .rooms import RoomRegistry, RoomState
from .restart import RestartPolicy
from .settings import ActorSettings, SupervisorSettings

log = logging.getLogger(__name__)


class Supervisor:
    """The actors of one open memory, and the room registry they hear from. ``open_memory``
    creates it and closes it; the facade reads the registry (``rooms``) too."""

    def __init__(
        self,
        nursery: trio.Nursery,
        context: ActorContext,
        actor_settings: ActorSettings,
        supervisor_settings: SupervisorSettings,
        recorder: RoomRecorder,
        rooms: RoomRegistry,
    ) -> None:
        self._nursery = nursery
        self.recorder = recorder
        self.rooms = rooms
        # A write path must see every display name handed over before it (the guard against
        # rows that name a user met in another room reads them from the file).
        self._ctx = attrs.evolve(context, rooms_recorded=recorder.flush)
        self._actor_settings = actor_settings
        self._settings = supervisor_settings
        self._actors: dict[str, Running] = {}
        self._intake: Intake[list[tuple[Running, Delivery]]] = Intake(
            actor_settings.mailbox_size, self._route, self._check_open
        )
        self._closed = False
        self._shut_down = False
        self.restarts = 0  # writer restarts
        self.actor_restarts = 0
        self.parked_jobs = 0
        self.failed: dict[str, PersonaFailed] = {}  # personas escalated: their calls raise this
        nursery.start_soon(self._intake.run, name="intake")

    # ---- room events -------------------------------------------------------------------

    async def send(self, event: RoomEvent) -> None:
        """Check ``event`` against the registry, record it, and deliver it to the room's actors.

        Events are taken one at a time, in order (``actors/intake.py``); ``send`` returns once
        every actor that hears it has the event in its mailbox. Cancelled while waiting for a
        place in the intake, it changes nothing; once taken, it is delivered in full and the
        cancellation is felt after.

        Raises:
            UnknownRoom, NotInRoom, InvalidInput: the event cannot happen; nothing changed.
            MemoryClosed: the memory is shutting down.
        """
        self._check_open()
        await self._room_for(self.rooms.may_hear(event))
        for running, delivery in await self._intake.submit(event):
            await self._delivered(running, delivery)

    def _route(self, event: RoomEvent) -> list[tuple[Running, Delivery]]:
        """Accept ``event`` in the registry, hand it to the recorder, and put it in the
        outboxes of the personas that hear it (never waits: so it runs whole, between two
        checkpoints). An escalated persona is skipped: the room goes on without it."""
        change = self.rooms.accept(event)
        self.recorder.record(change, self._ctx.clock.now())
        deliveries = []
        for heard in change.hearings:
            if heard.persona not in self.failed:
                running = self._running(heard.persona)
                deliveries.append((running, self._deliver(running, Delivered(heard.event, heard.room))))
        return deliveries

    async def deliver_applied(self, persona: str, event: RoomEvent, room: RoomState, *, gone: bool = False) -> None:
        """Deliver to ``persona``'s actor an event that was checked and applied elsewhere (a
        cluster worker's shared registry: ``cluster/inbox.py``), with the room's state after
        it; the registry here adopts that state (``RoomRegistry.adopt``). Returns once the
        event is in the actor's mailbox."""
        self._check_open()
        self.rooms.adopt(event, room, gone=gone)
        if persona in self.failed:
            return
        await self._room_for((persona,))
        running = self._running(persona)
        await self._delivered(running, self._deliver(running, Delivered(event, room)))

    def _deliver(self, running: Running, envelope: Envelope) -> Delivery:
        return outbox.deliver(running, envelope, self.failed)

    async def _delivered(self, running: Running, delivery: Delivery) -> None:
        await outbox.delivered(running, delivery, self.failed)

    async def _room_for(self, personas) -> None:
        await outbox.wait_for_room(self._actors, personas, self._actor_settings.mailbox_size)

    # ---- calls answered by an actor ----------------------------------------------------

    async def block(self, persona: str, room_id: str) -> str:
        """The block ``persona`` has for ``room_id`` with its current cast."""
        room = self.room_of(persona, room_id)
        running = self._running(persona)
        try:
            return await running.actor.block(room_id, room.generation)
        except MemoryClosed:
            raise self._undelivered(running) from None

    async def built_block(self, persona: str, room_id: str) -> tuple[int, str, int]:
        """``block`` with the room generation it was built for (the runtime's cache key) and
        its meter's characters used."""
        room = self.room_of(persona, room_id)
        running = self._running(persona)
        try:
            return await running.actor.built_block(room_id, room.generation)
        except MemoryClosed:
            raise self._undelivered(running) from None

    def room_of(self, persona: str, room_id: str) -> RoomState:
        """The open room ``room_id`` as it stands, with ``persona`` in it."""
        self._check_open()
        return self.rooms.room_of(persona, room_id)

    async def recall(self, persona: str, room_id: str, text: str) -> str:
        """``persona``'s recall note for the message ``text`` in ``room_id`` with its current
        cast, made by its actor after every event sent before (so against the block built for
        the people present now). The message is embedded here, off the actor; if the embedder
        fails, the note ranks by its words alone.

        Raises:
            MemoryClosed: the memory closed before the note was made.
        """
        room = self.room_of(persona, room_id)
        if room.incognito:
            return ""
        embedder = self._ctx.embedder
        try:
            query = Topic.of(text, (await embedder.embed([text]))[0], embedder.name)
        except ProviderError as exc:
            log.warning("%s: could not embed a message in room %r (%s); recalling by its words",
                        persona, room_id, exc)
            query = Topic.of(text, np.zeros(1, dtype=np.float32), "")
        await self._room_for((persona,))
        room = self.room_of(persona, room_id)  # as it stands after the embedding
        return await self._ask(persona, lambda reply: RecallRequested(room, query, reply), "recall note was made")

    async def _ask(self, persona: str, make, what: str):
        """Send ``persona``'s actor the request ``make(reply)`` and return its answer.

        Raises:
            MemoryClosed: the memory closed before the answer (``what``).
            PersonaFailed: the persona was escalated before the answer.
        """
        await self._room_for((persona,))
        running = self._running(persona)
        reply = Reply()
        await self._delivered(running, self._deliver(running, make(reply)))
        await outbox.answer(running, reply.done)
        if not reply.result:
            if persona in self.failed:
                raise self.failed[persona]
            raise MemoryClosed(f"the memory closed before {persona}'s {what}")
        return reply.result[0].unwrap()

    async def drain(self) -> None:
        """Return when every message sent before this call has been handled and written
        (``outbox.drain``), and the rooms opened and archived are recorded.

        Raises:
            MemoryClosed: the memory closed before those writes landed.
            StorageError: the rooms could not be recorded (they are tried again).
        """
        self._check_open()
        await outbox.drain(self._actors, self.failed, self._actor_settings.mailbox_size)
        await self.recorder.flush()

    async def edit(self, persona: str, edit: HumanEdit) -> object:
        """Have ``persona``'s actor run a human's edit of its rows (``DeleteMemory``,
        ``UndoNotice``, ``ClearMemories``) now — never behind its writer, whatever that is
        doing; return the result once the actor's blocks no longer show what it deleted, or
        raise the edit's error. A persona that was escalated has no actor: its edit runs on
        the store directly (the human's delete never waits for a repair).

        Raises:
            MemoryClosed: the memory closed before the edit ran.
        """
        self._check_open()
        if persona in self.failed:
            return await run_edit(self._ctx.store, self._ctx.clock, persona, edit)
        return await self._ask(persona, lambda reply: EditRequested(edit, reply), "edit ran")

    async def controls_changed(self, user_id: int, persona: str | None = None) -> None:
        """A human's switches or note changed (already stored): have every live actor — or only
        ``persona``'s — rebuild the cached blocks of the rooms the human is in; return once
        they did. A privacy edit is the one change that reaches a live block at once."""
        self._check_open()
        waits = []
        for running in list(self._actors.values()):
            if running.closing or (persona is not None and running.actor.persona != persona):
                continue
            await self._room_for((running.actor.persona,))
            done = trio.Event()
            try:
                self._deliver(running, ControlsChanged(user_id, done))
            except (MemoryClosed, PersonaFailed):
                continue
            waits.append((running, done))
        for running, done in waits:
            await outbox.first_of(done, running.finished)

    async def meter(self, persona: str, user_id: int) -> tuple[int, int, frozenset[int]]:
        """(chars used, limit, ids loaded) of the block ``persona``'s actor would build for a
        private chat with ``user_id`` now. Reads only; a stopped persona's is read from the
        store, so the human's page still shows it."""
        self._check_open()
        if persona in self.failed:  # no actor to ask: read it once from the store
            return await meter_from_store(self._ctx, persona, user_id)
        return await self._ask(persona, lambda reply: MeterRequested(user_id, reply), "meter was read")

    async def queue_write(self, persona: str, room: RoomState) -> None:
        """Have ``persona``'s actor queue the write path for ``room`` (the sweep's catch-up).
        An escalated persona is skipped: its cursor stays where it is."""
        self._check_open()
        if persona in self.failed:
            return
        await self._room_for((persona,))
        running = self._running(persona)
        await self._delivered(running, self._deliver(running, CatchUp(room)))

    def _undelivered(self, running: Running) -> MemoryClosed | PersonaFailed:
        return outbox.undelivered(running, self.failed)

    def _check_open(self) -> None:
        if self._closed:
            raise MemoryClosed("the memory is closed; open it again with open_memory()")

    # ---- actors ------------------------------------------------------------------------

    def _running(self, persona: str) -> Running:
        """``persona``'s running actor, spawned if it has none.

        Raises:
            PersonaFailed: the persona was escalated.
        """
        running = self._actors.get(persona)
        if running is None:
            if persona in self.failed:
                raise self.failed[persona]
            running = self._spawn(persona)
        return running

    def _spawn(self, persona: str) -> Running:
        send, receive = trio.open_memory_channel[Envelope](self._actor_settings.mailbox_size)
        lane = WriteLane(self._actor_settings.write_queue_size, waker=send.clone())
        running = Running(PersonaActor(persona, self._ctx, lane), send, lane)
        self._actors[persona] = running
        self._nursery.start_soon(self._run_actor, running, receive, name=f"actor:{persona}")
        return running

    def _policy(self) -> RestartPolicy:
        s = self._settings
        return RestartPolicy(
            initial=s.backoff_initial_seconds,
            cap=s.backoff_max_seconds,
            healthy_after=s.healthy_after_seconds,
            max_restarts=s.max_restarts,
            period=s.restart_period_seconds,
        )

    async def _run_actor(self, running: Running, mailbox: trio.MemoryReceiveChannel[Envelope]) -> None:
        try:
            with running.scope:
                async with mailbox, trio.open_nursery() as nursery:
                    nursery.start_soon(self._supervise_writer, running)
                    nursery.start_soon(outbox.feed, running)
                    await self._supervise_actor(running, mailbox)
        finally:
            running.actor.stop()
            running.finished.set()
            for caller in list(running.callers):
                caller.set()  # it finds no answer: the actor is gone

    async def _supervise_actor(self, running: Running, mailbox: trio.MemoryReceiveChannel[Envelope]) -> None:
        """Run the persona's actor; when its loop raises, start a fresh one (an empty cache,
        the open rooms' blocks built again) after the restart policy's backoff. The envelope
        it crashed on is handled again by the new actor — unless a caller waits for its
        answer, who gets the error instead. Too many crashes escalate this persona alone."""
        policy = self._policy()
        persona = running.actor.persona
        rooms: tuple[RoomState, ...] = ()
        redo: Envelope | None = None
        while True:
            started = trio.current_time()
            try:
                await running.actor.run(mailbox, rooms=rooms, redo=redo)
                return
            except Exception as exc:
                crashed = running.actor
                now = trio.current_time()
                try:
                    delay = policy.after_crash(crashed_at=now, ran_for=now - started, who=f"{persona}'s actor")
                except WriterCrashedTooOften as too_often:
                    self._escalate(running, too_often, exc)
                    return
                self.actor_restarts += 1
                log.warning("%s's actor crashed (%s: %s); restarting it in %.2f s with an empty cache",
                            persona, type(exc).__name__, exc, delay)
                redo, handled = _redo(crashed.in_hand, exc)
                running.actor = PersonaActor(persona, self._ctx, running.lane, handled=crashed.handled + handled)
                crashed.stop(successor=running.actor)
                await trio.sleep(delay)
                rooms = self.rooms.rooms_of(persona)

    def _escalate(self, running: Running, error: Exception, cause: Exception) -> None:
        """Give up on one persona: mark it failed (its calls raise ``PersonaFailed``), stop its
        actor and writer, and leave every other persona as it was."""
        persona = running.actor.persona
        failed = PersonaFailed(
            f"persona {persona!r} was stopped: {error} (last: {type(cause).__name__}: {cause}); "
            "its rooms go on without its memory and its queued writes wait at their cursors "
            "until the memory is opened again"
        )
        failed.__cause__ = cause
        self.failed[persona] = failed
        log.error("%s", failed)
        self._let_go(running)

    def _close_actor(self, running: Running) -> None:
        """No more envelopes for this actor: after what is in its outbox, it closes."""
        if running.closing:
            return
        running.closing = True
        if not running.outbox_closed:
            running.outbox.append(Delivery(Closing()))
            running.queued += 1
            running.outbox_closed = True
            running.outbox_ready.set()

    async def _supervise_writer(self, running: Running) -> None:
        s = self._settings
        policy = self._policy()
        persona = running.actor.persona

        async def perform(job) -> None:  # the actor of the moment (it is replaced on a restart)
            await running.actor.perform(job)
            if isinstance(job, QuietJob):
                running.parked_in_a_row = 0

        while True:
            started = trio.current_time()
            try:
                await run_writer(running.lane, perform)
                return
            except LeaseLost as exc:
                # Another worker may own the persona now: nothing more is written from here.
                log.warning("%s: %s; its actor stops on this worker", persona, exc)
                self._let_go(running)
                return
            except Exception as exc:
                now = trio.current_time()
                try:
                    delay = policy.after_crash(crashed_at=now, ran_for=now - started, who=f"{persona}'s writer")
                except WriterCrashedTooOften as too_often:
                    if isinstance(exc, StorageError):
                        self._escalate(running, too_often, exc)  # no job of its can be written
                        return
                    # A poison job: it stays with its persona. Park it with its error and go on.
                    job = running.lane.in_flight
                    self.parked_jobs += 1
                    running.parked_in_a_row += 1
                    log.error(
                        "%s's writer failed %d times on one job (%s: %s); parking it and going on",
                        persona, s.max_restarts + 1, type(exc).__name__, exc,
                    )
                    if job is not None:
                        await running.actor.abandon(job, exc)
                        running.lane.finished(job)
                    if running.parked_in_a_row > s.max_restarts:
                        self._escalate(running, WriterCrashedTooOften(
                            f"{persona}'s writer had {running.parked_in_a_row} jobs in a row parked"), exc)
                        return
                    policy = self._policy()
                    continue
                self.restarts += 1
                log.warning(
                    "%s's writer crashed (%s: %s); restarting in %.2f s",
                    persona,
                    type(exc).__name__,
                    exc,
                    delay,
                )
                await trio.sleep(delay)

    async def let_go(self, persona: str) -> None:
        """Stop ``persona``'s actor now, whatever it was doing (a cluster worker lost or
        handed over its lease): its cache goes, its queued jobs are dropped (their cursors
        stay, so the next owner writes those lines), a write already in the database's hands
        commits or rolls back before the lease can pass (``leases.check_held``), and its
        callers hear ``MemoryClosed``. The next message for the persona spawns a fresh actor."""
        running = self._actors.get(persona)
        if running is not None:
            self._let_go(running)
            await running.finished.wait()

    def _let_go(self, running: Running) -> None:
        if self._actors.get(running.actor.persona) is running:
            del self._actors[running.actor.persona]
        running.closing = True
        running.outbox_closed = True
        running.outbox_ready.set()
        running.scope.cancel()

    async def run_retirement(self) -> None:
        """Retire idle actors, forever (checks four times per idle period)."""
        await run_retirement(self.retire_idle, self._actor_settings.idle_retire_seconds)

    def retire_idle(self) -> list[str]:
        """Retire every actor idle for ``actors.idle_retire_seconds`` with no open room
        (``actors/retirement.py``). Returns the personas retired."""
        now = trio.current_time()
        retired = to_retire(self._actors, self.rooms.in_a_room(), now, self._actor_settings.idle_retire_seconds)
        for persona in retired:
            running = self._actors.pop(persona)
            self._close_actor(running)
            log.info("%s's actor retired after %.0f s idle", persona, now - running.actor.last_active)
        return retired

    @property
    def rules(self):
        """The read path's rules every actor builds with."""
        return self._ctx.rules

    @property
    def live_personas(self) -> frozenset[str]:
        """The personas that have an actor right now."""
        return frozenset(self._actors)

    @property
    def closed(self) -> bool:
        return self._closed

    def mailbox_depths(self) -> list[int]:
        """For each live actor, the envelopes sent to it and not yet handled."""
        return [running.sent - running.actor.handled for running in self._actors.values()]

    # ---- shutdown ----------------------------------------------------------------------

    async def shut_down(self) -> None:
        """``aclose`` within ``supervisor.shutdown_deadline_seconds``, shielded from outside
        cancellation, then cancel whatever of the actors is left; once only (a second call
        returns at once)."""
        if self._shut_down:
            return
        self._shut_down = True
        with trio.CancelScope(shield=True):
            with trio.move_on_after(self._settings.shutdown_deadline_seconds):
                await self.aclose()
        self._nursery.cancel_scope.cancel()  # past the deadline: what is left is cancelled

    async def aclose(self) -> None:
        """Refuse new messages, then wait while every actor drains its mailbox and lane, and
        the recorder writes the rooms."""
        self._closed = True
        self._intake.close()
        await self._intake.wait_closed()
        for running in self._actors.values():
            self._close_actor(running)
        for running in list(self._actors.values()):
            await running.finished.wait()
        await self.recorder.aclose()


def _redo(envelope: Envelope | None, error: Exception) -> tuple[Envelope | None, int]:
    """What a restarted actor does with the envelope its predecessor crashed on: a caller's
    request is answered with the error (and counted as handled); anything else is handled
    again. Returns (the envelope to handle again, how many were answered instead)."""
    match envelope:
        case EditRequested(reply=reply) | RecallRequested(reply=reply) | MeterRequested(reply=reply):
            reply.set(outcome.Error(error))
            return None, 1
        case ControlsChanged(done=done):
            done.set()  # the new actor builds every block afresh
            return None, 1
        case None | Wake():
            return None, 0
        case _:
            return envelope, 0


async def run_supervisor(
    context: ActorContext,
    actor_settings: ActorSettings,
    supervisor_settings: SupervisorSettings,
    *,
    task_status=trio.TASK_STATUS_IGNORED,
) -> None:
    """Run a supervisor — its intake, its actors, their retirement — until cancelled; report
    it with ``task_status.started(supervisor)``. An escalation leaves as an exception."""
    async with trio.open_nursery() as nursery:
        rooms = RoomRegistry(await context.store.room_flags())
        recorder = await nursery.start(run_room_recorder, context.store, name="room recorder")
        supervisor = Supervisor(nursery, context, actor_settings, supervisor_settings, recorder, rooms)
        nursery.start_soon(supervisor.run_retirement, name="retirement")
        task_status.started(supervisor)


@asynccontextmanager
async def open_supervisor(
    context: ActorContext, actor_settings: ActorSettings, supervisor_settings: SupervisorSettings
) -> AsyncIterator[Supervisor]:
    """A running supervisor for the block; leaving it closes intake and lets the actors drain
    within ``supervisor.shutdown_deadline_seconds`` (shielded), then cancels what is left."""
    async with trio.open_nursery() as nursery:
        supervisor = await nursery.start(run_supervisor, context, actor_settings, supervisor_settings)
        try:
            yield supervisor
        finally:
            await supervisor.shut_down()
            nursery.cancel_scope.cancel()
