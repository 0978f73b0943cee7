"""``open_memory_in_thread``: the memory for programs that are not trio (asyncio, or plain threads).

The memory runs on trio, in a thread of its own that this module starts and stops; the program
keeps its own event loop, or none::

    with pm.open_memory_in_thread(settings) as memory:
        memory.send(pm.RoomOpened(...))                       # blocking, from any thread
        block = memory.block("warren", "r1")
        note = await memory.asyncio.recall("warren", "r1", text)   # from an asyncio task

Rules:
- Every call of ``Memory`` (``CALLS``) is here twice, with the same name, arguments, results
  and errors: on ``ThreadedMemory`` as a blocking method, and on ``ThreadedMemory.asyncio`` as a
  coroutine for any asyncio loop, which waits without blocking that loop.
- Calls run on the memory's trio thread. Calls the program makes one after another (each
  returned before the next) run in that order; calls made concurrently (``asyncio.gather``,
  several threads) run concurrently there, in no set order — as concurrent trio tasks do. One
  persona's writes are still serialized by its actor.
- Leaving the ``with`` block waits for the calls already started, then closes the memory as
  ``open_memory`` does — intake closes, queued writes land — and then the thread ends. An error raised while opening (a bad config, a file
  that is not ours) or while closing is raised in the caller's thread.
- A blocking call made from the memory's own thread, or after the memory closed, is refused with
  ``MemoryClosed`` or trio's "call it from a thread" error; the asyncio form cancelled in the
  caller still runs to its end in the memory (a write is never cut in half).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import trio

from .errors import MemoryClosed
from .memory import Memory, open_memory
from .settings import Settings

CALLS = (
    "post_line",
    "send",
    "block",
    "built_block",
    "recall",
    "drain",
    "set_memory_note",
    "set_memory_on",
    "set_muted",
    "memories_about",
    "delete_memory",
    "user_controls",
    "personas_for",
    "evidence",
    "meter",
    "private_block",
    "room_facts",
    "display_names",
    "clear_memories",
    "export",
    "notices",
    "undo",
    "sweep",
    "readiness",
)


class _TrioThread:
    """The thread that runs ``open_memory`` under ``trio.run`` until told to close."""

    def __init__(self, settings: Settings, adapters: dict[str, Any]) -> None:
        self._settings = settings
        self._adapters = adapters
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self.memory: Memory | None = None
        self.token: trio.lowlevel.TrioToken | None = None
        self._nursery: trio.Nursery | None = None
        self._close: trio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="persona-memory", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait()
        if self._failure is not None:
            self._thread.join()
            raise self._failure

    def stop(self) -> None:
        if self.token is not None and self._close is not None:
            try:
                trio.from_thread.run_sync(self._close.set, trio_token=self.token)
            except trio.RunFinishedError:
                pass
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
                await self._close.wait()
                # Calls already started finish before the memory closes: none is cut in half.

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        memory, token = self._live()
        try:
            return trio.from_thread.run(
                functools.partial(getattr(memory, name), *args, **kwargs), trio_token=token
            )
        except trio.RunFinishedError:
            raise MemoryClosed("the memory's thread has stopped; open it again") from None

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
            raise MemoryClosed("the memory was closed: call it inside the `with open_memory_in_thread(...)` block")
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


class AsyncioMemory:
    """The memory's calls as coroutines for asyncio: ``await memory.asyncio.block(...)``."""

    def __init__(self, runner: _TrioThread) -> None:
        self._runner = runner

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name not in CALLS:
            raise AttributeError(f"the memory has no call {name!r}; its calls are {', '.join(CALLS)}")

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await asyncio.wrap_future(self._runner.submit(name, *args, **kwargs))

        call.__name__ = name
        call.__doc__ = getattr(Memory, name).__doc__
        return call


class ThreadedMemory:
    """The memory's calls as blocking methods; ``.asyncio`` has the same calls as coroutines."""

    def __init__(self, runner: _TrioThread) -> None:
        self._runner = runner
        self.asyncio = AsyncioMemory(runner)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name not in CALLS:
            raise AttributeError(f"the memory has no call {name!r}; its calls are {', '.join(CALLS)}")

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._runner.call(name, *args, **kwargs)

        call.__name__ = name
        call.__doc__ = getattr(Memory, name).__doc__
        return call


@contextmanager
def open_memory_in_thread(settings: Settings, **adapters: Any) -> Iterator[ThreadedMemory]:
    """Run the memory on trio in its own thread for the ``with`` block.

    Args:
        settings: from ``load_settings``.
        adapters: ``clock=``, ``embedder=``, ``mind=`` … exactly as ``open_memory`` takes them.

    Raises:
        whatever ``open_memory`` raises while opening or closing, in the caller's thread.
    """
    runner = _TrioThread(settings, adapters)
    runner.start()
    try:
        yield ThreadedMemory(runner)
    finally:
        runner.stop()
