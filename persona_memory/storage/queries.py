"""The values and query functions the store's modules share: a transcript line, and the queries on a connection the caller holds — written once, run on SQLite or PostgreSQL
(``store``'s rules). A room is stored as the registry holds it (``rooms.RoomState``). A leaf of
``storage``: ``store``, ``writes`` and ``humans`` build on it, and
it imports none of them.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Any, Iterable, Iterator, Mapping, Sequence

import attrs

from ..clock import as_utc
from ..core.audience import hears
from ..errors import InvalidInput
from ..rooms import Presence, RoomState
from ..rows import MemoryRow, UserControls
from .dialect import dialect_of
from .stored_rows import StoredRows


@attrs.frozen
class TranscriptLine:
    """A line of a room's transcript, with who was there when it was said.

    ``presence`` is ``None`` for a line said while the room was not open: nobody heard it.
    """

    id: int
    room_id: str
    speaker: str
    text: str
    at: datetime
    presence: Presence | None = None

    def heard_by(self, persona: str) -> bool:
        """Whether ``persona``'s write path may read this line: it was in the room, the room
        was not incognito and no kit was mounted."""
        p = self.presence
        return p is not None and hears(persona, p.personas, kit=p.kit, incognito=p.incognito)

    @property
    def humans(self) -> frozenset[int]:
        """The humans in the room when the line was said (none if it was not open)."""
        return self.presence.humans if self.presence is not None else frozenset()

    @classmethod
    def from_row(cls, r: sqlite3.Row) -> "TranscriptLine":
        presence = None
        if r["humans"] is not None and r["personas"] is not None:
            presence = Presence(
                humans=frozenset(json.loads(r["humans"])),
                personas=tuple(json.loads(r["personas"])),
                kit=r["kit"],
                incognito=bool(r["incognito"]),
            )
        return cls(r["id"], r["room_id"], r["speaker"], r["text"], datetime.fromisoformat(r["at"]), presence)

    @classmethod
    def from_rows(cls, rows: Iterable[Sequence]) -> list["TranscriptLine"]:
        """``from_row`` over rows of ``LINE_COLUMNS``, read by position. Lines recorded with
        the same presence (a slice's lines mostly are) share one ``Presence``, its JSON decoded
        once: the same values, built once (a ``Presence`` is frozen)."""
        out = []
        presences: dict[tuple, Presence] = {}
        for line_id, room_id, speaker, text, at, humans, personas, kit, incognito in rows:
            presence = None
            if humans is not None and personas is not None:
                key = (humans, personas, kit, incognito)
                presence = presences.get(key)
                if presence is None:
                    presence = presences[key] = Presence(
                        humans=frozenset(json.loads(humans)),
                        personas=tuple(json.loads(personas)),
                        kit=kit,
                        incognito=bool(incognito),
                    )
            out.append(cls(line_id, room_id, speaker, text, datetime.fromisoformat(at), presence))
        return out


LINE_COLUMNS = "id, room_id, speaker, text, at, humans, personas, kit, incognito"
"""The columns ``TranscriptLine.from_rows`` reads, in its order."""


def lines_after(conn: sqlite3.Connection, room_id: str, after_id: int, limit: int | None) -> list[TranscriptLine]:
    """``store.transcript.lines`` on a connection the caller holds (to read it in one unit with more)."""
    query = f"SELECT {LINE_COLUMNS} FROM transcript_lines WHERE room_id = ? AND id > ? ORDER BY id"
    if limit is None:
        cur = conn.execute(query, (room_id, after_id))
    else:
        cur = conn.execute(query + " LIMIT ?", (room_id, after_id, limit))
    return TranscriptLine.from_rows(cur)


def controls_of(conn: sqlite3.Connection, user_ids: Iterable[int]) -> dict[int, UserControls]:
    """``store.controls.of`` on a connection the caller holds."""
    return controls_in(conn, sorted(set(user_ids)))


IN_CHUNK = 500  # SQLite's default limit on parameters is 999; stay well below it


def rows_in(conn: sqlite3.Connection, query: str, values: Iterable[object]) -> Iterator[sqlite3.Row]:
    """The rows of ``query`` (whose ``IN ({})`` takes ``values``), asked in chunks of
    ``IN_CHUNK`` so a long list never exceeds SQLite's parameter limit."""
    wanted = sorted(set(values))
    for start in range(0, len(wanted), IN_CHUNK):
        chunk = wanted[start : start + IN_CHUNK]
        yield from conn.execute(query.format(",".join("?" * len(chunk))), chunk)


def persona_rows(
    conn: sqlite3.Connection, persona: str, *, said: bool
) -> tuple[int, Sequence[MemoryRow], dict[int, str]]:
    """``store.memories.rows`` (with ``said``: ``store.memories.rows_said``, its rows a ``StoredRows``)
    in one transaction."""
    query = "SELECT * FROM persona_memory WHERE persona = ? AND (valid_to IS NULL OR closed_by IS NOT NULL)"
    conn.execute("BEGIN")
    try:
        version = persona_version(conn, persona)
        if not said:
            return version, MemoryRow.from_rows(conn.execute(query, (persona,))), {}
        cur = _plain_cursor(conn).execute(query, (persona,))
        values = cur.fetchall()
        if values and type(values[0]) is not tuple:
            values = [tuple(v) for v in values]
        rows = StoredRows([d[0] for d in cur.description], values)
        return version, rows, _said(conn, rows.evidence())
    finally:
        conn.execute("COMMIT")


def _plain_cursor(conn: sqlite3.Connection) -> Any:
    """Something to ``execute`` on ``conn`` whose rows are plain tuples when it is SQLite's
    (a PostgreSQL session's rows are turned into tuples by the caller)."""
    if not isinstance(conn, sqlite3.Connection):
        return conn
    cursor = conn.cursor()
    cursor.row_factory = None
    return cursor


def said_of(conn: sqlite3.Connection, rows: Iterable[MemoryRow]) -> dict[int, str]:
    """For each row, the text of the transcript lines it cites (its evidence), in line order,
    joined by newlines; a row whose lines are all gone is left out."""
    return _said(conn, [(r.id, r.evidence) for r in rows if r.id is not None and r.evidence])


def _said(conn: sqlite3.Connection, cited: list[tuple[int, Sequence[int]]]) -> dict[int, str]:
    """``said_of`` for ``(row id, evidence)`` pairs."""
    texts = {
        r["id"]: r["text"]
        for r in rows_in(conn, "SELECT id, text FROM transcript_lines WHERE id IN ({})",
                         (line for _, evidence in cited for line in evidence))
    }
    out = {}
    for row_id, evidence in cited:
        said = [texts[line] for line in sorted(set(evidence)) if line in texts]
        if said:
            out[row_id] = "\n".join(said)
    return out


def names_among(conn: sqlite3.Connection, words: Iterable[str]) -> dict[int, str]:
    """``store.names.among`` on a connection the caller holds."""
    query = "SELECT user_id, name FROM user_names WHERE first_word IN ({})"
    return {r["user_id"]: r["name"] for r in rows_in(conn, query, {w.casefold() for w in words if w})}


def persona_version(conn: sqlite3.Connection, persona: str) -> int:
    """The persona's row version: bumped by every change to its rows (touches excepted)."""
    found = conn.execute("SELECT version FROM persona_versions WHERE persona = ?", (persona,)).fetchone()
    return int(found[0]) if found else 0


def controls_in(conn: sqlite3.Connection, wanted: Sequence[int]) -> dict[int, UserControls]:
    if not wanted:
        return {}
    marks = ",".join("?" * len(wanted))
    users = {
        r["user_id"]: r for r in conn.execute(f"SELECT * FROM users WHERE user_id IN ({marks})", wanted)
    }
    muted: dict[int, set[str]] = {}
    for r in conn.execute(
        f"SELECT user_id, persona FROM persona_memory_mute WHERE user_id IN ({marks})", wanted
    ):
        muted.setdefault(r["user_id"], set()).add(r["persona"])
    out = {}
    for uid in wanted:
        row = users.get(uid)
        out[uid] = UserControls(
            user_id=uid,
            memory_on=bool(row["memory_on"]) if row else True,
            memory_note=row["memory_note"] if row else "",
            muted=frozenset(muted.get(uid, ())),
        )
    return out


def insert_memory(conn: sqlite3.Connection, row: MemoryRow) -> MemoryRow:
    """Insert one validated row on ``conn`` (inside the caller's transaction)."""
    return insert_memories_on(conn, [row])[0]


def insert_memories_on(conn: sqlite3.Connection, rows: Iterable[MemoryRow]) -> list[MemoryRow]:
    """Insert validated rows on ``conn`` in order (inside the caller's transaction); return
    them with their ids. Consecutive rows with the same columns go as one ``insert_ids`` (on
    PostgreSQL one round trip for them all, not one per row)."""
    out: list[MemoryRow] = []
    pending: list[tuple[MemoryRow, tuple]] = []
    columns: list[str] = []

    def flush() -> None:
        ids = dialect_of(conn).insert_ids(
            conn,
            f"INSERT INTO persona_memory ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
            [params for _, params in pending],
        )
        out.extend(row.stored_as(new_id) for (row, _), new_id in zip(pending, ids))
        pending.clear()

    for row in rows:
        params = row.to_params()
        wanted = [c for c in params if not (c == "id" and params[c] is None)]
        if pending and wanted != columns:
            flush()
        columns = wanted
        pending.append((row, tuple([params[c] for c in wanted])))  # by position: binds faster than by name
    if pending:
        flush()
    return out


def record_rooms_on(
    conn: sqlite3.Connection,
    opened: Sequence[tuple[RoomState, datetime]],
    archived: Sequence[tuple[str, datetime]],
    names: Mapping[int, tuple[str, datetime]],
) -> list[str]:
    """``store.rooms.record`` on a connection the caller holds, in its transaction (a cluster
    worker records a room in the same transaction as the event: ``cluster/registry.py``)."""
    refused = []
    for room, when in opened:
        known = stored_incognito(conn, room.room_id)
        if known is not None and known != room.incognito:
            refused.append(room.room_id)
        else:
            save_room(conn, room, as_utc(when).isoformat())
    conn.executemany(
        "UPDATE rooms SET archived = ? WHERE room_id = ?", [(as_utc(when).isoformat(), r) for r, when in archived]
    )
    save_names(conn, {uid: (name, as_utc(when).isoformat()) for uid, (name, when) in names.items()})
    return refused


def stored_incognito(conn: sqlite3.Connection, room_id: str) -> bool | None:
    known = conn.execute("SELECT incognito FROM rooms WHERE room_id = ?", (room_id,)).fetchone()
    return None if known is None else bool(known[0])


def save_room(conn: sqlite3.Connection, room: RoomState, opened: str) -> None:
    """Insert or update a room as opened at ``opened`` (ISO), with the humans present then;
    its ``incognito`` stays, and so does its title when the reopen gives none."""
    conn.execute(
        "INSERT INTO rooms (room_id, private, incognito, kit, topic, personas, humans, "
        "names, opened, archived, title) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?) "
        "ON CONFLICT (room_id) DO UPDATE SET private = excluded.private, "
        "kit = excluded.kit, topic = excluded.topic, title = coalesce(excluded.title, rooms.title), "
        "personas = excluded.personas, humans = excluded.humans, names = excluded.names, "
        "opened = excluded.opened, archived = NULL",
        (
            room.room_id,
            bool(room.private),
            bool(room.incognito),
            room.kit,
            room.topic,
            json.dumps(list(room.personas)),
            json.dumps(sorted(room.present)),
            json.dumps({str(k): v for k, v in sorted(room.names.items())}),
            opened,
            room.title,
        ),
    )


def save_names(conn: sqlite3.Connection, names: Mapping[int, tuple[str, str]]) -> None:
    """Keep each user's display name: ``{user id: (name, when it was given, ISO)}``."""
    conn.executemany(
        "INSERT INTO user_names (user_id, name, first_word, updated) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (user_id) DO UPDATE SET name = excluded.name, "
        "first_word = excluded.first_word, updated = excluded.updated",
        [(uid, name, _first_word(name), when) for uid, (name, when) in names.items()],
    )


def _first_word(name: str) -> str:
    return (name.split() or [""])[0].casefold()


def raise_type(field: str, wanted: str, got: object) -> None:
    raise InvalidInput(f"{field} must be {wanted}, got {got!r}")
