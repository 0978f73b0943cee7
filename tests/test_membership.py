"""Worker membership on PostgreSQL: joining, heartbeating, leaving, and the list of live
workers on the server's clock — a worker that stops heartbeating drops off the list by itself.

Real clock (no ``autojump_clock``): the expiry is the server's ``now()``, so a short one runs
out with a real sleep, as in ``test_leases.py``.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import AsyncIterator

import pytest
import trio

from persona_memory.errors import InvalidInput
from persona_memory.rooms import RoomState
from persona_memory.rows import MemoryRow
from persona_memory.storage import membership
from persona_memory.storage.store import Store, open_postgres_store, open_store

AT = datetime(2026, 11, 3, 18, 30, tzinfo=timezone.utc)
SHORT = 0.3
PAST_SHORT = 0.45
LONG = 30.0


@pytest.fixture
async def store(postgres_url: str) -> AsyncIterator[Store]:
    async with open_postgres_store(postgres_url) as opened:
        yield opened


async def live(store: Store) -> list[str]:
    return [m.worker for m in await store.read(membership.live_workers)]


async def test_joined_workers_are_listed_by_id_until_they_leave(store: Store) -> None:
    for worker in ["worker-b", "worker-a", "worker-c"]:
        await store.write_cluster(lambda c, w=worker: membership.join(c, w, LONG))
    assert await live(store) == ["worker-a", "worker-b", "worker-c"]

    assert await store.write_cluster(lambda c: membership.leave(c, "worker-b")) is True
    assert await live(store) == ["worker-a", "worker-c"]
    assert await store.write_cluster(lambda c: membership.leave(c, "worker-b")) is False


async def test_a_worker_that_stops_heartbeating_drops_off_the_list(store: Store) -> None:
    await store.write_cluster(lambda c: membership.join(c, "quiet", SHORT))
    await store.write_cluster(lambda c: membership.join(c, "steady", SHORT))
    await trio.sleep(SHORT / 2)
    assert await store.write_cluster(lambda c: membership.heartbeat(c, "steady", LONG)) is True
    await trio.sleep(PAST_SHORT - SHORT / 2)

    assert await live(store) == ["steady"]


async def test_a_lapsed_worker_comes_back_by_its_heartbeat_and_is_told_it_lapsed(store: Store) -> None:
    first = await store.write_cluster(lambda c: membership.join(c, "napper", SHORT))
    await trio.sleep(PAST_SHORT)
    assert await live(store) == []

    assert await store.write_cluster(lambda c: membership.heartbeat(c, "napper", LONG)) is False
    assert await store.write_cluster(lambda c: membership.heartbeat(c, "napper", LONG)) is True
    [back] = await store.read(membership.live_workers)
    assert back.joined_at > first.joined_at  # a new membership, from the heartbeat that revived it
    assert back.expires_at - back.joined_at > timedelta(seconds=LONG - 5)


async def test_a_never_joined_worker_joins_by_heartbeat(store: Store) -> None:
    assert await store.write_cluster(lambda c: membership.heartbeat(c, "fresh", LONG)) is False
    assert await live(store) == ["fresh"]


async def test_lapsed_rows_can_be_forgotten_but_live_ones_stay(store: Store) -> None:
    await store.write_cluster(lambda c: membership.join(c, "gone", SHORT))
    await store.write_cluster(lambda c: membership.join(c, "here", LONG))
    await trio.sleep(PAST_SHORT)

    assert await store.write_cluster(lambda c: membership.forget_lapsed(c, 0.01)) == 1
    assert await live(store) == ["here"]
    assert await store.write_cluster(lambda c: membership.leave(c, "gone")) is False


@pytest.mark.parametrize("worker", ["", 7, "w" * 201])
async def test_a_bad_worker_id_is_refused(store: Store, worker: object) -> None:
    with pytest.raises(InvalidInput, match="worker id must be a non-empty str"):
        await store.write_cluster(lambda c: membership.join(c, worker, LONG))  # type: ignore[arg-type]


async def test_a_bad_duration_is_refused(store: Store) -> None:
    with pytest.raises(InvalidInput, match="more than 0"):
        await store.write_cluster(lambda c: membership.join(c, "worker-a", 0))


async def test_the_known_personas_are_those_with_rows_or_rooms(store: Store) -> None:
    assert await store.read(membership.known_personas) == []
    await store.memories.insert([MemoryRow(
        persona="marlow", subject="u:12", kind="fact", text="Keeps bees on the roof of the bakery.",
        importance=5, witnessed={12}, created=AT,
    )])  # fmt: skip
    await store.rooms.save(RoomState("porch", personas=("hazel", "marlow"), present=frozenset({12}), private=False, incognito=False, kit=None, topic="evening"), AT)
    await store.rooms.save(RoomState("loft", personas=("quill",), present=frozenset({12}), private=False, incognito=False, kit=None, topic="records"), AT)
    await store.rooms.archive("loft", AT)

    assert await store.read(membership.known_personas) == ["hazel", "marlow", "quill"]


async def test_a_sqlite_store_has_no_membership(tmp_path: Path) -> None:
    async with open_store(str(tmp_path / "memory.db")) as lite:
        with pytest.raises(InvalidInput, match="needs a PostgreSQL store"):
            await lite.write_cluster(lambda c: membership.join(c, "worker-a", LONG))
