"""PostgreSQL connections, each owned by one dedicated thread, and a pool of them, driven from trio.

The twin of ``connection.py``. psycopg 3's async API runs on asyncio only, so from trio we
drive its blocking API the way we drive ``sqlite3``: each connection lives on its own worker
thread and the trio side hands it whole units of work — a function of the connection —
through a queue. One unit is one thread hop, never one per statement, so a transaction runs
start to finish in the worker without the event loop in between. A pool holds a configured
number of such connections and lends a free one to each unit.

Rules:
- Only the worker thread touches its ``psycopg.Connection``. Connections are in autocommit
  mode, as ``connection.py``'s SQLite connections are (``isolation_level=None``): a unit that
  only reads runs each statement on its own snapshot; ``write()`` — or a unit's own
  ``BEGIN`` … ``COMMIT`` — makes one transaction of several.
- Units on one connection run in the order they were submitted. The pool promises no order
  between units that it lends different connections.
- A unit that started is not interrupted: the awaiting task cannot be cancelled out of it, so
  a write either commits or rolls back, never half-runs. A cancellation that arrives meanwhile
  is delivered at the caller's next checkpoint, after the unit's result was returned. Waiting
  for a free connection of the pool is an ordinary wait: cancelled there, nothing was sent.
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
- The worker answers every unit it accepted, even when a caller's trio run has ended, so no
  task waits forever on a unit that was silently dropped.
"""

from __future__ import annotations

import queue
import threading
from contextlib import asynccontextmanager
from typing import AsyncIterator, Callable, TypeVar

import outcome
import psycopg
import trio
from psycopg.pq import TransactionStatus

from ..errors import InvalidInput, StorageError

T = TypeVar("T")

Connect = Callable[[], psycopg.Connection]

_STOP = object()
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


class PostgresConnection:
    """A connection on a dedicated thread. Create with ``open_postgres``; close with ``aclose``.

    The constructor blocks until ``connect`` has run on the new thread and raises what
    ``connect`` raised (``psycopg.Error`` translated into ``StorageError``); from trio, call
    ``open_postgres`` instead.
    """

    def __init__(self, name: str, connect: Connect) -> None:
        self.name = name
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = False
        opened: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(
            target=self._serve, args=(connect, opened), name=f"postgres-{name}", daemon=True
        )
        self._thread.start()
        failure = opened.get()
        if failure is not None:
            self._thread.join()
            if isinstance(failure, psycopg.Error):
                raise StorageError(f"PostgreSQL ({name} connection) could not open: {failure}") from failure
            raise failure

    @property
    def thread_id(self) -> int | None:
        """The id of the worker thread (``threading.get_ident()`` inside a unit)."""
        return self._thread.ident

    def _serve(self, connect: Connect, opened: queue.SimpleQueue) -> None:
        try:
            conn: psycopg.Connection | None = connect()
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
                if conn is None:
                    try:
                        conn = connect()
                    except BaseException as exc:
                        deliver(outcome.Error(exc))
                        continue
                result = outcome.capture(fn, conn)
                if conn.broken or conn.closed:
                    conn.close()
                    conn = None  # connect again before the next unit
                elif conn.info.transaction_status in _OPEN:
                    result = _rolled_back(conn, result)
                deliver(result)
        finally:
            if conn is not None:
                conn.close()

    async def run(self, fn: Callable[[psycopg.Connection], T]) -> T:
        """Run ``fn(connection)`` on the worker thread and return its result.

        Once submitted, the unit runs to the end even if the caller is cancelled meanwhile;
        the cancellation then surfaces at the caller's next checkpoint.

        Raises:
            StorageError: PostgreSQL failed, the server dropped the connection, or the
                connection is closed.
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
        except psycopg.Error as exc:
            raise StorageError(f"PostgreSQL ({self.name} connection): {exc}") from exc

    async def write(self, fn: Callable[[psycopg.Connection], T]) -> T:
        """Run ``fn`` inside one ``BEGIN``/``COMMIT`` transaction: all of it commits, or none."""
        return await self.run(_transaction(fn))

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


def _rolled_back(conn: psycopg.Connection, result: outcome.Outcome) -> outcome.Outcome:
    """Roll back what a unit left open.

    A unit that failed keeps its own error. A unit that returned normally but left its
    transaction open had a bug that would otherwise lose its writes silently: it fails.
    """
    try:
        conn.execute("ROLLBACK")
    except psycopg.Error as exc:
        if isinstance(result, outcome.Value):
            return outcome.Error(exc)
        return result
    if isinstance(result, outcome.Value):
        return outcome.Error(
            StorageError("a unit of work returned with its transaction still open; it was rolled back")
        )
    return result
