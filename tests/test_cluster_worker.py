"""Workers sharing the personas of one PostgreSQL (``cluster.worker``): they split them
disjointly by the spread, a joining worker takes only its share, a crashed worker's personas
are owned again once its leases run out, and a worker that leaves cleanly lets go at once.

Each worker has its own store on one fresh database, as a worker process would. The leases
and the membership run on the server's clock, so these tests run on trio's real clock with
short times (lease 0.6 s, renewal 0.2 s) and wait for ownership with a deadline loop, never
for an exact time. The deadline is generous: the machine is noisy. A monitor checks all along
that no persona is ever owned by two workers at once.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from pathlib import Path

import pytest
import trio

from persona_memory.cluster.spread import spread
from persona_memory.cluster.worker import (
    ACQUIRED, HANDED_OVER, LEFT, LOST, OwnershipChange, Worker, open_worker, personas_of,
)
from persona_memory.errors import InvalidInput
from persona_memory.rooms import RoomState
from persona_memory.settings import ClusterSettings
from persona_memory.storage import leases, membership
from persona_memory.storage.store import open_postgres_store, open_store

CLUSTER = ClusterSettings(lease_seconds=0.6, renew_seconds=0.2)
PERSONAS = [f"companion-{k:02d}" for k in range(12)]
DEADLINE = 10.0  # seconds: far more than any round needs; only a broken loop takes this long


class Cluster:
    """Workers on one database, each in a cancel scope of its own, and what each was told."""

    def __init__(self, url: str, nursery: trio.Nursery) -> None:
        self.url = url
        self.nursery = nursery
        self.workers: dict[str, Worker] = {}
        self.told: dict[str, list[OwnershipChange]] = {}
        self._scopes: dict[str, trio.CancelScope] = {}
        self._leave: dict[str, trio.Event] = {}
        self._gone: dict[str, trio.Event] = {}
        self.double_owned: set[str] = set()

    async def start(self, worker_id: str) -> Worker:
        started = trio.Event()
        self.told[worker_id] = []
        self._leave[worker_id], self._gone[worker_id] = trio.Event(), trio.Event()

        async def on_change(change: OwnershipChange) -> None:
            self.told[worker_id].append(change)

        async def run() -> None:
            try:
                with trio.CancelScope() as scope:
                    self._scopes[worker_id] = scope
                    async with open_postgres_store(self.url) as store:
                        async with open_worker(store, worker_id, CLUSTER, PERSONAS, on_change) as worker:
                            self.workers[worker_id] = worker
                            started.set()
                            await self._leave[worker_id].wait()
            finally:
                self.workers.pop(worker_id, None)
                self._gone[worker_id].set()

        self.nursery.start_soon(run)
        await started.wait()
        return self.workers[worker_id]

    async def crash(self, worker_id: str) -> None:
        """Cancel the worker's task group: nothing is released, as when a process dies."""
        self._scopes[worker_id].cancel()
        await self._gone[worker_id].wait()

    async def leave(self, worker_id: str) -> None:
        self._leave[worker_id].set()
        await self._gone[worker_id].wait()

    def owners(self) -> dict[str, set[str]]:
        seen: dict[str, set[str]] = {}
        for worker_id, worker in self.workers.items():
            for persona in worker.owned():
                seen.setdefault(persona, set()).add(worker_id)
        return seen

    async def monitor(self) -> None:
        while True:
            self.double_owned |= {p for p, who in self.owners().items() if len(who) > 1}
            await trio.sleep(0.01)

    async def until_owned_as(self, expected: dict[str, tuple[str, ...]]) -> float:
        """Wait until the workers own exactly ``expected`` (worker → personas); seconds waited."""
        start = time.monotonic()
        while True:
            now = {w: tuple(sorted(worker.owned())) for w, worker in self.workers.items()}
            if now == expected:
                return time.monotonic() - start
            if time.monotonic() - start > DEADLINE:
                pytest.fail(f"not owned as the spread says within {DEADLINE} s: {now} != {expected}")
            await trio.sleep(0.02)


@asynccontextmanager
async def a_cluster(url: str) -> AsyncIterator[Cluster]:
    async with trio.open_nursery() as nursery:
        cluster = Cluster(url, nursery)
        nursery.start_soon(cluster.monitor)
        yield cluster
        nursery.cancel_scope.cancel()
    assert cluster.double_owned == set(), "a persona was owned by two workers at once"


