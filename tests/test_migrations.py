"""The migrations, written once for both backends, as a user meets them: a file or a database
left at any earlier version by an older release upgrades to exactly the schema a fresh one
gets, and a file's schema text is the one every earlier release wrote, so a file made by them
opens with nothing to migrate.

SQLite keeps each ``CREATE`` statement's text as the file's schema (``sqlite_master``), so the
SQLite side compares that text; ``schema_v12.sql`` beside this file is version 12's, as the
releases before the migrations were written once made it. PostgreSQL's side compares what its
catalog holds: columns, constraints, indexes, triggers, functions and sequences.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest

from persona_memory.storage import postgres_schema, schema
from persona_memory.storage.dialect import POSTGRES, SQLITE
from persona_memory.storage.migrations import LATEST, script
from persona_memory.storage.store import open_store

HERE = Path(__file__).parent
CREATED = "2026-10-04T18:20:00+00:00"


# ---- SQLite ------------------------------------------------------------------------------------


def _sqlite_schema(path: Path) -> str:
    """The file's schema as SQLite keeps it, in the layout of ``schema_v12.sql``."""
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").fetchall()
    finally:
        conn.close()
    return "\n".join(f"-- {kind} {name} on {table}\n" + (f"{sql};\n" if sql is not None else "")
                     for kind, name, table, sql in rows)


def _pragmas(path: Path) -> tuple[int, int, int]:
    """``(application_id, user_version, schema_version)``: whose file, which migrations, and
    SQLite's count of schema changes (any DDL run on the file moves it)."""
    conn = sqlite3.connect(path)
    try:
        return tuple(conn.execute(f"PRAGMA {name}").fetchone()[0]  # type: ignore[return-value]
                     for name in ("application_id", "user_version", "schema_version"))
    finally:
        conn.close()


def _migrate_file(path: Path, upto: int) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        schema.migrate(conn, str(path), upto=upto)
    finally:
        conn.close()


def _recorded_v12() -> str:
    text = (HERE / "schema_v12.sql").read_text(encoding="utf-8")
    return text[text.index("\n\n") + 2 :]  # after the header


def test_a_file_at_version_12_has_the_schema_text_the_releases_before_wrote(tmp_path: Path) -> None:
    path = tmp_path / "v12.db"
    _migrate_file(path, 12)
    assert _sqlite_schema(path) == _recorded_v12()


@pytest.mark.parametrize("version", range(1, LATEST))
async def test_a_file_left_at_an_earlier_version_opens_with_the_fresh_schema(tmp_path: Path, version: int) -> None:
    fresh, old = tmp_path / "fresh.db", tmp_path / f"v{version}.db"
    _migrate_file(fresh, LATEST)
    _migrate_file(old, version)
    assert _pragmas(old)[1] == version

    async with open_store(str(old)) as store:
        await store.controls.set_note(7, "Ask me about the allotment.")

    assert _sqlite_schema(old) == _sqlite_schema(fresh)
    assert _pragmas(old)[:2] == (schema.APPLICATION_ID, LATEST)


def test_a_file_migrated_one_version_at_a_time_equals_a_fresh_one(tmp_path: Path) -> None:
    fresh, stepped = tmp_path / "fresh.db", tmp_path / "stepped.db"
    _migrate_file(fresh, LATEST)
    for version in range(1, LATEST + 1):
        _migrate_file(stepped, version)
        assert _pragmas(stepped)[1] == version
    assert _sqlite_schema(stepped) == _sqlite_schema(fresh)


async def test_a_file_at_the_latest_version_opens_without_any_migration(tmp_path: Path) -> None:
    path = tmp_path / "current.db"
    _migrate_file(path, LATEST)
    before = _pragmas(path)

    async with open_store(str(path)) as store:
        await store.controls.set_note(7, "Ask me about the allotment.")
    async with open_store(str(path)) as store:
        assert (await store.controls.of([7]))[7].memory_note == "Ask me about the allotment."

    assert _pragmas(path) == before  # the same version, and not one schema change


def test_sqlite_lines_stored_before_presence_take_their_rooms_cast(tmp_path: Path) -> None:
    """Migration 5's backfill, one text for both backends: a line takes its room's cast, kit
    and flag; a line of a room never recorded keeps none and is not incognito."""
    path = tmp_path / "v4.db"
    _migrate_file(path, 4)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute(
            "INSERT INTO rooms (room_id, private, incognito, kit, personas, humans, opened) "
            "VALUES ('shed', 0, 1, 'garden-kit', '[\"iris\"]', '[5, 9]', ?)", (CREATED,)
        )
        conn.executemany(
            "INSERT INTO transcript_lines (room_id, speaker, text, at) VALUES (?, 'u:5', ?, ?)",
            [("shed", "hi", CREATED), ("gone", "hm", CREATED)],
        )
        assert schema.migrate(conn, str(path)) == 4
        lines = conn.execute(
            "SELECT room_id, humans, personas, kit, incognito FROM transcript_lines ORDER BY id"
        ).fetchall()
    finally:
        conn.close()
    assert lines == [("shed", "[5, 9]", '["iris"]', "garden-kit", 1), ("gone", None, None, None, 0)]


