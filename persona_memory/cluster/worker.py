"""A worker's lease loop: join the cluster, take this worker's share of the personas, keep it,
hand over what another worker should own, and say when a persona is gained or lost.

One ``Worker`` per worker process and store (PostgreSQL only). At most every
``cluster.renew_seconds`` (a random wait between half of it and all of it, see the rules) it
runs a round:

1. heartbeat (``storage/membership.py``, live for ``cluster.lease_seconds``) and list the live
   workers, in one transaction;
2. ask which personas to consider (a fixed collection, or an async function called each
   round — ``personas_of(store)``: every persona with rows or in a room);
3. decide the round (``rounds.plan_round``: its share by ``spread``);
4. renew what it keeps, all in one ``renew_many``; a lease reported lost is dropped;
5. hand over what the spread now gives another live worker: drop it, tell the callback, then
   release it — so the new owner can acquire it on its next round;
6. acquire the free or expired leases of its share, one transaction each.

``open_worker`` runs the loop in a task group and, when its block ends normally, leaves
cleanly: the loop stops, every lease is released and the worker is taken off the list at
once, so the others take its personas on their next round. When the block is left by an
exception or a cancellation, nothing is released — as after a crash, the leases and the
membership run out after ``lease_seconds`` and the survivors take the personas then: a dead
worker's personas are owned again within about ``lease_seconds + renew_seconds``
(``bench/failover_bench.py`` measures it).

Rules:
- ``owns(persona)`` is the epoch of a lease this worker holds and believes live, else
  ``None``. The belief is conservative: a lease is counted live until the local time the
  request that granted or renewed it was *sent*, plus ``lease_seconds`` — the server's expiry
  is no earlier. Past that without a renewal (the database unreachable, a long pause), the
  persona is dropped and the callback told, whatever the database says later. The fencing
  of writes (``leases.check_held``) stays the guarantee; ``owns`` is what the worker acts on.
- The callback ``on_change(OwnershipChange)`` is awaited inside the round, in persona order:
  on a gain after the lease is held, on a loss after ``owns`` says ``None`` and, for a
  handover or a clean leave, before the release — so whoever writes for the persona can
  stop before another worker may start. It should be quick (start or stop a task); an error
  it raises stops the worker, as a crash would.
- The wait between rounds is drawn between ``renew_seconds / 2`` and ``renew_seconds``:
  workers started together would otherwise run their rounds in step, and a survivor's round
  would then fall just before a dead worker's leases run out, every time — the failover
  would take the whole ``lease + renew``. A lease is still renewed at least every
  ``renew_seconds`` (plus a round's own time).
- A round that fails on the database (``StorageError``) is skipped and the next one tried;
  the leases it could not renew lapse by the rule above. Bad input (``InvalidInput``) is
  raised: a SQLite store, a bad worker id or bad settings.
- The lease rounds use ``Store.write_cluster`` (not counted in ``Store.changes``). A store of
  its own keeps a round from queuing behind the actors' long writes; sharing one works.
- Times come from trio's clock; the leases and the membership from the server's.
"""

from __future__ import annotations

import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Union

import attrs
import trio

from ..errors import InvalidInput, NotOwnedHere, StorageError
from ..settings import ClusterSettings
from ..storage import leases, membership
from ..storage.dialect import dialect_of
from ..storage.leases import Lease
from ..storage.store import Store
from .rounds import plan_round

log = logging.getLogger(__name__)

ACQUIRED = "acquired"  # the lease was granted to this worker
HANDED_OVER = "handed over"  # the spread gives it to another live worker; released
LOST = "lost"  # not renewed in time, or taken: this worker may have been replaced
LEFT = "left"  # this worker left the cluster cleanly; released


@attrs.frozen
class OwnershipChange:
    """This worker gained ``persona`` at ``epoch`` (``why`` is ``ACQUIRED``), or stopped owning
    it (``epoch`` is ``None``; ``why`` is ``HANDED_OVER``, ``LOST`` or ``LEFT``)."""

    persona: str
    epoch: int | None
    why: str


