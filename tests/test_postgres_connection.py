"""The PostgreSQL worker: one thread per connection, whole units of work, all-or-nothing writes,
and a pool of such connections.

The twin of ``test_storage_connection.py`` (what both share is in ``test_worker_thread.py``), against a fresh database on the suite's server
(``postgres_url``). Where a test needs a unit to stay inside the worker thread, the unit blocks
on a ``threading.Event`` that the test sets; the trio side waits with
``wait_all_tasks_blocked`` (a task awaiting the worker counts as blocked), never with sleeps.
"""

from __future__ import annotations

import threading
import time
from typing import AsyncIterator

import psycopg
import pytest
import trio
import trio.testing

from persona_memory.errors import InvalidInput, StorageError
from persona_memory.storage.postgres_connection import (
    PostgresConnection,
    connect_to,
    open_postgres,
    open_postgres_pool,
)

DEADLOCK_GUARD = 10.0  # seconds a worker thread may wait for its partner before the test fails


def _connect(url: str, application_name: str = "pm-test"):
    plain = connect_to(url, application_name=application_name)

    def connect() -> psycopg.Connection:
        conn = plain()
        conn.execute("CREATE TABLE IF NOT EXISTS items (id serial PRIMARY KEY, n integer NOT NULL)")
        return conn

    return connect


@pytest.fixture
async def conn(postgres_url: str) -> AsyncIterator[PostgresConnection]:
    connection = await open_postgres("writer", _connect(postgres_url))
    try:
        yield connection
    finally:
        await connection.aclose()


def _items(conn: psycopg.Connection) -> list[int]:
    return [n for (n,) in conn.execute("SELECT n FROM items ORDER BY id")]


def _insert(n: int):
    def unit(conn: psycopg.Connection) -> int:
        conn.execute("INSERT INTO items (n) VALUES (%s)", (n,))
        return n

    return unit


def _backend(conn: psycopg.Connection) -> int:
    return conn.execute("SELECT pg_backend_pid()").fetchone()[0]


def _wait_in_thread(event: threading.Event) -> None:
    if not event.wait(DEADLOCK_GUARD):
        raise AssertionError("the test never released the worker thread")


def _sessions(url: str, application_name: str) -> int:
    with psycopg.connect(url, autocommit=True) as admin:
        return admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (application_name,)
        ).fetchone()[0]


