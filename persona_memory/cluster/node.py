"""One worker of a cluster: the memory, serving any call for any persona, with the personas it
owns written and cached here (``open_cluster_memory``; ``persona-memory serve --worker``).

How a call travels (every choice, in one place):

- **Room events** go through the database. Whichever worker a runtime calls takes the event
  into the shared registry (``registry.take_event``: checked, applied, queued for each
  persona's owner, in one transaction), and the owners take their events from their inbox
  (``inbox.py``), woken by ``LISTEN``/``NOTIFY``. Once ``send`` returns, the event is
  committed: a worker dying after that loses nothing, the next owner settles from the stored
  rooms and cursors.
- **Transcript lines** are posted by whichever worker is called, straight into the shared
  transcript, heard by the people the shared registry says are present.
- **``block``/``built_block``/``recall``** are answered from the owner's cache: a worker that
  owns the persona answers itself (after its inbox has caught up with the room's generation
  in the registry); one that does not forwards the call over HTTP to the owner's address
  (``membership.owner_address``; ``forward.py`` to the routes of ``web/cluster_routes.py``,
  with the runtime token). An owner that has just lost the persona answers 421 and the call is tried again,
  as it is while no worker owns it (a failover), for up to ``lease_seconds`` plus two
  renewals; past that it raises ``MemoryClosed``.
- **Writes** of a persona carry the epoch of this worker's lease (``Worker.fence``): a worker
  that lost a persona commits nothing more for it (``leases.check_held``).
- **Ownership**: the worker's lease rounds (``worker.py``). A gained persona is settled by the
  inbox (its open rooms' blocks built, its writes resumed from the cursors); a lost one's
  actor is stopped at once (``Supervisor.let_go``).
- **The human's deletes, undo and clear-all** run at the persona's owner (forwarded like a
  block: ``cluster/forward.py``), in turn with its writes, so its cached blocks lose the line
  at once; while no worker owns the persona, where they are called. They are the human's
  edits, not a persona's writes: they carry no epoch. Notes and switches are database writes
  on any worker. ``drain`` waits for every live worker's inbox and writes (forwarded); the
  sweep covers the personas this worker owns.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import attrs
import httpx
import trio

from .. import ids
from ..clock import WallClock
from ..core.placement import BuiltBlock
from ..embedding import Embedder
from ..errors import InvalidInput, MemoryClosed, NotOwnedHere, StorageError, UnknownRoom
from ..memory import Memory, open_memory_as
from ..messages import RoomEvent
from ..metrics import Metrics
from ..minds.port import Mind
from ..rooms import Presence
from ..settings import Settings
from ..storage import membership, room_registry
from ..storage.store import Store, open_store_of
from ..supervisor import Supervisor
from ..actors.lane import HumanEdit
from .forward import Misdirected, edit_body, forward
from .inbox import Inbox
from .registry import presence_in, room_of, take_event
from .worker import ACQUIRED, OwnershipChange, Worker, personas_of

log = logging.getLogger(__name__)

FORWARD_TIMEOUT = 30.0


class ClusterMemory(Memory):
    """The ``Memory`` of one worker (see the module docstring). Get one from
    ``open_cluster_memory``."""

    def __init__(self, supervisor: Supervisor, store: Store, clock: WallClock, metrics: Metrics | None = None) -> None:
        super().__init__(supervisor, store, clock, metrics)
        self.worker: Worker | None = None
        self.inbox: Inbox | None = None
        self._token = ""
        self._http: httpx.AsyncClient | None = None
        self._patience = 30.0

    def attach(self, worker: Worker, inbox: Inbox, http: httpx.AsyncClient, token: str, patience: float) -> None:
        self.worker, self.inbox, self._http, self._token, self._patience = worker, inbox, http, token, patience

    # ---- what changes from one process -------------------------------------------------

    async def _hearers(self, room_id: str) -> tuple[Presence | None, bool | None]:
        return await self._store.read(lambda c: presence_in(c, room_id))

    async def _take(self, event: RoomEvent) -> None:
        now = self._clock.now()
        await self._store.write(lambda c: take_event(c, event, now))

    async def sweep(self, *, parked_only: bool = False, personas: Iterable[str] | None = None) -> datetime | None:
        if self.worker is None:
            return None  # not attached yet: nothing is owned, nothing to sweep
        owned = set(self.worker.owned())
        return await super().sweep(parked_only=parked_only, personas=owned if personas is None else owned & set(personas))

    async def catch_up(self, persona: str) -> None:
        """Queue the write path wherever ``persona``'s cursor is behind (a gained persona)."""
        await super().sweep(personas={persona})

    async def drain(self) -> None:
        """Wait until every live worker has taken its inbox and landed every write queued
        there (each one's ``local_drain``, forwarded to the others at once). A worker that
        does not answer is skipped: it is dead or cut off, and its personas' writes are
        resumed by their next owners from the cursors."""
        self._check_open()
        me = self._worker().worker_id
        others = [m for m in await self._store.read(membership.live_workers) if m.worker != me and m.address]
        assert self._http is not None
        http = self._http

        async def drain_at(member: membership.Member) -> None:
            try:
                await forward(http, self._token, member.address, "drain", {})
            except httpx.TransportError as exc:
                log.warning("drain: worker %s at %s did not answer (%s); skipped", member.worker, member.address, exc)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(self.local_drain)
            for member in others:
                nursery.start_soon(drain_at, member)

    async def local_drain(self) -> None:
        """Wait until this worker's inbox is taken and every write queued here has landed."""
        self._check_open()
        await self._inbox().next_round()
        await self._router.drain()

    async def ownership_changed(self, change: OwnershipChange) -> None:
        """The worker's callback: settle a gained persona, stop a lost one at once."""
        inbox = self._inbox()
        if change.why == ACQUIRED:
            inbox.gained(change.persona)
        else:
            inbox.lost(change.persona)
            await self._supervisor.let_go(change.persona)

    # ---- answered by the owner ---------------------------------------------------------

    async def built_block(self, persona: str, room_id: str) -> BuiltBlock:
        ids.check_persona(persona)
        ids.check_room_id(room_id)
        answer = await self._at_owner(persona, "built-block", {"persona": persona, "room_id": room_id},
                                      lambda: self.local_built_block(persona, room_id))
        if isinstance(answer, BuiltBlock):
            return answer
        return BuiltBlock(persona, room_id, answer["text"], answer["generation"], answer["char_limit"], answer["used"])

    async def block(self, persona: str, room_id: str) -> str:
        return (await self.built_block(persona, room_id)).text

    async def recall(self, persona: str, room_id: str, text: str) -> str:
        ids.check_persona(persona)
        ids.check_room_id(room_id)
        if not isinstance(text, str):
            raise InvalidInput(f"recall text must be a str, not {type(text).__name__}")
        answer = await self._at_owner(persona, "recall", {"persona": persona, "room_id": room_id, "text": text},
                                      lambda: self.local_recall(persona, room_id, text))
        return answer if isinstance(answer, str) else answer["note"]

    async def local_built_block(self, persona: str, room_id: str) -> BuiltBlock:
        """``built_block`` from this worker's cache; ``NotOwnedHere`` unless it owns ``persona``."""
        await self._owned_and_current(persona, room_id)
        return await Memory.built_block(self, persona, room_id)

    async def local_recall(self, persona: str, room_id: str, text: str) -> str:
        """``recall`` from this worker's actor; ``NotOwnedHere`` unless it owns ``persona``."""
        await self._owned_and_current(persona, room_id)
        return await Memory.recall(self, persona, room_id, text)

    async def _owned_and_current(self, persona: str, room_id: str) -> None:
        worker, inbox = self._worker(), self._inbox()
        if worker.owns(persona) is None:
            raise NotOwnedHere(persona, worker.worker_id)
        if not inbox.settled(persona):
            await inbox.next_round()  # a persona just gained is settled in the next round
            if not inbox.settled(persona):
                raise NotOwnedHere(persona, worker.worker_id)
        stored = await self._store.read(lambda c: room_registry.room_state(c, room_id))
        if stored is None:
            raise UnknownRoom(f"room {room_id!r} is not open; send RoomOpened for it first")
        await inbox.caught_up(room_id, room_of(stored).generation, self._patience)

    async def _edit(self, persona: str, edit: HumanEdit) -> object:
        """A human's edit runs at the persona's owner, in turn with its writes, so the blocks
        it caches are purged at once; while no worker owns the persona, here (no cache
        anywhere holds the rows then; a fresh owner reads them from the database)."""
        answer = await self._at_owner(
            persona, "edit", {"persona": persona, **edit_body(edit)}, lambda: self.local_edit(persona, edit),
            unowned=lambda: Memory._edit(self, persona, edit),
        )
        return answer["result"] if isinstance(answer, dict) else answer

    async def local_edit(self, persona: str, edit: HumanEdit) -> object:
        """``_edit`` at this worker's actor; ``NotOwnedHere`` unless it owns ``persona``."""
        worker = self._worker()
        if worker.owns(persona) is None:
            raise NotOwnedHere(persona, worker.worker_id)
        return await Memory._edit(self, persona, edit)

    async def _at_owner(self, persona: str, what: str, body: dict[str, Any], local: Callable[[], Awaitable[Any]],
                        *, unowned: Callable[[], Awaitable[Any]] | None = None) -> Any:
        """``local()`` when this worker owns ``persona``, else the owner's answer to the
        forwarded ``what`` (see the module docstring); tried again while the owner is
        changing, for up to ``patience`` seconds. ``unowned``: what to do at once when no
        worker holds the persona's lease (default: wait for one)."""
        self._check_open()
        worker = self._worker()
        deadline = trio.current_time() + self._patience
        why = "no worker holds its lease"
        while True:
            if worker.owns(persona) is not None:
                try:
                    return await local()
                except NotOwnedHere as exc:
                    why = str(exc)
                except MemoryClosed as exc:  # the actor was let go mid-answer
                    if self._supervisor.closed:
                        raise
                    why = str(exc)
            else:
                owner = await self._store.read(lambda c: membership.owner_address(c, persona))
                if owner is None and unowned is not None:
                    return await unowned()
                if owner is not None and owner[0] != worker.worker_id and owner[1]:
                    assert self._http is not None
                    try:
                        return await forward(self._http, self._token, owner[1], what, body)
                    except Misdirected as exc:
                        why = str(exc)
                    except httpx.TransportError as exc:
                        why = f"its owner {owner[0]} at {owner[1]} did not answer ({type(exc).__name__})"
                elif owner is not None and not owner[1]:
                    why = f"its owner {owner[0]} gave no address"
            if trio.current_time() >= deadline:
                if unowned is not None:
                    log.warning("persona %s: %s; the edit runs here", persona, why)
                    return await unowned()
                raise MemoryClosed(f"persona {persona!r} could not be answered for: {why}; try again")
            await trio.sleep(0.1)

    def _worker(self) -> Worker:
        if self.worker is None:
            raise MemoryClosed("the cluster worker is not running")
        return self.worker

    def _inbox(self) -> Inbox:
        if self.inbox is None:
            raise MemoryClosed("the cluster worker is not running")
        return self.inbox


