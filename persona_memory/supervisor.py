"""The supervisor: one actor per persona, spawned when needed, restarted when it crashes, and
the supervision tree they run in. What reaches the actors, and which persona hears what, is the
router's (``actors/router.py``), reading the room registry (``rooms.RoomRegistry``).

Rules:
- It owns the root nursery of the actors, the intake task, the room recorder and every
  mailbox, outbox and writer lane: it creates them and it closes them. Each is bounded: the
  intake and the mailboxes hold ``actors.mailbox_size`` messages, and so does an outbox before
  its senders wait (``actors/outbox.py``); a writer lane holds ``actors.write_queue_size`` jobs
  and merges a room's writes past that (``lane.WriteLane``).
- It spawns a persona's actor on the first message for that persona (``running``), and
  retires an actor that has no open room, nothing queued and nothing to do for
  ``actors.idle_retire_seconds`` (``actors/retirement.py``).
- A writer that raises is restarted with capped exponential backoff (``restart.RestartPolicy``)
  and performs the same job again. After ``supervisor.max_restarts`` crashes in the period the
  job is a poison job: it is parked with its error (a slice goes to ``parked_slices``) and the
  persona goes on with its next job.
- An actor whose own loop raises is restarted the same way, as a fresh actor with an empty
  cache that builds the blocks of its open rooms again and handles the envelope its
  predecessor crashed on (a caller waiting for that one's answer gets the error instead).
  When an actor ends, every caller waiting for its answer is woken.
- Escalation is per persona, never the whole supervisor: an actor past the restart intensity,
  a writer whose storage is broken past it, or ``supervisor.max_restarts`` + 1 jobs parked in
  a row (no room's write succeeding between them) mark that persona failed. Its actor and
  writer stop; its calls raise ``PersonaFailed``; room events reach the other personas of its
  rooms; a human's edit of its rows runs on the store directly; ``readiness()`` lists it.
  Supervisors catch ``Exception`` only: cancellation always passes through.
- A writer that meets ``LeaseLost`` (a cluster worker no longer holds the persona's lease)
  is not restarted: the persona's actor is let go, as ``let_go`` does when the worker's lease
  loop says the persona is lost or handed over — cancelled at once, its queued work left to
  the stored cursors for the next owner.
- Shutdown: ``aclose`` refuses new messages, closes every mailbox, and waits while the actors
  drain their mailboxes and then their lanes, and the recorder its rooms. The caller puts the
  deadline around it.
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from typing import AsyncIterator, Mapping

import attrs
import outcome
import trio

from .actors import outbox
from .actors.envelopes import Closing, ControlsChanged, EditRequested, Envelope, MeterRequested, RecallRequested, Wake
from .actors.lane import QuietJob, WriteLane, run_writer
from .actors.outbox import Delivery, Running
from .actors.persona import ActorContext, PersonaActor
from .actors.retirement import run_retirement, to_retire
from .actors.room_recorder import RoomRecorder, run_room_recorder
from .actors.router import Router
from .errors import LeaseLost, PersonaFailed, StorageError, WriterCrashedTooOften
from .rooms import RoomRegistry, RoomState
from .restart import RestartPolicy
from .settings import ActorSettings, SupervisorSettings

log = logging.getLogger(__name__)


class Supervisor:
    """The actors of one open memory. ``open_memory`` creates it and closes it; the facade
    reaches the actors through its ``router`` and reads its room registry (``rooms``)."""

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
        self._closed = False
        self._shut_down = False
        self.restarts = 0  # writer restarts
        self.actor_restarts = 0
        self.parked_jobs = 0
        self.failed: dict[str, PersonaFailed] = {}  # personas escalated: their calls raise this
        self.router = Router(self, rooms, recorder, self._ctx, actor_settings.mailbox_size)
        nursery.start_soon(self.router.run_intake, name="intake")

    # ---- actors ------------------------------------------------------------------------

    @property
    def actors(self) -> Mapping[str, Running]:
        """The running actors, by persona."""
        return self._actors

    def running(self, persona: str) -> Running:
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
        await self.router.close_intake()
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
        rooms = RoomRegistry(await context.store.rooms.flags())
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
