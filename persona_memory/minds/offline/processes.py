"""Worker processes for the offline reader: its pattern work beside the event loop's core.

The offline reader is pure Python CPU work. On a worker thread it still holds the GIL, so it
takes turns with the event loop on one core; in a worker process it runs on another.
``ReaderProcesses`` runs a module-level function in ``processes`` worker processes
(``concurrent.futures``, started by ``spawn``: never ``fork`` in a threaded trio program) and
waits for each answer without blocking the loop and without holding a thread: the future's
done-callback wakes the waiting task through trio's token.

Rules:
- What goes in and comes out is plain data (attrs values, dicts, strings, numbers, dates):
  it pickles, and the answer is the one the same call gives in this process (the reader is
  deterministic and keeps no state between calls beyond caches).
- An exception the function raises comes back as itself, as it would from a thread.
- A worker that dies (killed, out of memory, a crash in C) breaks the pool. The pool is
  replaced — once per break, however many jobs saw it — and each job that was in flight is
  sent again. A job that has broken a pool ``tries`` times fails with ``ReaderProcessDied``
  (a ``ProviderError``): the write path parks the slice and retries it later, as for any
  provider that broke. Nothing of the slice was written.
- A cancelled wait drops the job if no worker has started it; one that started runs to its
  end in the worker and its answer is thrown away.
- Workers start when the pool does (not at the first slice); ``ready`` says when the pool has
  answered its first job (a spawned worker takes about half a second to import the reader),
  so a caller may do the work itself until then. ``aclose`` shuts the workers down:
  each finishes the job in hand, queued jobs are dropped, and the call returns when every
  worker has exited.
- ``spawn`` imports the program's main module in each worker, as every ``multiprocessing``
  program does: a script that opens a memory must do so under ``if __name__ == "__main__":``.
"""

from __future__ import annotations

import functools
import logging
import multiprocessing
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

import trio

from ...errors import ReaderProcessDied

log = logging.getLogger(__name__)

T = TypeVar("T")


def _ready() -> None:
    """A worker's first job: the reader's modules are imported by unpickling this, so the
    first slice does not pay for them."""


class ReaderProcesses:
    """``processes`` worker processes for pure functions of plain data; close with ``aclose``.

    Args:
        processes: how many workers (at least 1).
        tries: how many times one job may be sent to a pool before a worker's death fails it.
    """

    def __init__(self, processes: int, *, tries: int = 2) -> None:
        if processes < 1:
            raise ValueError(f"ReaderProcesses needs at least one process, got {processes!r}")
        if tries < 1:
            raise ValueError(f"tries must be at least 1, got {tries!r}")
        self.processes = processes
        self.restarts = 0  # how many times a broken pool was replaced
        self._tries = tries
        self._closed = False
        self._warming: list[Future[None]] = []
        self._executor = self._start()

    def _start(self) -> ProcessPoolExecutor:
        executor = ProcessPoolExecutor(self.processes, mp_context=multiprocessing.get_context("spawn"))
        # Each submit starts one more worker, up to the count: they import while we go on.
        self._warming = [executor.submit(_ready) for _ in range(self.processes)]
        return executor

    @property
    def ready(self) -> bool:
        """Whether the current pool has answered its first jobs (its workers are up)."""
        return all(f.done() and not f.cancelled() and f.exception() is None for f in self._warming)

    def pids(self) -> tuple[int, ...]:
        """The process ids of the current workers (for tests and operators)."""
        return tuple(p.pid for p in (self._executor._processes or {}).values() if p.pid is not None)

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in a worker process; ``fn`` and its arguments must pickle
        (a module-level function and plain data).

        Raises:
            ReaderProcessDied: a worker died running it, ``tries`` times.
            RuntimeError: the pool was closed.
            Whatever ``fn`` raised.
        """
        call = functools.partial(fn, *args, **kwargs) if kwargs else None
        broke = 0
        while True:
            if self._closed:
                raise RuntimeError("the offline reader's worker processes were closed")
            executor = self._executor
            try:
                future = executor.submit(call) if call is not None else executor.submit(fn, *args)
            except BrokenProcessPool:  # it broke under another job; that job replaces it
                self._replace(executor)
                continue
            try:
                return await _result(future)
            except BrokenProcessPool as exc:
                broke += 1
                self._replace(executor)
                if broke >= self._tries:
                    raise ReaderProcessDied(
                        f"a worker process of the offline reader died running this job, {broke} "
                        f"time(s); the pool was restarted ({exc})"
                    ) from exc

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        if broken is not self._executor or self._closed:
            return  # already replaced by a job that saw the same break
        log.warning("a worker process of the offline reader died; restarting the pool of %d", self.processes)
        broken.shutdown(wait=False, cancel_futures=True)
        self.restarts += 1
        self._executor = self._start()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        executor = self._executor
        await trio.to_thread.run_sync(functools.partial(executor.shutdown, wait=True, cancel_futures=True))


async def _result(future: Future[T]) -> T:
    """The future's result, awaited from trio: its done-callback (run on the executor's
    thread) wakes this task; no thread waits on it."""
    token = trio.lowlevel.current_trio_token()
    done = trio.Event()

    def wake(_: Future[T]) -> None:
        try:
            token.run_sync_soon(done.set)
        except trio.RunFinishedError:
            pass

    future.add_done_callback(wake)
    try:
        await done.wait()
    finally:
        if not future.done():  # cancelled while waiting: drop the job if it has not started
            future.cancel()
    return future.result()
