"""The supervisor: the room registry, one actor per persona, and the restarts of their actors
and writers.

Rules:
- It owns the root nursery of the actors and every mailbox, outbox and writer lane: it
  creates them and it closes them. Each is bounded: the intake and the mailboxes hold
  ``actors.mailbox_size`` messages; a persona's outbox (deliveries waiting for its mailbox)
  takes a new one only while it holds fewer than that — the sender waits, before anything is
  recorded, so a full one is backpressure, never loss; a writer lane holds
  ``actors.write_queue_size`` jobs and merges a room's writes past that (``lane.WriteLane``).
- It spawns a persona's actor on the first message for that persona, and retires an actor that
  has no open room, nothing queued and nothing to do for ``actors.idle_retire_seconds``.
- A room event is checked against the registry first (``rooms.apply``): a refused event raises
  to the sender and changes nothing. An accepted one goes to the mailbox of every persona in
  the room, with the room's new state. A room reopened without a persona that was in it is,
  for that persona, archived: it flushes its writes and forgets the room's block.
- Intake is one task that takes the senders' events from a bounded channel, one at a time: it
  records each in the registry and delivers it before taking the next — no lock. A sender
  cancelled once its event was taken waits (shielded) for the delivery. So every actor sees
  the room's events in registry order, and the registry is never ahead of the actors (which
  would leave ``block()`` waiting for a build that never comes). Recording and delivering
  never wait, so when no event is queued or being taken, the sender does it itself, at once
  — the same order, without waking the intake task and waiting for it.
- A caller waiting for an actor's answer (a recall note, an edit, a meter) waits on the answer
  alone; when the actor ends first, it wakes every such caller, which then raises
  ``MemoryClosed`` (or ``PersonaFailed``). A human's edit and a switch change go to the actor
  as messages and are handled in turn with room events, never behind its writer.
- Intake also hands each open and archive to the room recorder (``room_recorder``), which
  refuses a flip of ``incognito`` from memory and writes the rooms table in the background:
  no write stands between ``RoomOpened`` and its block.
- An actor is idle when every envelope sent to it was handled and every job it queued was
  performed — counted, not guessed from queue lengths: an envelope handed to a waiting actor
  sits in no buffer until the actor wakes, and retiring it then would lose track of its work.
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

import itertools
import logging
from collections import deque
from contextlib import asynccontextmanager
from typing import AsyncIterator

import attrs
import numpy as np
import outcome
import trio

from .actors.envelopes import (
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
from .actors.lane import HumanEdit, QuietJob, Reply, WriteLane, run_writer
from .actors.persona import ActorContext, PersonaActor, meter_from_store, run_edit
from .actors.room_recorder import RoomRecorder, run_room_recorder
from .core.ranking import Topic
from .errors import (
    LeaseLost,
    MemoryClosed,
    NotInRoom,
    PersonaFailed,
    ProviderError,
    StorageError,
    UnknownRoom,
    WriterCrashedTooOften,
)
from .messages import RoomArchived, RoomEvent, RoomOpened
from .rooms import RoomState, apply
from .restart import RestartPolicy
from .settings import ActorSettings, SupervisorSettings

log = logging.getLogger(__name__)

@attrs.define(eq=False)
class _Delivery:
    """An envelope on its way to an actor's mailbox; ``done`` once it is in (or never will be)."""

    envelope: Envelope
    done: trio.Event = attrs.field(factory=trio.Event)
    failed: bool = False


