"""The router: the facade's way to the persona actors. It takes the room events, in order, and
delivers each to the personas that hear it; it hands the calls answered by an actor (a block, a
recall note, an edit, a meter, a switch change, a catch-up, a drain) to that persona's actor.

Rules:
- A room event is checked against the room registry first (``RoomRegistry.accept``): a refused
  event raises to the sender and changes nothing. An accepted one goes, in intake order
  (``intake.py``), to the mailbox of every persona that hears it (``rooms.hearings``), with the
  room's new state; and an open or an archive to the room recorder (``room_recorder.py``),
  which writes the rooms table in the background: no write stands between ``RoomOpened`` and
  its block.
- A sender waits, before anything is recorded, until each persona it may reach has room in its
  outbox (``outbox.wait_for_room``): a full one is backpressure, never loss.
- The router never spawns, restarts or stops an actor: it asks the supervisor for a persona's
  running actor (``Supervising.running``, which spawns one when needed) and reads which personas
  were escalated (``Supervising.failed``). An escalated persona is skipped by room events, its edit
  runs on the store directly, its meter is read from the store, and its other calls raise
  ``PersonaFailed``.
- A caller waiting for an actor's answer (a recall note, an edit, a meter) waits on the answer
  alone; when the actor ends first, it raises ``MemoryClosed`` (or ``PersonaFailed``). A human's
  edit and a switch change go to the actor as messages and are handled in turn with room
  events, never behind its writer.
- In a cluster worker, events arrive already checked and applied by the shared registry
  (``deliver_applied``, from ``cluster/inbox.py``).
"""

from __future__ import annotations

import logging
from typing import Mapping, Protocol

import numpy as np
import trio

from ..core.ranking import Topic
from ..errors import MemoryClosed, PersonaFailed, ProviderError
from ..messages import RoomEvent
from ..rooms import RoomRegistry, RoomState
from . import outbox
from .envelopes import CatchUp, ControlsChanged, Delivered, EditRequested, Envelope, MeterRequested, RecallRequested
from .intake import Intake
from .lane import HumanEdit, Reply
from .outbox import Delivery, Running
from .persona import ActorContext, meter_from_store, run_edit
from .room_recorder import RoomRecorder

log = logging.getLogger(__name__)


class Supervising(Protocol):
    """What the router needs of the supervisor."""

    @property
    def actors(self) -> Mapping[str, Running]:
        """The running actors, by persona."""

    @property
    def failed(self) -> Mapping[str, PersonaFailed]:
        """The personas escalated, with the error their calls raise."""

    @property
    def closed(self) -> bool:
        """Whether the memory is closing."""

    def running(self, persona: str) -> Running:
        """``persona``'s running actor, spawned if it has none; raises ``PersonaFailed`` for
        an escalated persona."""


