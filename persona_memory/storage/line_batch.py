"""Group commit for transcript lines: lines posted at the same moment share one transaction.

A chat runtime with hundreds of live rooms posts lines from many tasks at once. One write
transaction (and one thread hop) per line made the writer connection the bottleneck; here the
lines that queued while a transaction was in flight go into the next one, together.

Rules:
- ``post(line)`` returns the line's id once the transaction holding it committed — the promise
  of one transaction per line: when ``post`` returns, the line is in the file. It returns 0
  when the room is incognito (checked in the same transaction, as before).
- Lines are inserted in the order ``post`` was called, so a room's lines, posted one after
  another, keep their order and their ids grow.
- At most one batch is in flight. A poster that finds none in flight writes its line at once,
  alone (so one room posting line after line pays nothing extra). Posters that come while a
  transaction is in flight queue; when it ends, the first of them leads: it writes every line
  queued (its own included) in one transaction, hands each poster its id, and passes the lead
  to the first poster that queued meanwhile. Nobody polls; nobody waits for a timer.
- A batch of queued lines, once taken, runs to its end: its leader is shielded for the one
  transaction, and a poster cancelled while its line is in a batch gets the outcome first; the
  cancellation surfaces at its next checkpoint (the convention of ``SqliteConnection.run``).
  A poster cancelled before its line was taken leaves the queue: that line is never written.
- A transaction that fails fails every line in it, with the same error (a storage failure:
  the lines were checked before they were queued).
"""

from __future__ import annotations

import sqlite3
from typing import Awaitable, Callable, Sequence

import attrs
import outcome
import trio

from .dialect import dialect_of

PendingLine = tuple[str, str, str, str, str | None, str | None, str | None]
"""(room_id, speaker, text, at, humans JSON, personas JSON, kit) — a row of transcript_lines."""

ROOMS_PER_QUERY = 500  # room ids in one IN (…): far below either backend's parameter limit

Write = Callable[[Callable[[sqlite3.Connection], list[int]]], Awaitable[list[int]]]


@attrs.define(eq=False)
class _Slot:
    line: PendingLine
    woken: trio.Event = attrs.field(factory=trio.Event)
    taken: bool = False
    lead: bool = False
    result: outcome.Outcome | None = None


def insert_lines(conn: sqlite3.Connection, lines: Sequence[PendingLine]) -> list[int]:
    """Insert ``lines`` in order inside the caller's transaction; each one's id, or 0 for a
    line of an incognito room (which is not kept). A constant number of statements whatever
    the batch's size: one lookup of the incognito rooms among the batch's, one ``insert_ids``."""
    secret = _incognito_among(conn, {line[0] for line in lines})
    kept = [line for line in lines if line[0] not in secret]
    new_ids = iter(dialect_of(conn).insert_ids(
        conn,
        "INSERT INTO transcript_lines (room_id, speaker, text, at, humans, personas, kit) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        kept,
    ))
    return [0 if line[0] in secret else next(new_ids) for line in lines]


def _incognito_among(conn: sqlite3.Connection, room_ids: set[str]) -> set[str]:
    """The incognito rooms among ``room_ids``, asked ``ROOMS_PER_QUERY`` at a time."""
    wanted = sorted(room_ids)
    found: set[str] = set()
    for start in range(0, len(wanted), ROOMS_PER_QUERY):
        chunk = wanted[start : start + ROOMS_PER_QUERY]
        found.update(row[0] for row in conn.execute(
            f"SELECT room_id FROM rooms WHERE incognito AND room_id IN ({','.join('?' * len(chunk))})", chunk
        ).fetchall())
    return found


class LineBatcher:
    """Queues transcript lines and writes them in shared transactions through ``write`` (the
    store's writer: one ``BEGIN IMMEDIATE`` … ``COMMIT`` per call)."""

    def __init__(self, write: Write) -> None:
        self._write = write
        self._queue: list[_Slot] = []
        self._in_flight = False
        self.batches = 0  # transactions written, for tests and benchmarks

    async def post(self, line: PendingLine) -> int:
        if not self._in_flight:
            # Nothing in flight, so nothing queued: this line goes alone, at once. Cancelled
            # before its transaction began, it was not written — as with a plain write.
            self._in_flight = True
            try:
                ids = await self._write(lambda conn: insert_lines(conn, (line,)))
                self.batches += 1
                return ids[0]
            finally:
                self._hand_over()
        slot = _Slot(line)
        self._queue.append(slot)
        await self._wait(slot)
        if slot.lead:
            await self._lead()
        assert slot.result is not None
        return slot.result.unwrap()

    async def _wait(self, slot: _Slot) -> None:
        try:
            await slot.woken.wait()
        except trio.Cancelled:
            if not slot.taken and not slot.lead:
                self._queue.remove(slot)
                raise
            with trio.CancelScope(shield=True):  # its line is being written: see it through
                await slot.woken.wait()
                if slot.lead:
                    await self._lead()

    async def _lead(self) -> None:
        """Write everything queued as one transaction, answer each poster, pass the lead on."""
        batch, self._queue = self._queue, []
        for slot in batch:
            slot.taken = True
            slot.lead = False
        try:
            with trio.CancelScope(shield=True):  # other posters' lines: see them through
                try:
                    ids = await self._write(lambda conn: insert_lines(conn, [s.line for s in batch]))
                except Exception as exc:
                    results = [outcome.Error(exc)] * len(batch)
                else:
                    self.batches += 1
                    results = [outcome.Value(i) for i in ids]
            for slot, result in zip(batch, results):
                slot.result = result
                slot.woken.set()
        finally:
            self._hand_over()

    def _hand_over(self) -> None:
        """Pass the lead to the first poster queued, or end it when nobody is."""
        if self._queue:
            successor = self._queue[0]
            successor.lead = True
            successor.woken.set()
        else:
            self._in_flight = False
