"""Persona leases on PostgreSQL, seen by the workers that hold them: acquiring a free or
expired lease, renewing it, losing it to another worker, releasing it, racing for it — and the
fencing of writes: a worker whose lease was taken over commits nothing for that persona.

Each "worker" here is a store of its own on one fresh database (``postgres_url``), so its
writes go through its own connections as a worker process's would. Leases run on the server's
clock, so these tests run on trio's real clock (no ``autojump_clock``) and wait for a short
lease (a fraction of a second) to run out with real sleeps, as few as the behaviour needs.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, AsyncIterator

import attrs
import pytest
import trio

from persona_memory.errors import InvalidInput, LeaseLost
from persona_memory.rows import MemoryRow
from persona_memory.storage import leases, writes
from persona_memory.storage.leases import Lease
from persona_memory.storage.store import Store, open_postgres_store, open_store
from persona_memory.plans import NoticeDraft, WritePlan

AT = datetime(2026, 10, 14, 9, 15, tzinfo=timezone.utc)
TESS = 61
SHORT = 0.3  # seconds: a lease that runs out within the test
PAST_SHORT = 0.45  # a real sleep long enough for a SHORT lease to have run out
LONG = 30.0  # seconds: a lease that outlives the test


@pytest.fixture
async def worker_a(postgres_url: str) -> AsyncIterator[Store]:
    async with open_postgres_store(postgres_url) as store:
        yield store


@pytest.fixture
async def worker_b(postgres_url: str) -> AsyncIterator[Store]:
    async with open_postgres_store(postgres_url) as store:
        yield store


async def acquire(store: Store, persona: str, owner: str, seconds: float = LONG) -> Lease | None:
    return await store.write(lambda c: leases.acquire(c, persona, owner, seconds))


async def renew(store: Store, lease: Lease, seconds: float = LONG) -> Lease:
    return await store.write(lambda c: leases.renew(c, lease, seconds))


async def held_by(store: Store, owner: str) -> list[Lease]:
    return await store.read(lambda c: leases.held_by(c, owner))


async def server_now(store: Store) -> datetime:
    return datetime.fromisoformat(await store.read(lambda c: c.execute("SELECT now()::text").fetchone()[0]))


def memory(text: str, **overrides: Any) -> MemoryRow:
    fields: dict[str, Any] = {
        "persona": "iris", "subject": f"u:{TESS}", "kind": "fact", "text": text,
        "importance": 5, "witnessed": {TESS}, "created": AT,
    }  # fmt: skip
    fields.update(overrides)
    return MemoryRow(**fields)


def plan(cursor_from: int, cursor_to: int, text: str) -> WritePlan:
    return WritePlan(
        persona="iris", room_id="attic", cursor_from=cursor_from, cursor_to=cursor_to,
        inserts=(memory(text),), notices=(NoticeDraft(TESS, f"Iris noted: {text}", (0,)),),
    )  # fmt: skip


async def post(store: Store, the_plan: WritePlan, epoch: int) -> writes.Posted:
    return await store.write(lambda c: writes.post_plan(c, the_plan, AT, epoch=epoch))


async def cursor(store: Store) -> int:
    return await store.read(lambda c: writes.cursor(c, "iris", "attic"))


# ---- acquire, renew, release --------------------------------------------------------------------


async def test_a_free_lease_goes_to_the_first_worker_at_epoch_one(worker_a: Store, worker_b: Store) -> None:
    before = await server_now(worker_a)
    lease = await acquire(worker_a, "iris", "worker-a", 20)

    assert lease is not None and (lease.persona, lease.owner, lease.epoch) == ("iris", "worker-a", 1)
    assert timedelta(seconds=19) < lease.expires_at - before < timedelta(seconds=25)  # the server's clock
    assert await acquire(worker_b, "iris", "worker-b") is None  # live: not granted
    assert await acquire(worker_a, "iris", "worker-a") is None  # not even to its owner: it renews
    assert await held_by(worker_b, "worker-a") == [lease]
    assert await held_by(worker_b, "worker-b") == []


async def test_a_worker_lists_the_personas_it_holds(worker_a: Store, worker_b: Store) -> None:
    for persona in ["otto", "iris", "basil"]:
        assert await acquire(worker_a, persona, "worker-a")
    assert await acquire(worker_b, "quill", "worker-b")

    assert [l.persona for l in await held_by(worker_a, "worker-a")] == ["basil", "iris", "otto"]
    assert [l.persona for l in await held_by(worker_a, "worker-b")] == ["quill"]


async def test_renewing_keeps_the_epoch_and_moves_the_expiry(worker_a: Store) -> None:
    lease = await acquire(worker_a, "iris", "worker-a", 5)
    assert lease is not None
    renewed = await renew(worker_a, lease, 60)

    assert renewed.epoch == lease.epoch == 1
    assert renewed.expires_at - lease.expires_at > timedelta(seconds=50)
    assert await held_by(worker_a, "worker-a") == [renewed]


async def test_an_expired_lease_is_taken_by_another_worker_at_the_next_epoch(worker_a: Store, worker_b: Store) -> None:
    mine = await acquire(worker_a, "iris", "worker-a", SHORT)
    assert mine is not None and await acquire(worker_b, "iris", "worker-b") is None
    await trio.sleep(PAST_SHORT)

    assert await held_by(worker_a, "worker-a") == []  # expired: no longer listed
    theirs = await acquire(worker_b, "iris", "worker-b")
    assert theirs is not None and (theirs.owner, theirs.epoch) == ("worker-b", 2)
    with pytest.raises(LeaseLost) as lost:
        await renew(worker_a, mine)
    assert (lost.value.persona, lost.value.held, lost.value.current, lost.value.owner) == ("iris", 1, 2, "worker-b")
    assert "epoch 2" in str(lost.value) and "'worker-b'" in str(lost.value)
    assert await held_by(worker_a, "worker-b") == [theirs]


async def test_renewing_after_expiry_fails_even_when_nobody_took_the_lease(worker_a: Store) -> None:
    lease = await acquire(worker_a, "iris", "worker-a", SHORT)
    assert lease is not None
    await trio.sleep(PAST_SHORT)

    with pytest.raises(LeaseLost) as lost:
        await renew(worker_a, lease)
    assert lost.value.expired and lost.value.current == 1 and "expired" in str(lost.value)
    again = await acquire(worker_a, "iris", "worker-a")  # granted anew: a new epoch
    assert again is not None and again.epoch == 2


async def test_a_renewal_round_renews_what_is_still_held_and_names_what_was_lost(
    worker_a: Store, worker_b: Store
) -> None:
    short = await acquire(worker_a, "iris", "worker-a", SHORT)
    kept = [await acquire(worker_a, persona, "worker-a", SHORT * 4) for persona in ("otto", "basil")]
    assert short is not None and None not in kept
    await trio.sleep(PAST_SHORT)
    assert await acquire(worker_b, "iris", "worker-b")  # iris ran out and went to worker b

    renewed, lost = await worker_a.write(lambda c: leases.renew_many(c, [short, *kept], 60))

    assert lost == [short]
    assert [(l.persona, l.epoch) for l in renewed] == [("basil", 1), ("otto", 1)]
    assert all(l.expires_at - k.expires_at > timedelta(seconds=50) for l, k in zip(renewed, sorted(kept, key=lambda l: l.persona)))
    assert await held_by(worker_a, "worker-a") == renewed
    assert await worker_a.write(lambda c: leases.renew_many(c, [], 60)) == ([], [])
    with pytest.raises(InvalidInput, match="one worker"):
        await worker_a.write(lambda c: leases.renew_many(c, [renewed[0], attrs.evolve(renewed[1], owner="x")], 60))


async def test_a_released_lease_is_free_and_its_epoch_goes_on(worker_a: Store, worker_b: Store) -> None:
    lease = await acquire(worker_a, "iris", "worker-a")
    assert lease is not None
    assert await worker_a.write(lambda c: leases.release(c, lease)) is True
    assert await held_by(worker_a, "worker-a") == []
    with pytest.raises(LeaseLost, match="released"):
        await renew(worker_a, lease)

    theirs = await acquire(worker_b, "iris", "worker-b")
    assert theirs is not None and theirs.epoch == 2  # never 1 again: the row was kept
    assert await worker_a.write(lambda c: leases.release(c, lease)) is False  # not mine any more
    assert await held_by(worker_b, "worker-b") == [theirs]


async def test_two_workers_racing_for_the_same_personas_each_get_a_persona_exactly_once(
    worker_a: Store, worker_b: Store
) -> None:
    personas = [f"p{k}" for k in range(12)]
    won: dict[str, list[str]] = {p: [] for p in personas}

    async def race(store: Store, owner: str, persona: str) -> None:
        if await acquire(store, persona, owner, SHORT) is not None:
            won[persona].append(owner)

    async with trio.open_nursery() as nursery:  # free leases: a first insert each
        for persona in personas:
            nursery.start_soon(race, worker_a, "worker-a", persona)
            nursery.start_soon(race, worker_b, "worker-b", persona)
    assert all(len(owners) == 1 for owners in won.values()), won

    await trio.sleep(PAST_SHORT)
    first = {p: owners[0] for p, owners in won.items()}
    won = {p: [] for p in personas}
    async with trio.open_nursery() as nursery:  # expired leases: an update each
        for persona in personas:
            nursery.start_soon(race, worker_a, "worker-a", persona)
            nursery.start_soon(race, worker_b, "worker-b", persona)
    assert all(len(owners) == 1 for owners in won.values()), won
    held = {l.persona: l for owner in ("worker-a", "worker-b") for l in await held_by(worker_a, owner)}
    assert {p: (held[p].owner, held[p].epoch) for p in personas} == {p: (won[p][0], 2) for p in personas}
    assert set(first) == set(personas)


# ---- fencing: a writer that lost its lease commits nothing --------------------------------------


async def test_a_writer_whose_lease_was_taken_cannot_commit_a_plan_and_the_new_owner_can(
    worker_a: Store, worker_b: Store
) -> None:
    mine = await acquire(worker_a, "iris", "worker-a", SHORT)
    assert mine is not None
    first = await post(worker_a, plan(0, 3, "Tess keeps bees behind the shed."), mine.epoch)
    assert first.rows and await cursor(worker_a) == 3
    await trio.sleep(PAST_SHORT)  # worker a is paused past its lease ...
    theirs = await acquire(worker_b, "iris", "worker-b")  # ... and worker b takes the persona
    assert theirs is not None

    late = plan(3, 6, "Tess sold her first jar of honey.")
    with pytest.raises(LeaseLost) as lost:
        await post(worker_a, late, mine.epoch)
    assert (lost.value.held, lost.value.current, lost.value.owner) == (1, 2, "worker-b")
    assert "nothing was committed" in str(lost.value)
    assert [r.text for r in await worker_b.memories.about(TESS)] == ["Tess keeps bees behind the shed."]
    assert [n.text for n in await worker_b.notices.of(TESS)] == ["Iris noted: Tess keeps bees behind the shed."]
    assert await cursor(worker_b) == 3  # the cursor did not move

    posted = await post(worker_b, late, theirs.epoch)
    assert [r.text for r in posted.rows] == ["Tess sold her first jar of honey."]
    assert await cursor(worker_b) == 6
    assert len(await worker_a.notices.of(TESS)) == 2


async def test_a_write_for_a_persona_never_leased_or_at_a_wrong_epoch_commits_nothing(worker_a: Store) -> None:
    with pytest.raises(LeaseLost, match="no lease"):
        await post(worker_a, plan(0, 2, "Tess paints ceramic tiles."), 1)
    lease = await acquire(worker_a, "iris", "worker-a")
    assert lease is not None
    with pytest.raises(LeaseLost):
        await post(worker_a, plan(0, 2, "Tess paints ceramic tiles."), lease.epoch + 1)
    assert await worker_a.memories.about(TESS) == [] and await cursor(worker_a) == 0


async def test_a_takeover_waits_for_a_fenced_write_in_flight(worker_a: Store, worker_b: Store) -> None:
    """The lease row stays locked while a fenced write runs, so a write checked at epoch 1
    commits before epoch 2 exists — never after it."""
    mine = await acquire(worker_a, "iris", "worker-a", 1.0)
    assert mine is not None
    finished: dict[str, float] = {}

    def slow_insert(conn: Any) -> None:
        leases.check_held(conn, "iris", mine.epoch)
        writes.post_plan(conn, plan(0, 2, "Tess is rebuilding a rowing boat."), AT)
        time.sleep(2.0)  # still in the transaction when the lease runs out and b asks for it
        finished["a commits"] = time.monotonic()  # on a's thread, just before its COMMIT

    async with trio.open_nursery() as nursery:
        nursery.start_soon(worker_a.write, slow_insert)
        await trio.sleep(1.4)  # the lease ran out meanwhile
        theirs = await acquire(worker_b, "iris", "worker-b")
        finished["b acquired"] = time.monotonic()

    assert theirs is not None and theirs.epoch == 2
    assert finished["a commits"] < finished["b acquired"]  # b's grant waited for a's COMMIT
    assert [r.text for r in await worker_b.memories.about(TESS)] == ["Tess is rebuilding a rowing boat."]
    with pytest.raises(LeaseLost):
        await post(worker_a, plan(2, 4, "Tess launched the boat at dawn."), mine.epoch)


async def test_every_write_of_a_persona_carries_the_epoch(worker_a: Store, worker_b: Store) -> None:
    """Touches, deletes, undo, clearing, parking and plain inserts: each one refused at a lost
    epoch with nothing changed, and each one done at the held epoch."""
    old = await acquire(worker_a, "iris", "worker-a", SHORT)
    assert old is not None
    await trio.sleep(PAST_SHORT)
    new = await acquire(worker_b, "iris", "worker-b")
    assert new is not None
    posted = await post(worker_b, plan(0, 2, "Tess collects vintage maps."), new.epoch)
    (row,) = posted.rows
    (notice_id,) = posted.notice_ids
    (spare,) = await worker_b.memories.insert([memory("Tess hikes with a paper compass.")], epoch=new.epoch)
    stamp = {row.id: (AT, 1)}
    retry = AT + timedelta(minutes=5)

    stale_writes = [
        worker_a.memories.touch(stamp, persona="iris", epoch=old.epoch),
        worker_a.memories.delete(TESS, row.id, persona="iris", epoch=old.epoch),
        worker_a.notices.undo(TESS, notice_id, AT, persona="iris", epoch=old.epoch),
        worker_a.memories.clear_about(TESS, "iris", AT, epoch=old.epoch),
        worker_a.memories.insert([memory("Tess draws her own maps.")], epoch=old.epoch),
        worker_a.write(lambda c: writes.park(c, "iris", "attic", "TimeoutError", retry, epoch=old.epoch)),
    ]
    for stale in stale_writes:
        with pytest.raises(LeaseLost):
            await stale
    rows = await worker_b.memories.about(TESS)
    assert sorted(r.text for r in rows) == ["Tess collects vintage maps.", "Tess hikes with a paper compass."]
    assert all(r.recall_count == 0 for r in rows)
    assert [n.id for n in await worker_b.notices.of(TESS)] == [notice_id]
    assert await worker_b.backlog.parked_personas() == []

    await worker_b.memories.touch(stamp, persona="iris", epoch=new.epoch)
    assert {r.id: r.recall_count for r in await worker_b.memories.about(TESS)}[row.id] == 1
    await worker_b.write(lambda c: writes.park(c, "iris", "attic", "TimeoutError", retry, epoch=new.epoch))
    assert await worker_b.backlog.parked_personas() == ["iris"]
    assert await worker_b.notices.undo(TESS, notice_id, AT, persona="iris", epoch=new.epoch) == [row.id]
    assert (await worker_b.memories.delete(TESS, spare.id, persona="iris", epoch=new.epoch)).id == spare.id
    await worker_b.memories.insert([memory("Tess frames the old maps.")], epoch=new.epoch)
    assert await worker_b.memories.clear_about(TESS, "iris", AT, epoch=new.epoch) == 1
    assert await worker_b.memories.about(TESS) == []


async def test_a_touch_named_for_a_persona_stamps_only_its_rows(worker_a: Store) -> None:
    lease = await acquire(worker_a, "iris", "worker-a")
    assert lease is not None
    theirs, = await worker_a.memories.insert([memory("Tess plays the cello.", persona="otto")])
    await worker_a.memories.touch({theirs.id: (AT, 3)}, persona="iris", epoch=lease.epoch)
    (row,) = await worker_a.memories.about(TESS)
    assert row.recall_count == 0


# ---- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize("seconds", [0, -1, float("nan"), float("inf"), True, "5", 10_000])
async def test_a_lease_duration_out_of_range_is_refused(worker_a: Store, seconds: object) -> None:
    with pytest.raises(InvalidInput, match="seconds"):
        await acquire(worker_a, "iris", "worker-a", seconds)  # type: ignore[arg-type]


@pytest.mark.parametrize("owner", ["", None, 7, "w" * 201])
async def test_a_bad_owner_is_refused(worker_a: Store, owner: object) -> None:
    with pytest.raises(InvalidInput, match="owner"):
        await acquire(worker_a, "iris", owner)  # type: ignore[arg-type]


@pytest.mark.parametrize("epoch", [0, -3, True, "1"])
async def test_a_bad_epoch_is_refused(worker_a: Store, epoch: object) -> None:
    with pytest.raises(InvalidInput, match="epoch"):
        await post(worker_a, plan(0, 2, "Tess bakes flatbread."), epoch)  # type: ignore[arg-type]


async def test_an_epoch_without_its_persona_is_refused(worker_a: Store) -> None:
    with pytest.raises(InvalidInput, match="persona="):
        await worker_a.memories.touch({1: (AT, 1)}, epoch=1)
    with pytest.raises(InvalidInput, match="persona="):
        await worker_a.memories.delete(TESS, 1, epoch=1)


async def test_on_sqlite_there_are_no_leases_and_a_write_without_an_epoch_is_unchanged(tmp_path: Path) -> None:
    async with open_store(str(tmp_path / "one.db")) as store:
        with pytest.raises(InvalidInput, match="PostgreSQL"):
            await acquire(store, "iris", "worker-a")
        with pytest.raises(InvalidInput, match="PostgreSQL"):
            await post(store, plan(0, 2, "Tess bakes flatbread."), 1)
        posted = await store.write(lambda c: writes.post_plan(c, plan(0, 2, "Tess bakes flatbread."), AT))
        assert [r.text for r in posted.rows] == ["Tess bakes flatbread."]
        await store.memories.touch({posted.rows[0].id: (AT, 2)})
        assert (await store.memories.about(TESS))[0].recall_count == 2