class Router:
    """Routes room events and calls to the actors the supervisor runs. The supervisor creates
    it, runs its intake (``run_intake``) and closes it (``close_intake``)."""

    def __init__(
        self, supervisor: Supervising, rooms: RoomRegistry, recorder: RoomRecorder, context: ActorContext, mailbox_size: int
    ) -> None:
        self._supervisor = supervisor
        self.rooms = rooms
        self.recorder = recorder
        self._ctx = context
        self._bound = mailbox_size
        self._intake: Intake[list[tuple[Running, Delivery]]] = Intake(mailbox_size, self._route, self._check_open)

    @property
    def rules(self):
        """The read path's rules every actor builds with."""
        return self._ctx.rules

    async def run_intake(self) -> None:
        """Take the room events in order until ``close_intake``."""
        await self._intake.run()

    async def close_intake(self) -> None:
        """Take no more room events; return once those already waiting were taken."""
        self._intake.close()
        await self._intake.wait_closed()

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
            if heard.persona not in self._supervisor.failed:
                running = self._supervisor.running(heard.persona)
                deliveries.append((running, self._deliver(running, Delivered(heard.event, heard.room))))
        return deliveries

    async def deliver_applied(self, persona: str, event: RoomEvent, room: RoomState, *, gone: bool = False) -> None:
        """Deliver to ``persona``'s actor an event that was checked and applied elsewhere (a
        cluster worker's shared registry: ``cluster/inbox.py``), with the room's state after
        it; the registry here adopts that state (``RoomRegistry.adopt``). Returns once the
        event is in the actor's mailbox."""
        self._check_open()
        self.rooms.adopt(event, room, gone=gone)
        if persona in self._supervisor.failed:
            return
        await self._room_for((persona,))
        running = self._supervisor.running(persona)
        await self._delivered(running, self._deliver(running, Delivered(event, room)))

    def _deliver(self, running: Running, envelope: Envelope) -> Delivery:
        return outbox.deliver(running, envelope, self._supervisor.failed)

    async def _delivered(self, running: Running, delivery: Delivery) -> None:
        await outbox.delivered(running, delivery, self._supervisor.failed)

    async def _room_for(self, personas) -> None:
        await outbox.wait_for_room(self._supervisor.actors, personas, self._bound)

    # ---- calls answered by an actor ----------------------------------------------------

    async def block(self, persona: str, room_id: str) -> str:
        """The block ``persona`` has for ``room_id`` with its current cast."""
        room = self.room_of(persona, room_id)
        running = self._supervisor.running(persona)
        try:
            return await running.actor.block(room_id, room.generation)
        except MemoryClosed:
            raise self._undelivered(running) from None

    async def built_block(self, persona: str, room_id: str) -> tuple[int, str, int]:
        """``block`` with the room generation it was built for (the runtime's cache key) and
        its meter's characters used."""
        room = self.room_of(persona, room_id)
        running = self._supervisor.running(persona)
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
        the people present now). The message is searched by what it says besides the names of
        who is in the room (``RoomState.searched``), embedded here, off the actor; if the
        embedder fails, the note ranks by its words alone.

        Raises:
            MemoryClosed: the memory closed before the note was made.
        """
        room = self.room_of(persona, room_id)
        if room.incognito:
            return ""
        embedder = self._ctx.embedder
        searched = room.searched(text)
        try:
            vector = (await embedder.embed([searched]))[0] if searched else None
        except ProviderError as exc:
            log.warning("%s: could not embed a message in room %r (%s); recalling by its words",
                        persona, room_id, exc)
            vector = None
        query = (Topic.of(searched, vector, embedder.name) if vector is not None
                 else Topic.of(searched, np.zeros(1, dtype=np.float32), ""))
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
        running = self._supervisor.running(persona)
        reply = Reply()
        await self._delivered(running, self._deliver(running, make(reply)))
        await outbox.answer(running, reply.done)
        if not reply.result:
            if persona in self._supervisor.failed:
                raise self._supervisor.failed[persona]
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
        await outbox.drain(self._supervisor.actors, self._supervisor.failed, self._bound)
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
        if persona in self._supervisor.failed:
            return await run_edit(self._ctx.store, self._ctx.clock, persona, edit)
        return await self._ask(persona, lambda reply: EditRequested(edit, reply), "edit ran")

    async def controls_changed(self, user_id: int, persona: str | None = None) -> None:
        """A human's switches or note changed (already stored): have every live actor — or only
        ``persona``'s — rebuild the cached blocks of the rooms the human is in; return once
        they did. A privacy edit is the one change that reaches a live block at once."""
        self._check_open()
        waits = []
        for running in list(self._supervisor.actors.values()):
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
        if persona in self._supervisor.failed:  # no actor to ask: read it once from the store
            return await meter_from_store(self._ctx, persona, user_id)
        return await self._ask(persona, lambda reply: MeterRequested(user_id, reply), "meter was read")

    async def queue_write(self, persona: str, room: RoomState) -> None:
        """Have ``persona``'s actor queue the write path for ``room`` (the sweep's catch-up).
        An escalated persona is skipped: its cursor stays where it is."""
        self._check_open()
        if persona in self._supervisor.failed:
            return
        await self._room_for((persona,))
        running = self._supervisor.running(persona)
        await self._delivered(running, self._deliver(running, CatchUp(room)))

    def _undelivered(self, running: Running) -> MemoryClosed | PersonaFailed:
        return outbox.undelivered(running, self._supervisor.failed)

    def _check_open(self) -> None:
        if self._supervisor.closed:
            raise MemoryClosed("the memory is closed; open it again with open_memory()")
