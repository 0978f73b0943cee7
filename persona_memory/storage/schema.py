"""The schema, as numbered migrations, and the check that a file is ours before we touch it.

Rules:
- ``PRAGMA application_id`` marks a persona-memory file; ``PRAGMA user_version`` is the number
  of migrations applied. An older file is upgraded in place, each migration in its own
  transaction; a file from a newer version, a foreign file or a corrupt one is refused with a
  message naming it, and is never written to.
- Migration 1 is the design's §1 to the letter: ``persona_memory`` with every listed column,
  ``users`` (``memory_note`` ≤ 400, ``memory_on`` default 1) and ``persona_memory_mute``.
  Constraints that SQLite can hold are in the table (the six kinds, importance 1..10, text ≤ 200).
- Later migrations only add: never rewrite or drop what users stored.
- ``PRAGMA quick_check`` (it reads the whole file) runs only when the file was not closed
  cleanly. SQLite itself keeps the mark: the write-ahead log (``<file>-wal``; a rollback
  ``-journal`` for a file not yet in WAL mode) exists while any connection, in any process, has
  the file open, and is removed when the last one closes cleanly. So a log already there when
  our writer opens means the last run ended in a crash, a kill or a power loss — or that another
  process has the file open, where the check only costs time. Nothing is written to keep the
  mark, so it holds for any number of processes and for read-only files. A file damaged while
  it sat closed is found when a query reads the damaged page (``StorageError``).
"""

from __future__ import annotations

import os
import sqlite3

from ..errors import ForeignDatabase

APPLICATION_ID = 0x504D454D  # "PMEM"

