"""One SQLite connection, owned by one dedicated thread, driven from trio.

The thread, the queue of units and the cancellation rules are ``worker_thread``'s, shared with
PostgreSQL; what is SQLite's is here.

Rules:
- A unit never leaves a transaction open behind it: the worker rolls back whatever a unit left
  uncommitted, so the next unit starts clean (and a reader never pins an old snapshot); a unit
  that returned normally with its transaction open fails with ``StorageError``.
- ``write()`` wraps the unit in ``BEGIN IMMEDIATE``/``COMMIT``, rolling back on any exception,
  including a failed ``COMMIT``.
- ``sqlite3.Error`` is translated into ``StorageError`` at this boundary.
"""

from __future__ import annotations

import sqlite3
from typing import Callable, TypeVar

import outcome
import trio

from .worker_thread import ThreadedConnection, rolled_back

T = TypeVar("T")


async def open_sqlite(name: str, connect: Callable[[], sqlite3.Connection]) -> SqliteConnection:
    """Start a worker thread, run ``connect`` on it, and return the connection.

    The caller closes it with ``aclose``. ``name`` appears in errors and in the thread's name.

    Raises:
        StorageError: ``connect`` failed in SQLite. Anything else it raised comes out as is.
    """
    return await trio.to_thread.run_sync(SqliteConnection, name, connect)


class SqliteConnection(ThreadedConnection[sqlite3.Connection]):
    """An SQLite connection on a dedicated thread. Create with ``open_sqlite``; close with
    ``aclose`` (see ``worker_thread.ThreadedConnection``)."""

    LABEL = "SQLite"
    PREFIX = "sqlite"
    ERRORS = (sqlite3.Error,)

    def _after(
        self, conn: sqlite3.Connection, result: outcome.Outcome
    ) -> tuple[sqlite3.Connection, outcome.Outcome]:
        if conn.in_transaction:
            result = rolled_back(lambda: conn.execute("ROLLBACK"), self.ERRORS, result)
        return conn, result

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` inside one ``BEGIN IMMEDIATE`` transaction: all of it commits, or none."""
        return await self.run(lambda conn: transaction(conn, fn))


def transaction(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run ``fn(conn)`` inside one ``BEGIN IMMEDIATE`` transaction on the calling thread (the
    worker's side of ``SqliteConnection.write``): commit, or roll back on any exception,
    including a failed ``COMMIT``."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = fn(conn)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return result
