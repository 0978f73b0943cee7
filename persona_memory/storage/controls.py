"""The humans' controls (``users``, ``persona_memory_mute``): each user's note, memory switch
and muted personas — a repository over the store's units of work (``units.py``).

Rules:
- A value is checked before anything is written (``InvalidInput`` names the field); each
  change commits with its ``ControlsChanged`` event (``outbox.record``).
- These writes are not counted in ``changes``: whoever sets a control tells the actors itself
  (the facade sends each live actor a ``ControlsChanged``), so no actor polls the count to
  learn of them.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Iterable

from ..events.kinds import ControlsChanged
from ..ids import check_persona, check_user_id
from ..rows import UserControls, check_note
from . import outbox
from .queries import controls_in, raise_type
from .units import Units


class Controls:
    """The humans' settings (``store.controls``)."""

    def __init__(self, units: Units) -> None:
        self._units = units

    async def of(self, user_ids: Iterable[int]) -> dict[int, UserControls]:
        """The controls of each user named (defaults for users who never set anything)."""
        wanted = sorted(set(user_ids))
        return await self._units.read(lambda conn: controls_in(conn, wanted))

    async def set_note(self, user_id: int, note: str, *, now: datetime | None = None) -> None:
        """Set the user's note; a ``ControlsChanged`` event (stamped ``now``) commits with it."""
        check_user_id(user_id)
        note = check_note(note)

        def update(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO users (user_id, memory_note) VALUES (?, ?) "
                "ON CONFLICT (user_id) DO UPDATE SET memory_note = excluded.memory_note",
                (user_id, note),
            )
            outbox.record(conn, [ControlsChanged(user_id, "note")], now)

        await self._units.write_unread(update)

    async def set_memory_on(self, user_id: int, on: bool, *, now: datetime | None = None) -> None:
        """Set the user's memory switch; a ``ControlsChanged`` event commits with it."""
        check_user_id(user_id)
        if not isinstance(on, bool):
            raise_type("on", "True or False", on)

        def update(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO users (user_id, memory_on) VALUES (?, ?) "
                "ON CONFLICT (user_id) DO UPDATE SET memory_on = excluded.memory_on",
                (user_id, on),
            )
            outbox.record(conn, [ControlsChanged(user_id, "memory_on", on)], now)

        await self._units.write_unread(update)

    async def set_muted(self, user_id: int, persona: str, muted: bool, *, now: datetime | None = None) -> None:
        """Mute or unmute a persona for the user; a ``ControlsChanged`` event commits with it."""
        check_user_id(user_id)
        check_persona(persona)
        if not isinstance(muted, bool):
            raise_type("muted", "True or False", muted)
        sql = (
            "INSERT INTO persona_memory_mute (user_id, persona) VALUES (?, ?) ON CONFLICT DO NOTHING"
            if muted
            else "DELETE FROM persona_memory_mute WHERE user_id = ? AND persona = ?"
        )

        def update(conn: sqlite3.Connection) -> None:
            conn.execute(sql, (user_id, persona))
            outbox.record(conn, [ControlsChanged(user_id, "muted", muted, persona)], now)

        await self._units.write_unread(update)
