"""PostgreSQL connections, each owned by one dedicated thread, and a pool of them, driven from trio.

The twin of ``connection.py``: psycopg 3's async API runs on asyncio only, so from trio we
drive its blocking API the way we drive ``sqlite3`` — the thread, the queue of units and the
cancellation rules are ``worker_thread``'s. A pool holds a configured number of such
connections and lends a free one to each unit.

Rules:
- Connections are in autocommit mode, as ``connection.py``'s SQLite connections are
  (``isolation_level=None``): a unit that only reads runs each statement on its own snapshot;
  ``write()`` — or a unit's own ``BEGIN`` … ``COMMIT`` — makes one transaction of several.
- Units on one connection run in the order they were submitted. The pool promises no order
  between units that it lends different connections. Waiting for a free connection of the
  pool is an ordinary wait: cancelled there, nothing was sent.
- A unit never leaves a transaction open behind it: the worker rolls back whatever a unit left
  open, so the next unit starts clean; a unit that returned normally with its transaction
  open fails with ``StorageError``.
- ``write()`` wraps the unit in ``BEGIN``/``COMMIT``, rolling back on any exception, including
  a failed ``COMMIT``. A unit that caught a failed statement and went on returning normally
  fails too: PostgreSQL would answer its ``COMMIT`` with a silent rollback.
- ``psycopg.Error`` is translated into ``StorageError`` at this boundary.
- A connection the server dropped (a restart, ``pg_terminate_backend``, the network) fails
  the unit that met it with ``StorageError``; nothing is retried behind the caller's back (a
  write whose ``COMMIT`` was in flight may or may not have committed). The worker connects
  again before its next unit; if that fails, that unit fails, and the next one tries again.
"""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import AsyncIterator, Callable, TypeVar

import outcome
import psycopg
import trio
from psycopg.pq import TransactionStatus

from ..errors import InvalidInput, StorageError
from .worker_thread import ThreadedConnection, rolled_back

T = TypeVar("T")

Connect = Callable[[], psycopg.Connection]

_OPEN = (TransactionStatus.INTRANS, TransactionStatus.INERROR)


def connect_to(url: str, *, application_name: str = "persona-memory", connect_timeout: int = 10) -> Connect:
    """A connect function for a worker thread: ``url`` in autocommit mode.

    ``url`` is a libpq connection URL (``postgresql://user@host:port/database?…``); a password
    is better kept out of it, in ``PGPASSWORD`` or ``~/.pgpass``, which libpq reads itself.
    """

    def connect() -> psycopg.Connection:
        return psycopg.connect(
            url, autocommit=True, application_name=application_name, connect_timeout=connect_timeout
        )

    return connect


async def open_postgres(name: str, connect: Connect) -> PostgresConnection:
    """Start a worker thread, run ``connect`` on it, and return the connection.

    The caller closes it with ``aclose``. ``name`` appears in errors and in the thread's name.

    Raises:
        StorageError: ``connect`` failed in psycopg (no server, refused, bad database).
            Anything else it raised comes out as is.
    """
    return await trio.to_thread.run_sync(PostgresConnection, name, connect)


class PostgresConnection(ThreadedConnection[psycopg.Connection]):
    """A PostgreSQL connection on a dedicated thread. Create with ``open_postgres``; close
    with ``aclose`` (see ``worker_thread.ThreadedConnection``)."""

    LABEL = "PostgreSQL"
    PREFIX = "postgres"
    ERRORS = (psycopg.Error,)

    def _after(
        self, conn: psycopg.Connection, result: outcome.Outcome
    ) -> tuple[psycopg.Connection | None, outcome.Outcome]:
        if conn.broken or conn.closed:
            conn.close()
            return None, result  # connect again before the next unit
        if conn.info.transaction_status in _OPEN:
            result = rolled_back(lambda: conn.execute("ROLLBACK"), self.ERRORS, result)
        return conn, result

    async def write(self, fn: Callable[[psycopg.Connection], T]) -> T:
        """Run ``fn`` inside one ``BEGIN``/``COMMIT`` transaction: all of it commits, or none."""
        return await self.run(_transaction(fn))


class PostgresPool:
    """``size`` connections, each on its own thread; a unit runs on whichever is free.

    Open with ``open_postgres_pool``; it closes when that block ends.
    """

    def __init__(self, connections: list[PostgresConnection]) -> None:
        self.size = len(connections)
        send, self._free = trio.open_memory_channel[PostgresConnection](len(connections))
        self._give_back = send
        for connection in connections:
            send.send_nowait(connection)

    async def run(self, fn: Callable[[psycopg.Connection], T]) -> T:
        """Run ``fn`` on a free connection (waits for one if all are busy); see ``PostgresConnection.run``."""
        connection = await self._free.receive()
        try:
            return await connection.run(fn)
        finally:
            self._give_back.send_nowait(connection)

    async def write(self, fn: Callable[[psycopg.Connection], T]) -> T:
        """Run ``fn`` as one transaction on a free connection: all of it commits, or none."""
        return await self.run(_transaction(fn))


@asynccontextmanager
async def open_postgres_pool(name: str, connect: Connect, size: int) -> AsyncIterator[PostgresPool]:
    """Open ``size`` connections with ``connect``; close them all when the block ends.

    If one fails to open, the ones already open are closed before the error leaves.

    Raises:
        InvalidInput: ``size`` is not an int of at least 1.
        StorageError: a connection could not open (see ``open_postgres``).
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise InvalidInput(f"a PostgreSQL pool needs size >= 1 connections, got {size!r}")
    connections: list[PostgresConnection] = []
    try:
        for n in range(size):
            connections.append(await open_postgres(f"{name}-{n}", connect))
        yield PostgresPool(connections)
    finally:
        with trio.CancelScope(shield=True):
            for connection in connections:
                await connection.aclose()


def _transaction(fn: Callable[[psycopg.Connection], T]) -> Callable[[psycopg.Connection], T]:
    def transaction(conn: psycopg.Connection) -> T:
        conn.execute("BEGIN")
        try:
            result = fn(conn)
            if conn.info.transaction_status == TransactionStatus.INERROR:
                raise StorageError(
                    "a statement of the transaction failed and the unit went on; "
                    "nothing was committed"
                )
            if conn.info.transaction_status != TransactionStatus.INTRANS:
                raise StorageError("the unit ended the write's transaction itself; write() commits it")
            conn.execute("COMMIT")
        except BaseException:
            if not conn.broken and conn.info.transaction_status in _OPEN:
                try:
                    conn.execute("ROLLBACK")
                except psycopg.Error:
                    pass  # the unit's own error says more; the worker checks the state again
            raise
        return result

    return transaction