OnChange = Callable[[OwnershipChange], Awaitable[None]]
PersonaSource = Union[Iterable[str], Callable[[], Awaitable[Iterable[str]]]]


@attrs.frozen
class _Held:
    lease: Lease
    live_until: float  # trio time: when the request that granted or renewed it was sent + lease


class Worker:
    """One worker's leases and membership (see the module rules). Use ``open_worker``."""

    def __init__(self, store: Store, worker_id: str, cluster: ClusterSettings, personas: PersonaSource,
                 on_change: OnChange | None = None, *, address: str | None = None) -> None:
        if not isinstance(worker_id, str) or not worker_id or len(worker_id) > leases.MAX_OWNER_CHARS:
            raise InvalidInput(f"a worker id must be a non-empty str of at most {leases.MAX_OWNER_CHARS} characters, got {worker_id!r}")
        if not 0 < cluster.renew_seconds * 2 <= cluster.lease_seconds:
            raise InvalidInput(
                f"cluster.renew_seconds ({cluster.renew_seconds:g}) must be more than 0 and at most half "
                f"of cluster.lease_seconds ({cluster.lease_seconds:g})"
            )
        if isinstance(personas, str):
            raise InvalidInput(f"personas must be a collection of persona names or an async function, not one str ({personas!r})")
        self.worker_id = worker_id
        self._store = store
        self._cluster = cluster
        self._personas = personas
        self.on_change = on_change
        self._address = address
        self._held: dict[str, _Held] = {}
        self._leaving = False
        self._wake = trio.Event()
        self._stopped = trio.Event()

    def owns(self, persona: str) -> int | None:
        """The epoch this worker holds ``persona`` at, or ``None`` (see the rules)."""
        held = self._held.get(persona)
        if held is None or held.live_until <= trio.current_time():
            return None
        return held.lease.epoch

    @property
    def address(self) -> str | None:
        """Where this worker says its runtime API answers (``None``: not said yet)."""
        return self._address

    def advertise(self, address: str) -> None:
        """Say where this worker's runtime API answers, from the next round on (run now)."""
        membership.check_address(address)
        self._address = address
        self._wake.set()

    def fence(self, persona: str) -> int:
        """The epoch a write for ``persona`` carries (``leases.Fence``).

        Raises:
            NotOwnedHere: ``owns`` says this worker does not hold the persona's lease.
        """
        epoch = self.owns(persona)
        if epoch is None:
            raise NotOwnedHere(persona, self.worker_id)
        return epoch

    def owned(self) -> dict[str, int]:
        """``{persona: epoch}`` of what ``owns`` says this worker holds now."""
        return {p: epoch for p in sorted(self._held) if (epoch := self.owns(p)) is not None}

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Round after round until ``leave``; started (``nursery.start``) after the first."""
        try:
            await self.check_store()
            await self.run_round()
            task_status.started()
            while not self._leaving:
                with trio.move_on_after(self._cluster.renew_seconds * random.uniform(0.5, 1.0)):
                    await self._wake.wait()
                if not self._leaving:
                    self._wake = trio.Event()
                    await self.run_round()
        finally:
            self._stopped.set()

    async def check_store(self) -> None:
        """Raises ``InvalidInput`` unless the store is PostgreSQL's."""
        if await self._store.read(lambda c: dialect_of(c).name) != "postgresql":
            raise InvalidInput(
                "a cluster worker needs a PostgreSQL store (storage.url = 'postgresql://…'); "
                "a SQLite file is owned by one process and needs no worker"
            )

    async def leave(self) -> None:
        """Stop the rounds, let every persona go (told to the callback first) and leave the
        list of live workers, so the others take them on their next round."""
        self._leaving = True
        self._wake.set()
        await self._stopped.wait()
        held = [self._held.pop(p).lease for p in sorted(self._held)]
        for lease in held:
            await self._tell(lease.persona, None, LEFT)
        me = self.worker_id

        def go(conn):  # type: ignore[no-untyped-def]
            for lease in held:
                leases.release(conn, lease)
            membership.leave(conn, me)

        await self._store.write_cluster(go)

    async def run_round(self) -> None:
        """One round (the module's steps 1-6); a database failure skips the rest of it."""
        await self._drop_lapsed()
        try:
            await self._round()
        except StorageError as exc:
            log.warning("worker %s: lease round failed, trying again next round: %s", self.worker_id, exc)

    async def _round(self) -> None:
        seconds = self._cluster.lease_seconds
        me, address = self.worker_id, self._address

        def beat(conn):  # type: ignore[no-untyped-def]
            membership.heartbeat(conn, me, seconds, address)
            return [m.worker for m in membership.live_workers(conn)]

        live = await self._store.write_cluster(beat)
        personas = list(await self._personas() if callable(self._personas) else self._personas)
        plan = plan_round(me, live, personas, {p: h.lease for p, h in self._held.items()})

        if plan.renew:
            sent = trio.current_time()
            renewed, lost = await self._store.write_cluster(lambda c: leases.renew_many(c, plan.renew, seconds))
            for lease in renewed:
                self._held[lease.persona] = _Held(lease, sent + seconds)
            for lease in lost:
                self._held.pop(lease.persona, None)
                await self._tell(lease.persona, None, LOST)

        if plan.release:
            for lease in plan.release:
                self._held.pop(lease.persona, None)
                await self._tell(lease.persona, None, HANDED_OVER)

            def let_go(conn):  # type: ignore[no-untyped-def]
                for lease in plan.release:
                    leases.release(conn, lease)

            await self._store.write_cluster(let_go)

        for persona in plan.acquire:
            sent = trio.current_time()
            lease = await self._store.write_cluster(lambda c, p=persona: leases.acquire(c, p, me, seconds))
            if lease is not None:
                self._held[persona] = _Held(lease, sent + seconds)
                await self._tell(persona, lease.epoch, ACQUIRED)

    async def _drop_lapsed(self) -> None:
        now = trio.current_time()
        for persona in sorted(p for p, h in self._held.items() if h.live_until <= now):
            del self._held[persona]
            await self._tell(persona, None, LOST)

    async def _tell(self, persona: str, epoch: int | None, why: str) -> None:
        if why == LOST:
            log.warning("worker %s stopped owning persona %s: its lease was lost (not renewed in time, or taken)",
                        self.worker_id, persona)
        else:
            log.info("worker %s: persona %s %s%s", self.worker_id, persona, why,
                     f" at epoch {epoch}" if epoch is not None else "")
        if self.on_change is not None:
            await self.on_change(OwnershipChange(persona, epoch, why))


def personas_of(store: Store) -> Callable[[], Awaitable[list[str]]]:
    """A persona source for ``Worker``: every persona ``store`` knows, read again each round
    (``membership.known_personas``: with rows or in a room)."""

    async def known() -> list[str]:
        return await store.read(membership.known_personas)

    return known


@asynccontextmanager
async def open_worker(store: Store, worker_id: str, cluster: ClusterSettings, personas: PersonaSource,
                      on_change: OnChange | None = None) -> AsyncIterator[Worker]:
    """Run a ``Worker``'s rounds in a task group for the block, after its first round; leave
    cleanly when the block ends normally, and release nothing when it ends by an exception or
    a cancellation (the leases run out, as after a crash).

    Raises:
        InvalidInput: a SQLite store, a bad worker id, or renew_seconds over half a lease.
    """
    worker = Worker(store, worker_id, cluster, personas, on_change)
    await worker.check_store()
    async with trio.open_nursery() as nursery:
        await nursery.start(worker.run)
        yield worker
        await worker.leave()
