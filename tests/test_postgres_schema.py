"""The schema on PostgreSQL matches SQLite's: the same tables and columns at every version, each
column's type as its kind says, the same constraints refusing the same rows, the same
version bumps, and the same refusal of a database that is not ours.

Each test migrates a fresh database on the suite's server (``postgres_url``) and, where it
compares, an SQLite file in ``tmp_path`` migrated by ``schema.py``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Callable

import attrs
import psycopg
import pytest
import trio

from persona_memory.errors import ForeignDatabase, StorageError
from persona_memory.storage import postgres_schema, schema
from persona_memory.storage.postgres_connection import connect_to, open_postgres

CREATED = "2026-09-03T07:30:00+00:00"


def _pg(url: str) -> psycopg.Connection:
    return psycopg.connect(url, autocommit=True)


def _sqlite(path: Path, upto: int = schema.LATEST) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    schema.migrate(conn, str(path), upto=upto)
    return conn


def _sqlite_columns(conn: sqlite3.Connection) -> dict[str, list[tuple[str, str, bool, bool]]]:
    """``{table: [(column, declared type, not null, primary key), …]}`` in column order."""
    tables = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return {
        table: [(r[1], r[2], bool(r[3]), bool(r[5])) for r in conn.execute(f"PRAGMA table_info({table})")]
        for table in tables
    }


def _pg_columns(conn: psycopg.Connection) -> dict[str, list[tuple[str, str, bool, bool]]]:
    """``{table: [(column, type, not null, identity), …]}`` in column order, the version table left out."""
    out: dict[str, list[tuple[str, str, bool, bool]]] = {}
    for table, column, data_type, nullable, identity in conn.execute(
        "SELECT table_name, column_name, data_type, is_nullable, is_identity "
        "FROM information_schema.columns WHERE table_schema = current_schema() "
        "ORDER BY table_name, ordinal_position"
    ):
        if table != postgres_schema.VERSION_TABLE:
            out.setdefault(table, []).append((column, data_type, nullable == "NO", identity == "YES"))
    return out


def _version(conn: psycopg.Connection) -> int:
    return conn.execute(f"SELECT version FROM {postgres_schema.VERSION_TABLE}").fetchone()[0]


@attrs.frozen
class Kinds:
    """What each column holds, where its SQLite type does not say it: the PostgreSQL type each
    column must have follows from this and the SQLite type (``dialect.py``'s table of words)."""

    generated_ids: frozenset[tuple[str, str]]
    flags: frozenset[tuple[str, str]]
    json: frozenset[tuple[str, str]]
    instants: frozenset[tuple[str, str]]

    def postgres_type(self, table: str, column: str, sqlite_type: str) -> str:
        """The PostgreSQL type (as ``information_schema`` spells it) of an SQLite column."""
        key = (table, column)
        if key in self.flags:
            return "boolean"
        if key in self.json:
            return "jsonb"
        if key in self.instants:
            return "timestamp with time zone"
        return {
            "INTEGER": "bigint",
            "REAL": "double precision",
            "BLOB": "bytea",
            "TEXT": "text",
        }[sqlite_type.upper()]


KINDS = Kinds(
    generated_ids=frozenset({
        ("persona_memory", "id"), ("transcript_lines", "id"), ("notices", "id"), ("persona_events", "id"),
        ("outbox", "id"),
    }),
    flags=frozenset({
        ("users", "memory_on"), ("rooms", "private"), ("rooms", "incognito"),
        ("transcript_lines", "incognito"),
    }),
    json=frozenset({
        ("persona_memory", "witnessed"), ("persona_memory", "evidence"), ("rooms", "personas"),
        ("rooms", "humans"), ("rooms", "names"), ("transcript_lines", "humans"),
        ("transcript_lines", "personas"), ("notices", "memory_ids"), ("cluster_rooms", "state"),
        ("persona_events", "event"), ("persona_events", "room"), ("outbox", "data"),
    }),
    instants=frozenset({
        ("persona_memory", "created"), ("persona_memory", "last_recalled"), ("rooms", "opened"),
        ("rooms", "archived"), ("transcript_lines", "at"), ("notices", "created"),
        ("notices", "undone"), ("parked_slices", "retry_at"), ("user_names", "updated"),
        ("persona_leases", "expires_at"), ("workers", "joined_at"), ("workers", "expires_at"),
        ("web_revocations", "expires_at"), ("outbox", "created"),
    }),
)  # fmt: skip


# ---- the same tables --------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(1, schema.LATEST + 1))
def test_at_every_version_the_tables_and_their_columns_are_sqlites(postgres_url: str, tmp_path: Path, version: int) -> None:
    lite = _sqlite(tmp_path / "v.db", upto=version)
    with _pg(postgres_url) as pg:
        assert postgres_schema.migrate(pg, upto=version) == 0
        assert _version(pg) == version
        pg_tables = _pg_columns(pg)
    sqlite_tables = _sqlite_columns(lite)
    lite.close()

    assert sorted(pg_tables) == sorted(sqlite_tables)
    for table, columns in sqlite_tables.items():
        assert [c[0] for c in pg_tables[table]] == [c[0] for c in columns], table


def test_every_column_has_the_type_its_kind_gives_it(postgres_url: str, tmp_path: Path) -> None:
    lite = _sqlite(tmp_path / "latest.db")
    with _pg(postgres_url) as pg:
        postgres_schema.migrate(pg)
        pg_tables = _pg_columns(pg)
    sqlite_tables = _sqlite_columns(lite)
    lite.close()
    kinds = KINDS

    for table, columns in sqlite_tables.items():
        got = {name: (kind, not_null, identity) for name, kind, not_null, identity in pg_tables[table]}
        for name, declared, not_null, primary in columns:
            kind, pg_not_null, identity = got[name]
            assert kind == kinds.postgres_type(table, name, declared), (table, name)
            assert pg_not_null == (not_null or primary), (table, name)  # a key is never NULL
            assert identity == ((table, name) in kinds.generated_ids), (table, name)


def test_the_indexes_are_sqlites(postgres_url: str, tmp_path: Path) -> None:
    lite = _sqlite(tmp_path / "latest.db")
    sqlite_indexes = {
        n for (n,) in lite.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
    }
    lite.close()
    with _pg(postgres_url) as pg:
        postgres_schema.migrate(pg)
        pg_indexes = {
            n for (n,) in pg.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND indexname NOT LIKE '%%_pkey'"
            )
        }
    assert pg_indexes == sqlite_indexes


