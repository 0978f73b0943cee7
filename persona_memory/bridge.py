"""The memory for programs that are not trio: ``open_memory_in_asyncio`` and
``open_memory_in_thread``.

The memory runs on trio, in a thread of its own that this module starts and stops; the program
keeps its own event loop, or none::

    async with pm.open_memory_in_asyncio(settings) as memory:      # an asyncio program
        await memory.send(pm.RoomOpened(...))
        note = await memory.recall("warren", "r1", text)

    with pm.open_memory_in_thread(settings) as memory:             # plain threads
        memory.send(pm.RoomOpened(...))                            # blocking, from any thread
        note = await memory.asyncio.recall("warren", "r1", text)   # from an asyncio task

Rules:
- Every public call of ``Memory`` is here twice, with the same name, arguments, results and
  errors (``bridge_calls``): on ``AsyncioMemory`` as a coroutine for any asyncio loop, which
  waits without blocking that loop, and on ``ThreadedMemory`` as a blocking method
  (``ThreadedMemory.asyncio`` is its ``AsyncioMemory``).
- ``open_memory_in_asyncio`` opens and closes the memory on a worker thread of the loop
  (``run_in_executor``): entering and leaving never block the loop, so it fits an ASGI
  lifespan. ``async with open_memory_in_thread(...)`` does the same and yields the
  ``ThreadedMemory``; its plain ``with`` blocks the thread that enters and leaves it.
- Calls run on the memory's trio thread. Calls the program makes one after another (each
  returned before the next) run in that order; calls made concurrently (``asyncio.gather``,
  several threads) run concurrently there, in no set order — as concurrent trio tasks do. One
  persona's writes are still serialized by its actor.
- Leaving waits for the calls already started, then closes the memory as ``open_memory``
  does — intake closes, queued writes land — and then the thread ends. An error raised while
  opening (a bad config, a file that is not ours) or while closing is raised in the caller.
- Cancelled while entering, the asyncio forms close the memory as soon as it has opened, in its
  thread; cancelled while leaving, the close still runs to its end there. Neither waits.
- A blocking call made from the memory's own thread, or after the memory closed, is refused with
  ``MemoryClosed`` or trio's "call it from a thread" error; the asyncio form cancelled in the
  caller still runs to its end in the memory (a write is never cut in half).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any

import trio

from .bridge_calls import AsyncioMemory, ThreadedMemory
from .errors import MemoryClosed
from .memory import Memory, open_memory
from .settings import Settings

log = logging.getLogger(__name__)


class _TrioThread:
    """The thread that runs ``open_memory`` under ``trio.run`` until told to close."""

    def __init__(self, settings: Settings, adapters: dict[str, Any]) -> None:
        self._settings = settings
        self._adapters = adapters
        self._ready = threading.Event()
        self._stop_asked = False
        self._failure: BaseException | None = None
        self.memory: Memory | None = None
        self.token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._close: trio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="persona-memory", daemon=True)

    def start(self) -> None:
        """Open the memory in its thread; return once it is open (or raise why it is not)."""
        self._thread.start()
        self._ready.wait()
        if self._failure is not None:
            self._thread.join()
            raise self._failure

    def ask_to_stop(self) -> None:
        """Close the memory without waiting: now if it is open, else as soon as it has opened."""
        self._stop_asked = True  # before the token is read: ``_main`` sets it, then reads this
        token, close = self.token, self._close
        if token is not None and close is not None:
            try:
                token.run_sync_soon(close.set)
            except trio.RunFinishedError:
                pass

    def stop(self) -> None:
        """Close the memory and wait for its thread to end; raise what closing raised."""
        self.ask_to_stop()
        self._thread.join()
        if self._failure is not None:
            raise self._failure

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as error:  # handed to the caller's thread, never lost in this one
            self._failure = _single(error)
        finally:
            self._ready.set()

    async def _main(self) -> None:
        self._close = trio.Event()
        async with open_memory(self._settings, **self._adapters) as memory:
            async with trio.open_nursery() as nursery:
                self.memory, self._nursery = memory, nursery
                self.token = trio.lowlevel.current_trio_token()
                self._ready.set()
                if not self._stop_asked:
                    await self._close.wait()
                # Calls already started finish before the memory closes: none is cut in half.

    def call(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """``Memory.<name>(*args, **kwargs)`` on the memory's thread, waiting in this one."""
        memory, token = self._live()
        try:
            return trio.from_thread.run(
                functools.partial(getattr(memory, name), *args, **kwargs), trio_token=token
            )
        except trio.RunFinishedError:
            raise MemoryClosed("the memory's thread has stopped; open it again") from None

    async def wait(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """``Memory.<name>(*args, **kwargs)`` on the memory's thread, awaited in asyncio."""
        return await asyncio.wrap_future(self.submit(name, *args, **kwargs))

    def submit(self, name: str, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        """Start the call on the trio thread; its outcome lands in the returned future."""
        memory, token = self._live()
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        bound = functools.partial(getattr(memory, name), *args, **kwargs)

        async def run() -> None:
            try:
                result = await bound()
            except Exception as error:
                _settle(future.set_exception, error)
            else:
                _settle(future.set_result, result)

        assert self._nursery is not None
        try:
            trio.from_thread.run_sync(self._nursery.start_soon, run, trio_token=token)
        except trio.RunFinishedError:
            raise MemoryClosed("the memory's thread has stopped; open it again") from None
        return future

    def _live(self) -> tuple[Memory, trio.lowlevel.TrioToken]:
        if self.memory is None or self.token is None or self._close is None or self._close.is_set():
            raise MemoryClosed("the memory was closed: call it inside the block that opened it")
        return self.memory, self.token


def _settle(outcome: Callable[[Any], None], value: Any) -> None:
    """Hand the outcome over, unless the asyncio caller gave up waiting (cancelled)."""
    try:
        outcome(value)
    except concurrent.futures.InvalidStateError:
        pass


def _single(error: BaseException) -> BaseException:
    """The one error a nursery wrapped in a group, so the caller sees what went wrong."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


async def _start_off_loop(runner: _TrioThread) -> None:
    """``runner.start()`` on a worker thread of the running loop. Cancelled meanwhile, the
    memory is closed as soon as it has opened; the cancellation goes through at once."""
    opening = asyncio.get_running_loop().run_in_executor(None, runner.start)
    try:
        await asyncio.shield(opening)
    except asyncio.CancelledError:
        runner.ask_to_stop()
        opening.add_done_callback(functools.partial(_log_failure, "opening"))
        raise


async def _stop_off_loop(runner: _TrioThread) -> None:
    """``runner.stop()`` on a worker thread of the running loop. Cancelled meanwhile, the close
    still runs to its end in that thread; the cancellation goes through at once."""
    closing = asyncio.get_running_loop().run_in_executor(None, runner.stop)
    try:
        await asyncio.shield(closing)
    except asyncio.CancelledError:
        closing.add_done_callback(functools.partial(_log_failure, "closing"))
        raise


def _log_failure(what: str, done: asyncio.Future[None]) -> None:
    """Log what an opening or closing nobody waits for any more raised (else it is lost)."""
    if not done.cancelled() and done.exception() is not None:
        log.error("%s the memory failed after its caller was cancelled", what, exc_info=done.exception())


class _OpenInThread:
    """What ``open_memory_in_thread`` returns: a context manager for ``with`` (blocking) and
    for ``async with`` (entered and left off the loop). Use it once."""

    def __init__(self, settings: Settings, adapters: dict[str, Any]) -> None:
        self._runner = _TrioThread(settings, adapters)

    def __enter__(self) -> ThreadedMemory:
        self._runner.start()
        return ThreadedMemory(self._runner)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._runner.stop()

    async def __aenter__(self) -> ThreadedMemory:
        await _start_off_loop(self._runner)
        return ThreadedMemory(self._runner)

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await _stop_off_loop(self._runner)


def open_memory_in_thread(settings: Settings, **adapters: Any) -> _OpenInThread:
    """Run the memory on trio in its own thread for the ``with`` (or ``async with``) block,
    and yield its calls as blocking methods (``ThreadedMemory``; ``.asyncio`` as coroutines).

    ``with`` blocks the entering thread while the memory opens and closes; ``async with``
    does both on a worker thread of the running asyncio loop, which keeps running.

    Args:
        settings: from ``load_settings``.
        adapters: ``clock=``, ``embedder=``, ``mind=`` … exactly as ``open_memory`` takes them.

    Raises:
        whatever ``open_memory`` raises while opening or closing, in the caller's thread.
    """
    return _OpenInThread(settings, adapters)


@asynccontextmanager
async def open_memory_in_asyncio(settings: Settings, **adapters: Any) -> AsyncIterator[AsyncioMemory]:
    """Run the memory on trio in its own thread for the ``async with`` block, and yield its
    calls as coroutines (``AsyncioMemory``). Opening and closing run on a worker thread of the
    running loop: the loop never waits for them (an ASGI app's lifespan can hold it).

    Args:
        settings: from ``load_settings``.
        adapters: ``clock=``, ``embedder=``, ``mind=`` … exactly as ``open_memory`` takes them.

    Raises:
        whatever ``open_memory`` raises while opening or closing, in the caller's task.
    """
    runner = _TrioThread(settings, adapters)
    await _start_off_loop(runner)
    try:
        yield AsyncioMemory(runner)
    finally:
        await _stop_off_loop(runner)
