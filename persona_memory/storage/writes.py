"""The write path's queries: cursors, posting a plan, parked slices, notices and undo.

Each function takes a connection — SQLite's, or the PostgreSQL session (``postgres_session``),
one text of SQL for both (``store``'s docstring) — and runs inside the caller's unit of work
(the ``Store`` methods that wrap them decide the transaction).

Rules:
- ``post_plan`` is one transaction: new rows, closings, the cursor move and the notices commit
  together or not at all, and only while the cursor is where the plan started — a replay of a
  slice that was already posted adds nothing. The check is a compare-and-set on the cursor row
  (``_moved_cursor``), so it holds on PostgreSQL with writers in parallel as well.
- A write for a persona may carry the ``epoch`` of the lease its worker holds (PostgreSQL,
  several workers: ``leases.py``); it is checked first, in the same transaction, and a lost
  lease raises ``LeaseLost`` before anything is written. No epoch: no check, nothing extra.
- ``post_plan`` re-checks, inside its transaction, what the plan may still write: a human
  may have deleted a row or switched memory off (or muted the persona) while the model read
  the slice. The plan is narrowed to what is still allowed (``plan.narrowed``): a deleted row
  is not brought back in new words, and nothing about — or said by — a human who hides from
  the persona is stored. The cursor still moves past the slice.
- Undo deletes exactly the rows its notice announced that are about its user, reopens what
  they had closed, and marks the notice undone. It is the human's delete: physical.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from datetime import datetime

import attrs

from ..errors import NotYourMemory, NotYourNotice
from ..events.kinds import MemoryDeleted, MemoryNoted, NoticeUndone
from ..ids import SELF, parse_user_ref, user_ref
from ..rows import MemoryRow, ids_json
from ..plans import WritePlan, narrowed
from ..rooms import RoomState
from . import leases, outbox
from .dialect import dialect_of
from .queries import controls_of, insert_memories_on, persona_version, rows_in, said_of


@attrs.frozen
class Closed:
    """A row a plan closed: when, and by which new row (``None``: nothing replaced it)."""

    row_id: int
    valid_to: str
    closed_by: int | None


@attrs.frozen
class Posted:
    """What a plan wrote: the new rows (with ids), the rows it closed, the notices' ids, and
    the persona's row version just before and just after (``versions``), so a reader holding
    the version before may apply the change instead of reading every row again; ``said``:
    what each new row's transcript lines said (``store.said_of``), for that reader's search."""

    rows: tuple[MemoryRow, ...]
    notice_ids: tuple[int, ...]
    replay: bool = False
    closed: tuple[Closed, ...] = ()
    versions: tuple[int, int] | None = None
    said: Mapping[int, str] = attrs.field(factory=dict)


@attrs.frozen
class Notice:
    """A toast: which persona noted what about this user, and the rows it announced."""

    id: int
    user_id: int
    persona: str
    room_id: str | None
    text: str
    memory_ids: tuple[int, ...]
    created: datetime


def cursor(conn: sqlite3.Connection, persona: str, room_id: str) -> int:
    found = conn.execute(
        "SELECT last_line_id FROM cursors WHERE persona = ? AND room_id = ?", (persona, room_id)
    ).fetchone()
    return int(found[0]) if found else 0


LAST_KIT = (
    "SELECT kit FROM transcript_lines WHERE room_id = ? AND id <= ? AND kit IS NOT NULL "
    "ORDER BY id DESC LIMIT 1"
)
"""Read from the partial index of kit lines (schema 10), so a room that never had a kit costs
one index probe, not a read of its whole history."""


def last_kit(conn: sqlite3.Connection, room_id: str, up_to: int) -> str | None:
    """The kit of the room's last line at or before line ``up_to`` said with a kit mounted
    (a game or role-play played there earlier), or ``None``."""
    found = conn.execute(LAST_KIT, (room_id, up_to)).fetchone()
    return found[0] if found else None


def post_plan(conn: sqlite3.Connection, plan: WritePlan, now: datetime, *, epoch: int | None = None) -> Posted:
    """Write ``plan`` (inside the caller's transaction); with ``epoch``, only while the
    persona's lease stands at it (``leases.check_held``: else ``LeaseLost``)."""
    if epoch is not None:
        leases.check_held(conn, plan.persona, epoch)
    if not _moved_cursor(conn, plan):
        return Posted((), (), replay=True)
    plan = still_allowed(conn, plan)
    before = persona_version(conn, plan.persona)
    rows = insert_memories_on(conn, plan.inserts)
    closed = []
    for closing in plan.closings:
        closed_by = rows[closing.by_insert].id if closing.by_insert is not None else None
        cur = conn.execute(
            "UPDATE persona_memory SET valid_to = ?, closed_by = ? "
            "WHERE id = ? AND persona = ? AND valid_to IS NULL",
            (closing.valid_to, closed_by, closing.row_id, plan.persona),
        )
        if cur.rowcount:
            closed.append(Closed(closing.row_id, closing.valid_to, closed_by))
    notice_ids = dialect_of(conn).insert_ids(
        conn,
        "INSERT INTO notices (user_id, persona, room_id, text, memory_ids, created) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [
            (
                draft.user_id,
                plan.persona,
                plan.room_id,
                draft.text,
                ids_json([rows[i].id for i in draft.inserts]),
                now.isoformat(),
            )
            for draft in plan.notices
        ],
    )
    versions = (before, persona_version(conn, plan.persona))
    outbox.record(conn, [
        *(MemoryNoted(notice_id, draft.user_id, plan.persona, plan.room_id, [rows[i].id for i in draft.inserts])
          for notice_id, draft in zip(notice_ids, plan.notices)),
        *outbox.closings(conn, plan.persona, ((c.row_id, c.valid_to, c.closed_by) for c in closed)),
    ], now)
    return Posted(
        tuple(rows), tuple(notice_ids), closed=tuple(closed), versions=versions, said=said_of(conn, rows)
    )


