"""The display names the runtime gave users (``user_names``), read back — a repository over
the store's units of work (``units.py``). They are written with the rooms that name them
(``rooms.py``); ``names_among`` is ``queries.py``'s, which the write path shares.
"""

from __future__ import annotations

import sqlite3
from typing import Iterable

from .queries import names_among, rows_in
from .units import Units


class Names:
    """The users' latest display names (``store.names``)."""

    def __init__(self, units: Units) -> None:
        self._units = units

    async def among(self, words: Iterable[str]) -> dict[int, str]:
        """The known display names (latest, by user id) whose first word is one of ``words``
        (any case): the users a text may be naming."""
        wanted = sorted({w.casefold() for w in words if w})
        if not wanted:
            return {}
        return await self._units.read(lambda conn: names_among(conn, wanted))

    async def of(self, user_ids: Iterable[int]) -> dict[int, str]:
        """The latest display name of each of these users that the runtime ever named."""
        wanted = list(user_ids)
        return await self._units.read(lambda conn: display_names(conn, wanted))


def display_names(conn: sqlite3.Connection, user_ids: Iterable[int]) -> dict[int, str]:
    """The latest display name the runtime gave each of these users (those it ever named)."""
    query = "SELECT user_id, name FROM user_names WHERE user_id IN ({})"
    return {r["user_id"]: r["name"] for r in rows_in(conn, query, user_ids)}
