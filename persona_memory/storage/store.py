"""The store: every query the product makes, each one unit of work on one connection.

One store, two backends. ``Store`` is the one interface; what is behind it is a writer
connection and read connections, either SQLite's (``open_store``: ``connection.py``) or
PostgreSQL's (``open_postgres_store``: ``postgres_connection.py`` carrying a
``postgres_session.PostgresSession``). The query functions in ``queries.py``, ``writes.py``,
``humans.py``, ``line_batch.py`` and ``revocations.py`` are written once and run on either:
the PostgreSQL session takes SQLite's placeholders and gives back SQLite's values, and the few
statements that must differ ask the connection's ``dialect`` (``dialect.py``). No query has a
twin.

Rules:
- One writer connection; every write is one transaction (all or nothing): ``BEGIN
  IMMEDIATE`` in SQLite, ``BEGIN`` (``READ COMMITTED``) in PostgreSQL. Read connections serve
  readers concurrently (SQLite's WAL, PostgreSQL's MVCC; a PostgreSQL reader's transaction is
  ``REPEATABLE READ``, one snapshot, as SQLite's). Transcript lines posted at the same moment
  share one transaction (``line_batch``). A plan posted twice writes once on both: its cursor
  is checked and moved by one compare-and-set (``writes.post_plan``).
- A persona's rows are written only by that persona's actor; this module does not enforce
  ownership, it offers the operations. The users' own fields are written by the facade.
  Across workers sharing one PostgreSQL, the actor's writes (rows, touches, deletes, undo)
  take a keyword-only ``epoch``: the lease its worker holds, checked inside the same
  transaction (``leases.check_held``); a lost lease raises ``LeaseLost`` and nothing commits.
  With no epoch (SQLite, one process) nothing extra runs.
- Values cross this boundary as ``MemoryRow`` / ``UserControls``, never as raw tuples. A value
  is validated on its way in; rows read back from our own file are trusted
  (``MemoryRow.from_rows``, which checks nothing again).
- ``changes`` counts the writes run through this store that may change what ``read_state``
  reads — a persona's rows (its version) and the humans' switches and notes. Every write
  counts, once it has finished (committed or not), except the ones known not to touch those
  tables: transcript lines, rooms and names, recall stamps, the web app's revocations
  (``_write_unread``). So a reader
  that took ``changes`` before a ``read_state`` and sees the same number later knows that
  nothing it read has changed since — in this process. Another process writing the same file
  is outside the design (one process writes a store at a time; see ``room_recorder``). A task
  can count its own writes meanwhile (``own_writes``), to tell whether anyone else wrote.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import sqlite3
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from typing import TYPE_CHECKING, AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

import trio

from ..clock import as_utc
from ..errors import ForeignDatabase, InvalidInput, NotYourMemory, NotYourNotice, StorageError
from ..events.kinds import ControlsChanged, MemoryDeleted
from ..ids import check_persona, check_user_id, user_ref
from ..rooms import Presence, RoomState, incognito_is_fixed
from ..rows import MemoryRow, UserControls, check_note
from . import outbox, revocations, schema
from .connection import SqliteConnection, open_sqlite
from .stored_rows import StoredRows
from .line_batch import LineBatcher
from .postgres_driver import require_psycopg
from .queries import (
    TranscriptLine,
    controls_in,
    insert_memories_on,
    lines_after,
    names_among,
    persona_rows,
    persona_version,
    raise_type,
    record_rooms_on,
    said_of,
    save_names,
    save_room,
    stored_incognito,
)
from . import humans, leases, writes

if TYPE_CHECKING:
    from ..settings import StorageSettings

T = TypeVar("T")

log = logging.getLogger(__name__)

_OWN_WRITES: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("own_writes", default=None)


def _connect(path: str, busy_timeout_ms: int, *, migrate: bool) -> Callable[[], sqlite3.Connection]:
    """A connect function for one worker thread: open, check (and migrate) the file, configure.

    The file is checked before any pragma that touches it, so a foreign file is refused
    unmodified and the error names it. The writer (``migrate``) also runs the integrity check
    if the file was not closed cleanly (``schema.left_open``), and says so in the log.
    """

    def connect() -> sqlite3.Connection:
        unclean = migrate and schema.left_open(path)  # before our connection opens the log
        if unclean:
            log.warning(
                "%s was not closed cleanly (its SQLite log is still there: a crash, or another "
                "process has it open); checking it with PRAGMA quick_check", path
            )
        try:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open {path}: {exc}") from exc
        conn.row_factory = sqlite3.Row
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            if migrate:
                schema.migrate(conn, path, integrity=unclean)
            else:
                schema.check_ours(conn, path)
            schema.configure(conn, busy_timeout_ms)
        except sqlite3.Error as exc:
            conn.close()
            raise StorageError(f"cannot open {path}: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        return conn

    return connect


class Store:
    """All persistence. Open with ``open_store``; it closes when that block ends."""

    def __init__(
        self, writer: SqliteConnection, readers: Sequence[SqliteConnection], *, sqlite_path: str | None = None
    ) -> None:
        self.sqlite_path = sqlite_path  # the SQLite file, which another process may read too
        self._writer = writer
        self._changes = 0
        self._free_readers: trio.MemoryReceiveChannel[SqliteConnection]
        send, self._free_readers = trio.open_memory_channel(len(readers))
        self._return_reader = send
        for reader in readers:
            send.send_nowait(reader)
        self._lines = LineBatcher(self._write_unread)  # lines change nothing read_state reads

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` on a free read connection (waits for one if all are busy)."""
        reader = await self._free_readers.receive()
        try:
            return await reader.run(fn)
        finally:
            self._return_reader.send_nowait(reader)

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` as one write transaction on the writer connection (counted in ``changes``:
        it may change anything)."""
        try:
            return await self._writer.write(fn)
        finally:
            self._changes += 1
            own = _OWN_WRITES.get()
            if own is not None:
                own[0] += 1

    async def write_cluster(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``write`` for the cluster's own rows (leases, workers: ``leases.py``,
        ``membership.py``), which nothing ``read_state`` reads: a worker's lease rounds do not
        make the actors read their state again (not counted in ``changes``)."""
        return await self._write_unread(fn)

    async def _write_unread(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``write`` for a transaction that changes nothing ``read_state`` reads (not counted)."""
        return await self._writer.write(fn)

    @property
    def changes(self) -> int:
        """How many writes that may change what ``read_state`` reads have finished so far —
        except the humans' switches and notes set through ``set_memory_on``, ``set_muted`` and
        ``set_memory_note``: whoever calls those tells the actors itself (the facade sends each
        live actor a ``ControlsChanged``), so no actor polls this count to learn of them."""
        return self._changes

    @contextlib.contextmanager
    def own_writes(self) -> Iterator[list[int]]:
        """Count, in ``[n]``, the writes counted in ``changes`` that this task (and the tasks
        it starts) makes inside the block."""
        counter = [0]
        token = _OWN_WRITES.set(counter)
        try:
            yield counter
        finally:
            _OWN_WRITES.reset(token)

    # ---- memory rows -------------------------------------------------------------------

    async def persona_rows(self, persona: str) -> tuple[int, list[MemoryRow]]:
        """A persona's version, open rows, and the closed rows an open row replaced (arcs).

        Read in one transaction, so the version matches the rows.
        """
        version, rows, _ = await self.read(lambda conn: persona_rows(conn, persona, said=False))
        return version, rows

    async def persona_rows_said(self, persona: str) -> tuple[int, StoredRows, dict[int, str]]:
        """``persona_rows`` and, in the same transaction, what each open row's transcript
        lines said (``said_of``): what the read path searches a row by, beside its text. The
        rows are a ``StoredRows``: each decoded when read, and their columns decoded in bulk
        for an actor's load (``RowIndex.load``)."""
        return await self.read(lambda conn: persona_rows(conn, persona, said=True))

    async def read_state(
        self, persona: str, user_ids: Iterable[int]
    ) -> tuple[int, dict[int, UserControls]]:
        """What a block build reads besides rows: the persona's version and the humans' controls."""
        wanted = sorted(set(user_ids))

        def query(conn: sqlite3.Connection) -> tuple[int, dict[int, UserControls]]:
            return persona_version(conn, persona), controls_in(conn, wanted)

        return await self.read(query)

    async def insert_memories(self, rows: Iterable[MemoryRow], *, epoch: int | None = None) -> list[MemoryRow]:
        """Insert rows in one transaction; return them with their ids. With ``epoch``: only
        while the lease of every persona among the rows stands at it (else ``LeaseLost``)."""
        rows = list(rows)

        def insert(conn: sqlite3.Connection) -> list[MemoryRow]:
            return insert_memories_on(conn, rows)

        for persona in sorted({row.persona for row in rows}) if epoch is not None else ():
            insert = _fenced(insert, persona, epoch)
        return await self.write(insert)

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
            raise InvalidInput("touch(epoch=...) needs the persona whose lease it is: pass persona=")
        if not stamps:
            return
        params = [(as_utc(when).isoformat(), times, row_id) for row_id, (when, times) in stamps.items()]
        sql = "UPDATE persona_memory SET last_recalled = ?, recall_count = recall_count + ? WHERE id = ?"
        if persona is not None:
            sql += " AND persona = ?"
            params = [(*p, persona) for p in params]

        def update(conn: sqlite3.Connection) -> None:
            conn.executemany(sql, params)

        await self._write_unread(_fenced(update, persona, epoch))  # recall stamps: no version, no switch

    async def memories_about(self, user_id: int) -> list[MemoryRow]:
        """Every row, open and closed, about ``u:<user_id>`` or with them as counterpart."""
        ref = user_ref(user_id)

        def query(conn: sqlite3.Connection) -> list[MemoryRow]:
            cur = conn.execute(
                "SELECT * FROM persona_memory WHERE subject = ? OR counterpart = ? "
                "ORDER BY persona, created, id",
                (ref, ref),
            )
            return MemoryRow.from_rows(cur)

        return await self.read(query)

    async def delete_memory(
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
            raise InvalidInput("delete_memory(epoch=...) needs the persona whose lease it is: pass persona=")

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

        return await self.write(_fenced(delete, persona, epoch))

    async def memory_persona(self, user_id: int, memory_id: int) -> str:
        """The persona holding ``memory_id``, if the row is about ``user_id``.

        Raises:
            NotYourMemory: no such row, or it is not about this user.
        """
        return await self.read(lambda conn: writes.memory_persona(conn, user_id, memory_id))

    async def undo(
        self, user_id: int, notice_id: int, now: datetime, *, persona: str, epoch: int | None = None
    ) -> list[int]:
        """Undo one of ``persona``'s notices to the user: delete exactly the rows it announced,
        reopen what they closed, mark it undone (one transaction). Returns the ids deleted.
        With ``epoch``: only while ``persona``'s lease stands at it.

        Raises:
            NotYourNotice: no such notice of this persona to this user, or it was undone.
            LeaseLost: ``epoch`` is not the lease's any more. Nothing changes.
        """
        def undo(conn: sqlite3.Connection) -> list[int]:
            if writes.notice_persona(conn, user_id, notice_id) != persona:
                raise NotYourNotice(f"notice {notice_id} does not exist, is not u:{user_id}'s, or was undone")
            return writes.undo(conn, user_id, notice_id, now)

        return await self.write(_fenced(undo, persona, epoch))

    async def notice_persona(self, user_id: int, notice_id: int) -> str:
        """The persona whose notice to ``user_id`` this is (not undone).

        Raises:
            NotYourNotice: no such notice for this user, or it was undone.
        """
        return await self.read(lambda conn: writes.notice_persona(conn, user_id, notice_id))

    async def notices(self, user_id: int) -> list:
        """The user's notices not undone, newest first."""
        return await self.read(lambda conn: writes.notices(conn, user_id))

    async def clear_about(self, user_id: int, persona: str, now: datetime, *, epoch: int | None = None) -> int:
        """Delete every row ``persona`` keeps about the user (one transaction); how many went.
        With ``epoch``: only while ``persona``'s lease stands at it (else ``LeaseLost``)."""
        return await self.write(
            _fenced(lambda conn: humans.delete_all_about(conn, user_id, persona, now), persona, epoch)
        )

    async def holders_of_rows_about(self, user_id: int) -> list[str]:
        """The personas that keep rows about the user."""
        return await self.read(lambda conn: humans.persona_of_rows(conn, user_id))

    async def personas_for(self, user_id: int) -> list[str]:
        """Personas that hold rows about the user, shared a room with them, or were muted."""
        return await self.read(lambda conn: humans.personas_for(conn, user_id))

    async def cited_lines(self, room_id: str | None, line_ids: list[int]) -> list[TranscriptLine]:
        """The transcript lines with these ids in ``room_id``, oldest first."""
        return await self.read(lambda conn: humans.cited_lines(conn, room_id, line_ids))

    async def room_facts(self, room_ids: Iterable[str]) -> dict:
        """``humans.RoomFacts`` of each known room among ``room_ids`` (title, private, cast)."""
        wanted = list(room_ids)
        return await self.read(lambda conn: humans.room_facts(conn, wanted))

    async def display_names(self, user_ids: Iterable[int]) -> dict[int, str]:
        """The latest display name of each of these users that the runtime ever named."""
        wanted = list(user_ids)
        return await self.read(lambda conn: humans.display_names(conn, wanted))

    async def rooms_behind(self, persona: str | None = None) -> list:
        """Every (persona, room) with lines past the persona's cursor (the sweep's work); with
        ``persona``, only that persona's."""
        return await self.read(lambda conn: writes.rooms_behind(conn, persona))

    async def parked_personas(self) -> list[str]:
        """The personas with a parked slice: their writer failed one job too often."""
        return await self.read(
            lambda conn: [r[0] for r in conn.execute("SELECT DISTINCT persona FROM parked_slices ORDER BY persona")]
        )

    async def parked_due(self, now: datetime) -> int:
        """How many parked slices may be retried at ``now``."""
        return await self.read(lambda conn: writes.parked_due(conn, now))

    # ---- the humans' controls ----------------------------------------------------------

    async def user_controls(self, user_ids: Iterable[int]) -> dict[int, UserControls]:
        """The controls of each user named (defaults for users who never set anything)."""
        wanted = sorted(set(user_ids))
        return await self.read(lambda conn: controls_in(conn, wanted))

    async def set_memory_note(self, user_id: int, note: str, *, now: datetime | None = None) -> None:
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

        await self._write_unread(update)

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

        await self._write_unread(update)

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

        await self._write_unread(update)

    # ---- the web app's revocations -----------------------------------------------------

    async def revoke(
        self, kind: revocations.Kind, secret: str, expires_at: datetime, now: datetime
    ) -> bool:
        """Record a used login link's nonce or an ended session's id until ``expires_at``
        (pruning what expired by ``now``); ``False`` when it was recorded already
        (``revocations.revoke``)."""
        return await self._write_unread(lambda conn: revocations.revoke(conn, kind, secret, expires_at, now))

    async def is_revoked(self, kind: revocations.Kind, secret: str) -> bool:
        """Whether a login link's nonce was used or a session id ended (``revocations``)."""
        return await self.read(lambda conn: revocations.is_revoked(conn, kind, secret))

    # ---- the event outbox --------------------------------------------------------------

    async def events_after(self, last_id: int, limit: int = 100) -> list:
        """The outbox's events after id ``last_id``, oldest first (``outbox.after``)."""
        return await self.read(lambda conn: outbox.after(conn, last_id, limit))

    async def newest_event(self) -> int:
        """The id of the newest event in the outbox (0: none)."""
        return await self.read(outbox.newest)

    async def event_cursor(self, subscriber: str) -> int:
        """The last event id delivered to ``subscriber``; a new one starts at the newest."""
        return await self._write_unread(lambda conn: outbox.cursor(conn, subscriber))

    async def delivered_up_to(self, subscriber: str) -> int:
        """``subscriber``'s cursor as another worker may have moved it (a read)."""
        return await self.read(lambda conn: outbox.delivered_up_to(conn, subscriber))

    async def advance_events(self, subscriber: str, to_id: int) -> None:
        """Record that ``subscriber`` was delivered every event up to ``to_id``."""
        await self._write_unread(lambda conn: outbox.advance(conn, subscriber, to_id))

    async def prune_events(self, before: datetime, subscribers: Sequence[str] = ()) -> int:
        """Delete the events older than ``before`` that every one of ``subscribers`` (the
        webhooks configured) was delivered (``outbox.prune``)."""
        return await self._write_unread(lambda conn: outbox.prune(conn, before, subscribers))

    async def event_texts(self, event: object) -> dict | None:
        """The text about a person that ``event`` points at, as the store holds it now
        (``outbox.texts_of``): for a subscriber configured to get text."""
        return await self.read(lambda conn: outbox.texts_of(conn, event))

    # ---- rooms and the transcript ------------------------------------------------------

    async def save_room(self, room: RoomState, when: datetime) -> None:
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

        await self._write_unread(save)

    async def record_rooms(
        self,
        opened: Sequence[tuple[RoomState, datetime]],
        archived: Sequence[tuple[str, datetime]],
        names: Mapping[int, tuple[str, datetime]],
    ) -> list[str]:
        """Record, in one transaction, rooms opened (as ``save_room``), then rooms archived,
        then the latest display name of each user named (``{user id: (name, when)}``).

        A room stored with the other ``incognito`` is not overwritten: its id is returned
        among those refused, and the rest is recorded.
        """
        return await self._write_unread(lambda conn: record_rooms_on(conn, opened, archived, names))

    async def room_flags(self) -> dict[str, bool]:
        """Every room id ever opened, with whether it is incognito."""
        return await self.read(
            lambda conn: {r[0]: bool(r[1]) for r in conn.execute("SELECT room_id, incognito FROM rooms")}
        )

    async def names_among(self, words: Iterable[str]) -> dict[int, str]:
        """The known display names (latest, by user id) whose first word is one of ``words``
        (any case): the users a text may be naming."""
        wanted = sorted({w.casefold() for w in words if w})
        if not wanted:
            return {}
        return await self.read(lambda conn: names_among(conn, wanted))

    async def room_incognito(self, room_id: str) -> bool | None:
        """Whether a known room id is incognito; ``None`` if it was never opened."""
        found = await self.read(
            lambda conn: conn.execute("SELECT incognito FROM rooms WHERE room_id = ?", (room_id,)).fetchone()
        )
        return None if found is None else bool(found[0])

    async def archive_room(self, room_id: str, when: datetime) -> None:
        archived = as_utc(when).isoformat()
        await self._write_unread(
            lambda conn: conn.execute(
                "UPDATE rooms SET archived = ? WHERE room_id = ?", (archived, room_id)
            )
        )

    async def post_line(
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

        return await self.read(lambda conn: lines_after(conn, room_id, after_id, limit))


def _fenced(fn: Callable[[sqlite3.Connection], T], persona: str | None, epoch: int | None) -> Callable[[sqlite3.Connection], T]:
    """``fn``, first checking in its transaction that ``persona``'s lease stands at ``epoch``
    (``leases.check_held``); ``fn`` itself when no epoch is given."""
    if epoch is None:
        return fn

    def fenced(conn: sqlite3.Connection) -> T:
        leases.check_held(conn, persona, epoch)
        return fn(conn)

    return fenced


@asynccontextmanager
async def open_store(path: str, *, busy_timeout_ms: int = 5000, read_connections: int = 2) -> AsyncIterator[Store]:
    """Open (creating or upgrading) the SQLite file at ``path``; close it when the block ends.

    The writer opens first and migrates; then the read connections. If any of them fails to
    open, the ones already open are closed before the error leaves.

    Raises:
        ForeignDatabase: the file is corrupt, another program's, or from a newer version.
        StorageError: SQLite could not open the file (a missing directory, permissions).
    """
    if path == ":memory:":
        raise StorageError(
            "storage.path ':memory:' cannot be shared between connections; use a file path"
        )
    _check_readers(read_connections)
    if os.path.isdir(path):
        raise ForeignDatabase(f"{path} is a directory; storage.path must name a file")

    async def writer() -> SqliteConnection:
        return await open_sqlite("writer", _connect(path, busy_timeout_ms, migrate=True))

    async def reader(n: int) -> SqliteConnection:
        return await open_sqlite(f"reader-{n}", _connect(path, busy_timeout_ms, migrate=False))

    async with _opened(writer, reader, read_connections, sqlite_path=os.path.abspath(path)) as store:
        yield store


@asynccontextmanager
async def open_postgres_store(
    url: str, *, lock_timeout_ms: int = 5000, read_connections: int = 2
) -> AsyncIterator[Store]:
    """Open (creating or upgrading) the store in the PostgreSQL database at ``url``; close it
    when the block ends. Each connection is a psycopg one on its own thread
    (``postgres_connection``) with the store's face (``postgres_session``): one writer, which
    migrates, and ``read_connections`` readers. A statement waits at most ``lock_timeout_ms``
    for a lock (PostgreSQL's ``lock_timeout``, as ``busy_timeout_ms`` is SQLite's).

    Raises:
        ConfigError: psycopg, the driver (the ``postgres`` extra), is not installed.
        ForeignDatabase: the database holds another program's tables, or a newer schema.
        StorageError: the server could not be reached or refused the connection.
    """
    _check_readers(read_connections)
    require_psycopg()  # psycopg only for a PostgreSQL store, and a clear error without it
    from .postgres_connection import open_postgres
    from .postgres_session import session_of

    async def connection(name: str, *, migrate: bool):  # type: ignore[no-untyped-def]
        connect = session_of(url, migrate=migrate, name=name, lock_timeout_ms=lock_timeout_ms)
        return await open_postgres(name, connect)

    async def writer():  # type: ignore[no-untyped-def]
        return await connection("writer", migrate=True)

    async def reader(n: int):  # type: ignore[no-untyped-def]
        return await connection(f"reader-{n}", migrate=False)

    async with _opened(writer, reader, read_connections) as store:
        yield store


def open_store_of(storage: StorageSettings) -> AbstractAsyncContextManager[Store]:
    """The store the settings name: PostgreSQL at ``storage.url``, else the SQLite file at
    ``storage.path`` (see ``open_postgres_store`` and ``open_store``)."""
    if storage.backend == "postgresql":
        return open_postgres_store(
            storage.url, lock_timeout_ms=storage.busy_timeout_ms, read_connections=storage.read_connections
        )
    return open_store(
        storage.path, busy_timeout_ms=storage.busy_timeout_ms, read_connections=storage.read_connections
    )


def _check_readers(read_connections: object) -> None:
    if isinstance(read_connections, bool) or not isinstance(read_connections, int) or read_connections < 1:
        raise InvalidInput(f"read_connections must be an int >= 1, got {read_connections!r}")


@asynccontextmanager
async def _opened(
    writer: Callable, reader: Callable, read_connections: int, *, sqlite_path: str | None = None
) -> AsyncIterator[Store]:
    """The writer (opened first: it migrates), then the readers, as one ``Store``; every one
    opened is closed when the block ends or a later one fails to open."""
    first = await writer()
    readers: list = []
    try:
        for n in range(read_connections):
            readers.append(await reader(n))
        yield Store(first, readers, sqlite_path=sqlite_path)
    finally:
        with trio.CancelScope(shield=True):
            for one in readers:
                await one.aclose()
            await first.aclose()

