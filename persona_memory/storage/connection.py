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
- ``write()`` wraps the unit in ``BEGIN IMMEDIATE``/``COMMIT``, rolling back on any exception.
- ``sqlite3.Error`` is translated into ``StorageError`` at this boundary.
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


class SqliteConnection:
    """A connection on a dedicated thread. Create with ``open_sqlite``; close with ``aclose``."""

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
            raise failure

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
                deliver(outcome.capture(fn, conn))
        finally:
            conn.close()

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(connection)`` on the worker thread and return its result.

        Raises:
            StorageError: SQLite failed, or the connection is closed.
        """
        if self._closed:
            raise StorageError(f"the {self.name} connection is closed")
        await trio.lowlevel.checkpoint_if_cancelled()
        task = trio.lowlevel.current_task()
        token = trio.lowlevel.current_trio_token()

        def deliver(result: outcome.Outcome) -> None:
            token.run_sync_soon(trio.lowlevel.reschedule, task, result)

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
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

        return await self.run(transaction)

    async def aclose(self) -> None:
        """Finish the units already queued, then close the connection and end the thread."""
        if self._closed:
            return
        self._closed = True
        self._jobs.put(_STOP)
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(self._thread.join)