async def leases_in_db(url: str) -> dict[str, tuple[str | None, int]]:
    async with open_postgres_store(url) as store:
        rows = await store.read(lambda c: c.execute("SELECT persona, owner, epoch FROM persona_leases").fetchall())
    return {r[0]: (r[1], int(r[2])) for r in rows}


async def test_two_workers_split_the_personas_disjointly_as_the_spread_says(postgres_url: str) -> None:
    async with a_cluster(postgres_url) as cluster:
        await cluster.start("worker-a")
        await cluster.start("worker-b")
        await cluster.until_owned_as(spread(PERSONAS, ["worker-a", "worker-b"]))

        shares = {w: worker.owned() for w, worker in cluster.workers.items()}
        in_db = await leases_in_db(postgres_url)

    assert sorted([*shares["worker-a"], *shares["worker-b"]]) == PERSONAS  # each exactly once
    assert all(3 <= len(share) <= 9 for share in shares.values()), shares  # even-ish for 12
    for worker_id, share in shares.items():
        for persona, epoch in share.items():
            assert in_db[persona] == (worker_id, epoch)  # the worker's belief is the database's


async def test_a_third_worker_takes_only_its_share(postgres_url: str) -> None:
    async with a_cluster(postgres_url) as cluster:
        await cluster.start("worker-a")
        await cluster.start("worker-b")
        two = spread(PERSONAS, ["worker-a", "worker-b"])
        await cluster.until_owned_as(two)
        settled = {w: len(changes) for w, changes in cluster.told.items()}
        await cluster.start("worker-c")
        three = spread(PERSONAS, ["worker-a", "worker-b", "worker-c"])
        await cluster.until_owned_as(three)
        told = {w: changes[settled.get(w, 0):] for w, changes in cluster.told.items()}  # since c started

    assert three["worker-c"]
    for worker_id in ["worker-a", "worker-b"]:
        handed = {c.persona for c in told[worker_id] if c.why == HANDED_OVER}
        assert handed == set(two[worker_id]) - set(three[worker_id])  # only what the newcomer tops
        assert handed <= set(three["worker-c"])
        assert not [c for c in told[worker_id] if c.why == LOST]
    # each of its share acquired once, over a round or two (as a and b let go)
    assert sorted((c.persona, c.why) for c in told["worker-c"]) == [(p, ACQUIRED) for p in three["worker-c"]]


async def test_a_crashed_workers_personas_are_owned_again_after_its_leases_run_out(postgres_url: str) -> None:
    async with a_cluster(postgres_url) as cluster:
        for worker_id in ["worker-a", "worker-b", "worker-c"]:
            await cluster.start(worker_id)
        await cluster.until_owned_as(spread(PERSONAS, ["worker-a", "worker-b", "worker-c"]))
        dead = set(cluster.workers["worker-b"].owned())
        before = await leases_in_db(postgres_url)

        crashed_at = time.monotonic()
        await cluster.crash("worker-b")
        assert {p for p, (owner, _) in (await leases_in_db(postgres_url)).items() if owner == "worker-b"} == dead
        waited = await cluster.until_owned_as(spread(PERSONAS, ["worker-a", "worker-c"]))
        waited = max(waited, time.monotonic() - crashed_at)
        after = await leases_in_db(postgres_url)

    print(f"\nfailover: a crashed worker's {len(dead)} personas owned again after {waited:.2f} s "
          f"(lease {CLUSTER.lease_seconds} s, renewal {CLUSTER.renew_seconds} s)")
    assert dead
    for persona in dead:
        assert after[persona][0] in {"worker-a", "worker-c"}
        assert after[persona][1] == before[persona][1] + 1  # a new grant: the dead worker's epoch is fenced
    assert waited < 4 * (CLUSTER.lease_seconds + CLUSTER.renew_seconds)  # generous: ~1.0 s expected


