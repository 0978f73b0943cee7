"""One SQLite connection, owned by one dedicated thread, driven from trio.

This is aiosqlite's design carried over to trio: the stdlib ``sqlite3`` module blocks, so each
connection lives on its own worker thread and the trio side hands it whole units of work — a
function of the connection — through a queue. One unit is one thread hop, never one per
statement, so a write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``) runs start to finish in the
worker without the event loop in between.

Rules:
- Only the worker thread touches the ``sqlite3.Connection``.
- Units run in the order they were submitted.
- A unit that started is not interrupted: the awaiting task cannot be cancelled out of it
  (like ``trio.to_thread.run_sync``), so a write either commits or rolls back, never half-runs.
  A cancellation that arrives meanwhile is delivered at the caller's next checkpoint, after the
  unit's result was returned — the trio convention that an operation which raised
  ``Cancelled`` did not happen.
- A unit never leaves a transaction open behind it: the worker rolls back whatever a unit left
  uncommitted, so the next unit starts clean (and a reader never pins an old snapshot); a unit
  that returned normally with its transaction open fails with ``StorageError``.
- ``write()`` wraps the unit in ``BEGIN IMMEDIATE``/``COMMIT``, rolling back on any exception,
  including a failed ``COMMIT``.
- ``sqlite3.Error`` is translated into ``StorageError`` at this boundary.
- The worker answers every unit it accepted, even when a caller's trio run has ended, so no
  task waits forever on a unit that was silently dropped.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
from typing import Callable, TypeVar

import outcome
import trio

from ..errors import StorageError

T = TypeVar("T")

_STOP = object()


async def open_sqlite(name: str, connect: Callable[[], sqlite3.Connection]) -> SqliteConnection:
    """Start a worker thread, run ``connect`` on it, and return the connection.

    The caller closes it with ``aclose``. ``name`` appears in errors and in the thread's name.

    Raises:
        StorageError: ``connect`` failed in SQLite. Anything else it raised comes out as is.
    """
    return await trio.to_thread.run_sync(SqliteConnection, name, connect)


class SqliteConnection:
    """A connection on a dedicated thread. Create with ``open_sqlite``; close with ``aclose``.

    The constructor blocks until ``connect`` has run on the new thread and raises what
    ``connect`` raised (``sqlite3.Error`` translated into ``StorageError``); from trio, call
    ``open_sqlite`` instead.
    """

    def __init__(self, name: str, connect: Callable[[], sqlite3.Connection]) -> None:
        self.name = name
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = False
        opened: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(
            target=self._serve, args=(connect, opened), name=f"sqlite-{name}", daemon=True
        )
        self._thread.start()
        failure = opened.get()
        if failure is not None:
            self._thread.join()
            if isinstance(failure, sqlite3.Error):
                raise StorageError(f"SQLite ({name} connection) could not open: {failure}") from failure
            raise failure

    @property
    def thread_id(self) -> int | None:
        """The id of the worker thread (``threading.get_ident()`` inside a unit)."""
        return self._thread.ident

    def _serve(self, connect: Callable[[], sqlite3.Connection], opened: queue.SimpleQueue) -> None:
        try:
            conn = connect()
        except BaseException as exc:  # reported to the opener, which raises it
            opened.put(exc)
            return
        opened.put(None)
        try:
            while True:
                job = self._jobs.get()
                if job is _STOP:
                    return
                fn, deliver = job
                result = outcome.capture(fn, conn)
                if conn.in_transaction:
                    result = _rolled_back(conn, result)
                deliver(result)
        finally:
            conn.close()

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(connection)`` on the worker thread and return its result.

        Once submitted, the unit runs to the end even if the caller is cancelled meanwhile;
        the cancellation then surfaces at the caller's next checkpoint.

        Raises:
            StorageError: SQLite failed, or the connection is closed.
        """
        if self._closed:
            raise StorageError(f"the {self.name} connection is closed")
        await trio.lowlevel.checkpoint_if_cancelled()
        task = trio.lowlevel.current_task()
        token = trio.lowlevel.current_trio_token()

        def deliver(result: outcome.Outcome) -> None:
            try:
                token.run_sync_soon(trio.lowlevel.reschedule, task, result)
            except trio.RunFinishedError:
                pass  # the caller's trio run is over; nobody is waiting for this answer

        self._jobs.put((fn, deliver))
        try:
            return await trio.lowlevel.wait_task_rescheduled(
                lambda _: trio.lowlevel.Abort.FAILED
            )
        except sqlite3.Error as exc:
            raise StorageError(f"SQLite ({self.name} connection): {exc}") from exc

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` inside one ``BEGIN IMMEDIATE`` transaction: all of it commits, or none."""

        def transaction(conn: sqlite3.Connection) -> T:
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return result

        return await self.run(transaction)

    async def aclose(self) -> None:
        """Finish the units already queued, then close the connection and end the thread.

        Idempotent; every caller returns only once the thread has ended. Shielded: the
        queued units are finished even when the caller is being cancelled.
        """
        if not self._closed:
            self._closed = True
            self._jobs.put(_STOP)
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(self._thread.join)


def _rolled_back(conn: sqlite3.Connection, result: outcome.Outcome) -> outcome.Outcome:
    """Roll back what a unit left open.

    A unit that failed keeps its own error. A unit that returned normally but left its
    transaction open had a bug that would otherwise lose its writes silently: it fails.
    """
    try:
        conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        if isinstance(result, outcome.Value):
            return outcome.Error(exc)
        return result
    if isinstance(result, outcome.Value):
        return outcome.Error(
            StorageError("a unit of work returned with its transaction still open; it was rolled back")
        )
    return result