def still_allowed(conn: sqlite3.Connection, plan: WritePlan) -> WritePlan:
    """``plan`` narrowed to what its commit may still write (``plan.narrowed``), from what
    the caller's transaction reads now: the rows it closes, who said the lines its rows cite,
    and those humans' switches."""
    if not plan.inserts and not plan.closings:
        return plan
    targets = {c.row_id for c in plan.closings}
    about: dict[int, int | None] = {}
    for row_id, subject, counterpart in rows_in(
        conn, "SELECT id, subject, counterpart FROM persona_memory WHERE id IN ({})", targets
    ):
        about[row_id] = parse_user_ref(counterpart if subject == SELF else subject)
    cited = {line_id for row in plan.inserts for line_id in row.evidence}
    speakers: dict[int, int] = {}
    for line_id, speaker in rows_in(conn, "SELECT id, speaker FROM transcript_lines WHERE id IN ({})", cited):
        uid = parse_user_ref(speaker)
        if uid is not None:
            speakers[line_id] = uid
    humans = {*speakers.values(), *(u for u in about.values() if u is not None)}
    humans.update(u for row in plan.inserts if (u := row.about_user) is not None)
    hidden = {u for u, c in controls_of(conn, humans).items() if c.hides_from(plan.persona)}
    return narrowed(plan, gone=targets - about.keys(), hidden=hidden, about=about, speakers=speakers)


def _moved_cursor(conn: sqlite3.Connection, plan: WritePlan) -> bool:
    """Move the cursor from ``plan.cursor_from`` to ``plan.cursor_to`` if it is still at
    ``cursor_from``; whether it moved (``False``: the plan is a replay).

    One compare-and-set, so it holds with writers in parallel too (PostgreSQL at ``READ
    COMMITTED``): the ``UPDATE`` locks the cursor row as ``SELECT … FOR UPDATE`` would, and a
    second writer waiting on it re-reads the moved row and matches nothing; a first cursor
    (no row, ``cursor_from`` 0) is an insert that a second one meets as a conflict.
    """
    moved = conn.execute(
        "UPDATE cursors SET last_line_id = ? WHERE persona = ? AND room_id = ? AND last_line_id = ?",
        (plan.cursor_to, plan.persona, plan.room_id, plan.cursor_from),
    ).rowcount
    if moved or plan.cursor_from != 0:
        return bool(moved)
    return conn.execute(
        "INSERT INTO cursors (persona, room_id, last_line_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        (plan.persona, plan.room_id, plan.cursor_to),
    ).rowcount == 1


def open_rows(conn: sqlite3.Connection, persona: str, subjects: Iterable[str]) -> list[MemoryRow]:
    """The persona's open rows about these subjects (the router's neighbourhood)."""
    wanted = sorted(set(subjects))
    if not wanted:
        return []
    marks = ",".join("?" * len(wanted))
    cur = conn.execute(
        f"SELECT * FROM persona_memory WHERE persona = ? AND valid_to IS NULL AND subject IN ({marks})",
        (persona, *wanted),
    )
    return MemoryRow.from_rows(cur)


