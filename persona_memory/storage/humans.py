"""The human's side of the store (design §5): what the manage page, export and erasure read
and delete. Functions of a connection (either backend's: see ``store``), run inside the
caller's unit of work.

Rules:
- Every query is scoped to one user: a row is theirs when its subject is ``u:<id>`` or it is a
  ``self`` row whose counterpart is ``u:<id>``.
- Clearing is the human's delete: physical. The notices that announced cleared rows are marked
  undone, so no toast offers to undo what is gone.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Iterable

import attrs

from ..events.kinds import MemoryDeleted, NoticeUndone
from ..ids import user_ref
from . import outbox
from .dialect import dialect_of
from .store import TranscriptLine, rows_in


@attrs.frozen
class RoomFacts:
    """What the human's page says about a room a line came from (never its id)."""

    room_id: str
    title: str | None
    private: bool
    personas: tuple[str, ...]


def personas_for(conn: sqlite3.Connection, user_id: int) -> list[str]:
    """Personas that hold rows about the user, shared a room with them, or were muted by them."""
    ref = user_ref(user_id)
    found = {
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT persona FROM persona_memory WHERE subject = ? OR counterpart = ?", (ref, ref)
        )
    }
    dialect = dialect_of(conn)
    found |= {
        r[0]
        for r in conn.execute(
            f"SELECT DISTINCT p.value FROM rooms, {dialect.items_of('rooms.personas', 'p')} "
            f"WHERE {dialect.holds('rooms.humans')}",
            (user_id,),
        )
    }
    found |= {
        r[0] for r in conn.execute("SELECT persona FROM persona_memory_mute WHERE user_id = ?", (user_id,))
    }
    return sorted(found)


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


def delete_all_about(conn: sqlite3.Connection, user_id: int, persona: str, now: datetime) -> int:
    """Delete every row ``persona`` keeps about the user; return how many went."""
    ref = user_ref(user_id)
    gone = [r[0] for r in conn.execute(
        "SELECT id FROM persona_memory WHERE persona = ? AND (subject = ? OR counterpart = ?) ORDER BY id",
        (persona, ref, ref),
    )]
    undone = [r[0] for r in conn.execute(
        "SELECT id FROM notices WHERE user_id = ? AND persona = ? AND undone IS NULL ORDER BY id",
        (user_id, persona),
    )]
    cur = conn.execute(
        "DELETE FROM persona_memory WHERE persona = ? AND (subject = ? OR counterpart = ?)",
        (persona, ref, ref),
    )
    conn.execute(
        "UPDATE notices SET undone = ? WHERE user_id = ? AND persona = ? AND undone IS NULL",
        (now.isoformat(), user_id, persona),
    )
    outbox.record(conn, [
        *([MemoryDeleted(user_id, persona, gone, "cleared")] if gone else []),
        *(NoticeUndone(notice_id, user_id, persona) for notice_id in undone),
    ], now)
    return cur.rowcount


def persona_of_rows(conn: sqlite3.Connection, user_id: int) -> list[str]:
    """The personas holding at least one row about the user."""
    ref = user_ref(user_id)
    return [
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT persona FROM persona_memory WHERE subject = ? OR counterpart = ? ORDER BY persona",
            (ref, ref),
        )
    ]


def room_facts(conn: sqlite3.Connection, room_ids: Iterable[str]) -> dict[str, RoomFacts]:
    """For each room id known: its title, whether it is a private chat, and its personas."""
    query = "SELECT room_id, title, private, personas FROM rooms WHERE room_id IN ({})"
    return {
        r["room_id"]: RoomFacts(r["room_id"], r["title"], bool(r["private"]), tuple(json.loads(r["personas"])))
        for r in rows_in(conn, query, room_ids)
    }


def display_names(conn: sqlite3.Connection, user_ids: Iterable[int]) -> dict[int, str]:
    """The latest display name the runtime gave each of these users (those it ever named)."""
    query = "SELECT user_id, name FROM user_names WHERE user_id IN ({})"
    return {r["user_id"]: r["name"] for r in rows_in(conn, query, user_ids)}