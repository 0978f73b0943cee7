"""A blocking database connection owned by one dedicated thread, driven from trio.

This is aiosqlite's design carried over to trio, shared by both backends (``connection.py`` for
SQLite, ``postgres_connection.py`` for PostgreSQL): the driver blocks, so each connection lives
on its own worker thread and the trio side hands it whole units of work — a function of the
connection — through a queue. One unit is one thread hop, never one per statement, so a
transaction runs start to finish in the worker without the event loop in between.

Rules (each backend adds its own in its module):
- Only the worker thread touches the driver's connection.
- Units run in the order they were submitted.
- A unit that started is not interrupted: the awaiting task cannot be cancelled out of it
  (like ``trio.to_thread.run_sync``), so a write either commits or rolls back, never half-runs.
  A cancellation that arrives meanwhile is delivered at the caller's next checkpoint, after the
  unit's result was returned — the trio convention that an operation which raised
  ``Cancelled`` did not happen.
- After every unit the backend looks at the connection (``_after``): it rolls back what the
  unit left open, and may drop a broken connection, which is opened again before the next unit.
- The driver's own errors (``ERRORS``) become ``StorageError`` at this boundary, naming the
  backend (``LABEL``) and the connection.
- The worker answers every unit it accepted, even when a caller's trio run has ended, so no
  task waits forever on a unit that was silently dropped.
- The worker keeps nothing of a unit it answered: it hands the result over in a list that the
  caller empties, so the caller holds the last reference. A large result is freed by its
  caller when done with it — never by the worker, as it picks up a later unit, holding the GIL
  while that unit's caller waits (freeing a persona's rows is long enough to stall the next
  slice).
  Nor by trio's run loop: it wakes the caller with the list itself (taken out only in the
  caller's frame), because the loop holds the value a task was last woken with until it steps
  the next task — which would free a result in whatever task runs next (a human's rows read
  before a slice would be freed inside it, at that slice's cost).
"""

from __future__ import annotations

import queue
import threading
from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar, Generic, TypeVar

import outcome
import trio

from ..errors import StorageError

T = TypeVar("T")
C = TypeVar("C")

_STOP = object()


class ThreadedConnection(ABC, Generic[C]):
    """A connection on a dedicated thread; a backend subclasses it with its ``LABEL``,
    ``ERRORS``, thread name ``PREFIX`` and ``_after``. Close it with ``aclose``.

    The constructor blocks until ``connect`` has run on the new thread and raises what
    ``connect`` raised (the driver's errors translated into ``StorageError``); from trio, open
    it with ``trio.to_thread.run_sync`` (the backends' ``open_*`` functions do).
    """

    LABEL: ClassVar[str]
    PREFIX: ClassVar[str]
    ERRORS: ClassVar[tuple[type[BaseException], ...]]

    def __init__(self, name: str, connect: Callable[[], C]) -> None:
        self.name = name
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = False
        opened: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(
            target=self._serve, args=(connect, opened), name=f"{self.PREFIX}-{name}", daemon=True
        )
        self._thread.start()
        failure = opened.get()
        if failure is not None:
            self._thread.join()
            if isinstance(failure, self.ERRORS):
                raise StorageError(f"{self.LABEL} ({name} connection) could not open: {failure}") from failure
            raise failure

    @property
    def thread_id(self) -> int | None:
        """The id of the worker thread (``threading.get_ident()`` inside a unit)."""
        return self._thread.ident

    @abstractmethod
    def _after(self, conn: C, result: outcome.Outcome) -> tuple[C | None, outcome.Outcome]:
        """The connection to keep (``None``: open a new one before the next unit) and the
        unit's result, once the backend has looked at what the unit left behind."""

    def _close(self, conn: C) -> None:
        conn.close()  # type: ignore[attr-defined]

    def _serve(self, connect: Callable[[], C], opened: queue.SimpleQueue) -> None:
        try:
            conn: C | None = connect()
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
                        deliver([outcome.Error(exc)])
                        continue
                conn, result = self._after(conn, outcome.capture(fn, conn))
                handed = [result]
                del job, fn, result
                deliver(handed)  # the caller's side empties ``handed``: it holds the last reference
                del deliver, handed
        finally:
            if conn is not None:
                self._close(conn)

    async def run(self, fn: Callable[[C], T]) -> T:
        """Run ``fn(connection)`` on the worker thread and return its result.

        Once submitted, the unit runs to the end even if the caller is cancelled meanwhile;
        the cancellation then surfaces at the caller's next checkpoint.

        Raises:
            StorageError: the database failed, or the connection is closed.
        """
        if self._closed:
            raise StorageError(f"the {self.name} connection is closed")
        await trio.lowlevel.checkpoint_if_cancelled()
        task = trio.lowlevel.current_task()
        token = trio.lowlevel.current_trio_token()

        def deliver(handed: list[outcome.Outcome]) -> None:
            try:
                token.run_sync_soon(_reschedule_with, task, handed)
            except trio.RunFinishedError:
                pass  # the caller's trio run is over; nobody is waiting for this answer

        self._jobs.put((fn, deliver))
        handed = await trio.lowlevel.wait_task_rescheduled(lambda _: trio.lowlevel.Abort.FAILED)
        try:
            return handed.pop().unwrap()
        except self.ERRORS as exc:
            raise StorageError(f"{self.LABEL} ({self.name} connection): {exc}") from exc

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


def rolled_back(
    rollback: Callable[[], Any], errors: tuple[type[BaseException], ...], result: outcome.Outcome
) -> outcome.Outcome:
    """Roll back what a unit left open (``rollback()``).

    A unit that failed keeps its own error. A unit that returned normally but left its
    transaction open had a bug that would otherwise lose its writes silently: it fails.
    """
    try:
        rollback()
    except errors as exc:
        if isinstance(result, outcome.Value):
            return outcome.Error(exc)
        return result
    if isinstance(result, outcome.Value):
        return outcome.Error(
            StorageError("a unit of work returned with its transaction still open; it was rolled back")
        )
    return result


def _reschedule_with(task: trio.lowlevel.Task, handed: list[outcome.Outcome]) -> None:
    """Wake ``task`` with the list the worker ``handed`` the result over in; the task takes it
    out, so what trio keeps of the wake-up is an empty list."""
    trio.lowlevel.reschedule(task, outcome.Value(handed))