def names_if_few(conn: sqlite3.Connection, limit: int) -> list[tuple[int, str, str]] | None:
    """Every known display name as ``(user id, name, first word)`` — ``None`` when there are
    more than ``limit`` (the write path then asks ``store.names.among`` for the few it needs).
    Whether there are more is asked first, by one step past the ``limit``-th row: a store with
    many names (read before every backlog) builds no row objects to learn it."""
    if conn.execute("SELECT 1 FROM user_names LIMIT 1 OFFSET ?", (limit,)).fetchone() is not None:
        return None
    found = conn.execute("SELECT user_id, name, first_word FROM user_names LIMIT ?", (limit + 1,)).fetchall()
    if len(found) > limit:  # names added between the two reads
        return None
    return [(r["user_id"], r["name"], r["first_word"]) for r in found]


def written_since(conn: sqlite3.Connection, persona: str, since: datetime) -> dict[int, int]:
    """How many rows ``persona`` wrote about each human since ``since`` (the daily cap).

    Counted by the database, a row per human: a persona's day holds dozens of rows, and each
    row fetched is a step that lets go of the GIL and takes it back."""
    counts: dict[int, int] = {}
    for ref, n in conn.execute(
        "SELECT CASE WHEN subject = 'self' THEN counterpart ELSE subject END AS ref, count(*) "
        "FROM persona_memory WHERE persona = ? AND created >= ? GROUP BY ref",
        (persona, since.isoformat()),
    ):
        if ref and ref.startswith("u:"):
            counts[int(ref[2:])] = n
    return counts


def notices(conn: sqlite3.Connection, user_id: int, limit: int = 100) -> list[Notice]:
    """The user's notices not undone, newest first."""
    cur = conn.execute(
        "SELECT * FROM notices WHERE user_id = ? AND undone IS NULL ORDER BY id DESC LIMIT ?",
        (user_id, limit),
    )
    return [
        Notice(
            id=r["id"],
            user_id=r["user_id"],
            persona=r["persona"],
            room_id=r["room_id"],
            text=r["text"],
            memory_ids=tuple(json.loads(r["memory_ids"])),
            created=datetime.fromisoformat(r["created"]),
        )
        for r in cur
    ]


def memory_persona(conn: sqlite3.Connection, user_id: int, memory_id: int) -> str:
    """The persona holding ``memory_id``, if the row is about ``user_id``."""
    ref = user_ref(user_id)
    found = conn.execute(
        "SELECT persona FROM persona_memory WHERE id = ? AND (subject = ? OR counterpart = ?)",
        (memory_id, ref, ref),
    ).fetchone()
    if found is None:
        raise NotYourMemory(f"memory {memory_id} does not exist or is not about {ref}")
    return found[0]


def notice_persona(conn: sqlite3.Connection, user_id: int, notice_id: int) -> str:
    found = conn.execute(
        "SELECT persona FROM notices WHERE id = ? AND user_id = ? AND undone IS NULL",
        (notice_id, user_id),
    ).fetchone()
    if found is None:
        raise NotYourNotice(f"notice {notice_id} does not exist, is not u:{user_id}'s, or was undone")
    return found[0]


def undo(conn: sqlite3.Connection, user_id: int, notice_id: int, now: datetime) -> list[int]:
    """Undo a notice (inside the caller's transaction); return the ids deleted."""
    persona = notice_persona(conn, user_id, notice_id)
    memory_ids = json.loads(
        conn.execute("SELECT memory_ids FROM notices WHERE id = ?", (notice_id,)).fetchone()[0]
    )
    ref = user_ref(user_id)
    deleted = []
    for memory_id in memory_ids:
        row = conn.execute(
            "SELECT id FROM persona_memory WHERE id = ? AND (subject = ? OR counterpart = ?)",
            (memory_id, ref, ref),
        ).fetchone()
        if row is None:
            continue
        conn.execute(
            "UPDATE persona_memory SET valid_to = NULL, closed_by = NULL WHERE closed_by = ?",
            (memory_id,),
        )
        conn.execute("DELETE FROM persona_memory WHERE id = ?", (memory_id,))
        deleted.append(memory_id)
    conn.execute("UPDATE notices SET undone = ? WHERE id = ?", (now.isoformat(), notice_id))
    outbox.record(conn, [
        *([MemoryDeleted(user_id, persona, deleted, "undone")] if deleted else []),
        NoticeUndone(notice_id, user_id, persona),
    ], now)
    return deleted


