"""The transcript (``transcript_lines``): each room's lines with who was there, appended and
read back — a repository over the store's units of work (``units.py``).

Rules:
- An incognito room keeps no lines: its line is not written and ``post`` returns 0.
- Lines posted at the same moment commit together (``line_batch``); each ``post`` returns
  once its line is in. These writes change nothing ``read_state`` reads, so they are not
  counted in ``changes``.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime

from ..clock import as_utc
from ..rooms import Presence
from .line_batch import LineBatcher
from .queries import TranscriptLine, lines_after
from .units import Units


class Transcript:
    """Every room's transcript lines (``store.transcript``)."""

    def __init__(self, units: Units) -> None:
        self._units = units
        self._lines = LineBatcher(units.write_unread)

    @property
    def batches(self) -> int:
        """How many transactions the posted lines went in so far."""
        return self._lines.batches

    async def post(
        self, room_id: str, speaker: str, text: str, at: datetime, presence: Presence | None = None
    ) -> int:
        """Append a transcript line with who was there; return its id (what ``evidence``
        points to), or 0 when the line is not kept: the room is incognito. Lines posted at the
        same moment commit together (``line_batch``); each call returns once its line is in.

        ``presence`` is the room as it stood when the line was said; ``None``: not open.
        """
        at = as_utc(at)
        if presence is not None and presence.incognito:
            return 0
        humans = personas = None
        if presence is not None:
            humans = json.dumps(sorted(presence.humans))
            personas = json.dumps(list(presence.personas))
        kit = presence.kit if presence is not None else None
        return await self._lines.post((room_id, speaker, text, at.isoformat(), humans, personas, kit))

    async def lines(self, room_id: str, after_id: int = 0, limit: int | None = None) -> list[TranscriptLine]:
        """The room's transcript lines with ids greater than ``after_id``, oldest first (at
        most ``limit`` of them)."""
        return await self._units.read(lambda conn: lines_after(conn, room_id, after_id, limit))

    async def cited(self, room_id: str | None, line_ids: list[int]) -> list[TranscriptLine]:
        """The transcript lines with these ids in ``room_id``, oldest first."""
        return await self._units.read(lambda conn: cited_lines(conn, room_id, line_ids))


def cited_lines(conn: sqlite3.Connection, room_id: str | None, line_ids: list[int]) -> list[TranscriptLine]:
    """The transcript lines with these ids in ``room_id``, oldest first."""
    if room_id is None or not line_ids:
        return []
    marks = ",".join("?" * len(line_ids))
    cur = conn.execute(
        f"SELECT * FROM transcript_lines WHERE room_id = ? AND id IN ({marks}) ORDER BY id",
        (room_id, *line_ids),
    )
    return [TranscriptLine.from_row(r) for r in cur]