# ---- the same behaviour -----------------------------------------------------------------------

_VERSION_STEPS: list[tuple[str, str]] = [
    ("a row added", "INSERT INTO persona_memory (persona, subject, kind, text, importance, created) "
                    "VALUES ('iris', 'u:5', 'fact', 'Sam grows chillies on a balcony.', 5, '" + CREATED + "')"),
    ("another persona's row", "INSERT INTO persona_memory (persona, subject, kind, text, importance, created) "
                              "VALUES ('otto', 'world', 'event', 'The market moved to Sundays.', 4, '" + CREATED + "')"),
    ("its text changed", "UPDATE persona_memory SET text = 'Sam grows chillies and basil.' WHERE persona = 'iris'"),
    ("a recall stamped", "UPDATE persona_memory SET recall_count = recall_count + 1 WHERE persona = 'iris'"),
    ("it was closed", "UPDATE persona_memory SET valid_to = '2026-09' WHERE persona = 'iris'"),
    ("it was deleted", "DELETE FROM persona_memory WHERE persona = 'iris'"),
]  # fmt: skip


def _versions(execute: Callable[[str], object], read: Callable[[], list]) -> list[list]:
    seen = []
    for _, statement in _VERSION_STEPS:
        execute(statement)
        seen.append(sorted(tuple(r) for r in read()))
    return seen


def test_every_change_to_a_row_bumps_its_personas_version_as_in_sqlite(postgres_url: str, tmp_path: Path) -> None:
    lite = _sqlite(tmp_path / "latest.db")
    in_sqlite = _versions(lite.execute, lambda: lite.execute("SELECT persona, version FROM persona_versions").fetchall())
    lite.close()
    with _pg(postgres_url) as pg:
        postgres_schema.migrate(pg)
        in_postgres = _versions(pg.execute, lambda: pg.execute("SELECT persona, version FROM persona_versions").fetchall())

    assert in_postgres == in_sqlite
    assert in_postgres[-1] == [("iris", 4), ("otto", 1)]  # added, changed, (stamp: no), closed, deleted


def _memory(**overrides: object) -> dict[str, object]:
    values: dict[str, object] = {
        "persona": "iris", "subject": "u:5", "counterpart": None, "kind": "fact",
        "text": "Sam bakes sourdough on weekends.", "importance": 6, "created": CREATED,
    }  # fmt: skip
    values.update(overrides)
    return values


@pytest.mark.parametrize(
    ("table", "values"),
    [
        pytest.param("persona_memory", _memory(kind="rumour"), id="a 7th kind"),
        pytest.param("persona_memory", _memory(importance=0), id="importance 0"),
        pytest.param("persona_memory", _memory(importance=11), id="importance 11"),
        pytest.param("persona_memory", _memory(text="y" * 201), id="text of 201 chars"),
        pytest.param("persona_memory", _memory(text=""), id="empty text"),
        pytest.param("persona_memory", _memory(subject="self", kind="promise"), id="self row without counterpart"),
        pytest.param("persona_memory", _memory(subject="Sam"), id="subject by display name"),
        pytest.param("persona_memory", _memory(subject="u:0"), id="user zero"),
        pytest.param("persona_memory", _memory(counterpart="Sam", subject="self"), id="counterpart by name"),
        pytest.param("users", {"user_id": 5, "memory_note": "n" * 401}, id="a note of 401 chars"),
        pytest.param("users", {"user_id": 0}, id="user id 0"),
        pytest.param("rooms", {"room_id": "r", "private": True, "incognito": False, "personas": "[]",
                               "humans": "[]", "opened": CREATED, "title": ""}, id="an empty title"),
    ],
)  # fmt: skip
def test_both_dialects_refuse_the_same_rows(postgres_url: str, tmp_path: Path, table: str, values: dict) -> None:
    columns = ", ".join(values)
    lite = _sqlite(tmp_path / "latest.db")
    with pytest.raises(sqlite3.IntegrityError):
        lite.execute(f"INSERT INTO {table} ({columns}) VALUES ({', '.join('?' * len(values))})", list(values.values()))
    lite.close()
    with _pg(postgres_url) as pg:
        postgres_schema.migrate(pg)
        with pytest.raises(psycopg.errors.IntegrityError):
            pg.execute(f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(values))})", list(values.values()))
        assert pg.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0


