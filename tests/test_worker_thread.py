"""The worker thread both backends share (``storage.worker_thread``): one thread per connection,
units in order, a unit never cancelled half-way, nothing left open behind a unit.

Each test runs on an SQLite file and on a fresh PostgreSQL database (``postgres_url``; that leg
skips with its reason where no server can start). What only one backend does — SQLite's
``BEGIN IMMEDIATE``, PostgreSQL's dropped connections and its pool — is tested in
``test_storage_connection.py`` and ``test_postgres_connection.py``. Where a test needs a unit to
stay inside the worker thread, the unit blocks on a ``threading.Event`` that the test sets; the
trio side waits with ``wait_all_tasks_blocked``, never with sleeps.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable

import pytest
import trio
import trio.testing

from persona_memory.errors import StorageError
from persona_memory.storage.connection import open_sqlite
from persona_memory.storage.worker_thread import ThreadedConnection

DEADLOCK_GUARD = 10.0  # seconds a worker thread may wait for its partner before the test fails

Opener = Callable[[str], Awaitable[ThreadedConnection]]


def _sqlite_opener(path: Path) -> Opener:
    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
        return conn

    return lambda name: open_sqlite(name, connect)


def _postgres_opener(url: str) -> Opener:
    from persona_memory.storage.postgres_connection import connect_to, open_postgres

    plain = connect_to(url, application_name="pm-worker-thread")

    def connect():
        conn = plain()
        conn.execute("CREATE TABLE IF NOT EXISTS items (id serial PRIMARY KEY, n integer NOT NULL)")
        return conn

    return lambda name: open_postgres(name, connect)


@pytest.fixture(params=["sqlite", "postgresql"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    if request.param == "sqlite":
        return _sqlite_opener(tmp_path / "units.db")
    return _postgres_opener(request.getfixturevalue("postgres_url"))


@pytest.fixture
async def conn(opener: Opener) -> AsyncIterator[ThreadedConnection]:
    connection = await opener("writer")
    try:
        yield connection
    finally:
        await connection.aclose()


def _items(conn) -> list[int]:
    return [n for (n,) in conn.execute("SELECT n FROM items ORDER BY id").fetchall()]


def _insert(n: int):
    def unit(conn) -> int:
        conn.execute(f"INSERT INTO items (n) VALUES ({int(n)})")
        return n

    return unit


def _wait_in_thread(event: threading.Event) -> None:
    if not event.wait(DEADLOCK_GUARD):
        raise AssertionError("the test never released the worker thread")


# ---- the thread ---------------------------------------------------------------------------


async def test_every_unit_of_a_connection_runs_on_its_one_dedicated_thread(opener: Opener) -> None:
    first = await opener("first")
    second = await opener("second")
    try:
        first_ids = {await first.run(lambda _: threading.get_ident()) for _ in range(5)}
        first_ids.add(await first.write(lambda _: threading.get_ident()))
        second_ids = {await second.run(lambda _: threading.get_ident()) for _ in range(3)}
    finally:
        await first.aclose()
        await second.aclose()

    assert len(first_ids) == 1 and len(second_ids) == 1
    assert first_ids != second_ids
    assert threading.get_ident() not in first_ids | second_ids
    assert first_ids == {first.thread_id}


async def test_units_run_in_the_order_they_were_submitted(conn: ThreadedConnection) -> None:
    gate = threading.Event()
    ran: list[int] = []

    def record(n: int):
        def unit(_) -> None:
            ran.append(n)

        return unit

    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.run, lambda _: _wait_in_thread(gate))
        await trio.testing.wait_all_tasks_blocked()
        for n in range(20):
            nursery.start_soon(conn.run, record(n))
            await trio.testing.wait_all_tasks_blocked()
        assert ran == []
        gate.set()

    assert ran == list(range(20))


# ---- writes are transactions ---------------------------------------------------------------


async def test_a_write_that_raises_after_its_first_insert_leaves_nothing(conn: ThreadedConnection) -> None:
    def half(c) -> None:
        _insert(1)(c)
        raise ValueError("the unit's own bug")

    with pytest.raises(ValueError, match="the unit's own bug"):
        await conn.write(half)
    assert await conn.run(_items) == []
    assert await conn.write(_insert(2)) == 2  # and the connection goes on
    assert await conn.run(_items) == [2]


async def test_a_unit_that_leaves_a_transaction_open_fails_and_is_rolled_back(conn: ThreadedConnection) -> None:
    def forgetful(c) -> None:
        c.execute("BEGIN")
        _insert(7)(c)

    with pytest.raises(StorageError, match="transaction still open"):
        await conn.run(forgetful)
    assert await conn.run(_items) == []


# ---- cancellation ---------------------------------------------------------------------------


async def test_a_unit_cannot_be_cancelled_half_way(conn: ThreadedConnection) -> None:
    """The caller is cancelled while its write waits in the worker: the write still commits,
    ``write`` returns its result, and the caller meets ``Cancelled`` at its next checkpoint —
    trio's rule that a call which raised ``Cancelled`` did not happen; this one did."""
    inside = threading.Event()
    release = threading.Event()
    returned: list[str] = []

    def slow(c) -> str:
        _insert(1)(c)
        inside.set()
        _wait_in_thread(release)
        _insert(2)(c)
        return "committed"

    scope = trio.CancelScope()

    async def caller() -> None:
        with scope:
            returned.append(await conn.write(slow))
            await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(caller)
        await trio.to_thread.run_sync(inside.wait)
        scope.cancel()
        await trio.testing.wait_all_tasks_blocked()
        assert returned == []
        release.set()

    assert returned == ["committed"]
    assert scope.cancelled_caught
    assert await conn.run(_items) == [1, 2]


class _Freed:
    """A result that notes the thread it is freed on."""

    def __init__(self, threads: list[int]) -> None:
        self.threads = threads

    def __del__(self) -> None:
        self.threads.append(threading.get_ident())


async def test_the_caller_frees_a_units_result_the_worker_keeps_none_of_it(conn: ThreadedConnection) -> None:
    """A large result is freed on the caller's side the moment the caller lets go of it: not on
    the worker thread when its next unit comes (holding the GIL while that unit's caller
    waits), nor in whichever task trio steps next (its loop keeps a task's last wake-up)."""
    freed: list[int] = []
    for rounds in range(1, 6):
        result = await conn.run(lambda _: _Freed(freed))
        assert isinstance(result, _Freed)
        del result  # no checkpoint in between: nothing else holds it
        assert freed == [threading.get_ident()] * rounds
    written = await conn.write(lambda _: _Freed(freed))
    del written
    assert freed == [threading.get_ident()] * 6


async def test_a_cancelled_caller_does_not_submit_its_unit(conn: ThreadedConnection) -> None:
    with trio.CancelScope() as scope:
        scope.cancel()
        await conn.write(_insert(1))
    assert scope.cancelled_caught
    assert await conn.run(_items) == []


async def test_use_after_close_raises_storage_error(opener: Opener) -> None:
    connection = await opener("closed")
    await connection.aclose()
    await connection.aclose()  # idempotent
    with pytest.raises(StorageError, match="closed"):
        await connection.run(_items)
    with pytest.raises(StorageError, match="closed"):
        await connection.write(_insert(1))