def _sessions_once_gone(url: str, application_name: str) -> int:
    """The sessions left, once the server has had time to end the ones whose clients closed
    (a backend leaves pg_stat_activity a moment after its socket closes)."""
    deadline = time.monotonic() + DEADLOCK_GUARD
    while (left := _sessions(url, application_name)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


# ---- writes are transactions ---------------------------------------------------------------


async def test_a_write_commits_all_its_statements(conn: PostgresConnection, postgres_url: str) -> None:
    def three(c: psycopg.Connection) -> str:
        for n in (1, 2, 3):
            c.execute("INSERT INTO items (n) VALUES (%s)", (n,))
        return "done"

    assert await conn.write(three) == "done"
    with psycopg.connect(postgres_url) as other:  # committed: another session sees it
        assert _items(other) == [1, 2, 3]


async def test_a_write_whose_second_statement_fails_in_postgres_leaves_nothing(conn: PostgresConnection) -> None:
    def half(c: psycopg.Connection) -> None:
        c.execute("INSERT INTO items (n) VALUES (1)")
        c.execute("INSERT INTO items (n) VALUES (NULL)")

    with pytest.raises(StorageError, match="not-null") as caught:
        await conn.write(half)

    assert isinstance(caught.value.__cause__, psycopg.errors.NotNullViolation)
    assert await conn.run(_items) == []


async def test_a_write_that_swallows_a_failed_statement_fails_instead_of_committing_nothing(conn: PostgresConnection) -> None:
    """PostgreSQL answers COMMIT after a failed statement with a silent ROLLBACK: we say so."""

    def swallows(c: psycopg.Connection) -> str:
        c.execute("INSERT INTO items (n) VALUES (1)")
        try:
            c.execute("INSERT INTO items (n) VALUES (NULL)")
        except psycopg.errors.NotNullViolation:
            pass
        return "looked fine"

    with pytest.raises(StorageError, match="nothing was committed"):
        await conn.write(swallows)
    assert await conn.run(_items) == []


async def test_a_write_that_ends_the_transaction_itself_reports_the_real_error(conn: PostgresConnection) -> None:
    def rolls_back_then_fails(c: psycopg.Connection) -> None:
        c.execute("INSERT INTO items (n) VALUES (1)")
        c.execute("ROLLBACK")
        raise RuntimeError("the original problem")

    with pytest.raises(RuntimeError, match="the original problem"):
        await conn.write(rolls_back_then_fails)
    assert await conn.write(_insert(2)) == 2
    assert await conn.run(_items) == [2]


async def test_a_write_whose_commit_fails_is_rolled_back_and_the_connection_stays_usable(conn: PostgresConnection) -> None:
    """A deferred foreign key is checked at COMMIT: the commit fails, and nothing stays open."""
    await conn.run(lambda c: c.execute(
        "CREATE TABLE notes (id integer PRIMARY KEY, "
        "item integer REFERENCES items (id) DEFERRABLE INITIALLY DEFERRED)"
    ))

    def dangling(c: psycopg.Connection) -> None:
        c.execute("INSERT INTO items (n) VALUES (5)")
        c.execute("INSERT INTO notes (id, item) VALUES (1, 999)")

    with pytest.raises(StorageError, match="foreign key"):
        await conn.write(dangling)
    assert await conn.run(_items) == []
    assert await conn.write(_insert(6)) == 6
    assert await conn.run(_items) == [6]


async def test_postgres_errors_come_out_as_storage_error(conn: PostgresConnection) -> None:
    with pytest.raises(StorageError, match='relation "nowhere" does not exist') as caught:
        await conn.run(lambda c: c.execute("SELECT * FROM nowhere").fetchall())
    assert isinstance(caught.value.__cause__, psycopg.errors.UndefinedTable)

    with pytest.raises(StorageError, match="syntax error"):
        await conn.write(lambda c: c.execute("INSERT INTO items VALUES (1) oops"))
    assert await conn.write(_insert(4)) == 4


async def test_a_connection_that_cannot_open_raises_storage_error(postgres_url: str) -> None:
    missing = postgres_url.rsplit("/", 1)[0] + "/no_such_database"
    with pytest.raises(StorageError, match="could not open.*no_such_database"):
        await open_postgres("broken", connect_to(missing))


# ---- a connection the server dropped ----------------------------------------------------------


async def test_a_dropped_connection_fails_its_unit_and_the_next_unit_runs_on_a_new_one(
    conn: PostgresConnection, postgres_url: str
) -> None:
    before = await conn.run(_backend)
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", (before,)).fetchone()[0]

    with pytest.raises(StorageError, match="writer connection"):
        await conn.write(_insert(1))

    assert await conn.write(_insert(2)) == 2
    assert await conn.run(_items) == [2]
    assert await conn.run(_backend) != before


async def test_while_the_server_refuses_new_connections_units_fail_until_it_takes_them_again(postgres_url: str) -> None:
    refusing = threading.Event()
    plain = _connect(postgres_url)

    def connect() -> psycopg.Connection:
        if refusing.is_set():
            raise psycopg.OperationalError("the server is not accepting connections (simulated)")
        return plain()

    conn = await open_postgres("flaky", connect)
    try:
        backend = await conn.run(_backend)
        refusing.set()
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (backend,))
        for _ in range(3):  # the dropped connection's unit, then two failed reconnects
            with pytest.raises(StorageError, match="flaky connection"):
                await conn.run(_items)
        refusing.clear()
        assert await conn.write(_insert(8)) == 8
    finally:
        await conn.aclose()


