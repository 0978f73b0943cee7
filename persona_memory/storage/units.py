"""What a repository asks of the store: three ways to run one unit of work.

Each table family's repository (``memories``, ``notices``, ``controls``, ``rooms``,
``names``, ``transcript``, ``backlog``, ``outbox``, ``revocations``) holds the ``Store`` it
belongs to and runs every query through it, so the store alone owns the connections and
counts the writes (``changes``). A repository takes it as ``Units`` and imports nothing of
``store.py``: the store imports the repositories, never the other way round.
"""

from __future__ import annotations

import sqlite3
from typing import Callable, Protocol, TypeVar

T = TypeVar("T")


class Units(Protocol):
    """The store's doors, as ``Store`` has them."""

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` on a free read connection."""
        ...

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` as one write transaction, counted in ``changes``."""
        ...

    async def write_unread(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` as one write transaction that changes nothing ``read_state`` reads."""
        ...