async def test_a_worker_that_leaves_cleanly_releases_at_once(postgres_url: str) -> None:
    async with a_cluster(postgres_url) as cluster:
        await cluster.start("worker-a")
        await cluster.start("worker-b")
        await cluster.until_owned_as(spread(PERSONAS, ["worker-a", "worker-b"]))
        gone = set(cluster.workers["worker-b"].owned())

        await cluster.leave("worker-b")
        right_after = await leases_in_db(postgres_url)
        async with open_postgres_store(postgres_url) as store:
            listed = [m.worker for m in await store.read(membership.live_workers)]
        await cluster.until_owned_as(spread(PERSONAS, ["worker-a"]))
        told = cluster.told["worker-b"]

    assert gone and listed == ["worker-a"]
    assert all(right_after[p][0] in (None, "worker-a") for p in gone)  # released, not left to expire
    assert {c.persona for c in told if c.why == LEFT} == gone


async def test_a_lease_taken_from_under_a_worker_is_dropped_and_reported_lost(postgres_url: str) -> None:
    async with a_cluster(postgres_url) as cluster:
        worker = await cluster.start("worker-a")
        await cluster.until_owned_as({"worker-a": tuple(PERSONAS)})
        victim = PERSONAS[3]
        async with open_postgres_store(postgres_url) as intruder:
            await intruder.write_cluster(lambda c: c.execute(
                "UPDATE persona_leases SET expires_at = now() WHERE persona = ?", (victim,)))
            taken = await intruder.write_cluster(lambda c: leases.acquire(c, victim, "intruder", 30.0))
        assert taken is not None
        await cluster.until_owned_as({"worker-a": tuple(p for p in PERSONAS if p != victim)})
        await trio.sleep(3 * CLUSTER.renew_seconds)  # it keeps trying, and keeps failing

        assert worker.owns(victim) is None
        assert [c for c in cluster.told["worker-a"] if c.persona == victim and c.why == LOST]
        assert (await leases_in_db(postgres_url))[victim] == ("intruder", taken.epoch)


async def test_personas_asked_each_round_are_taken_as_they_appear(postgres_url: str) -> None:
    known = ["companion-00"]

    async def personas() -> list[str]:
        return list(known)

    seen: list[OwnershipChange] = []

    async def on_change(change: OwnershipChange) -> None:
        seen.append(change)

    async with open_postgres_store(postgres_url) as store:
        async with open_worker(store, "worker-a", CLUSTER, personas, on_change) as worker:
            assert worker.owned().keys() == {"companion-00"}  # after the first round
            known.append("companion-01")
            start = time.monotonic()
            while worker.owns("companion-01") is None:
                assert time.monotonic() - start < DEADLINE, "a new persona was never acquired"
                await trio.sleep(0.02)
            known.remove("companion-00")
            while worker.owns("companion-00") is not None:
                assert time.monotonic() - start < DEADLINE, "a persona no longer considered was kept"
                await trio.sleep(0.02)

    assert [(c.persona, c.why) for c in seen] == [
        ("companion-00", ACQUIRED), ("companion-01", ACQUIRED), ("companion-00", HANDED_OVER), ("companion-01", LEFT),
    ]  # fmt: skip


async def test_a_worker_given_its_store_takes_the_personas_of_its_rooms(postgres_url: str) -> None:
    async with open_postgres_store(postgres_url) as store:
        await store.rooms.save(RoomState("garden", personas=("hazel", "otto"), present=frozenset({4}), private=False, incognito=False, kit=None, topic="tea"),
                              datetime(2026, 11, 3, tzinfo=timezone.utc))
        async with open_worker(store, "worker-a", CLUSTER, personas_of(store)) as worker:
            assert worker.owned().keys() == {"hazel", "otto"}


async def test_a_worker_on_a_sqlite_store_is_refused(tmp_path: Path) -> None:
    async with open_store(str(tmp_path / "memory.db")) as store:
        with pytest.raises(InvalidInput, match="needs a PostgreSQL store"):
            async with open_worker(store, "worker-a", CLUSTER, PERSONAS):
                pass  # pragma: no cover


def test_bad_worker_arguments_are_refused() -> None:
    with pytest.raises(InvalidInput, match="worker id"):
        Worker(None, "", CLUSTER, PERSONAS)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="at most half"):
        Worker(None, "worker-a", ClusterSettings(1.0, 0.9), PERSONAS)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="not one str"):
        Worker(None, "worker-a", CLUSTER, "companion-01")  # type: ignore[arg-type]
