"""The write path's backlog (``cursors``, ``parked_slices``): the rooms whose lines a persona
has still to read, and the slices parked after failing — a repository over the store's units
of work (``units.py``), for the sweep and the operator. The SQL is ``writes.py``'s, which the
write path shares.
"""

from __future__ import annotations

from datetime import datetime

from . import writes
from .units import Units


class Backlog:
    """What the write path has still to do (``store.backlog``)."""

    def __init__(self, units: Units) -> None:
        self._units = units

    async def rooms_behind(self, persona: str | None = None) -> list[writes.Behind]:
        """Every (persona, room) with lines past the persona's cursor (the sweep's work); with
        ``persona``, only that persona's."""
        return await self._units.read(lambda conn: writes.rooms_behind(conn, persona))

    async def parked_personas(self) -> list[str]:
        """The personas with a parked slice: their writer failed one job too often."""
        return await self._units.read(
            lambda conn: [r[0] for r in conn.execute("SELECT DISTINCT persona FROM parked_slices ORDER BY persona")]
        )

    async def parked_due(self, now: datetime) -> int:
        """How many parked slices may be retried at ``now``."""
        return await self._units.read(lambda conn: writes.parked_due(conn, now))
