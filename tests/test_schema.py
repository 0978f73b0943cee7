"""The schema: design §1's columns, the constraints SQLite holds, migrations, foreign files.

Constraint tests insert raw SQL on a plain ``sqlite3`` connection, the way a buggy caller or a
hand-edit would, and expect SQLite itself to refuse.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import pytest

from persona_memory.errors import ForeignDatabase, StorageError
from persona_memory.rooms import RoomState
from persona_memory.rows import MemoryRow
from persona_memory.storage import schema
from persona_memory.storage.rooms import RoomFacts
from persona_memory.storage.store import open_store

MEMORY_COLUMNS = {
    "id", "persona", "subject", "counterpart", "witnessed", "room_id", "kind", "text",
    "importance", "valid_from", "valid_to", "closed_by", "evidence", "created",
    "last_recalled", "recall_count", "embedding",
}  # fmt: skip
CREATED = "2026-08-01T09:00:00+00:00"


def _plain(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.row_factory = sqlite3.Row
    return conn


@pytest.fixture
def latest(tmp_path: Path) -> sqlite3.Connection:
    path = tmp_path / "latest.db"
    conn = _plain(path)
    schema.migrate(conn, str(path))
    yield conn
    conn.close()


def _columns(conn: sqlite3.Connection, table: str) -> dict[str, sqlite3.Row]:
    return {r["name"]: r for r in conn.execute(f"PRAGMA table_info({table})")}


# ---- the tables ---------------------------------------------------------------------------


def test_persona_memory_has_every_column_of_design_section_1(latest: sqlite3.Connection) -> None:
    columns = set(_columns(latest, "persona_memory"))
    assert MEMORY_COLUMNS | {"embedding_scale", "embedder"} == columns
    assert _columns(latest, "persona_memory")["id"]["pk"] == 1


def test_users_hold_a_note_and_a_switch_that_defaults_on(latest: sqlite3.Connection) -> None:
    assert {"user_id", "memory_note", "memory_on"} <= set(_columns(latest, "users"))
    latest.execute("INSERT INTO users (user_id) VALUES (42)")
    row = latest.execute("SELECT memory_on, memory_note FROM users WHERE user_id = 42").fetchone()
    assert (row["memory_on"], row["memory_note"]) == (1, "")


def test_the_runtime_tables_exist(latest: sqlite3.Connection) -> None:
    assert {"user_id", "persona"} <= set(_columns(latest, "persona_memory_mute"))
    assert {"room_id", "private", "incognito", "kit", "archived"} <= set(_columns(latest, "rooms"))
    assert {"id", "room_id", "speaker", "text", "at"} <= set(_columns(latest, "transcript_lines"))
    assert {"persona", "room_id", "last_line_id"} <= set(_columns(latest, "cursors"))
    assert {"id", "user_id", "persona", "text", "memory_ids"} <= set(_columns(latest, "notices"))


def test_a_muted_pair_is_stored_once(latest: sqlite3.Connection) -> None:
    latest.execute("INSERT INTO persona_memory_mute VALUES (42, 'warren')")
    with pytest.raises(sqlite3.IntegrityError):
        latest.execute("INSERT INTO persona_memory_mute VALUES (42, 'warren')")


# ---- CHECK constraints --------------------------------------------------------------------


def _memory(**overrides: object) -> dict[str, object]:
    values: dict[str, object] = {
        "persona": "warren", "subject": "u:42", "counterpart": None, "kind": "fact",
        "text": "Dan owns a flat in Xuhui.", "importance": 6, "created": CREATED,
    }  # fmt: skip
    values.update(overrides)
    return values


def _insert_raw(conn: sqlite3.Connection, values: dict[str, object]) -> None:
    conn.execute(
        f"INSERT INTO persona_memory ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
        list(values.values()),
    )


def test_a_well_formed_raw_row_is_accepted(latest: sqlite3.Connection) -> None:
    _insert_raw(latest, _memory())
    _insert_raw(latest, _memory(subject="self", counterpart="u:42", kind="promise", importance=1))
    _insert_raw(latest, _memory(subject="world", kind="event", text="x" * 200, importance=10))
    assert latest.execute("SELECT count(*) FROM persona_memory").fetchone()[0] == 3


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param({"kind": "gossip"}, id="a 7th kind"),
        pytest.param({"importance": 0}, id="importance 0"),
        pytest.param({"importance": 11}, id="importance 11"),
        pytest.param({"text": "x" * 201}, id="text of 201 chars"),
        pytest.param({"text": ""}, id="empty text"),
        pytest.param({"subject": "self", "kind": "promise"}, id="self row without counterpart"),
        pytest.param({"subject": "Dan"}, id="subject by display name"),
    ],
)
def test_sqlite_refuses_a_row_outside_the_design(latest: sqlite3.Connection, overrides: dict) -> None:
    with pytest.raises(sqlite3.IntegrityError):
        _insert_raw(latest, _memory(**overrides))
    assert latest.execute("SELECT count(*) FROM persona_memory").fetchone()[0] == 0


def test_sqlite_refuses_a_note_of_401_chars(latest: sqlite3.Connection) -> None:
    latest.execute("INSERT INTO users (user_id, memory_note) VALUES (42, ?)", ("n" * 400,))
    with pytest.raises(sqlite3.IntegrityError):
        latest.execute("INSERT INTO users (user_id, memory_note) VALUES (43, ?)", ("n" * 401,))
    with pytest.raises(sqlite3.IntegrityError):
        latest.execute("UPDATE users SET memory_note = ? WHERE user_id = 42", ("n" * 401,))
    assert latest.execute("SELECT memory_note FROM users").fetchall()[0][0] == "n" * 400


# ---- migrations ---------------------------------------------------------------------------

_V1_ROWS = [
    # (persona, subject, counterpart, witnessed, room_id, kind, text, importance, valid_from,
    #  valid_to, closed_by, evidence, created, last_recalled, recall_count, embedding)
    ("warren", "u:42", None, "[42]", "r1", "fact", "Dan owns a flat in Xuhui.", 6, "2026-07",
     None, None, "[3, 4]", CREATED, "2026-08-10T08:00:00+00:00", 2, None),
    ("warren", "self", "u:42", "[42, 17]", "r2", "promise",
     "Warren said he would send Dan the 1988 letter.", 7, None, None, None, "[]", CREATED, None,
     0, bytes([1, 2, 3, 4])),
]  # fmt: skip


def _build_old_file(path: Path, version: int) -> None:
    conn = _plain(path)
    try:
        schema.migrate(conn, str(path), upto=version)
        assert conn.execute("PRAGMA user_version").fetchone()[0] == version
        conn.executemany(
            "INSERT INTO persona_memory (persona, subject, counterpart, witnessed, room_id, kind, "
            "text, importance, valid_from, valid_to, closed_by, evidence, created, last_recalled, "
            "recall_count, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            _V1_ROWS,
        )
        conn.execute("INSERT INTO users (user_id, memory_note, memory_on) VALUES (42, 'Call me Dan.', 0)")
        conn.execute("INSERT INTO persona_memory_mute VALUES (17, 'warren')")
        if version >= 2:
            conn.execute(
                "INSERT INTO transcript_lines (room_id, speaker, text, at) VALUES ('r1', 'u:42', 'hi', ?)",
                (CREATED,),
            )
    finally:
        conn.close()


@pytest.mark.parametrize("version", [1, 2])
async def test_an_older_file_is_upgraded_in_place_and_keeps_its_rows(tmp_path: Path, version: int) -> None:
    path = tmp_path / f"v{version}.db"
    _build_old_file(path, version)

    async with open_store(str(path)) as store:
        about_dan = await store.memories.about(42)
        controls = await store.controls.of([42, 17])
        lines = await store.transcript.lines("r1")
        _, warren = await store.memories.rows("warren")

    check = _plain(path)
    try:
        assert check.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST
        assert check.execute("PRAGMA application_id").fetchone()[0] == schema.APPLICATION_ID
        new_columns = check.execute(
            "SELECT embedding_scale, embedder, embedding FROM persona_memory ORDER BY id"
        ).fetchall()
    finally:
        check.close()

    created = datetime(2026, 8, 1, 9, tzinfo=timezone.utc)
    assert about_dan == [
        MemoryRow(
            id=1, persona="warren", subject="u:42", witnessed={42}, room_id="r1", kind="fact",
            text="Dan owns a flat in Xuhui.", importance=6, valid_from="2026-07", evidence=(3, 4),
            created=created, last_recalled=datetime(2026, 8, 10, 8, tzinfo=timezone.utc),
            recall_count=2,
        ),
        MemoryRow(
            id=2, persona="warren", subject="self", counterpart="u:42", witnessed={42, 17},
            room_id="r2", kind="promise", text="Warren said he would send Dan the 1988 letter.",
            importance=7, created=created,
        ),
    ]  # fmt: skip
    assert sorted(r.id for r in warren) == [1, 2]
    assert [tuple(r) for r in new_columns] == [(None, None, None), (None, None, bytes([1, 2, 3, 4]))]
    assert controls[42].memory_note == "Call me Dan." and controls[42].memory_on is False
    assert controls[17].muted == frozenset({"warren"})
    assert [line.text for line in lines] == (["hi"] if version >= 2 else [])


async def test_a_version_5_file_gains_room_titles_and_keeps_its_rooms(tmp_path: Path) -> None:
    path = tmp_path / "v5.db"
    conn = _plain(path)
    try:
        schema.migrate(conn, str(path), upto=5)
        conn.execute(
            "INSERT INTO rooms (room_id, private, incognito, kit, topic, personas, humans, opened) "
            "VALUES ('dm', 1, 0, NULL, 'hi', '[\"warren\"]', '[42]', ?)",
            (CREATED,),
        )
    finally:
        conn.close()

    async with open_store(str(path)) as store:
        before = await store.rooms.facts(["dm", "nowhere"])
        await store.rooms.save(RoomState("dm", personas=("warren",), present=frozenset({42}), private=True, incognito=False, kit=None, topic="hi", title="Evening chats"), datetime(2026, 8, 2, tzinfo=timezone.utc))
        titled = await store.rooms.facts(["dm"])
        await store.rooms.save(RoomState("dm", personas=("warren",), present=frozenset({42}), private=True, incognito=False, kit=None, topic="hi"),
                              datetime(2026, 8, 3, tzinfo=timezone.utc))
        reopened = await store.rooms.facts(["dm"])

    assert before == {"dm": RoomFacts("dm", None, True, ("warren",))}
    assert titled["dm"].title == "Evening chats" and reopened["dm"].title == "Evening chats"
    check = _plain(path)
    try:
        assert check.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST == 12
        with pytest.raises(sqlite3.IntegrityError):
            check.execute("UPDATE rooms SET title = ?", ("t" * 201,))
    finally:
        check.close()


async def test_an_upgraded_file_versions_its_personas_from_then_on(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    _build_old_file(path, 1)
    async with open_store(str(path)) as store:
        before, _ = await store.memories.rows("warren")
        await store.memories.delete(42, 1)
        after, rows = await store.memories.rows("warren")
    assert after > before
    assert [r.id for r in rows] == [2]


# ---- files that are not ours --------------------------------------------------------------


def _text_file(path: Path) -> None:
    path.write_text("Dear diary,\n" * 50)


def _random_bytes(path: Path) -> None:
    path.write_bytes(os.urandom(16384))


def _other_programs_db(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
    conn.commit()
    conn.close()


def _newer_persona_memory(path: Path) -> None:
    conn = _plain(path)
    schema.migrate(conn, str(path))
    conn.execute(f"PRAGMA user_version = {schema.LATEST + 1}")
    conn.close()


def _corrupt_persona_memory(path: Path) -> None:
    conn = _plain(path)
    schema.migrate(conn, str(path))
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.executemany(
        "INSERT INTO persona_memory (persona, subject, kind, text, importance, created) "
        "VALUES ('warren', 'u:42', 'fact', ?, 5, ?)",
        [(f"Dan fact {i} " + "x" * 150, CREATED) for i in range(300)],
    )
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    data[page * 3 : page * 9] = b"\x5a" * (page * 6)
    path.write_bytes(bytes(data))


def _corrupt_after_a_crash(path: Path) -> None:
    """Damaged by the run that crashed: the log it left beside the file says so."""
    _corrupt_persona_memory(path)
    Path(f"{path}-wal").touch()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(_text_file, id="a text file"),
        pytest.param(_random_bytes, id="random bytes"),
        pytest.param(_other_programs_db, id="another program's SQLite database"),
        pytest.param(_newer_persona_memory, id="a persona-memory file from a newer version"),
        pytest.param(_corrupt_after_a_crash, id="a persona-memory file corrupted in a crash"),
    ],
)
async def test_a_file_that_is_not_ours_is_refused_at_open_and_left_as_it_was(
    tmp_path: Path, make: Callable[[Path], None]
) -> None:
    path = tmp_path / "memory.db"
    make(path)
    before = _digest(path)

    with pytest.raises(ForeignDatabase, match=str(path)):
        async with open_store(str(path)):
            pytest.fail("open_store yielded a store for a file that is not ours")

    assert _digest(path) == before


# ---- the integrity check, after an unclean shutdown only ----------------------------------


def _count_checks(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Record, for each open of the writer, whether it ran the integrity check."""
    checks: list[bool] = []
    real = schema.check_ours

    def check_ours(conn: sqlite3.Connection, path: str, *, integrity: bool = False) -> int:
        if integrity:
            checks.append(True)
        return real(conn, path, integrity=integrity)

    monkeypatch.setattr(schema, "check_ours", check_ours)
    return checks


