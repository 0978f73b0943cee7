"""The schema on PostgreSQL: ``migrations.py``'s migrations applied to a database, and the check
that a database is ours before we touch it.

Migration N makes what it makes in an SQLite file (``dialect.py`` tables how each column type
and constraint is said in PostgreSQL); a database at version N holds what a file at version N
holds. ``PRAGMA application_id`` and ``user_version`` become the one row of
``persona_memory_schema``.

Rules:
- A database is ours when it has ``persona_memory_schema`` (application ``persona-memory``),
  or is empty (no table in its current schema). Anything else — another program's tables, a
  newer version — is refused with ``ForeignDatabase`` naming the database, and is never
  written to.
- Each migration is one transaction that first takes a transaction-level advisory lock and
  reads the version again, so several processes opening one database at once migrate it once.
- Later migrations only add (``migrations.py``).
"""

from __future__ import annotations

import psycopg

from ..errors import ForeignDatabase
from .dialect import POSTGRES
from .migrations import LATEST, script
from .schema import APPLICATION_ID

APPLICATION = "persona-memory"
VERSION_TABLE = "persona_memory_schema"

_VERSION_TABLE_DDL = f"""
CREATE TABLE {VERSION_TABLE} (
    application text    PRIMARY KEY CHECK (application = '{APPLICATION}'),
    version     integer NOT NULL CHECK (version >= 0)
);
INSERT INTO {VERSION_TABLE} VALUES ('{APPLICATION}', 0);
"""


def check_ours(conn: psycopg.Connection) -> int:
    """Return the database's schema version, or refuse a database that is not ours.

    Raises:
        ForeignDatabase: another program's tables, or a version newer than this code knows.
        psycopg.Error: the database could not be read for another reason.
    """
    name = conn.info.dbname
    # One statement, one snapshot: another process migrating meanwhile (several workers
    # starting at once) is seen as done or not begun, never as tables without their version.
    ours, tables = conn.execute(
        "SELECT coalesce(bool_or(tablename = %s), false), count(*) FROM pg_tables "
        "WHERE schemaname = current_schema()",
        (VERSION_TABLE,),
    ).fetchone()
    if not ours:
        if tables:
            raise ForeignDatabase(
                f"PostgreSQL database {name!r} has {tables} tables of another program (no "
                f"{VERSION_TABLE}); point storage.url at an empty database — it was not modified"
            )
        return 0
    row = conn.execute(f"SELECT application, version FROM {VERSION_TABLE}").fetchone()
    if row is None or row[0] != APPLICATION:
        raise ForeignDatabase(f"PostgreSQL database {name!r} has a {VERSION_TABLE} table that is not ours")
    version = row[1]
    if version > LATEST:
        raise ForeignDatabase(
            f"PostgreSQL database {name!r} has schema version {version}, newer than this "
            f"persona-memory knows ({LATEST}); upgrade persona-memory — it was not modified"
        )
    return version


def _has_version_table(conn: psycopg.Connection) -> bool:
    """Whether ``persona_memory_schema`` exists, as of this statement.

    A query of ``pg_tables`` reads the catalog on the statement's own snapshot, so it sees a
    table another process committed while we waited for the lock; ``to_regclass`` answers
    from this session's catalog cache, which may not have caught up yet.
    """
    return conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = %s)",
        (VERSION_TABLE,),
    ).fetchone()[0]


def migrate(conn: psycopg.Connection, upto: int = LATEST) -> int:
    """Bring the database to schema version ``upto``, one transaction per migration.

    ``conn`` is in autocommit mode (as ``postgres_connection.connect_to`` opens it). The
    database is checked first; nothing is written to one that fails the check.

    Returns the version the database had before.

    Raises:
        ForeignDatabase: the database is not ours (see ``check_ours``); it was not modified.
    """
    before = check_ours(conn)
    for number in range(before + 1, upto + 1):
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (APPLICATION_ID,))
            if number == 1 and not _has_version_table(conn):
                conn.execute(_VERSION_TABLE_DDL)
            current = check_ours(conn)  # again, under the lock: another process may have migrated
            if current >= number:
                continue
            conn.execute(script(number, POSTGRES))
            conn.execute(f"UPDATE {VERSION_TABLE} SET version = %s", (number,))
    return before