def test_a_well_formed_row_is_accepted_and_reads_back_in_postgres_types(postgres_url: str) -> None:
    with _pg(postgres_url) as pg:
        postgres_schema.migrate(pg)
        pg.execute(
            "INSERT INTO persona_memory (persona, subject, counterpart, witnessed, kind, text, importance, "
            "created, evidence, embedding) VALUES ('iris', 'self', 'u:5', '[5, 9]', 'promise', %s, 10, %s, '[1]', %s)",
            ("y" * 200, CREATED, bytes([255, 0, 127])),
        )
        row = pg.execute("SELECT id, witnessed, evidence, created, embedding FROM persona_memory").fetchone()
    assert row[0] == 1
    assert (row[1], row[2]) == ([5, 9], [1])
    assert row[3].isoformat() == CREATED
    assert row[4] == bytes([255, 0, 127])


def test_lines_stored_before_presence_take_their_rooms_cast(postgres_url: str) -> None:
    with _pg(postgres_url) as pg:
        postgres_schema.migrate(pg, upto=4)
        pg.execute(
            "INSERT INTO rooms (room_id, private, incognito, kit, personas, humans, opened) "
            "VALUES ('den', false, true, NULL, '[\"iris\"]', '[5, 9]', %s)", (CREATED,)
        )
        pg.execute("INSERT INTO transcript_lines (room_id, speaker, text, at) VALUES ('den', 'u:5', 'hello', %s)", (CREATED,))
        pg.execute("INSERT INTO transcript_lines (room_id, speaker, text, at) VALUES ('gone', 'u:5', 'hm', %s)", (CREATED,))
        assert postgres_schema.migrate(pg) == 4
        lines = pg.execute("SELECT room_id, humans, personas, incognito FROM transcript_lines ORDER BY id").fetchall()
    assert lines == [("den", [5, 9], ["iris"], True), ("gone", None, None, False)]


# ---- ours, or refused -------------------------------------------------------------------------


def test_migrating_again_changes_nothing(postgres_url: str) -> None:
    with _pg(postgres_url) as pg:
        assert postgres_schema.migrate(pg) == 0
        assert postgres_schema.migrate(pg) == postgres_schema.LATEST
        assert _version(pg) == postgres_schema.LATEST


def test_a_database_of_another_program_is_refused_and_left_as_it_was(postgres_url: str) -> None:
    with _pg(postgres_url) as pg:
        pg.execute("CREATE TABLE invoices (n integer)")
        with pytest.raises(ForeignDatabase, match="tables of another program.*not modified"):
            postgres_schema.migrate(pg)
        tables = [n for (n,) in pg.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")]
    assert tables == ["invoices"]


def test_a_database_from_a_newer_version_is_refused(postgres_url: str) -> None:
    with _pg(postgres_url) as pg:
        postgres_schema.migrate(pg)
        pg.execute(f"UPDATE {postgres_schema.VERSION_TABLE} SET version = version + 1")
        with pytest.raises(ForeignDatabase, match="newer than this persona-memory knows"):
            postgres_schema.migrate(pg)


async def test_processes_opening_one_database_at_once_migrate_it_once(postgres_url: str) -> None:
    """Four connections migrate together: the advisory lock lets one apply each step."""
    connections = [await open_postgres(f"opener-{n}", connect_to(postgres_url)) for n in range(4)]
    before: list[int] = []
    try:
        async def open_one(connection) -> None:
            before.append(await connection.run(postgres_schema.migrate))

        async with trio.open_nursery() as nursery:
            for connection in connections:
                nursery.start_soon(open_one, connection)
        assert await connections[0].run(_version) == postgres_schema.LATEST
        with pytest.raises(StorageError, match="persona_memory_schema"):
            await connections[0].run(lambda c: c.execute(
                f"INSERT INTO {postgres_schema.VERSION_TABLE} VALUES ('persona-memory', 1)"
            ))
    finally:
        for connection in connections:
            await connection.aclose()
    assert len(before) == 4 and min(before) == 0