MIGRATIONS: tuple[str, ...] = (
    # 1 — design §1: the memory table and the three user-side fields.
    """
    CREATE TABLE persona_memory (
        id            INTEGER PRIMARY KEY,
        persona       TEXT    NOT NULL,
        subject       TEXT    NOT NULL CHECK (subject IN ('self', 'world') OR subject GLOB 'u:[1-9]*'),
        counterpart   TEXT    CHECK (counterpart IS NULL OR counterpart GLOB 'u:[1-9]*'),
        witnessed     TEXT    NOT NULL DEFAULT '[]',
        room_id       TEXT,
        kind          TEXT    NOT NULL CHECK (kind IN
                        ('fact', 'preference', 'event', 'promise', 'open_loop', 'relationship')),
        text          TEXT    NOT NULL CHECK (length(text) BETWEEN 1 AND 200),
        importance    INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 10),
        valid_from    TEXT,
        valid_to      TEXT,
        closed_by     INTEGER REFERENCES persona_memory(id) ON DELETE SET NULL,
        evidence      TEXT    NOT NULL DEFAULT '[]',
        created       TEXT    NOT NULL,
        last_recalled TEXT,
        recall_count  INTEGER NOT NULL DEFAULT 0,
        embedding     BLOB,
        CHECK (subject <> 'self' OR counterpart IS NOT NULL)
    );
    CREATE TABLE users (
        user_id     INTEGER PRIMARY KEY CHECK (user_id > 0),
        memory_note TEXT    NOT NULL DEFAULT '' CHECK (length(memory_note) <= 400),
        memory_on   INTEGER NOT NULL DEFAULT 1 CHECK (memory_on IN (0, 1))
    );
    CREATE TABLE persona_memory_mute (
        user_id INTEGER NOT NULL CHECK (user_id > 0),
        persona TEXT    NOT NULL,
        PRIMARY KEY (user_id, persona)
    ) WITHOUT ROWID;
    """,
    # 2 — the runtime state around the rows: rooms, the transcript, cursors, notices.
    """
    CREATE TABLE rooms (
        room_id   TEXT PRIMARY KEY,
        private   INTEGER NOT NULL CHECK (private IN (0, 1)),
        incognito INTEGER NOT NULL CHECK (incognito IN (0, 1)),
        kit       TEXT,
        topic     TEXT,
        personas  TEXT NOT NULL,
        humans    TEXT NOT NULL,
        opened    TEXT NOT NULL,
        archived  TEXT
    );
    CREATE TABLE transcript_lines (
        id      INTEGER PRIMARY KEY,
        room_id TEXT NOT NULL,
        speaker TEXT NOT NULL,
        text    TEXT NOT NULL,
        at      TEXT NOT NULL
    );
    CREATE INDEX transcript_by_room ON transcript_lines (room_id, id);
    CREATE TABLE cursors (
        persona      TEXT    NOT NULL,
        room_id      TEXT    NOT NULL,
        last_line_id INTEGER NOT NULL,
        PRIMARY KEY (persona, room_id)
    ) WITHOUT ROWID;
    CREATE TABLE notices (
        id         INTEGER PRIMARY KEY,
        user_id    INTEGER NOT NULL,
        persona    TEXT    NOT NULL,
        room_id    TEXT,
        text       TEXT    NOT NULL,
        memory_ids TEXT    NOT NULL,
        created    TEXT    NOT NULL
    );
    CREATE INDEX notices_by_user ON notices (user_id, id);
    """,
    # 3 — int8 vectors need their scale and the name of the model that made them;
    #     indexes for the read path and the manage page; a per-persona version that every
    #     change to a row bumps (touches excepted), so an actor's cached rows know when
    #     they are stale without reading them.
    """
    ALTER TABLE persona_memory ADD COLUMN embedding_scale REAL;
    ALTER TABLE persona_memory ADD COLUMN embedder TEXT;
    CREATE INDEX memory_open_by_persona ON persona_memory (persona, subject) WHERE valid_to IS NULL;
    CREATE INDEX memory_by_subject ON persona_memory (subject);
    CREATE INDEX memory_by_counterpart ON persona_memory (counterpart) WHERE counterpart IS NOT NULL;
    CREATE INDEX memory_closed_by ON persona_memory (closed_by) WHERE closed_by IS NOT NULL;
    CREATE TABLE persona_versions (
        persona TEXT PRIMARY KEY,
        version INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TRIGGER memory_added AFTER INSERT ON persona_memory BEGIN
        INSERT INTO persona_versions VALUES (new.persona, 1)
            ON CONFLICT (persona) DO UPDATE SET version = version + 1;
    END;
    CREATE TRIGGER memory_deleted AFTER DELETE ON persona_memory BEGIN
        INSERT INTO persona_versions VALUES (old.persona, 1)
            ON CONFLICT (persona) DO UPDATE SET version = version + 1;
    END;
    CREATE TRIGGER memory_changed AFTER UPDATE OF persona, subject, counterpart, witnessed,
        kind, text, importance, valid_from, valid_to, closed_by, embedding, embedding_scale,
        embedder ON persona_memory BEGIN
        INSERT INTO persona_versions VALUES (new.persona, 1)
            ON CONFLICT (persona) DO UPDATE SET version = version + 1;
    END;
    """,
    # 4 — the write path's bookkeeping: slices that keep failing are parked with their error
    #     and a retry time (never skipped silently); an undone notice is kept, marked.
    """
    CREATE TABLE parked_slices (
        persona  TEXT    NOT NULL,
        room_id  TEXT    NOT NULL,
        error    TEXT    NOT NULL,
        attempts INTEGER NOT NULL,
        retry_at TEXT    NOT NULL,
        PRIMARY KEY (persona, room_id)
    ) WITHOUT ROWID;
    ALTER TABLE notices ADD COLUMN undone TEXT;
    CREATE INDEX memory_by_persona_created ON persona_memory (persona, created);
    """,
    # 5 — presence per line: each transcript line records who was in the room when it was said
    #     (humans and personas, JSON lists), the kit mounted then, and whether the room was
    #     incognito. A line whose ``humans`` is NULL was said while the room was not open:
    #     nobody's slice reads it. Lines stored before this migration take their room's
    #     recorded cast and flags (what the write path assumed for them until now). Rooms keep
    #     the display names the runtime last gave, for the sweep; ``user_names`` keeps the
    #     latest display name of every user (``first_word`` folded), so a row that names
    #     another user by name can be refused wherever that user was met.
    """
    ALTER TABLE transcript_lines ADD COLUMN humans TEXT;
    ALTER TABLE transcript_lines ADD COLUMN personas TEXT;
    ALTER TABLE transcript_lines ADD COLUMN kit TEXT;
    ALTER TABLE transcript_lines ADD COLUMN incognito INTEGER NOT NULL DEFAULT 0
        CHECK (incognito IN (0, 1));
    UPDATE transcript_lines SET
        humans = (SELECT r.humans FROM rooms r WHERE r.room_id = transcript_lines.room_id),
        personas = (SELECT r.personas FROM rooms r WHERE r.room_id = transcript_lines.room_id),
        kit = (SELECT r.kit FROM rooms r WHERE r.room_id = transcript_lines.room_id),
        incognito = coalesce(
            (SELECT r.incognito FROM rooms r WHERE r.room_id = transcript_lines.room_id), 0);
    ALTER TABLE rooms ADD COLUMN names TEXT NOT NULL DEFAULT '{}';
    CREATE TABLE user_names (
        user_id    INTEGER PRIMARY KEY CHECK (user_id > 0),
        name       TEXT    NOT NULL,
        first_word TEXT    NOT NULL,
        updated    TEXT    NOT NULL
    );
    CREATE INDEX user_names_by_name ON user_names (first_word);
    """,
    # 6 — the title the runtime may give a room (``RoomOpened.title``), for the human's page;
    #     rooms recorded before it have none and read as "a private chat with …"/"a group chat".
    """
    ALTER TABLE rooms ADD COLUMN title TEXT CHECK (title IS NULL OR length(title) BETWEEN 1 AND 200);
    """,
    # 7 — a lease per persona, for workers sharing one PostgreSQL (``leases.py``): who owns the
    #     persona's writes, at which epoch, until when. A single process never writes it; it is
    #     here so both schemas stay one (``postgres_schema.py``).
    """
    CREATE TABLE persona_leases (
        persona    TEXT    PRIMARY KEY,
        owner      TEXT,
        epoch      INTEGER NOT NULL CHECK (epoch >= 1),
        expires_at TEXT    NOT NULL
    );
    """,
    # 8 — the live workers sharing one PostgreSQL (``membership.py``): a worker id, when it
    #     joined and until when its last heartbeat keeps it live. Here so both schemas stay one.
    """
    CREATE TABLE workers (
        worker     TEXT PRIMARY KEY,
        joined_at  TEXT NOT NULL,
        expires_at TEXT NOT NULL
    );
    """,
    # 9 — the room registry workers share (``room_registry.py``): each open room's state, the
    #     events queued for each persona's owner, and where each worker answers. Here so both
    #     schemas stay one; a single process keeps its registry in memory.
    """
    CREATE TABLE cluster_rooms (
        room_id    TEXT    PRIMARY KEY,
        state      TEXT    NOT NULL,
        generation INTEGER NOT NULL
    );
    CREATE TABLE persona_events (
        id      INTEGER PRIMARY KEY,
        persona TEXT NOT NULL,
        room_id TEXT NOT NULL,
        event   TEXT NOT NULL,
        room    TEXT NOT NULL
    );
    CREATE INDEX persona_events_by_persona ON persona_events (persona, id);
    ALTER TABLE workers ADD COLUMN address TEXT;
    """,
    # 10 — the lines said with a kit mounted, by room (``writes.last_kit``): without it, finding
    #      that a room never had a kit read every line of the room's history back.
    """
    CREATE INDEX transcript_kits ON transcript_lines (room_id, id) WHERE kit IS NOT NULL;
    """,
    # 11 — the web app's revocations (``revocations.py``): a login link's nonce once it was
    #      used and a session once it was signed out, by kind and SHA-256, until the link or
    #      session would have expired anyway — so both hold after a restart and on every worker.
    """
    CREATE TABLE web_revocations (
        kind       TEXT NOT NULL CHECK (kind IN ('link', 'session')),
        token      TEXT NOT NULL,
        expires_at TEXT NOT NULL,
        PRIMARY KEY (kind, token)
    ) WITHOUT ROWID;
    CREATE INDEX web_revocations_by_expiry ON web_revocations (expires_at);
    """,
    # 12 — the event outbox (``outbox.py``): what changed for a person or the runtime (a memory
    #      noted, closed or deleted, a notice undone, a person's controls), written in the
    #      same transaction as the change, ids only — never a memory's text; and how far each
    #      webhook has been delivered, so a restart or a dead worker loses nothing.
    """
    CREATE TABLE outbox (
        id      INTEGER PRIMARY KEY,
        kind    TEXT    NOT NULL,
        user_id INTEGER,
        persona TEXT,
        data    TEXT    NOT NULL,
        created TEXT    NOT NULL
    );
    CREATE INDEX outbox_by_created ON outbox (created);
    CREATE TABLE outbox_cursors (
        subscriber    TEXT    PRIMARY KEY,
        last_event_id INTEGER NOT NULL
    ) WITHOUT ROWID;
    """,
)

