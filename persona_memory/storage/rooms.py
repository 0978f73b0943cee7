"""The rooms as the store keeps them (``rooms``, with the display names a room gives:
``user_names``) — a repository over the store's units of work (``units.py``). The SQL is
``queries.py``'s where a cluster worker's registry shares it.

Rules:
- A room's ``incognito`` is fixed when it is first opened: a reopen with the other one is
  refused (``save``) or left out (``record``), and nothing of it is written.
- These writes change nothing ``read_state`` reads, so they are not counted in ``changes``.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Iterable, Mapping, Sequence

import attrs

from ..clock import as_utc
from ..rooms import RoomState, incognito_is_fixed
from .queries import record_rooms_on, rows_in, save_names, save_room, stored_incognito
from .units import Units


@attrs.frozen
class RoomFacts:
    """What the human's page says about a room a line came from (never its id)."""

    room_id: str
    title: str | None
    private: bool
    personas: tuple[str, ...]


class Rooms:
    """Every room ever opened (``store.rooms``)."""

    def __init__(self, units: Units) -> None:
        self._units = units

    async def save(self, room: RoomState, when: datetime) -> None:
        """Record a room as opened (again): its flags, cast, topic and display names.

        Raises:
            InvalidInput: the room id is known with the other ``incognito`` (it is fixed when
                the room is first opened). Nothing changed.
        """
        opened = as_utc(when).isoformat()

        def save(conn: sqlite3.Connection) -> None:
            known = stored_incognito(conn, room.room_id)
            if known is not None and known != room.incognito:
                raise incognito_is_fixed(room.room_id, known)
            save_room(conn, room, opened)
            save_names(conn, {uid: (name, opened) for uid, name in room.names.items()})

        await self._units.write_unread(save)

    async def record(
        self,
        opened: Sequence[tuple[RoomState, datetime]],
        archived: Sequence[tuple[str, datetime]],
        names: Mapping[int, tuple[str, datetime]],
    ) -> list[str]:
        """Record, in one transaction, rooms opened (as ``save``), then rooms archived, then
        the latest display name of each user named (``{user id: (name, when)}``).

        A room stored with the other ``incognito`` is not overwritten: its id is returned
        among those refused, and the rest is recorded.
        """
        return await self._units.write_unread(lambda conn: record_rooms_on(conn, opened, archived, names))

    async def archive(self, room_id: str, when: datetime) -> None:
        """Mark the room archived at ``when``."""
        archived = as_utc(when).isoformat()
        await self._units.write_unread(
            lambda conn: conn.execute(
                "UPDATE rooms SET archived = ? WHERE room_id = ?", (archived, room_id)
            )
        )

    async def flags(self) -> dict[str, bool]:
        """Every room id ever opened, with whether it is incognito."""
        return await self._units.read(
            lambda conn: {r[0]: bool(r[1]) for r in conn.execute("SELECT room_id, incognito FROM rooms")}
        )

    async def incognito(self, room_id: str) -> bool | None:
        """Whether a known room id is incognito; ``None`` if it was never opened."""
        found = await self._units.read(
            lambda conn: conn.execute("SELECT incognito FROM rooms WHERE room_id = ?", (room_id,)).fetchone()
        )
        return None if found is None else bool(found[0])

    async def facts(self, room_ids: Iterable[str]) -> dict[str, RoomFacts]:
        """``RoomFacts`` of each known room among ``room_ids`` (title, private, cast)."""
        wanted = list(room_ids)
        return await self._units.read(lambda conn: room_facts(conn, wanted))


def room_facts(conn: sqlite3.Connection, room_ids: Iterable[str]) -> dict[str, RoomFacts]:
    """For each room id known: its title, whether it is a private chat, and its personas."""
    query = "SELECT room_id, title, private, personas FROM rooms WHERE room_id IN ({})"
    return {
        r["room_id"]: RoomFacts(r["room_id"], r["title"], bool(r["private"]), tuple(json.loads(r["personas"])))
        for r in rows_in(conn, query, room_ids)
    }
