"""The memory rows (``persona_memory``): what a persona keeps, read, inserted, reinforced and
deleted — a repository over the store's units of work (``units.py``).

Rules:
- A persona's rows are written only by that persona's actor; this repository offers the
  operations and does not enforce ownership. Across workers sharing one PostgreSQL, the
  actor's writes take a keyword-only ``epoch``: the lease its worker holds, checked inside the
  same transaction (``leases.fenced``); a lost lease raises ``LeaseLost`` and nothing commits.
- Values cross as ``MemoryRow``, never as raw tuples; rows read back are trusted
  (``MemoryRow.from_rows``).
- Recall stamps (``touch``) change no version, so they are not counted in ``changes``.
- A row is a user's when its subject is ``u:<id>`` or it is a ``self`` row whose counterpart
  is ``u:<id>``. Clearing is the human's delete: physical. The notices that announced cleared
  rows are marked undone, so no toast offers to undo what is gone.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Iterable, Mapping

from ..clock import as_utc
from ..errors import InvalidInput, NotYourMemory
from ..events.kinds import MemoryDeleted, NoticeUndone
from ..ids import user_ref
from ..rows import MemoryRow
from . import outbox, writes
from .leases import fenced
from .queries import insert_memories_on, persona_rows
from .stored_rows import StoredRows
from .units import Units


class Memories:
    """The memory rows of every persona (``store.memories``)."""

    def __init__(self, units: Units) -> None:
        self._units = units

    async def rows(self, persona: str) -> tuple[int, list[MemoryRow]]:
        """A persona's version, open rows, and the closed rows an open row replaced (arcs).

        Read in one transaction, so the version matches the rows.
        """
        version, rows, _ = await self._units.read(lambda conn: persona_rows(conn, persona, said=False))
        return version, rows

    async def rows_said(self, persona: str) -> tuple[int, StoredRows, dict[int, str]]:
        """``rows`` and, in the same transaction, what each open row's transcript lines said
        (``queries.said_of``): what the read path searches a row by, beside its text. The rows
        are a ``StoredRows``: each decoded when read, and their columns decoded in bulk for an
        actor's load (``RowIndex.load``)."""
        return await self._units.read(lambda conn: persona_rows(conn, persona, said=True))

    async def insert(self, rows: Iterable[MemoryRow], *, epoch: int | None = None) -> list[MemoryRow]:
        """Insert rows in one transaction; return them with their ids. With ``epoch``: only
        while the lease of every persona among the rows stands at it (else ``LeaseLost``)."""
        rows = list(rows)

        def insert(conn: sqlite3.Connection) -> list[MemoryRow]:
            return insert_memories_on(conn, rows)

        for persona in sorted({row.persona for row in rows}) if epoch is not None else ():
            insert = fenced(insert, persona, epoch)
        return await self._units.write(insert)

    async def touch(
        self, stamps: Mapping[int, tuple[datetime, int]], *, persona: str | None = None, epoch: int | None = None
    ) -> None:
        """Reinforce rows that loaded into blocks, in one write.

        ``stamps`` maps a row id to (when it last loaded, how many times it loaded): the row
        gets ``last_recalled = when`` and ``recall_count + times``. With ``persona``, only
        that persona's rows are stamped; with ``epoch`` too, only while its lease stands at
        it (else ``LeaseLost``, nothing stamped).

        Raises:
            InvalidInput: an ``epoch`` without the ``persona`` it is the lease of.
        """
        if epoch is not None and persona is None:
            raise InvalidInput("memories.touch(epoch=...) needs the persona whose lease it is: pass persona=")
        if not stamps:
            return
        params = [(as_utc(when).isoformat(), times, row_id) for row_id, (when, times) in stamps.items()]
        sql = "UPDATE persona_memory SET last_recalled = ?, recall_count = recall_count + ? WHERE id = ?"
        if persona is not None:
            sql += " AND persona = ?"
            params = [(*p, persona) for p in params]

        def update(conn: sqlite3.Connection) -> None:
            conn.executemany(sql, params)

        await self._units.write_unread(fenced(update, persona, epoch))  # recall stamps: no version, no switch

    async def about(self, user_id: int) -> list[MemoryRow]:
        """Every row, open and closed, about ``u:<user_id>`` or with them as counterpart."""
        ref = user_ref(user_id)

        def query(conn: sqlite3.Connection) -> list[MemoryRow]:
            cur = conn.execute(
                "SELECT * FROM persona_memory WHERE subject = ? OR counterpart = ? "
                "ORDER BY persona, created, id",
                (ref, ref),
            )
            return MemoryRow.from_rows(cur)

        return await self._units.read(query)

    async def delete(
        self, user_id: int, memory_id: int, *, persona: str | None = None, epoch: int | None = None
    ) -> MemoryRow:
        """Physically delete one row about ``user_id`` (kept by ``persona``, if named);
        return what was deleted. With ``epoch``: only while ``persona``'s lease stands at it.

        Raises:
            NotYourMemory: no such row, or it is not about this user. Nothing changes.
            LeaseLost: ``epoch`` is not the lease's any more. Nothing changes.
        """
        ref = user_ref(user_id)
        if isinstance(memory_id, bool) or not isinstance(memory_id, int) or not 0 < memory_id < 2**63:
            raise InvalidInput(f"memory_id must be a positive int, got {memory_id!r}")
        if epoch is not None and persona is None:
            raise InvalidInput("memories.delete(epoch=...) needs the persona whose lease it is: pass persona=")

        def delete(conn: sqlite3.Connection) -> MemoryRow:
            found = conn.execute(
                "SELECT * FROM persona_memory WHERE id = ? AND (subject = ? OR counterpart = ?)",
                (memory_id, ref, ref),
            ).fetchone()
            if found is None or (persona is not None and found["persona"] != persona):
                raise NotYourMemory(f"memory {memory_id} does not exist or is not about {ref}")
            conn.execute("DELETE FROM persona_memory WHERE id = ?", (memory_id,))
            outbox.record(conn, [MemoryDeleted(user_id, found["persona"], [memory_id], "deleted")])
            return MemoryRow.from_row(found)

        return await self._units.write(fenced(delete, persona, epoch))

    async def persona_of(self, user_id: int, memory_id: int) -> str:
        """The persona holding ``memory_id``, if the row is about ``user_id``.

        Raises:
            NotYourMemory: no such row, or it is not about this user.
        """
        return await self._units.read(lambda conn: writes.memory_persona(conn, user_id, memory_id))

    async def clear_about(self, user_id: int, persona: str, now: datetime, *, epoch: int | None = None) -> int:
        """Delete every row ``persona`` keeps about the user (one transaction); how many went.
        With ``epoch``: only while ``persona``'s lease stands at it (else ``LeaseLost``)."""
        return await self._units.write(
            fenced(lambda conn: delete_all_about(conn, user_id, persona, now), persona, epoch)
        )

    async def holders_about(self, user_id: int) -> list[str]:
        """The personas that keep rows about the user."""
        return await self._units.read(lambda conn: persona_of_rows(conn, user_id))


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