# ---- PostgreSQL --------------------------------------------------------------------------------

# What a schema holds, read from the catalog of the current schema only (several schemas of one
# database are compared below). Names are unqualified, whatever schema they live in.
_CATALOG = {
    "columns": "SELECT table_name, ordinal_position, column_name, data_type, is_nullable, "
               "column_default, is_identity, identity_generation, collation_name "
               "FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY 1, 2",
    "constraints": "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) "
                   "FROM pg_constraint WHERE connamespace = current_schema()::regnamespace ORDER BY 1, 2",
    "indexes": "SELECT tablename, indexname, replace(indexdef, current_schema() || '.', '') "
               "FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1, 2",
    "triggers": "SELECT t.tgname, replace(pg_get_triggerdef(t.oid), current_schema() || '.', '') "
                "FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace "
                "ORDER BY 1",
    "functions": "SELECT proname, replace(pg_get_functiondef(oid), current_schema() || '.', '') "
                 "FROM pg_proc WHERE pronamespace = current_schema()::regnamespace ORDER BY 1",
    "sequences": "SELECT sequencename, data_type, start_value, increment_by FROM pg_sequences "
                 "WHERE schemaname = current_schema() ORDER BY 1",
    "version": f"SELECT application, version FROM {postgres_schema.VERSION_TABLE}",
}  # fmt: skip


def _pg_catalog(pg: psycopg.Connection) -> dict[str, list[tuple]]:
    return {part: [tuple(r) for r in pg.execute(query)] for part, query in _CATALOG.items()}


def _use_schema(pg: psycopg.Connection, name: str) -> None:
    pg.execute(f"CREATE SCHEMA {name}")
    pg.execute(f"SET search_path = {name}")


def test_a_database_at_any_earlier_version_upgrades_to_the_fresh_schema(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as pg:
        _use_schema(pg, "fresh")
        postgres_schema.migrate(pg)
        fresh = _pg_catalog(pg)
        assert fresh["version"] == [("persona-memory", LATEST)]
        assert fresh["triggers"] and fresh["functions"] and fresh["sequences"]
        for version in range(1, LATEST):
            _use_schema(pg, f"from_{version}")
            postgres_schema.migrate(pg, upto=version)
            assert postgres_schema.migrate(pg) == version
            assert _pg_catalog(pg) == fresh, f"upgraded from version {version}"


def test_a_database_migrated_one_version_at_a_time_equals_a_fresh_one(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as pg:
        _use_schema(pg, "fresh")
        postgres_schema.migrate(pg)
        fresh = _pg_catalog(pg)
        _use_schema(pg, "stepped")
        for version in range(1, LATEST + 1):
            assert postgres_schema.migrate(pg, upto=version) == version - 1
        assert _pg_catalog(pg) == fresh


# ---- the templates -----------------------------------------------------------------------------


def test_each_backend_reads_its_own_words_in_a_migration() -> None:
    """Migration 1 says each column's kind once; each dialect says it in its own SQL."""
    sqlite, postgres = script(1, SQLITE), script(1, POSTGRES)
    assert "memory_on   INTEGER NOT NULL DEFAULT 1 CHECK (memory_on IN (0, 1))" in sqlite
    assert "memory_on   boolean NOT NULL DEFAULT true" in postgres and "IN (0, 1)" not in postgres
    assert "created       TEXT    NOT NULL" in sqlite and "created       timestamptz NOT NULL" in postgres
    assert ") WITHOUT ROWID;" in sqlite and "WITHOUT ROWID" not in postgres
    assert "{" not in sqlite and "{" not in postgres  # every word filled in


def test_a_word_about_a_column_without_its_column_is_refused() -> None:
    with pytest.raises(ValueError, match="needs the column as its spec"):
        SQLITE.ddl("CHECK ({length} <= 400)")
    with pytest.raises(KeyError, match="varchar"):
        POSTGRES.ddl("name {varchar}")
    with pytest.raises(ValueError, match="numbered 1 to"):
        script(LATEST + 1, SQLITE)