LATEST = len(MIGRATIONS)


def configure(conn: sqlite3.Connection, busy_timeout_ms: int) -> None:
    """Per-connection pragmas: synchronous=NORMAL, foreign keys, a busy timeout.

    Call it after ``check_ours``/``migrate``: ``synchronous`` reads the file's header, so on a
    file that is not a database it would fail before the check could name the problem. (WAL
    is a property of the file, set once by ``migrate``.)

    What ``synchronous = NORMAL`` in WAL mode promises: a commit appends to the WAL file and
    returns without an fsync (the WAL is synced at each checkpoint), so a commit costs no disk
    flush — the write benchmark's slices spend no time in fsync. A process killed (SIGKILL,
    a crash) loses nothing it committed: the WAL is in the operating system's cache and the
    next open replays it, so nothing is lost or doubled (the crash tests' 250 kills). A power
    loss or an OS crash may lose the last transactions committed before it — the newest ones,
    never some in the middle, and the file stays whole (recovery replays the WAL up to its
    last complete, checksummed transaction). A slice's rows and its cursor commit together, so
    a slice lost so is written again from its transcript lines when those survived. ``FULL``
    would sync every commit: one flush per transcript line posted and per slice written.
    """
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")


def check_ours(conn: sqlite3.Connection, path: str, *, integrity: bool = False) -> int:
    """Return the file's schema version, or refuse a file that is not ours.

    ``integrity`` also runs SQLite's ``quick_check`` (on the writer, after an unclean
    shutdown: see the rules).

    Raises:
        ForeignDatabase: not SQLite, corrupt, another program's, or from a newer version.
        sqlite3.Error: the file could not be read for another reason (locked, I/O error).
    """
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
        if integrity and app_id == APPLICATION_ID:
            problems = [tuple(r) for r in conn.execute("PRAGMA quick_check").fetchall()]
            if problems != [("ok",)]:
                raise ForeignDatabase(f"{path} is a persona-memory file but it is corrupt: {problems[:3]}")
    except sqlite3.DatabaseError as exc:
        if not _damaged(exc):
            raise  # locked, I/O, permissions: storage trouble, not a foreign file
        raise ForeignDatabase(
            f"{path} is not a readable SQLite database ({exc}); move it away or point "
            "storage.path elsewhere — it was not modified"
        ) from None
    if app_id == 0 and tables == 0 and version == 0:
        return 0
    if app_id != APPLICATION_ID:
        raise ForeignDatabase(
            f"{path} is an SQLite database of another program (application_id {app_id:#x}); "
            "point storage.path elsewhere — it was not modified"
        )
    if version > LATEST:
        raise ForeignDatabase(
            f"{path} has schema version {version}, newer than this persona-memory knows "
            f"({LATEST}); upgrade persona-memory — the file was not modified"
        )
    return version


