"""The store: the one face of persistence, owning the connections; each table family's
queries are a repository it exposes.

One store, two backends. ``Store`` is the one interface; what is behind it is a writer
connection and read connections, either SQLite's (``open_store``: ``connection.py``) or
PostgreSQL's (``open_postgres_store``: ``postgres_connection.py`` carrying a
``postgres_session.PostgresSession``). The SQL — in the repositories' modules below and in
the functions they share with the write path and the cluster (``queries.py``, ``writes.py``,
``line_batch.py``, ``humans.py``) — is written once and runs on either: the PostgreSQL session
takes SQLite's placeholders and gives back SQLite's values, and the few statements that must
differ ask the connection's ``dialect`` (``dialect.py``). No query has a twin.

The repositories, one a table family, each in its own module, each running its queries
through this store's doors (``units.py``):

    store.memories      persona_memory                       memories.py
    store.notices       notices                              notices.py
    store.controls      users, persona_memory_mute           controls.py
    store.rooms         rooms (and the names a room gives)   rooms.py
    store.names         user_names                           names.py
    store.transcript    transcript_lines                     transcript.py
    store.backlog       cursors, parked_slices               backlog.py
    store.outbox        outbox, outbox_cursors               outbox.py
    store.revocations   web_revocations                      revocations.py

The store itself keeps the doors (``read``, ``write``, ``write_unread``, ``write_cluster``),
the count of writes (``changes``, ``own_writes``) and the two reads that join table families
(``read_state``, ``personas_for``). Code that runs one unit of work over several families
(the write path's plan, the cluster's leases and registry) passes a function of the connection
to a door.

Rules:
- One writer connection; every write is one transaction (all or nothing): ``BEGIN
  IMMEDIATE`` in SQLite, ``BEGIN`` (``READ COMMITTED``) in PostgreSQL. Read connections serve
  readers concurrently (SQLite's WAL, PostgreSQL's MVCC; a PostgreSQL reader's transaction is
  ``REPEATABLE READ``, one snapshot, as SQLite's). Transcript lines posted at the same moment
  share one transaction (``line_batch``). A plan posted twice writes once on both: its cursor
  is checked and moved by one compare-and-set (``writes.post_plan``).
- A persona's rows are written only by that persona's actor; the store does not enforce
  ownership, it offers the operations. The users' own fields are written by the facade.
  Across workers sharing one PostgreSQL, the actor's writes (rows, touches, deletes, undo)
  take a keyword-only ``epoch``: the lease its worker holds, checked inside the same
  transaction (``leases.fenced``); a lost lease raises ``LeaseLost`` and nothing commits.
  With no epoch (SQLite, one process) nothing extra runs.
- Values cross this boundary as ``MemoryRow`` / ``UserControls``, never as raw tuples. A value
  is validated on its way in; rows read back from our own file are trusted
  (``MemoryRow.from_rows``, which checks nothing again).
- ``changes`` counts the writes run through this store that may change what ``read_state``
  reads — a persona's rows (its version) and the humans' switches and notes. Every write
  through ``write`` counts, once it has finished (committed or not); the ones known not to
  touch those tables go through ``write_unread`` and do not: transcript lines, rooms and
  names, recall stamps, the outbox's cursors, the web app's revocations. So a reader
  that took ``changes`` before a ``read_state`` and sees the same number later knows that
  nothing it read has changed since — in this process. Another process writing the same file
  is outside the design (one process writes a store at a time; see ``room_recorder``). A task
  can count its own writes meanwhile (``own_writes``), to tell whether anyone else wrote.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import sqlite3
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, AsyncIterator, Callable, Iterable, Iterator, Sequence, TypeVar

import trio

from ..errors import ForeignDatabase, InvalidInput, StorageError
from ..rows import UserControls
from . import humans, schema
from .backlog import Backlog
from .connection import SqliteConnection, open_sqlite
from .controls import Controls
from .memories import Memories
from .names import Names
from .notices import Notices
from .outbox import Outbox
from .postgres_driver import require_psycopg
from .queries import controls_in, persona_version
from .revocations import Revocations
from .rooms import Rooms
from .transcript import Transcript

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
    """All persistence: the connections, and a repository per table family (see the module
    docstring). Open with ``open_store``; it closes when that block ends."""

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
        self.memories = Memories(self)
        self.notices = Notices(self)
        self.controls = Controls(self)
        self.rooms = Rooms(self)
        self.names = Names(self)
        self.transcript = Transcript(self)
        self.backlog = Backlog(self)
        self.outbox = Outbox(self)
        self.revocations = Revocations(self)

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
        return await self.write_unread(fn)

    async def write_unread(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """``write`` for a transaction that changes nothing ``read_state`` reads (not counted):
        what the repositories write outside the rows and the humans' switches."""
        return await self._writer.write(fn)

    @property
    def changes(self) -> int:
        """How many writes that may change what ``read_state`` reads have finished so far —
        except the humans' switches and notes set through ``controls`` (``set_note``,
        ``set_memory_on``, ``set_muted``): whoever calls those tells the actors itself (the
        facade sends each live actor a ``ControlsChanged``), so no actor polls this count to
        learn of them."""
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

    async def read_state(
        self, persona: str, user_ids: Iterable[int]
    ) -> tuple[int, dict[int, UserControls]]:
        """What a block build reads besides rows, in one snapshot across two table families:
        the persona's version and the humans' controls."""
        wanted = sorted(set(user_ids))

        def query(conn: sqlite3.Connection) -> tuple[int, dict[int, UserControls]]:
            return persona_version(conn, persona), controls_in(conn, wanted)

        return await self.read(query)

    async def personas_for(self, user_id: int) -> list[str]:
        """Personas that hold rows about the user, shared a room with them, or were muted
        (one read across the rows, the rooms and the mutes: ``humans.personas_for``)."""
        return await self.read(lambda conn: humans.personas_for(conn, user_id))


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