# ---- closing --------------------------------------------------------------------------------


async def test_aclose_finishes_queued_units_first_and_closes_the_session(postgres_url: str) -> None:
    conn = await open_postgres("closing", _connect(postgres_url, "pm-closing"))
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
    with psycopg.connect(postgres_url) as check:
        assert _items(check) == [1, 2, 3]
    assert _sessions_once_gone(postgres_url, "pm-closing") == 0


# ---- the pool --------------------------------------------------------------------------------


async def test_a_pool_runs_as_many_units_at_once_as_it_has_connections(postgres_url: str) -> None:
    async with open_postgres_pool("pool", _connect(postgres_url, "pm-pool"), 3) as pool:
        assert _sessions(postgres_url, "pm-pool") == 3
        all_in = threading.Barrier(4, timeout=DEADLOCK_GUARD)  # the three units and this test
        release = threading.Event()
        seen: list[tuple[int, int]] = []
        fourth_ran: list[bool] = []

        def held(c: psycopg.Connection) -> None:
            seen.append((threading.get_ident(), _backend(c)))
            all_in.wait()
            _wait_in_thread(release)

        async with trio.open_nursery() as nursery:
            for _ in range(3):
                nursery.start_soon(pool.run, held)
            await trio.to_thread.run_sync(all_in.wait)
            nursery.start_soon(pool.write, lambda c: fourth_ran.append(True))
            await trio.testing.wait_all_tasks_blocked()
            assert len(seen) == 3 and fourth_ran == []  # three held, the fourth waits for one
            release.set()

        assert fourth_ran == [True]
        assert len({thread for thread, _ in seen}) == 3
        assert len({backend for _, backend in seen}) == 3
    assert _sessions_once_gone(postgres_url, "pm-pool") == 0


async def test_a_pool_write_is_one_transaction(postgres_url: str) -> None:
    async with open_postgres_pool("pool", _connect(postgres_url), 2) as pool:
        def half(c: psycopg.Connection) -> None:
            c.execute("INSERT INTO items (n) VALUES (1)")
            raise RuntimeError("broke")

        with pytest.raises(RuntimeError):
            await pool.write(half)
        await pool.write(_insert(2))
        assert await pool.run(_items) == [2]


async def test_a_caller_cancelled_while_waiting_for_a_free_connection_sends_nothing(postgres_url: str) -> None:
    async with open_postgres_pool("pool", _connect(postgres_url), 1) as pool:
        release = threading.Event()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(pool.run, lambda _: _wait_in_thread(release))
            await trio.testing.wait_all_tasks_blocked()
            waiting = trio.CancelScope()

            async def waiter() -> None:
                with waiting:
                    await pool.write(_insert(1))

            nursery.start_soon(waiter)
            await trio.testing.wait_all_tasks_blocked()
            waiting.cancel()
            await trio.testing.wait_all_tasks_blocked()
            release.set()
        assert waiting.cancelled_caught
        assert await pool.run(_items) == []


async def test_a_pool_that_cannot_open_every_connection_closes_the_ones_it_opened(postgres_url: str) -> None:
    opened = 0
    plain = _connect(postgres_url, "pm-half-pool")

    def connect() -> psycopg.Connection:
        nonlocal opened
        opened += 1
        if opened == 3:
            raise psycopg.OperationalError("too many clients already (simulated)")
        return plain()

    with pytest.raises(StorageError, match="could not open.*too many clients"):
        async with open_postgres_pool("half", connect, 4):
            pass
    assert _sessions_once_gone(postgres_url, "pm-half-pool") == 0


@pytest.mark.parametrize("size", [0, -1, 1.5, True])
async def test_a_pool_needs_at_least_one_connection(size: object) -> None:
    with pytest.raises(InvalidInput, match="size >= 1"):
        async with open_postgres_pool("none", connect_to("postgresql://nobody@nowhere/none"), size):  # type: ignore[arg-type]
            pass