@attrs.define
class _Running:
    """One persona's actor as the supervisor runs it: the actor (replaced when it restarts),
    its mailbox, its writer lane and its outbox (deliveries waiting for the mailbox)."""

    actor: PersonaActor
    mailbox: trio.MemorySendChannel[Envelope]
    lane: WriteLane
    outbox: deque[_Delivery] = attrs.field(factory=deque)
    outbox_ready: trio.Event = attrs.field(factory=trio.Event)  # the feeder's wake-up
    room_freed: trio.Event = attrs.field(factory=trio.Event)  # a sender's wake-up
    outbox_closed: bool = False
    finished: trio.Event = attrs.field(factory=trio.Event)
    sent: int = 0
    closing: bool = False
    queued: int = 0  # deliveries in the outbox or in the feeder's hands
    parked_in_a_row: int = 0  # jobs parked since the writer last performed one
    callers: set[trio.Event] = attrs.field(factory=set)  # set when the actor ends, too
    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)  # cancelled to let it go

    @property
    def idle(self) -> bool:
        return self.sent == self.actor.handled and self.actor.idle


class Supervisor:
    """The registry and the actors of one open memory. ``open_memory`` creates it and closes it."""

    def __init__(
        self,
        nursery: trio.Nursery,
        context: ActorContext,
        actor_settings: ActorSettings,
        supervisor_settings: SupervisorSettings,
        recorder: RoomRecorder,
    ) -> None:
        self._nursery = nursery
        self.recorder = recorder
        # A write path must see every display name handed over before it (the guard against
        # rows that name a user met in another room reads them from the file).
        self._ctx = attrs.evolve(context, rooms_recorded=recorder.flush)
        self._actor_settings = actor_settings
        self._settings = supervisor_settings
        self.rooms: dict[str, RoomState] = {}
        self._actors: dict[str, _Running] = {}
        self._generations = itertools.count(1)
        self._intake_send, intake = trio.open_memory_channel[_Intake](actor_settings.mailbox_size)
        self._intake_done = trio.Event()
        self._intake_pending = 0  # events handed to the intake channel and not yet taken
        self._closed = False
        self._shut_down = False
        self.restarts = 0  # writer restarts
        self.actor_restarts = 0
        self.parked_jobs = 0
        self.failed: dict[str, PersonaFailed] = {}  # personas escalated: their calls raise this
        nursery.start_soon(self._run_intake, intake, name="intake")

    # ---- intake ------------------------------------------------------------------------

    async def send(self, event: RoomEvent) -> None:
        """Check ``event`` against the registry, record it, and deliver it to the room's actors.

        Events are taken one at a time, in order, by the supervisor's intake task; ``send``
        returns once every actor in the room has the event in its mailbox. Cancelled while
        waiting for a place in the intake, it changes nothing; once taken, it is delivered in
        full and the cancellation is felt after.

        Raises:
            UnknownRoom, NotInRoom, InvalidInput: the event cannot happen; nothing changed.
            MemoryClosed: the memory is shutting down.
        """
        self._check_open()
        await self._room_for(self._targets(event))
        if self._intake_pending == 0:  # nothing ahead of it: taken here, in order
            await trio.lowlevel.checkpoint_if_cancelled()
            deliveries = self._record_and_deliver(event)
            await trio.lowlevel.cancel_shielded_checkpoint()
        else:
            taken = _Intake(event)
            self._intake_pending += 1
            try:
                await self._intake_send.send(taken)
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                self._intake_pending -= 1
                raise MemoryClosed("the memory is closed; open it again with open_memory()") from None
            except BaseException:
                self._intake_pending -= 1  # cancelled before it was sent: nothing changed
                raise
            with trio.CancelScope(shield=True):
                await taken.done.wait()
            deliveries = taken.result[0].unwrap()
        for running, delivery in deliveries:
            await self._delivered(running, delivery)

    async def _run_intake(self, intake: trio.MemoryReceiveChannel[_Intake]) -> None:
        """The intake task: apply each event to the registry, then deliver it, one at a time."""
        try:
            async with intake:
                async for taken in intake:
                    try:
                        self._check_open()
                        deliveries = self._record_and_deliver(taken.event)
                    except Exception as exc:  # the sender's to see
                        taken.result.append(outcome.Error(exc))
                    else:
                        taken.result.append(outcome.Value(deliveries))
                    finally:  # cancelled mid-delivery, the sender still hears back
                        self._intake_pending -= 1
                        if not taken.result:
                            taken.result.append(outcome.Error(MemoryClosed(
                                "the memory closed while this event was being delivered")))
                        taken.done.set()
        finally:
            self._intake_done.set()
            while True:  # events still waiting when intake stopped: their senders hear back
                try:
                    taken = intake.receive_nowait()
                except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                    break
                taken.result.append(outcome.Error(MemoryClosed("the memory closed before this event was taken")))
                taken.done.set()

    def _record_and_deliver(self, event: RoomEvent) -> list[tuple[_Running, _Delivery]]:
        """Check ``event`` against the registry, record it, and put it in the actors'
        outboxes (never waits: so it runs whole, between two checkpoints)."""
        before = self.rooms.get(event.room_id)
        if isinstance(event, RoomOpened):
            self.recorder.check(event)
        room = apply(self.rooms, event, next(self._generations))
        if isinstance(event, RoomArchived):
            del self.rooms[event.room_id]
        else:
            self.rooms[event.room_id] = room
        self.recorder.record(event, self._ctx.clock.now())
        deliveries = []
        for persona in room.personas:
            if persona in self.failed:
                continue  # escalated: the room goes on without it
            running = self._running(persona)
            deliveries.append((running, self._deliver(running, Delivered(event, room))))
        if isinstance(event, RoomOpened) and before is not None:
            # Reopened without some persona: for it, the room as it knew it is over.
            gone = attrs.evolve(before, archived=True, generation=room.generation)
            for persona in before.personas:
                if persona not in room.personas and persona not in self.failed:
                    running = self._running(persona)
                    archived = Delivered(RoomArchived(room_id=event.room_id), gone)
                    deliveries.append((running, self._deliver(running, archived)))
        return deliveries

    async def deliver_applied(self, persona: str, event: RoomEvent, room: RoomState, *, gone: bool = False) -> None:
        """Deliver to ``persona``'s actor an event that was checked and applied elsewhere (a
        cluster worker's shared registry: ``cluster/inbox.py``), with the room's state after
        it. The registry here takes that state unless it holds a later generation already;
        ``gone``: the archive of a room reopened without the persona (the room stays open).
        Returns once the event is in the actor's mailbox."""
        self._check_open()
        current = self.rooms.get(room.room_id)
        newer = current is None or current.generation <= room.generation
        if isinstance(event, RoomArchived) and not gone:
            if current is not None and newer:
                del self.rooms[room.room_id]
        elif not gone and newer:
            self.rooms[room.room_id] = room
        if persona in self.failed:
            return
        await self._room_for((persona,))
        running = self._running(persona)
        await self._delivered(running, self._deliver(running, Delivered(event, room)))

    def _deliver(self, running: _Running, envelope: Envelope) -> _Delivery:
        """Put ``envelope`` in ``running``'s outbox, in order, without waiting: a persona whose
        mailbox is full delays its own events only, never another persona's. With nothing
        queued ahead of it and room in the mailbox, it goes straight in (no feeder hop).

        The outbox is bounded by the senders: each waits (``_room_for``) until the persona has
        fewer than ``actors.mailbox_size`` deliveries queued before it records anything, so
        it holds at most that many plus one per sender that passed the check at once."""
        delivery = _Delivery(envelope)
        if running.outbox_closed:
            raise self._undelivered(running)
        if running.queued == 0:
            try:
                running.mailbox.send_nowait(envelope)
            except trio.WouldBlock:
                pass
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                raise self._undelivered(running) from None
            else:
                running.sent += 1
                delivery.done.set()
                return delivery
        running.outbox.append(delivery)
        running.outbox_ready.set()
        running.queued += 1
        running.sent += 1
        return delivery

    async def _delivered(self, running: _Running, delivery: _Delivery) -> None:
        """Wait until ``delivery`` is in the actor's mailbox.

        Raises:
            MemoryClosed: the actor stopped first.
            PersonaFailed: the persona was escalated first.
        """
        await _first_of(delivery.done, running.finished)
        if delivery.failed or not delivery.done.is_set():
            raise self._undelivered(running)

    def _targets(self, event: RoomEvent) -> tuple[str, ...]:
        """The personas ``event`` will be delivered to, as far as known before it is applied."""
        room = self.rooms.get(event.room_id)
        named = event.personas if isinstance(event, RoomOpened) else ()
        return (*named, *(room.personas if room is not None else ()))

    async def _room_for(self, personas) -> None:
        """Backpressure: wait until each of these personas' actors has fewer than
        ``actors.mailbox_size`` deliveries waiting in its outbox. Changes nothing."""
        bound = self._actor_settings.mailbox_size
        for persona in dict.fromkeys(personas):
            running = self._actors.get(persona)
            while running is not None and running.queued >= bound and not running.finished.is_set():
                if running.room_freed.is_set():
                    running.room_freed = trio.Event()
                await _first_of(running.room_freed, running.finished)
                running = self._actors.get(persona)

    async def _feed(self, running: _Running) -> None:
        """Move the outbox into the bounded mailbox, in order; close the mailbox after it."""
        try:
            async with running.mailbox:
                while True:
                    while not running.outbox:
                        if running.outbox_closed:
                            return
                        ready = running.outbox_ready = trio.Event()
                        await ready.wait()
                    delivery = running.outbox.popleft()
                    try:
                        await running.mailbox.send(delivery.envelope)
                    except (trio.ClosedResourceError, trio.BrokenResourceError):
                        delivery.failed = True
                        running.sent -= 1
                    finally:
                        running.queued -= 1
                        running.room_freed.set()
                    delivery.done.set()
        finally:
            running.outbox_closed = True
            while running.outbox:  # what is left will never arrive: its senders hear back
                delivery = running.outbox.popleft()
                delivery.failed = True
                delivery.done.set()

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
        room = self.rooms.get(room_id)
        if room is None:
            raise UnknownRoom(f"room {room_id!r} is not open; send RoomOpened for it first")
        if persona not in room.personas:
            raise NotInRoom(f"persona {persona!r} is not in room {room_id!r} (it has {', '.join(room.personas)})")
        return room

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
        await _answer(running, reply.done)
        if not reply.result:
            if persona in self.failed:
                raise self.failed[persona]
            raise MemoryClosed(f"the memory closed before {persona}'s {what}")
        return reply.result[0].unwrap()

    async def drain(self) -> None:
        """Return when every message sent before this call has been handled and written.

        Only the actors with work get a flush: one that is idle (everything sent to it was
        handled, everything it queued was performed and reported) has nothing to wait for.
        The rooms opened and archived are recorded too.

        Raises:
            MemoryClosed: the memory closed before those writes landed.
            StorageError: the rooms could not be recorded (they are tried again).
        """
        self._check_open()
        await self._room_for(list(self._actors))
        waits = []
        for running in list(self._actors.values()):
            if running.closing or running.idle:
                continue  # retiring, or idle: it has nothing left to write
            done = trio.Event()
            self._deliver(running, FlushRequested(done))
            waits.append((running, done))
        for running, done in waits:
            await _first_of(done, running.finished)
            if not done.is_set() and running.actor.persona in self.failed:
                continue  # escalated while it wrote: what it queued waits at its cursors
            if not done.is_set():
                raise MemoryClosed(
                    f"the memory closed before {running.actor.persona}'s queued writes landed"
                )
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
            await _first_of(done, running.finished)

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

    def _undelivered(self, running: _Running) -> MemoryClosed | PersonaFailed:
        persona = running.actor.persona
        if persona in self.failed:
            return self.failed[persona]
        return MemoryClosed(f"the memory closed while an event for {persona} was being delivered")

    def _check_open(self) -> None:
        if self._closed:
            raise MemoryClosed("the memory is closed; open it again with open_memory()")

    # ---- actors ------------------------------------------------------------------------

    def _running(self, persona: str) -> _Running:
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

    def _spawn(self, persona: str) -> _Running:
        send, receive = trio.open_memory_channel[Envelope](self._actor_settings.mailbox_size)
        lane = WriteLane(self._actor_settings.write_queue_size, waker=send.clone())
        running = _Running(PersonaActor(persona, self._ctx, lane), send, lane)
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

    async def _run_actor(self, running: _Running, mailbox: trio.MemoryReceiveChannel[Envelope]) -> None:
        try:
            with running.scope:
                async with mailbox, trio.open_nursery() as nursery:
                    nursery.start_soon(self._supervise_writer, running)
                    nursery.start_soon(self._feed, running)
                    await self._supervise_actor(running, mailbox)
        finally:
            running.actor.stop()
            running.finished.set()
            for caller in list(running.callers):
                caller.set()  # it finds no answer: the actor is gone

    async def _supervise_actor(self, running: _Running, mailbox: trio.MemoryReceiveChannel[Envelope]) -> None:
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
                rooms = tuple(room for room in self.rooms.values() if persona in room.personas)

    def _escalate(self, running: _Running, error: Exception, cause: Exception) -> None:
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

    def _close_actor(self, running: _Running) -> None:
        """No more envelopes for this actor: after what is in its outbox, it closes."""
        if running.closing:
            return
        running.closing = True
        if not running.outbox_closed:
            running.outbox.append(_Delivery(Closing()))
            running.queued += 1
            running.outbox_closed = True
            running.outbox_ready.set()

    async def _supervise_writer(self, running: _Running) -> None:
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

    def _let_go(self, running: _Running) -> None:
        if self._actors.get(running.actor.persona) is running:
            del self._actors[running.actor.persona]
        running.closing = True
        running.outbox_closed = True
        running.outbox_ready.set()
        running.scope.cancel()

    async def run_retirement(self) -> None:
        """Retire idle actors, forever (checks four times per idle period)."""
        while True:
            await trio.sleep(self._actor_settings.idle_retire_seconds / 4)
            self.retire_idle()

    def retire_idle(self) -> list[str]:
        """Retire every actor idle for ``actors.idle_retire_seconds`` with no open room.

        Returns the personas retired. Their actors finish on their own: nothing is queued.
        """
        idle_after = self._actor_settings.idle_retire_seconds
        now = trio.current_time()
        busy = {p for room in self.rooms.values() for p in room.personas}
        retired = []
        for persona, running in list(self._actors.items()):
            if persona not in busy and running.idle and now - running.actor.last_active >= idle_after:
                del self._actors[persona]
                self._close_actor(running)
                retired.append(persona)
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
        self._intake_send.close()
        await self._intake_done.wait()
        for running in self._actors.values():
            self._close_actor(running)
        for running in list(self._actors.values()):
            await running.finished.wait()
        await self.recorder.aclose()


@attrs.define(eq=False)
class _Intake:
    """An event waiting for the intake task, and where its outcome goes."""

    event: RoomEvent
    done: trio.Event = attrs.field(factory=trio.Event)
    result: list[outcome.Outcome] = attrs.field(factory=list)


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


async def _answer(running: _Running, done: trio.Event) -> None:
    """Wait until ``done`` is set — by the actor answering, or by its end (``callers``)."""
    if done.is_set() or running.finished.is_set():
        return
    running.callers.add(done)
    try:
        await done.wait()
    finally:
        running.callers.discard(done)


async def _first_of(a: trio.Event, b: trio.Event) -> None:
    """Return as soon as either event is set."""
    if a.is_set() or b.is_set():
        return
    async with trio.open_nursery() as nursery:
        for event in (a, b):
            nursery.start_soon(_set_then_cancel, event, nursery.cancel_scope)


async def _set_then_cancel(event: trio.Event, scope: trio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


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
        recorder = await nursery.start(run_room_recorder, context.store, name="room recorder")
        supervisor = Supervisor(nursery, context, actor_settings, supervisor_settings, recorder)
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