def park(
    conn: sqlite3.Connection, persona: str, room_id: str, error: str, retry_at: datetime, *, epoch: int | None = None
) -> int:
    """Record a failing slice; return how many times in a row it has failed. With ``epoch``:
    only while the persona's lease stands at it (as ``post_plan``)."""
    if epoch is not None:
        leases.check_held(conn, persona, epoch)
    conn.execute(
        "INSERT INTO parked_slices (persona, room_id, error, attempts, retry_at) VALUES (?, ?, ?, 1, ?) "
        "ON CONFLICT (persona, room_id) DO UPDATE SET error = excluded.error, "
        "attempts = parked_slices.attempts + 1, retry_at = excluded.retry_at",
        (persona, room_id, error[:1000], retry_at.isoformat()),
    )
    return int(
        conn.execute(
            "SELECT attempts FROM parked_slices WHERE persona = ? AND room_id = ?", (persona, room_id)
        ).fetchone()[0]
    )


def parked_attempts(conn: sqlite3.Connection, persona: str, room_id: str) -> int:
    found = conn.execute(
        "SELECT attempts FROM parked_slices WHERE persona = ? AND room_id = ?", (persona, room_id)
    ).fetchone()
    return int(found[0]) if found else 0


def parked_due(conn: sqlite3.Connection, now: datetime) -> int:
    """How many parked slices may be retried at ``now``."""
    return int(
        conn.execute("SELECT count(*) FROM parked_slices WHERE retry_at <= ?", (now.isoformat(),)).fetchone()[0]
    )


def unpark(conn: sqlite3.Connection, persona: str, room_id: str) -> None:
    conn.execute("DELETE FROM parked_slices WHERE persona = ? AND room_id = ?", (persona, room_id))


@attrs.frozen
class Behind:
    """A (persona, room) whose transcript has lines past the persona's cursor."""

    persona: str
    room: RoomState
    parked_until: datetime | None


def rooms_behind(conn: sqlite3.Connection, persona: str | None = None) -> list[Behind]:
    """Every (persona, room) with lines past the persona's cursor (the sweep's work list);
    with ``persona``, only that persona's (a cluster worker settling a persona it gained:
    only the rooms whose cast holds it, or where it has a cursor, are read).

    Incognito rooms keep no lines. A room with a kit mounted now is listed too: the lines said
    before the kit was mounted are still to be read (the write path skips the kit's lines).
    The personas are the room's cast as last opened and any persona with a cursor there.
    """
    out = []
    if persona is None:
        only, params = "", ()
    else:
        cast = dialect_of(conn).items_of("r.personas", "p")
        only = (f" AND (EXISTS (SELECT 1 FROM {cast} WHERE p.value = ?) OR EXISTS "
                "(SELECT 1 FROM cursors c WHERE c.room_id = r.room_id AND c.persona = ?))")
        params = (persona, persona)
    rooms = conn.execute(
        "SELECT r.*, (SELECT max(id) FROM transcript_lines t WHERE t.room_id = r.room_id) AS last "
        f"FROM rooms r WHERE NOT r.incognito{only} ORDER BY r.room_id",
        params,
    ).fetchall()
    for r in rooms:
        if r["last"] is None:
            continue
        personas = list(json.loads(r["personas"]))
        for (other,) in conn.execute(
            "SELECT persona FROM cursors WHERE room_id = ? ORDER BY persona", (r["room_id"],)
        ):
            if other not in personas:
                personas.append(other)
        room = RoomState(
            room_id=r["room_id"],
            personas=tuple(personas),
            present=frozenset(json.loads(r["humans"])),
            private=bool(r["private"]),
            incognito=False,
            kit=r["kit"],
            topic=r["topic"],
            names={int(k): v for k, v in json.loads(r["names"]).items()},
            generation=0,
        )
        for one in room.personas:
            if persona is not None and one != persona:
                continue
            if cursor(conn, one, room.room_id) < r["last"]:
                parked = conn.execute(
                    "SELECT retry_at FROM parked_slices WHERE persona = ? AND room_id = ?",
                    (one, room.room_id),
                ).fetchone()
                out.append(Behind(one, room, datetime.fromisoformat(parked[0]) if parked else None))
    return out
