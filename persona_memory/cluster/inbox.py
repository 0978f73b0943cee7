"""A worker's inbox: the room events queued for the personas it owns, taken in order and
handed to their actors (``Router.deliver_applied``).

Any worker takes a room event into the shared registry (``registry.take_event``), which queues
it for each persona in the room. The owner of each persona takes them here.

Rules:
- The inbox serves the personas it was told it ``gained`` (their lease is held) until it is
  told it ``lost`` them. A gained persona is *settled* before any event of it is taken:
  ``room_registry.settle`` drops its queued events and gives the state of every open room it
  is in; each is delivered as an open (``RoomState.opening``), so its actor builds the
  room's block now; then ``catch_up`` queues the write path wherever its cursor is behind —
  the lines its last owner had not written, resumed from the stored cursor. A settle that
  fails on the database is tried again at the next round.
- A round takes the events of every settled persona, oldest first (``take_events``: only
  while this worker holds their live lease), ``batch`` at a time until none is left, and
  delivers them in that order. A room's events are queued in the order the registry applied
  them, so each actor sees its rooms' events in order.
- Rounds are woken by a notify on ``room_registry.CHANNEL`` (a ``LISTEN`` connection of its
  own, waited on in a thread), by ``poke``, and every ``poll_seconds`` whatever happens: a
  notify lost with a dropped connection delays an event, it never loses one. A round that
  fails on the database is logged and tried again at the next wake; a persona whose settle
  fails otherwise is logged and settled again next round, and an event that cannot be
  delivered is logged and dropped (its room's state stays in the registry) — one persona's
  bad room never stops the others' events.
- ``next_round()`` waits for a round that began after the call (one already under way may
  have read the queue before the caller's event committed), or for the rounds to stop.
- ``caught_up(room_id, generation)`` waits until the registry here holds the room at that
  generation or later (or ``timeout`` passes): a block asked of the owner right after a join
  taken by another worker is the block for the people present now.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable

import trio

from ..actors.router import Router
from ..errors import MemoryClosed, StorageError
from ..storage import room_registry
from ..storage.store import Store
from .registry import queued_of, room_of

log = logging.getLogger(__name__)


class Inbox:
    """One worker's inbox (see the module rules); ``run`` it in a nursery."""

    def __init__(self, store: Store, router: Router, worker_id: str, url: str, *,
                 catch_up: Callable[[str], Awaitable[None]], poll_seconds: float = 1.0, batch: int = 500) -> None:
        self._store = store
        self._router = router
        self._me = worker_id
        self._url = url
        self._catch_up = catch_up
        self._poll = poll_seconds
        self._batch = batch
        self._to_settle: set[str] = set()
        self._settled: set[str] = set()
        self._wake = trio.Event()
        self._round_done = trio.Event()
        self._began = self._ended = 0  # rounds begun and ended
        self._stopped = False  # the rounds are over (the memory closed): nothing to wait for
        self.taken = 0  # events taken and delivered, over the inbox's life

    def gained(self, persona: str) -> None:
        self._to_settle.add(persona)
        self._settled.discard(persona)
        self.poke()

    def lost(self, persona: str) -> None:
        self._to_settle.discard(persona)
        self._settled.discard(persona)

    def settled(self, persona: str) -> bool:
        return persona in self._settled

    def poke(self) -> None:
        self._wake.set()

    async def next_round(self) -> None:
        """Wake a round and wait until a round that *began* after this call has ended — so it
        took every event committed before the call (a round already under way may have
        queried before them)."""
        target = self._began + 1
        self.poke()
        while self._ended < target and not self._stopped:
            await self._round_done.wait()

    async def caught_up(self, room_id: str, generation: int, timeout: float) -> bool:
        """Whether the registry here holds ``room_id`` at ``generation`` or later, waiting up
        to ``timeout`` seconds for the rounds to bring it."""
        with trio.move_on_after(timeout):
            while True:
                room = self._router.rooms.get(room_id)
                if room is not None and room.generation >= generation:
                    return True
                await self.next_round()
        return False

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            await self._run(task_status)
        finally:
            self._stopped = True
            self._round_done.set()

    async def _run(self, task_status: trio.TaskStatus[None]) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._listen)
            task_status.started()
            while True:
                with trio.move_on_after(self._poll):
                    await self._wake.wait()
                self._wake = trio.Event()
                self._began += 1
                try:
                    await self._round()
                except StorageError as exc:
                    log.warning("worker %s: the inbox round failed, trying again: %s", self._me, exc)
                except MemoryClosed:
                    return
                finally:
                    self._ended += 1
                    done, self._round_done = self._round_done, trio.Event()
                    done.set()

    async def _round(self) -> None:
        for persona in sorted(self._to_settle):
            try:
                await self._settle(persona)
            except (StorageError, MemoryClosed):
                raise
            except Exception:  # one persona's bad room must not stop the others' events
                log.exception("worker %s: settling persona %s failed; it is tried again next round", self._me, persona)
        while self._settled:
            personas = sorted(self._settled)
            taken = await self._store.write_cluster(
                lambda c: room_registry.take_events(c, self._me, personas, self._batch)
            )
            for item in taken:
                one = queued_of(item)
                if one.persona in self._settled:
                    try:
                        await self._router.deliver_applied(one.persona, one.event, one.room, gone=one.gone)
                    except MemoryClosed:
                        raise
                    except Exception:  # its room's state stays in the registry for the next settle
                        log.exception("worker %s: event %d for %s could not be delivered; dropped", self._me, one.id, one.persona)
            self.taken += len(taken)
            if len(taken) < self._batch:
                return

    async def _settle(self, persona: str) -> None:
        states = await self._store.write_cluster(lambda c: room_registry.settle(c, persona))
        if persona not in self._to_settle:
            return  # lost meanwhile
        for text in states:
            room = room_of(text)
            await self._router.deliver_applied(persona, room.opening(), room)
        await self._catch_up(persona)
        if persona in self._to_settle:
            self._to_settle.discard(persona)
            self._settled.add(persona)

    async def _listen(self) -> None:
        """Poke a round on every notify of ``room_registry.CHANNEL``, from a thread."""
        token = trio.lowlevel.current_trio_token()
        stop = threading.Event()

        def poke() -> None:
            try:
                trio.from_thread.run_sync(self.poke, trio_token=token)
            except trio.RunFinishedError:
                stop.set()

        def listen() -> None:
            import psycopg

            while not stop.is_set():
                try:
                    with psycopg.connect(self._url, autocommit=True) as conn:
                        conn.execute(f"LISTEN {room_registry.CHANNEL}")
                        poke()  # something may have been queued while no one listened
                        while not stop.is_set():
                            for _ in conn.notifies(timeout=0.5):
                                poke()
                except psycopg.Error as exc:
                    log.warning("worker %s: the inbox lost its LISTEN connection (%s); polling meanwhile", self._me, exc)
                    stop.wait(1.0)

        try:
            await trio.to_thread.run_sync(listen, abandon_on_cancel=True)
        finally:
            stop.set()
