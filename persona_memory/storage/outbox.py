"""The event outbox: each change's events, written in the change's own transaction.

Functions of a connection (either backend's: see ``store``), run inside the caller's unit of
work; ``Outbox`` runs the subscribers' reads and cursor moves each as one (the store's
``store.outbox``). The change and its events commit together or not at all, so a subscriber hears of every
change that happened and of none that did not.

Rules:
- Ids increase with every event, in commit order, so a reader that saw event ``n`` has seen
  every event before it and resumes with ``after(n)``. SQLite has one writer; on PostgreSQL the
  writers of events take one transaction-level advisory lock before their insert (the insert
  is the last statement of its change, so the lock is held only until the commit), so a lower
  id never commits after a higher one. ``prune`` never deletes the newest event, so SQLite
  never gives an id out twice.
- Rows hold ids and switches only (``events.kinds``): no text about a person.
- A subscriber's cursor (``outbox_cursors``) is the id of the last event it was delivered; a
  new subscriber starts at the newest event there is (it hears what happens from then on).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone

from ..events.kinds import ControlsChanged, Delivered, Event, MemoryClosed, MemoryNoted, data_of, event_of
from .dialect import dialect_of
from .units import Units

OUTBOX_LOCK = 0x504D4556  # "PMEV": the advisory lock event writers take on PostgreSQL


def record(conn: sqlite3.Connection, events: Iterable[Event], now: datetime | None = None) -> None:
    """Add ``events`` to the outbox (inside the caller's transaction), stamped ``now`` (the
    system's UTC time when the caller has no clock)."""
    params = [
        (e.kind, e.user_id, getattr(e, "persona", None), json.dumps(data_of(e)),
         (now or datetime.now(timezone.utc)).isoformat())
        for e in events
    ]
    if not params:
        return
    if dialect_of(conn).name == "postgresql":
        conn.execute("SELECT pg_advisory_xact_lock(?)", (OUTBOX_LOCK,))
    conn.executemany(
        "INSERT INTO outbox (kind, user_id, persona, data, created) VALUES (?, ?, ?, ?, ?)", params
    )


def after(conn: sqlite3.Connection, last_id: int, limit: int = 100) -> list[Delivered]:
    """The events with ids greater than ``last_id``, oldest first, at most ``limit``."""
    cur = conn.execute(
        "SELECT id, kind, data, created FROM outbox WHERE id > ? ORDER BY id LIMIT ?", (last_id, limit)
    )
    return [
        Delivered(int(r[0]), datetime.fromisoformat(r[3]), event_of(r[1], json.loads(r[2]))) for r in cur
    ]


def newest(conn: sqlite3.Connection) -> int:
    """The id of the newest event (0 when there is none)."""
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM outbox").fetchone()[0])


def cursor(conn: sqlite3.Connection, subscriber: str) -> int:
    """Where ``subscriber`` stands: the last event id delivered to it. A subscriber met for
    the first time is placed at the newest event (inside the caller's transaction)."""
    conn.execute(
        "INSERT INTO outbox_cursors (subscriber, last_event_id) "
        "VALUES (?, (SELECT coalesce(max(id), 0) FROM outbox)) ON CONFLICT DO NOTHING",
        (subscriber,),
    )
    return int(
        conn.execute("SELECT last_event_id FROM outbox_cursors WHERE subscriber = ?", (subscriber,)).fetchone()[0]
    )


def delivered_up_to(conn: sqlite3.Connection, subscriber: str) -> int:
    """``subscriber``'s cursor as it stands (0 when it has none), without placing it."""
    found = conn.execute("SELECT last_event_id FROM outbox_cursors WHERE subscriber = ?", (subscriber,)).fetchone()
    return int(found[0]) if found else 0


def advance(conn: sqlite3.Connection, subscriber: str, to_id: int) -> None:
    """Move ``subscriber``'s cursor forward to ``to_id`` (never back)."""
    conn.execute(
        "UPDATE outbox_cursors SET last_event_id = ? WHERE subscriber = ? AND last_event_id < ?",
        (to_id, subscriber, to_id),
    )


def prune(conn: sqlite3.Connection, before: datetime, subscribers: Sequence[str]) -> int:
    """Delete events written before ``before`` that every one of ``subscribers`` (the webhooks
    configured now: a cursor left by a removed one holds nothing back) has been delivered, the
    newest event excepted; return how many went."""
    names = sorted(set(subscribers))
    delivered = "id"
    if names:
        marks = ",".join("?" * len(names))
        delivered = f"(SELECT coalesce(min(last_event_id), 0) FROM outbox_cursors WHERE subscriber IN ({marks}))"
    return conn.execute(
        f"DELETE FROM outbox WHERE created < ? AND id < (SELECT max(id) FROM outbox) AND id <= {delivered}",
        (before.isoformat(), *names),
    ).rowcount


class Outbox:
    """The outbox as its subscribers use it (``store.outbox``): each call one unit of work;
    the writes (cursors, pruning) are not counted in ``changes``."""

    def __init__(self, units: Units) -> None:
        self._units = units

    async def after(self, last_id: int, limit: int = 100) -> list[Delivered]:
        """The events after id ``last_id``, oldest first (``after``)."""
        return await self._units.read(lambda conn: after(conn, last_id, limit))

    async def newest(self) -> int:
        """The id of the newest event in the outbox (0: none)."""
        return await self._units.read(newest)

    async def cursor(self, subscriber: str) -> int:
        """The last event id delivered to ``subscriber``; a new one starts at the newest."""
        return await self._units.write_unread(lambda conn: cursor(conn, subscriber))

    async def delivered_up_to(self, subscriber: str) -> int:
        """``subscriber``'s cursor as another worker may have moved it (a read)."""
        return await self._units.read(lambda conn: delivered_up_to(conn, subscriber))

    async def advance(self, subscriber: str, to_id: int) -> None:
        """Record that ``subscriber`` was delivered every event up to ``to_id``."""
        await self._units.write_unread(lambda conn: advance(conn, subscriber, to_id))

    async def prune(self, before: datetime, subscribers: Sequence[str] = ()) -> int:
        """Delete the events older than ``before`` that every one of ``subscribers`` (the
        webhooks configured) was delivered (``prune``)."""
        return await self._units.write_unread(lambda conn: prune(conn, before, subscribers))

    async def texts_of(self, event: Event) -> dict | None:
        """The text about a person that ``event`` points at, as the store holds it now
        (``texts_of``): for a subscriber configured to get text."""
        return await self._units.read(lambda conn: texts_of(conn, event))


# ---- the events of each change ---------------------------------------------------------------


def user_of(subject: str, counterpart: str | None) -> int | None:
    """The person a row is about: its subject ``u:<id>``, or a self row's counterpart."""
    ref = subject if subject.startswith("u:") else counterpart
    return int(ref[2:]) if ref and ref.startswith("u:") else None


def closings(conn: sqlite3.Connection, persona: str, closed: Iterable[tuple[int, str, int | None]]) -> list[Event]:
    """``MemoryClosed`` for each ``(row id, valid_to, closed_by)`` a plan closed."""
    out: list[Event] = []
    for row_id, valid_to, closed_by in closed:
        found = conn.execute("SELECT subject, counterpart FROM persona_memory WHERE id = ?", (row_id,)).fetchone()
        user = user_of(found[0], found[1]) if found else None
        out.append(MemoryClosed(row_id, user, persona, closed_by, valid_to))
    return out


def texts_of(conn: sqlite3.Connection, event: Event) -> dict | None:
    """The text ``event`` points at, read now: a noted memory's toast (``notice``, unless it
    was undone) and rows (``memories``: id → text, those not deleted); a closed row's text;
    a note's current words. ``None`` when there is none (a deletion, a switch)."""
    match event:
        case MemoryNoted(notice_id=notice_id, memory_ids=ids):
            found = conn.execute("SELECT text FROM notices WHERE id = ? AND undone IS NULL", (notice_id,)).fetchone()
            texts = _row_texts(conn, ids)
            if found is None and not texts:
                return None
            return {"notice": found[0] if found else None, "memories": texts}
        case MemoryClosed(memory_id=memory_id):
            texts = _row_texts(conn, [memory_id])
            return {"memories": texts} if texts else None
        case ControlsChanged(control="note", user_id=user_id):
            found = conn.execute("SELECT memory_note FROM users WHERE user_id = ?", (user_id,)).fetchone()
            return {"note": found[0] if found else ""}
        case _:
            return None


def _row_texts(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[str, str]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    marks = ",".join("?" * len(wanted))
    return {
        str(r[0]): r[1]
        for r in conn.execute(f"SELECT id, text FROM persona_memory WHERE id IN ({marks}) ORDER BY id", wanted)
    }
