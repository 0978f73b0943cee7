"""The SQLite worker: all-or-nothing writes with ``BEGIN IMMEDIATE``, SQLite's errors, closing,
readers beside the writer, the pragmas. What both backends share (one thread per connection,
units in order, no cancelling a unit half-way) is tested once for both in
``test_worker_thread.py``.

These tests drive ``SqliteConnection`` directly on a file in ``tmp_path``. Where a test needs a
unit to stay inside the worker thread, the unit blocks on a ``threading.Event`` that the test
sets; the trio side waits with ``wait_all_tasks_blocked`` (a task awaiting the worker counts as
blocked), never with sleeps.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import AsyncIterator

import pytest
import trio
import trio.testing

from persona_memory.errors import StorageError
from persona_memory.storage.connection import SqliteConnection, open_sqlite
from persona_memory.storage.store import Store, open_store

DEADLOCK_GUARD = 10.0  # seconds a worker thread may wait for its partner before the test fails


def _connect(path: Path):
    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE IF NOT EXISTS items (n INTEGER NOT NULL)")
        return conn

    return connect


async def _open(path: Path, name: str = "writer") -> SqliteConnection:
    return await open_sqlite(name, _connect(path))


@pytest.fixture
async def conn(tmp_path: Path) -> AsyncIterator[SqliteConnection]:
    connection = await _open(tmp_path / "units.db")
    try:
        yield connection
    finally:
        await connection.aclose()


def _items(conn: sqlite3.Connection) -> list[int]:
    return [n for (n,) in conn.execute("SELECT n FROM items ORDER BY rowid")]


def _insert(n: int):
    def unit(conn: sqlite3.Connection) -> int:
        conn.execute("INSERT INTO items (n) VALUES (?)", (n,))
        return n

    return unit


def _wait_in_thread(event: threading.Event) -> None:
    if not event.wait(DEADLOCK_GUARD):
        raise AssertionError("the test never released the worker thread")


# ---- writes are transactions ---------------------------------------------------------------


async def test_a_write_commits_all_its_statements(conn: SqliteConnection) -> None:
    def three(c: sqlite3.Connection) -> str:
        for n in (1, 2, 3):
            c.execute("INSERT INTO items (n) VALUES (?)", (n,))
        return "done"

    assert await conn.write(three) == "done"
    assert await conn.run(_items) == [1, 2, 3]


async def test_a_write_whose_second_statement_fails_in_sqlite_leaves_nothing(conn: SqliteConnection) -> None:
    def half(c: sqlite3.Connection) -> None:
        c.execute("INSERT INTO items (n) VALUES (1)")
        c.execute("INSERT INTO items (n) VALUES (NULL)")

    with pytest.raises(StorageError, match="NOT NULL"):
        await conn.write(half)

    assert await conn.run(_items) == []


async def test_a_write_that_ends_the_transaction_itself_reports_the_real_error(conn: SqliteConnection) -> None:
    def rolls_back_then_fails(c: sqlite3.Connection) -> None:
        c.execute("INSERT INTO items (n) VALUES (1)")
        c.execute("ROLLBACK")
        raise RuntimeError("the original problem")

    with pytest.raises(RuntimeError, match="the original problem"):
        await conn.write(rolls_back_then_fails)
    assert await conn.write(_insert(2)) == 2
    assert await conn.run(_items) == [2]


async def test_a_write_whose_commit_fails_is_rolled_back_and_the_writer_stays_usable(tmp_path: Path) -> None:
    """A deferred foreign key is checked at COMMIT: the commit fails, and nothing stays open."""

    def dangling(c: sqlite3.Connection) -> None:
        c.execute("PRAGMA defer_foreign_keys = ON")
        c.execute(
            "INSERT INTO persona_memory (persona, subject, kind, text, importance, created, closed_by) "
            "VALUES ('warren', 'world', 'fact', 'A fact.', 5, '2026-08-18T00:00:00+00:00', 999)"
        )

    async with open_store(str(tmp_path / "fk.db")) as store:
        with pytest.raises(StorageError, match="FOREIGN KEY"):
            await store.write(dangling)
        await store.controls.set_note(42, "still writable")
        assert await store.read(lambda c: c.execute("SELECT count(*) FROM persona_memory").fetchone()[0]) == 0
        assert (await store.controls.of([42]))[42].memory_note == "still writable"


async def test_sqlite_errors_come_out_as_storage_error(conn: SqliteConnection) -> None:
    with pytest.raises(StorageError, match="no such table: nowhere") as caught:
        await conn.run(lambda c: c.execute("SELECT * FROM nowhere").fetchall())
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)

    with pytest.raises(StorageError, match="syntax error"):
        await conn.write(lambda c: c.execute("INSERT INTO items VALUES (1) oops"))


async def test_a_connection_that_cannot_open_raises_storage_error(tmp_path: Path) -> None:
    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(tmp_path / "missing" / "x.db", isolation_level=None)
        conn.execute("SELECT 1")
        return conn

    with pytest.raises(StorageError, match="could not open"):
        await open_sqlite("broken", connect)


# ---- closing --------------------------------------------------------------------------------


async def test_aclose_finishes_queued_units_first(tmp_path: Path) -> None:
    path = tmp_path / "close.db"
    conn = await _open(path)
    gate = threading.Event()
    results: list[int] = []

    async def submit(n: int) -> None:
        results.append(await conn.write(_insert(n)))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(conn.run, lambda _: _wait_in_thread(gate))
        await trio.testing.wait_all_tasks_blocked()
        for n in (1, 2, 3):
            nursery.start_soon(submit, n)
            await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(conn.aclose)
        await trio.testing.wait_all_tasks_blocked()
        gate.set()

    assert sorted(results) == [1, 2, 3]  # every caller got its answer (trio wakes them in no set order)
    check = sqlite3.connect(path)
    try:
        assert _items(check) == [1, 2, 3]
    finally:
        check.close()


# ---- readers beside the writer (WAL) --------------------------------------------------------


async def test_readers_proceed_together_while_the_writer_holds_a_write_transaction(tmp_path: Path) -> None:
    async with open_store(str(tmp_path / "wal.db"), read_connections=2) as store:
        holding = threading.Event()
        release = threading.Event()
        both_readers = threading.Barrier(2, timeout=DEADLOCK_GUARD)
        seen: list[int] = []

        def hold_write(c: sqlite3.Connection) -> None:
            c.execute("INSERT INTO users (user_id, memory_note) VALUES (1, 'written')")
            holding.set()
            _wait_in_thread(release)

        def count_users(c: sqlite3.Connection) -> int:
            both_readers.wait()
            return c.execute("SELECT count(*) FROM users").fetchone()[0]

        async def reader() -> None:
            seen.append(await store.read(count_users))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(store.write, hold_write)
            await trio.to_thread.run_sync(holding.wait)
            async with trio.open_nursery() as readers:
                readers.start_soon(reader)
                readers.start_soon(reader)
            assert seen == [0, 0]
            release.set()

        assert await store.read(lambda c: c.execute("SELECT count(*) FROM users").fetchone()[0]) == 1


# ---- pragmas --------------------------------------------------------------------------------


async def _on_every_reader(store: Store, count: int, fn):
    """Run ``fn`` on all ``count`` read connections at once (each holds one until all arrive)."""
    barrier = threading.Barrier(count, timeout=DEADLOCK_GUARD)
    out: list = []

    def unit(c: sqlite3.Connection):
        barrier.wait()
        return fn(c)

    async def one() -> None:
        out.append(await store.read(unit))

    async with trio.open_nursery() as nursery:
        for _ in range(count):
            nursery.start_soon(one)
    return out


def _pragmas(c: sqlite3.Connection) -> dict[str, object]:
    return {
        name: c.execute(f"PRAGMA {name}").fetchone()[0]
        for name in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
    } | {"thread": threading.get_ident()}


async def test_every_connection_has_the_configured_pragmas(tmp_path: Path) -> None:
    async with open_store(str(tmp_path / "p.db"), busy_timeout_ms=1234, read_connections=3) as store:
        writer = await store.write(_pragmas)
        readers = await _on_every_reader(store, 3, _pragmas)

    assert len({p.pop("thread") for p in [writer, *readers]}) == 4
    expected = {"journal_mode": "wal", "synchronous": 1, "foreign_keys": 1, "busy_timeout": 1234}
    assert writer == expected
    assert readers == [expected] * 3
