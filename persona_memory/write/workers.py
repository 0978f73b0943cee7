"""The workers port: where the write path may run a slice's pure steps beside the event loop.

The extraction check, the embedding of what it kept, and — when the mind can read there — the
reading itself are pure functions of plain data (``write.offloaded``). Given ``Workers``, the
write path runs them there when the workers choose the job, and in its own process otherwise:
the same functions, the same answers. The offline reader's worker processes are the adapter
(``minds.offline.processes.ReaderProcesses``); the composition root hands them to the write
path with the mind that owns them. No workers: every step runs in the write path's process.

The contract:

``with workers.chosen() as to_workers``
    Count the caller in while it works; ``to_workers`` says whether its job should go to the
    workers now (they are up, and sending is worth its cost).
``await workers.run(fn, *args)``
    ``fn(*args)`` on a worker: ``fn`` a module-level function, its arguments and answer plain
    data that pickles. The answer is the one the same call gives in this process; an exception
    ``fn`` raises comes back as itself; a worker that died on the job raises a
    ``ProviderError`` (the slice is parked, as for any provider that broke).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Workers(Protocol):
    """Worker processes for pure functions of plain data. See the module docstring."""

    def chosen(self) -> AbstractContextManager[bool]:
        """Whether the caller's job should go to the workers, while it is counted in."""
        ...

    async def run(self, fn: Callable[..., T], /, *args: Any) -> T:
        """``fn(*args)`` on a worker."""
        ...