def _crash_while_writing(path: Path) -> None:
    """Another process writes a note and dies without closing (what a kill -9 leaves)."""
    code = (
        "import os, sqlite3, sys\n"
        "conn = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "conn.execute(\"INSERT INTO users (user_id, memory_note) VALUES (42, 'Call me Dan.')\")\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)


async def test_a_file_closed_cleanly_opens_without_the_integrity_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "memory.db"
    async with open_store(str(path)) as store:
        await store.controls.set_note(42, "Call me Dan.")
    checks = _count_checks(monkeypatch)

    async with open_store(str(path)) as store:
        controls = await store.controls.of([42])

    assert controls[42].memory_note == "Call me Dan."
    assert checks == []
    assert "not closed cleanly" not in caplog.text
    assert not Path(f"{path}-wal").exists()


async def test_after_a_crash_the_next_open_checks_the_file_and_the_one_after_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "memory.db"
    async with open_store(str(path)):
        pass
    _crash_while_writing(path)
    assert Path(f"{path}-wal").exists()
    checks = _count_checks(monkeypatch)

    async with open_store(str(path)) as store:
        controls = await store.controls.of([42])
    assert checks == [True]
    assert f"{path} was not closed cleanly" in caplog.text
    assert controls[42].memory_note == "Call me Dan."  # the crashed run's commit survived

    caplog.clear()
    async with open_store(str(path)):
        pass
    assert checks == [True]
    assert "not closed cleanly" not in caplog.text


async def test_while_another_process_has_the_file_open_the_check_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process's open log looks like a crash: the check costs time, and stays right."""
    path = tmp_path / "memory.db"
    async with open_store(str(path)):
        pass
    other = _plain(path)
    try:
        other.execute("SELECT count(*) FROM users").fetchone()
        checks = _count_checks(monkeypatch)
        async with open_store(str(path)):
            pass
    finally:
        other.close()
    assert checks == [True]


async def test_a_file_damaged_while_closed_cleanly_fails_when_the_damage_is_read(tmp_path: Path) -> None:
    """No crash, no check at open: the damaged pages raise when a query reaches them."""
    path = tmp_path / "memory.db"
    _corrupt_persona_memory(path)

    async with open_store(str(path)) as store:
        with pytest.raises(StorageError, match="malformed"):
            await store.transcript.lines("r1")  # the transcript's pages are among the damaged ones


async def test_a_directory_at_the_path_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    path.mkdir()
    (path / "keep.txt").write_text("mine")

    with pytest.raises(ForeignDatabase, match=str(path)):
        async with open_store(str(path)):
            pytest.fail("open_store yielded a store for a directory")

    assert sorted(p.name for p in path.iterdir()) == ["keep.txt"]
    assert (path / "keep.txt").read_text() == "mine"


async def test_an_empty_file_is_adopted_as_a_new_store(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    path.touch()

    async with open_store(str(path)) as store:
        await store.controls.set_note(42, "Call me Dan.")
        notes = await store.controls.of([42])

    assert notes[42].memory_note == "Call me Dan."
    check = _plain(path)
    try:
        assert check.execute("PRAGMA user_version").fetchone()[0] == schema.LATEST
        assert check.execute("PRAGMA application_id").fetchone()[0] == schema.APPLICATION_ID
    finally:
        check.close()


async def test_a_locked_file_is_a_storage_error_not_a_foreign_one(tmp_path: Path) -> None:
    """A file another process holds locked is ours but busy: the error must not call it foreign."""
    path = tmp_path / "memory.db"
    _build_old_file(path, 2)
    holder = _plain(path)
    holder.execute("PRAGMA journal_mode = DELETE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("UPDATE users SET memory_note = 'busy' WHERE user_id = 42")
    try:
        with pytest.raises(StorageError, match="locked") as caught:
            async with open_store(str(path), busy_timeout_ms=0):
                pytest.fail("opened a file another connection holds exclusively")
        assert not isinstance(caught.value, ForeignDatabase)
        assert str(path) in str(caught.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    async with open_store(str(path)) as store:
        assert (await store.controls.of([42]))[42].memory_note == "Call me Dan."


def test_the_last_kit_of_a_room_is_found_by_its_index_without_reading_the_room_back(tmp_path: Path) -> None:
    """A room that never mounted a kit (most rooms) answers "no kit" from the partial index of
    kit lines, not by reading its whole history back; a kit mounted earlier is still found,
    and only at or before the line asked about."""
    from persona_memory.storage.writes import LAST_KIT, last_kit

    path = tmp_path / "m.db"
    conn = sqlite3.connect(path)
    schema.migrate(conn, str(path))
    rows = [("long", "u:1", f"line {n}", "2026-08-01T10:00:00+00:00", None) for n in range(3000)]
    rows[1200] = ("long", "u:1", "let's play", "2026-08-01T10:00:00+00:00", "chess-night")
    rows += [("plain", "u:2", "hello", "2026-08-01T10:00:00+00:00", None)] * 50
    conn.executemany("INSERT INTO transcript_lines (room_id, speaker, text, at, kit) VALUES (?, ?, ?, ?, ?)", rows)
    conn.commit()
    try:
        assert last_kit(conn, "long", 3000) == "chess-night"
        assert last_kit(conn, "long", 1200) is None  # line 1201 carried it: nothing before
        assert last_kit(conn, "plain", 10**6) is None
        plan = " ".join(
            str(step[-1])
            for step in conn.execute(f"EXPLAIN QUERY PLAN {LAST_KIT}", ("plain", 10**6))
        )
        assert "transcript_kits" in plan, plan
    finally:
        conn.close()