_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26


def _damaged(exc: sqlite3.DatabaseError) -> bool:
    """Whether SQLite says the bytes themselves are wrong (not a database, or malformed)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return type(exc) is sqlite3.DatabaseError
    return code & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)


def left_open(path: str) -> bool:
    """Whether the file at ``path`` still has its log beside it: it was not closed cleanly, or
    another process has it open (see the rules). Call it before connecting to the file."""
    return os.path.exists(f"{path}-wal") or os.path.exists(f"{path}-journal")


def migrate(conn: sqlite3.Connection, path: str, upto: int = LATEST, *, integrity: bool = True) -> int:
    """Bring the file to schema version ``upto``, one transaction per migration.

    The file is checked first (``check_ours``, with the integrity check if ``integrity``) and
    put in WAL mode; nothing is written to a file that fails the check.

    Returns the version the file had before.

    Raises:
        ForeignDatabase: the file is not ours (see ``check_ours``); it was not modified.
    """
    before = check_ours(conn, path, integrity=integrity)
    if upto > 0 and conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        conn.execute("PRAGMA journal_mode = WAL")
    for number in range(before + 1, upto + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(MIGRATIONS[number - 1]):
                conn.execute(statement)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return before


def _statements(script: str) -> list[str]:
    """Split a migration into statements, keeping each trigger body whole."""
    out: list[str] = []
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \n;"):
                out.append(pending.strip())
            pending = ""
    return out
