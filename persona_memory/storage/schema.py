"""The schema on SQLite: ``migrations.py``'s migrations applied to a file, and the check that a
file is ours before we touch it.

Rules:
- ``PRAGMA application_id`` marks a persona-memory file; ``PRAGMA user_version`` is the number
  of migrations applied. An older file is upgraded in place, each migration in its own
  transaction; a file from a newer version, a foreign file or a corrupt one is refused with a
  message naming it, and is never written to.
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
from .dialect import SQLITE
from .migrations import LATEST, script

APPLICATION_ID = 0x504D454D  # "PMEM"



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
            for statement in _statements(script(number, SQLITE)):
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