@asynccontextmanager
async def open_cluster_memory(
    settings: Settings,
    worker_id: str,
    *,
    address: str | None = None,
    runtime_token: str = "",
    clock: WallClock | None = None,
    embedder: Embedder | None = None,
    mind: Mind | None = None,
) -> AsyncIterator[ClusterMemory]:
    """Run one cluster worker over the PostgreSQL at ``storage.url`` for the block.

    Args:
        worker_id: this worker's name among the workers (unique; e.g. host and pid).
        address: where its runtime API answers (``persona-memory serve --worker`` gives it):
            other workers forward ``block``/``recall`` of the personas it owns there.
        runtime_token: the runtime API's bearer token, for forwarding to the other workers.

    Leaving the block normally releases its leases at once (their actors stop; the next
    owners resume from the cursors); leaving it by an error or a kill releases nothing, and
    the others take its personas once the leases run out.

    Raises:
        InvalidInput: ``storage.url`` is not PostgreSQL, or a bad worker id or address.
    """
    if settings.storage.backend != "postgresql":
        raise InvalidInput(
            "a cluster worker needs storage.url = 'postgresql://…' (a SQLite file is owned by one "
            f"process); it is {settings.storage.place!r}"
        )
    membership.check_address(address)
    cluster = settings.cluster
    async with open_store_of(attrs.evolve(settings.storage, read_connections=1)) as own:
        worker = Worker(own, worker_id, cluster, personas_of(own), address=address)
        await worker.check_store()
        async with open_memory_as(
            ClusterMemory, settings, clock=clock, embedder=embedder, mind=mind, fence=worker.fence
        ) as memory:
            assert isinstance(memory, ClusterMemory)
            inbox = Inbox(own, memory.supervisor.router, worker_id, settings.storage.url, catch_up=memory.catch_up,
                          poll_seconds=min(1.0, cluster.renew_seconds))
            async with httpx.AsyncClient(timeout=FORWARD_TIMEOUT) as http:
                memory.attach(worker, inbox, http, runtime_token, cluster.lease_seconds + 2 * cluster.renew_seconds)
                memory.metrics.watch_cluster(lambda: len(worker.owned()), lambda: inbox.taken)
                worker.on_change = memory.ownership_changed
                async with trio.open_nursery() as nursery:
                    await nursery.start(inbox.run)
                    await nursery.start(worker.run)
                    try:
                        yield memory
                    except BaseException:
                        nursery.cancel_scope.cancel()  # as a crash: nothing released
                        raise
                    try:
                        await worker.leave()
                    except StorageError as exc:
                        log.warning("worker %s could not leave cleanly (%s); its leases run out", worker_id, exc)
                    nursery.cancel_scope.cancel()
