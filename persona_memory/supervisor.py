"""The supervisor: the room registry, one actor per persona, and the restarts of their writers.

Rules:
- It owns the root nursery of the actors and every mailbox and writer lane (bounded trio
  channels): it creates them and it closes them.
- It spawns a persona's actor on the first message for that persona, and retires an actor that
  has no open room, nothing queued and nothing to do for ``actors.idle_retire_seconds``.
- A room event is checked against the registry first (``rooms.apply``): a refused event raises
  to the sender and changes nothing. An accepted one goes to the mailbox of every persona in
  the room, with the room's new state.
- A writer that raises is restarted with capped exponential backoff (``restart.RestartPolicy``);
  too many crashes in the period escalate out of the nursery. It catches ``Exception`` only:
  cancellation always passes through.
- Shutdown: ``aclose`` refuses new messages, closes every mailbox, and waits while the actors
  drain their mailboxes and then their lanes. The caller puts the deadline around it.
"""

from __future__ import annotations

import itertools
import logging

import attrs
import trio

from .actors.envelopes import Delivered, Envelope, FlushRequested
from .actors.lane import WriteLane, run_writer
from .actors.persona import ActorContext, PersonaActor
from .errors import MemoryClosed, NotInRoom, UnknownRoom
from .messages import RoomArchived, RoomEvent
from .rooms import RoomState, apply
from .restart import RestartPolicy
from .settings import ActorSettings, SupervisorSettings

log = logging.getLogger(__name__)


@attrs.define
class _Running:
    actor: PersonaActor
    mailbox: trio.MemorySendChannel[Envelope]
    lane: WriteLane
    finished: trio.Event = attrs.field(factory=trio.Event)


class Supervisor:
    """Create with ``open_supervisor``."""

    def __init__(
        self,
        nursery: trio.Nursery,
        context: ActorContext,
        actor_settings: ActorSettings,
        supervisor_settings: SupervisorSettings,
    ) -> None:
        self._nursery = nursery
        self._ctx = context
        self._actor_settings = actor_settings
        self._settings = supervisor_settings
        self.rooms: dict[str, RoomState] = {}
        self._actors: dict[str, _Running] = {}
        self._generations = itertools.count(1)
        self._closed = False
        self.restarts = 0

    # ---- intake ------------------------------------------------------------------------

    async def send(self, event: RoomEvent) -> None:
        """Check ``event`` against the registry, record it, and deliver it to the room's actors.

        Raises:
            UnknownRoom, NotInRoom, InvalidInput: the event cannot happen; nothing changed.
            MemoryClosed: the memory is shutting down.
        """
        self._check_open()
        room = apply(self.rooms, event, next(self._generations))
        if isinstance(event, RoomArchived):
            del self.rooms[event.room_id]
        else:
            self.rooms[event.room_id] = room
        for persona in room.personas:
            try:
                await self._running(persona).mailbox.send(Delivered(event, room))
            except trio.ClosedResourceError:
                raise MemoryClosed("the memory closed while this event was being delivered") from None

    async def block(self, persona: str, room_id: str) -> str:
        """The block ``persona`` has for ``room_id`` with its current cast."""
        self._check_open()
        room = self.rooms.get(room_id)
        if room is None:
            raise UnknownRoom(f"room {room_id!r} is not open; send RoomOpened for it first")
        if persona not in room.personas:
            raise NotInRoom(f"persona {persona!r} is not in room {room_id!r} (it has {', '.join(room.personas)})")
        return await self._actors[persona].actor.block(room_id, room.generation)

    async def drain(self) -> None:
        """Return when every message sent before this call has been handled and written."""
        self._check_open()
        waits = []
        for running in list(self._actors.values()):
            done = trio.Event()
            try:
                await running.mailbox.send(FlushRequested(done))
            except trio.ClosedResourceError:
                continue  # retired meanwhile: it had nothing left to write
            waits.append(done)
        for done in waits:
            await done.wait()

    def _check_open(self) -> None:
        if self._closed:
            raise MemoryClosed("the memory is closed; open it again with open_memory()")

    # ---- actors ------------------------------------------------------------------------

    def _running(self, persona: str) -> _Running:
        running = self._actors.get(persona)
        if running is None:
            running = self._spawn(persona)
        return running

    def _spawn(self, persona: str) -> _Running:
        send, receive = trio.open_memory_channel[Envelope](self._actor_settings.mailbox_size)
        lane = WriteLane(self._actor_settings.write_queue_size)
        running = _Running(PersonaActor(persona, self._ctx, lane), send, lane)
        self._actors[persona] = running
        self._nursery.start_soon(self._run_actor, running, receive, name=f"actor:{persona}")
        return running

    async def _run_actor(self, running: _Running, mailbox: trio.MemoryReceiveChannel[Envelope]) -> None:
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._supervise_writer, running)
                await running.actor.run_mailbox(mailbox)
                running.lane.close()
        finally:
            running.finished.set()

    async def _supervise_writer(self, running: _Running) -> None:
        s = self._settings
        policy = RestartPolicy(
            initial=s.backoff_initial_seconds,
            cap=s.backoff_max_seconds,
            healthy_after=s.healthy_after_seconds,
            max_restarts=s.max_restarts,
            period=s.restart_period_seconds,
        )
        persona = running.actor.persona
        while True:
            started = trio.current_time()
            try:
                await run_writer(running.lane, running.actor.perform)
                return
            except Exception as exc:
                now = trio.current_time()
                delay = policy.after_crash(crashed_at=now, ran_for=now - started, who=f"{persona}'s writer")
                self.restarts += 1
                log.warning(
                    "%s's writer crashed (%s: %s); restarting in %.2f s",
                    persona,
                    type(exc).__name__,
                    exc,
                    delay,
                )
                await trio.sleep(delay)

    async def run_retirement(self) -> None:
        """Retire idle actors, forever (checks four times per idle period)."""
        idle_after = self._actor_settings.idle_retire_seconds
        while True:
            await trio.sleep(idle_after / 4)
            now = trio.current_time()
            busy = {p for room in self.rooms.values() for p in room.personas}
            for persona, running in list(self._actors.items()):
                if (
                    persona not in busy
                    and running.actor.idle
                    and running.mailbox.statistics().current_buffer_used == 0
                    and now - running.actor.last_active >= idle_after
                ):
                    del self._actors[persona]
                    running.mailbox.close()
                    log.info("%s's actor retired after %.0f s idle", persona, now - running.actor.last_active)

    @property
    def live_personas(self) -> frozenset[str]:
        return frozenset(self._actors)

    # ---- shutdown ----------------------------------------------------------------------

    async def aclose(self) -> None:
        """Refuse new messages, then wait while every actor drains its mailbox and lane."""
        self._closed = True
        for running in self._actors.values():
            running.mailbox.close()
        for running in list(self._actors.values()):
            await running.finished.wait()
