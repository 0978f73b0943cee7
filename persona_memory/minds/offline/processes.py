"""Worker processes for the offline reader: its pattern work beside the event loop's core.

The offline reader is pure Python CPU work. On a worker thread it still holds the GIL, so it
takes turns with the event loop on one core; in a worker process it runs on another.
``ReaderProcesses`` runs a module-level function in ``processes`` worker processes, started
by ``multiprocessing``'s ``spawn`` (never ``fork`` in a threaded trio program). Each worker
has two pipes, one for jobs and one for answers, which the event loop reads and writes itself
(``trio.lowlevel.FdStream``): a job costs its pickling, one write and one wake-up of the loop
— no helper thread, so no GIL passed back and forth between threads per job
(``concurrent.futures.ProcessPoolExecutor`` runs two, and their hand-offs take the GIL from
the event loop on every job).

Rules:
- What goes in and comes out is plain data (attrs values, dicts, strings, numbers, dates):
  it pickles, and the answer is the one the same call gives in this process (the reader is
  deterministic and keeps no state between calls beyond caches).
- An exception the function raises comes back as itself, as it would from a thread (one that
  does not pickle comes back as a ``RuntimeError`` naming it).
- A job goes to the worker with the fewest jobs in flight, at most ``DEPTH`` each (a job
  waits for room); each worker does its jobs one after another, in the order sent.
- A worker that dies (killed, out of memory, a crash in C) is seen at once — its pipe ends
  — and is started again; each job it held is sent again. A job that has seen its worker die
  ``tries`` times fails with ``ReaderProcessDied`` (a ``ProviderError``): the write path parks
  the slice and retries it later, as for any provider that broke. Nothing of the slice was
  written.
- A job sent to a worker is waited for even if the caller is cancelled meanwhile (as
  ``trio.to_thread.run_sync`` does): the pipes never hold half an exchange, and the
  cancellation is delivered when the answer is in.
- Workers start when they are first wanted, not when the pool is made: at the first
  ``chosen()`` that would send its job to them (another caller is under way, or ``alone``),
  at the first ``run``, or at ``start()``. A worker's warm-up — a fresh interpreter under
  ``spawn`` importing everything, then its ``warm`` calls (the bundled embedder's table) —
  is heavy CPU work: started with the pool, it would compete for the cores with a persona's
  first load. A memory whose slices never overlap never starts them.
- A worker says it is up once it has imported the reader and made its ``warm`` calls, and
  ``ready`` says whether all have, without waiting: until then ``chosen()`` says "do it
  yourself", so a slice that comes while the workers start is read on this side, never held
  back for them. ``run`` on workers still starting waits for them to be up.
- The workers pay when the event loop has other work: a lone job (one 20-line slice) costs
  its pickling and two wake-ups across processes on top of the work, and waits for the
  worker to be scheduled, which on a loaded machine can outweigh the slice's own work. So
  a caller asks ``chosen()``: the workers when they are up and another caller is under way,
  else "do it yourself" (``alone=True``: the workers whenever they are up; for tests).
- ``aclose`` closes the pipes (a worker that is up and idle ends when its job pipe does) and
  terminates a worker that is still starting, or still in a job, at once: closing never waits
  for a worker to finish importing. Every worker has exited when it returns.
- ``spawn`` imports the program's main module in each worker, as every ``multiprocessing``
  program does: a script that opens a memory must do so under ``if __name__ == "__main__":``.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import multiprocessing
import os
import pickle
import signal
import struct
import sys
from collections.abc import Callable, Iterator
from typing import Any, NoReturn, TypeVar

import trio

from ...errors import ReaderProcessDied

log = logging.getLogger(__name__)

T = TypeVar("T")

DEPTH = 4
"""At most this many jobs in flight per worker: it starts the next the moment it has answered
one, instead of waiting for the event loop to come round with it."""

GRACE = 0.2
"""Seconds a worker that is up and idle is given to exit once its job pipe closes, before it
is terminated (it leaves as soon as it reads the pipe's end: ``_leave``)."""

_HEADER = struct.Struct("!i")  # multiprocessing.connection's frame: a signed 32-bit length
_MAX_FRAME = 0x7FFFFFFF  # a longer one has another header there: never sent either way


def _serve(jobs: Any, answers: Any, warm: tuple[Callable[[], object], ...] = ()) -> None:
    """A worker: warm up, say it is up, then answer each job until the job pipe ends (or the
    answer pipe does: the parent is gone), and leave at once (``_leave``). Ctrl-C reaches the
    whole process group; the worker leaves it to its parent, which closes the pipes — so it
    ignores it, and it was started with it blocked (``_started``) so that it is not killed
    while it imports either."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    from . import extract  # noqa: F401  (the reader's modules, imported before saying so)

    for fn in warm:
        try:
            fn()
        except Exception:  # a job that needs it meets the same failure and reports it
            pass

    try:
        answers.send_bytes(b"")
        while True:
            try:
                data = jobs.recv_bytes()
            except EOFError:
                _leave()
            try:
                fn, args, kwargs = pickle.loads(data)
                outcome = (True, fn(*args, **kwargs))
            except Exception as exc:
                outcome = (False, exc)
            try:
                payload = pickle.dumps(outcome, pickle.HIGHEST_PROTOCOL)
            except Exception as exc:
                payload = pickle.dumps((False, RuntimeError(f"the answer could not be sent back: {exc!r}")))
            answers.send_bytes(payload)
    except OSError:  # a pipe broke: the parent closed it or is gone
        _leave()


def _leave() -> NoReturn:
    """End the worker now, skipping the interpreter's teardown: the worker keeps nothing that
    needs it (no file, no state; its answers went through the pipe), and tearing down the
    reader's and the embedder's modules would keep the parent's close waiting."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def _started(process: Any) -> None:
    """Start ``process`` with SIGINT blocked in this thread: the mask is inherited across
    ``spawn``'s exec, so a Ctrl-C sent to the process group while the worker imports stays
    pending until ``_serve`` ignores it (discarding it). This thread's SIGINT, if one came
    meanwhile, is delivered when the mask is put back."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        process.start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class _Died(Exception):
    """The worker's pipe ended: the process is gone."""


_GONE = object()  # what a job waiting on a worker that died gets


class _Job:
    __slots__ = ("answer",)

    def __init__(self) -> None:
        self.answer: Any = None


class _Worker:
    """One worker process and the two pipe ends this side holds.

    Jobs are written to the job pipe as they come (``DEPTH`` at most, ``ReaderProcesses``
    sees to it), so the worker
    takes the next one as soon as it has answered one, without waiting for the event loop to
    come round; the answers come back in the order of the jobs. Whoever waits for an answer
    reads the answer pipe in turn (``_reading``) and hands each answer to its job, first in
    first out, until its own is in.
    """

    def __init__(self, context: Any, warm: tuple[Callable[[], object], ...] = ()) -> None:
        job_reader, job_writer = context.Pipe(duplex=False)
        answer_reader, answer_writer = context.Pipe(duplex=False)
        self.process = context.Process(
            target=_serve, args=(job_reader, answer_writer, warm), name="persona-memory-reader", daemon=True
        )
        _started(self.process)
        job_reader.close()
        answer_writer.close()
        self.jobs = trio.lowlevel.FdStream(os.dup(job_writer.fileno()))
        self.answers = trio.lowlevel.FdStream(os.dup(answer_reader.fileno()))
        job_writer.close()
        answer_reader.close()
        self.up = False
        self.dead = False
        self.waiting: collections.deque[_Job] = collections.deque()  # sent, not yet answered
        self._sending = trio.Lock()
        self._reading = trio.Lock()
        self._buffer = bytearray()

    def poll_up(self) -> bool:
        """Whether the worker has said it is up, without waiting (its 4-byte hello arrives
        whole: a pipe write of at most PIPE_BUF bytes is atomic)."""
        if not self.up and not self.dead and not self._reading.locked():
            try:
                hello = os.read(self.answers.fileno(), _HEADER.size)
            except (BlockingIOError, OSError):
                return False
            if hello == _HEADER.pack(0):
                self.up = True
            elif not hello:
                self.dead = True
                log.warning(
                    "a worker process of the offline reader ended before it was up (exit code %s); "
                    "the reader works on a thread meanwhile. A script that opens a memory must do "
                    "so under `if __name__ == \"__main__\":`", self.process.exitcode,
                )
            else:  # never: a worker's first frame is its hello
                self._buffer += hello
        return self.up

    async def exchange(self, payload: bytes) -> bytes:
        """Send one job and return its answer's bytes (shielded by the caller).

        Raises:
            _Died: the worker's pipes ended (it died before or while doing the job).
        """
        job = _Job()
        try:
            async with self._sending:
                if self.dead:
                    raise _Died("the worker had died")
                self.waiting.append(job)
                await self.jobs.send_all(_HEADER.pack(len(payload)) + payload)
            while job.answer is None:
                async with self._reading:
                    if job.answer is not None:
                        break
                    if self.dead:
                        raise _Died("the worker died")
                    if not self.up:
                        if await self._frame() != b"":
                            raise _Died("the worker's first frame was not its hello")
                        self.up = True
                    self.waiting.popleft().answer = await self._frame()
        except (_Died, trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            self.dead = True
            for other in self.waiting:  # every job sent to it is lost with it
                other.answer = _GONE
            self.waiting.clear()
            raise _Died(str(exc)) from exc
        if job.answer is _GONE:
            raise _Died("the worker died")
        return job.answer

    async def _frame(self) -> bytes:
        buffer = self._buffer
        while True:
            if len(buffer) >= _HEADER.size:
                (size,) = _HEADER.unpack_from(buffer)
                if size < 0:
                    raise _Died("the worker sent an answer of 2 GiB or more")
                end = _HEADER.size + size
                if len(buffer) >= end:
                    frame = bytes(buffer[_HEADER.size:end])
                    del buffer[:end]
                    return frame
            chunk = await self.answers.receive_some(1 << 16)
            if not chunk:
                raise _Died("the answer pipe ended")
            buffer += chunk

    async def aclose(self) -> None:
        """Close the pipes and end the process, never waiting for it to finish starting.

        A worker that is up with no job in flight ends by itself when its job pipe closes,
        and is given ``GRACE`` seconds to. One that is still starting cannot read that pipe
        until it has imported the reader, and one in a job (only when the pool closes under
        it) would finish the job first: both are terminated at once. Ending a worker early
        loses nothing: it holds no state, and nothing it computes is written anywhere until
        this side has its answer — a job whose worker ends fails, and its slice is written
        later or not at all, never in part or twice.
        """
        idle = self.poll_up() and not self.waiting  # read before the answer pipe closes
        for stream in (self.jobs, self.answers):
            try:
                await stream.aclose()
            except (trio.ClosedResourceError, OSError):
                pass
        await trio.to_thread.run_sync(_end, self.process, GRACE if idle else 0.0)


def _end(process: Any, grace: float) -> None:
    """Wait ``grace`` seconds for ``process`` to exit, then terminate it, then kill it if
    SIGTERM did not end it within ``GRACE`` (it never should: the worker leaves SIGTERM at
    its default)."""
    process.join(grace)
    if process.exitcode is None:
        process.terminate()
        process.join(GRACE)
    if process.exitcode is None:
        process.kill()
        process.join()


class ReaderProcesses:
    """``processes`` worker processes for pure functions of plain data; close with ``aclose``.

    Args:
        processes: how many workers (at least 1).
        tries: how many times one job may see its worker die before it fails.
        alone: ``chosen()`` picks the workers for a lone job too (tests).
        warm: calls each worker makes before it says it is up (loading what its jobs will
            use, e.g. the bundled embedder's table), so no job waits for them; one that
            fails is left to the job that needs it to report.
    """

    def __init__(
        self, processes: int, *, tries: int = 2, alone: bool = False, warm: tuple[Callable[[], object], ...] = ()
    ) -> None:
        if processes < 1:
            raise ValueError(f"ReaderProcesses needs at least one process, got {processes!r}")
        if tries < 1:
            raise ValueError(f"tries must be at least 1, got {tries!r}")
        self.processes = processes
        self.restarts = 0  # how many workers were started again after dying
        self.callers = 0  # callers inside ``chosen()``: work under way that could come here
        self._alone = alone
        self._tries = tries
        self._closed = False
        self._context = multiprocessing.get_context("spawn")
        self._warm = tuple(warm)
        self._all: list[_Worker] = []  # empty until ``start``
        self._slots = trio.Semaphore(processes * DEPTH)

    @staticmethod
    def supported() -> bool:
        """Whether this platform has what the workers need (POSIX pipes trio can wait on)."""
        return hasattr(trio.lowlevel, "FdStream") and hasattr(signal, "pthread_sigmask")

    @property
    def started(self) -> bool:
        """Whether the workers were started (``start``); they may still be warming up."""
        return bool(self._all)

    @property
    def ready(self) -> bool:
        """Whether the workers were started and every one has said it is up (imported the
        reader). Does not wait."""
        return bool(self._all) and all(w.poll_up() for w in self._all)

    def start(self) -> None:
        """Start the workers now, unless they were started already; does not wait for them
        to be up (``ready``). ``chosen`` and ``run`` call it when the workers are first wanted.

        Raises:
            RuntimeError: the pool was closed.
        """
        if self._closed:
            raise RuntimeError("the offline reader's worker processes were closed")
        if not self._all:
            self._all = [_Worker(self._context, self._warm) for _ in range(self.processes)]

    @contextlib.contextmanager
    def chosen(self) -> Iterator[bool]:
        """Count the caller in while it works; yields whether its job should go to the
        workers (``run``): they are up and another caller is under way (or ``alone``).
        The first time they would be chosen, they are started (the job is done on this side
        while they warm up)."""
        self.callers += 1
        try:
            wanted = self._alone or self.callers > 1
            if wanted and not self._all and not self._closed:
                self.start()
            yield wanted and self.ready
        finally:
            self.callers -= 1

    def pids(self) -> tuple[int, ...]:
        """The process ids of the current workers (for tests and operators); none before
        ``start``."""
        return tuple(w.process.pid for w in self._all if w.process.pid is not None)

    async def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in a worker process; ``fn`` and its arguments must pickle
        (a module-level function and plain data). Starts the workers if they were not, and
        waits for the one it chose to be up.

        Raises:
            ReaderProcessDied: the worker died running it, ``tries`` times.
            RuntimeError: the pool was closed.
            Whatever ``fn`` raised.
        """
        payload = pickle.dumps((fn, args, kwargs), pickle.HIGHEST_PROTOCOL)
        if len(payload) >= _MAX_FRAME:
            raise ValueError(f"a job of {len(payload):,} bytes is too large to send to a worker")
        for attempt in range(1, self._tries + 1):
            self.start()  # raises once the pool is closed
            async with self._slots:
                worker = min(self._all, key=lambda w: len(w.waiting))
                try:
                    with trio.CancelScope(shield=True):  # never leave half an exchange in a pipe
                        answer = await worker.exchange(payload)
                except _Died as exc:
                    await self._replace(worker, exc)
                    if self._closed:
                        raise RuntimeError("the offline reader's worker processes were closed") from None
                    if attempt == self._tries:
                        raise ReaderProcessDied(
                            f"a worker process of the offline reader died running this job, "
                            f"{attempt} time(s); it was started again ({exc})"
                        ) from None
                    continue
            await trio.lowlevel.checkpoint_if_cancelled()
            ok, value = pickle.loads(answer)
            if ok:
                return value
            raise value
        raise AssertionError("unreachable")

    async def _replace(self, dead: _Worker, why: Exception) -> None:
        """Start a worker in place of ``dead`` (once, however many of its jobs saw it die;
        never once the pool is closed)."""
        if self._closed or dead not in self._all:
            return
        self._all[self._all.index(dead)] = _Worker(self._context, self._warm)  # before any checkpoint
        self.restarts += 1
        log.warning("a worker process of the offline reader died (%s); started it again", why)
        with trio.CancelScope(shield=True):
            await dead.aclose()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                for worker in self._all:
                    nursery.start_soon(worker.aclose)
