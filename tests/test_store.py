"""The store: every query the product makes, seen from its caller, plus ``MemoryRow`` checks."""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, AsyncIterator

import attrs
import pytest

from persona_memory.embedding import HashingEmbedder, quantize
from persona_memory.errors import InvalidInput, NotYourMemory, StorageError
from persona_memory.rooms import RoomState
from persona_memory.rows import MemoryRow, UserControls
from persona_memory.storage import schema
from persona_memory.storage import store as store_module
from persona_memory.storage.connection import SqliteConnection, open_sqlite
from persona_memory.storage.store import Store, open_store

NOW = datetime(2026, 8, 18, 12, 0, tzinfo=timezone.utc)
SHANGHAI = timezone(timedelta(hours=8))


@pytest.fixture
async def store(open_some_store) -> AsyncIterator[Store]:
    async with open_some_store() as opened:
        yield opened


def row(**overrides: Any) -> MemoryRow:
    fields: dict[str, Any] = {
        "persona": "warren",
        "subject": "u:42",
        "kind": "fact",
        "text": "Dan owns a flat in Xuhui, bought Jul 2026.",
        "importance": 6,
        "witnessed": {42},
        "created": NOW - timedelta(days=1),
    }
    fields.update(overrides)
    return MemoryRow(**fields)


async def _raw(store: Store, sql: str, params: tuple = ()) -> list[tuple]:
    return await store.read(lambda c: [tuple(r) for r in c.execute(sql, params)])


async def _close(store: Store, old: MemoryRow, new: MemoryRow, valid_to: str = "2026-11") -> None:
    await store.write(
        lambda c: c.execute(
            "UPDATE persona_memory SET valid_to = ?, closed_by = ? WHERE id = ?", (valid_to, new.id, old.id)
        )
    )


# ---- rows round-trip ----------------------------------------------------------------------


async def test_a_row_round_trips_every_field(store: Store) -> None:
    embedder = HashingEmbedder(64)
    blob, scale = quantize(embedder.embed_sync(["Warren will send Dan the 1988 letter."])[0])
    written = row(
        subject="self",
        counterpart="u:42",
        witnessed={42, 17},
        room_id="r-group",
        kind="promise",
        text="Warren said he would send Dan the 1988 shareholder letter.",
        importance=7,
        valid_from="2026-07-17",
        evidence=(31, 12, 40),
        created=datetime(2026, 8, 17, 20, 30, 15, 250, tzinfo=SHANGHAI),
        last_recalled=datetime(2026, 8, 18, 9, 0, tzinfo=SHANGHAI),
        recall_count=4,
        embedding=blob,
        embedding_scale=scale,
        embedder=embedder.name,
    )

    [inserted] = await store.memories.insert([written])
    [read] = await store.memories.about(42)
    _, [loaded] = await store.memories.rows("warren")
    deleted = await store.memories.delete(42, inserted.id)

    assert inserted.id is not None and inserted == attrs.evolve(written, id=inserted.id)
    assert read == inserted and loaded == inserted and deleted == inserted
    assert hash(read) == hash(inserted)
    assert read.witnessed == frozenset({42, 17})
    assert read.evidence == (31, 12, 40)
    assert read.created == datetime(2026, 8, 17, 12, 30, 15, 250, tzinfo=timezone.utc)
    assert read.created.utcoffset() == timedelta(0) and read.last_recalled.utcoffset() == timedelta(0)
    assert (read.embedding, read.embedding_scale, read.embedder) == (blob, scale, "hashing-64")


async def test_a_row_read_back_unchecked_is_still_checked_when_changed(store: Store) -> None:
    """Reading back trusts the file; a value made from a read row goes through the checks."""
    [inserted] = await store.memories.insert([row(witnessed=(), evidence=[7])])
    [read] = await store.memories.about(42)

    assert read == inserted and read.witnessed == frozenset() and read.evidence == (7,)
    assert (read.embedding, read.embedding_scale, read.embedder) == (None, None, None)
    with pytest.raises(InvalidInput, match="importance"):
        attrs.evolve(read, importance=11)


async def test_a_vector_stored_without_its_scale_reads_back_as_no_vector(store: Store) -> None:
    [inserted] = await store.memories.insert([row()])
    await store.write(
        lambda c: c.execute("UPDATE persona_memory SET embedding = ? WHERE id = ?", (b"\x01\x02", inserted.id))
    )

    _, [loaded] = await store.memories.rows("warren")

    assert loaded == inserted and loaded.embedding is None


async def test_a_closed_row_round_trips_its_arc(store: Store) -> None:
    [flat] = await store.memories.insert([row(valid_from="2026-07")])
    [sold] = await store.memories.insert(
        [row(kind="event", text="Dan sold the flat in Xuhui in November 2026.", valid_from="2026-11")]
    )
    await _close(store, flat, sold)

    about = {r.id: r for r in await store.memories.about(42)}
    assert about[flat.id] == attrs.evolve(flat, valid_to="2026-11", closed_by=sold.id)
    assert not about[flat.id].is_open and about[sold.id].is_open


async def test_an_insert_batch_is_all_or_nothing(store: Store) -> None:
    good = row()
    with pytest.raises(StorageError):
        await store.memories.insert([good, row(id=99, closed_by=12345)])  # closed_by names no row
    assert await store.memories.about(42) == []


# ---- persona_rows and the version ---------------------------------------------------------


async def test_persona_rows_said_gives_what_each_open_rows_lines_said(store: Store) -> None:
    await store.rooms.save(RoomState("dm", personas=("warren",), present=frozenset({42}), private=True, incognito=False, kit=None, topic=None), NOW)
    first = await store.transcript.post("dm", "u:42", "We finally got the keys to the flat in Xuhui!", NOW)
    second = await store.transcript.post("dm", "warren", "Congratulations, Dan!", NOW)
    [flat, lost, old] = await store.memories.insert(
        [
            row(evidence=[second, first]),
            row(text="Dan plays the oboe.", evidence=[first + 100]),  # its line is gone
            row(text="Dan rented in Jing'an.", evidence=[first]),
        ]
    )
    [bought] = await store.memories.insert([row(text="Dan bought the flat.", evidence=[first])])
    await _close(store, old, bought)

    version, rows, said = await store.memories.rows_said("warren")

    assert (version, list(rows)) == await store.memories.rows("warren")  # decoded when read
    assert said == {
        flat.id: "We finally got the keys to the flat in Xuhui!\nCongratulations, Dan!",
        bought.id: "We finally got the keys to the flat in Xuhui!",
    }  # in line order; the row whose line is gone and the closed row have nothing


async def test_persona_rows_holds_open_rows_and_the_arcs_closed_by_them(store: Store) -> None:
    [flat, tesla, letter] = await store.memories.insert(
        [
            row(),
            row(kind="event", text="Dan sold his Tesla shares in July.", importance=5),
            row(subject="self", counterpart="u:42", kind="promise", text="Warren promised Dan a letter."),
        ]
    )
    [sold] = await store.memories.insert([row(kind="event", text="Dan sold the flat.")])
    await _close(store, flat, sold)
    await store.write(
        lambda c: c.execute("UPDATE persona_memory SET valid_to = '2026-08' WHERE id = ?", (tesla.id,))
    )
    await store.memories.insert([row(persona="nolan", text="Dan loves long films.")])

    version, rows = await store.memories.rows("warren")

    assert sorted(r.id for r in rows) == sorted([flat.id, letter.id, sold.id])
    assert {r.persona for r in rows} == {"warren"}
    assert version == (await store.read_state("warren", []))[0]
    assert version > 0


async def test_the_version_moves_on_every_change_to_a_row_but_not_on_a_touch(store: Store) -> None:
    async def version() -> int:
        return (await store.memories.rows("warren"))[0]

    assert await version() == 0
    [flat] = await store.memories.insert([row()])
    after_insert = await version()
    [sold] = await store.memories.insert([row(text="Dan sold the flat.")])
    after_second = await version()
    await _close(store, flat, sold)
    after_close = await version()
    await store.memories.touch({flat.id: (NOW, 1), sold.id: (NOW, 2)})
    after_touch = await version()
    await store.memories.delete(42, sold.id)
    after_delete = await version()

    assert 0 < after_insert < after_second < after_close == after_touch < after_delete
    assert (await store.memories.rows("nolan"))[0] == 0


async def test_touch_sets_last_recalled_and_adds_the_count(store: Store) -> None:
    [a, b] = await store.memories.insert([row(recall_count=3), row(text="Dan likes tea.")])
    await store.memories.touch({a.id: (NOW, 2), b.id: (NOW + timedelta(hours=1), 1)})
    await store.memories.touch({a.id: (NOW + timedelta(days=1), 1)})

    got = {r.id: r for r in await store.memories.about(42)}
    assert (got[a.id].last_recalled, got[a.id].recall_count) == (NOW + timedelta(days=1), 6)
    assert (got[b.id].last_recalled, got[b.id].recall_count) == (NOW + timedelta(hours=1), 1)


# ---- the humans' controls -----------------------------------------------------------------


async def test_user_controls_default_for_users_who_never_set_anything(store: Store) -> None:
    assert await store.controls.of([7, 7, 8]) == {7: UserControls(7), 8: UserControls(8)}
    assert UserControls(7) == UserControls(user_id=7, memory_on=True, memory_note="", muted=frozenset())
    assert await store.controls.of([]) == {}


async def test_the_memory_note_and_the_switch_are_stored(store: Store) -> None:
    await store.controls.set_note(42, "Call me Dan. I'm vegetarian.")
    await store.controls.set_memory_on(42, False)
    await store.controls.set_note(42, "n" * 400)

    controls = (await store.controls.of([42]))[42]
    assert controls.memory_note == "n" * 400 and controls.memory_on is False


async def test_a_note_over_400_chars_is_refused_and_the_stored_note_stays(store: Store) -> None:
    await store.controls.set_note(42, "Call me Dan.")

    with pytest.raises(InvalidInput, match="400") as caught:
        await store.controls.set_note(42, "x" * 401)

    assert isinstance(caught.value, ValueError)
    assert "401 characters" in str(caught.value)
    assert (await store.controls.of([42]))[42].memory_note == "Call me Dan."


@pytest.mark.parametrize("bad", [0, -1, True, "42", 4.2, None])
async def test_a_bad_user_id_is_refused_and_nothing_is_stored(store: Store, bad: object) -> None:
    with pytest.raises(InvalidInput, match="user_id"):
        await store.controls.set_note(bad, "hello")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="user_id"):
        await store.controls.set_memory_on(bad, False)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="user_id"):
        await store.controls.set_muted(bad, "warren", True)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="user_id"):
        await store.memories.about(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="user_id"):
        await store.memories.delete(bad, 1)  # type: ignore[arg-type]

    assert await _raw(store, "SELECT * FROM users") == []
    assert await _raw(store, "SELECT * FROM persona_memory_mute") == []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.controls.set_memory_on(42, 1), "on must be True or False"),
        (lambda s: s.controls.set_muted(42, "warren", "yes"), "muted must be True or False"),
        (lambda s: s.controls.set_muted(42, "Warren Buffett", True), "persona must be a persona slug"),
        (lambda s: s.controls.set_note(42, None), "memory note must be a string"),
        (lambda s: s.controls.set_note(42, "Call me \ud83d."), "not valid Unicode"),
    ],
)
async def test_other_bad_settings_are_refused_and_nothing_is_stored(store: Store, call, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        await call(store)
    assert await _raw(store, "SELECT * FROM users") == []
    assert await _raw(store, "SELECT * FROM persona_memory_mute") == []


async def test_muting_a_persona_on_and_off(store: Store) -> None:
    await store.controls.set_muted(42, "warren", True)
    await store.controls.set_muted(42, "warren", True)
    await store.controls.set_muted(42, "nolan", True)
    assert (await store.controls.of([42]))[42].muted == {"warren", "nolan"}
    assert (await store.controls.of([42]))[42].hides_from("warren")

    await store.controls.set_muted(42, "warren", False)
    await store.controls.set_muted(42, "warren", False)
    controls = (await store.controls.of([42, 17]))
    assert controls[42].muted == {"nolan"} and not controls[42].hides_from("warren")
    assert controls[17].muted == frozenset()


# ---- the manage page: memories_about and delete_memory -------------------------------------


async def _cast(store: Store) -> dict[str, MemoryRow]:
    [flat, sold, promise, cara, world, cara_promise, nolan] = await store.memories.insert(
        [
            row(),
            row(kind="event", text="Dan sold the flat."),
            row(subject="self", counterpart="u:42", kind="promise", text="Warren promised Dan a letter."),
            row(subject="u:17", witnessed={17}, text="Cara runs a bakery."),
            row(subject="world", witnessed={42, 17}, kind="event", text="Nolan's Odyssey opened 2026-07-17."),
            row(subject="self", counterpart="u:17", kind="promise", text="Warren promised Cara a recipe."),
            row(persona="nolan", witnessed={42, 17}, kind="preference", text="Dan loves long films."),
        ]
    )
    await _close(store, flat, sold)
    return {
        "flat": attrs.evolve(flat, valid_to="2026-11", closed_by=sold.id),
        "sold": sold, "promise": promise, "cara": cara, "world": world,
        "cara_promise": cara_promise, "nolan": nolan,
    }  # fmt: skip


async def test_memories_about_a_user_are_theirs_open_or_closed_and_nothing_else(store: Store) -> None:
    cast = await _cast(store)

    about_dan = await store.memories.about(42)
    about_cara = await store.memories.about(17)

    assert sorted(about_dan, key=lambda r: r.id) == sorted(
        [cast["flat"], cast["sold"], cast["promise"], cast["nolan"]], key=lambda r: r.id
    )
    assert sorted(r.id for r in about_cara) == sorted([cast["cara"].id, cast["cara_promise"].id])
    assert await store.memories.about(99) == []


async def test_a_user_deletes_a_memory_about_them(store: Store) -> None:
    cast = await _cast(store)

    deleted = await store.memories.delete(42, cast["promise"].id)

    assert deleted == cast["promise"]
    assert cast["promise"].id not in {r.id for r in await store.memories.about(42)}
    assert len(await store.memories.about(42)) == 3


@pytest.mark.parametrize("target", ["cara", "cara_promise", "world", "missing"])
async def test_deleting_a_memory_that_is_not_yours_changes_nothing(store: Store, target: str) -> None:
    cast = await _cast(store)
    memory_id = 9999 if target == "missing" else cast[target].id
    everything = await _raw(store, "SELECT * FROM persona_memory ORDER BY id")
    version = (await store.memories.rows("warren"))[0]

    with pytest.raises(NotYourMemory, match=str(memory_id)):
        await store.memories.delete(42, memory_id)

    assert await _raw(store, "SELECT * FROM persona_memory ORDER BY id") == everything
    assert (await store.memories.rows("warren"))[0] == version


async def test_deleting_the_row_that_closed_an_arc_leaves_the_old_row_closed(store: Store) -> None:
    cast = await _cast(store)
    await store.memories.delete(42, cast["sold"].id)

    flat = next(r for r in await store.memories.about(42) if r.id == cast["flat"].id)
    assert flat.valid_to == "2026-11" and flat.closed_by is None


# ---- rooms and the transcript -------------------------------------------------------------


async def test_transcript_lines_come_back_in_order_after_a_cursor(store: Store) -> None:
    first = await store.transcript.post("r1", "u:42", "I'm interviewing on Thursday.", NOW)
    await store.transcript.post("r2", "u:17", "Another room.", NOW)
    second = await store.transcript.post("r1", "warren", "Good luck, Dan.", NOW.astimezone(SHANGHAI))

    lines = await store.transcript.lines("r1")
    assert [(line.id, line.speaker, line.text) for line in lines] == [
        (first, "u:42", "I'm interviewing on Thursday."),
        (second, "warren", "Good luck, Dan."),
    ]
    assert {line.room_id for line in lines} == {"r1"}
    assert [line.at for line in lines] == [NOW, NOW] and lines[1].at.utcoffset() == timedelta(0)
    assert [line.id for line in await store.transcript.lines("r1", after_id=first)] == [second]
    assert await store.transcript.lines("nowhere") == []


async def test_save_room_inserts_then_updates_and_reopens(store: Store) -> None:
    room = RoomState("r1", personas=("warren",), present=frozenset({42}), private=True, incognito=False, kit=None, topic="markets")
    await store.rooms.save(room, NOW)
    await store.rooms.archive("r1", NOW + timedelta(hours=1))
    archived = await _raw(store, "SELECT archived FROM rooms WHERE room_id = 'r1'")

    group = RoomState("r1", personas=("warren", "nolan"), present=frozenset({42, 17}), private=False, incognito=False, kit="trivia", topic=None, names={17: "Cara"})
    await store.rooms.save(group, NOW + timedelta(days=1))

    stored = await _raw(
        store, "SELECT room_id, private, incognito, kit, topic, personas, humans, names, opened, archived FROM rooms"
    )
    assert archived == [((NOW + timedelta(hours=1)).isoformat(),)]
    assert stored == [
        ("r1", 0, 0, "trivia", None, '["warren", "nolan"]', "[17, 42]", '{"17": "Cara"}', (NOW + timedelta(days=1)).isoformat(), None)
    ]


async def test_a_room_keeps_the_incognito_it_was_created_with(store: Store) -> None:
    secret = RoomState("s1", personas=("warren",), present=frozenset({42}), private=True, incognito=True, kit=None, topic=None)
    await store.rooms.save(secret, NOW)
    with pytest.raises(InvalidInput, match="incognito is fixed"):
        await store.rooms.save(attrs.evolve(secret, incognito=False), NOW + timedelta(days=1))
    assert await store.rooms.incognito("s1") is True
    assert await store.rooms.incognito("never-opened") is None
    # Lines posted to an incognito room are not kept at all.
    assert await store.transcript.post("s1", "u:42", "A secret.", NOW) == 0
    assert await store.transcript.lines("s1") == []


# ---- open_store's own error paths ---------------------------------------------------------


async def test_a_reader_that_fails_to_open_closes_the_writer_first(tmp_path: Path, monkeypatch) -> None:
    opened: list[SqliteConnection] = []

    async def recorded(name: str, connect: Any) -> SqliteConnection:
        connection = await open_sqlite(name, connect)
        opened.append(connection)
        return connection

    real_check = schema.check_ours

    def readers_fail(conn: sqlite3.Connection, path: str, *, integrity: bool = False) -> int:
        if threading.current_thread().name == "sqlite-reader-1":
            raise sqlite3.OperationalError("disk I/O error")
        return real_check(conn, path, integrity=integrity)

    monkeypatch.setattr(store_module, "open_sqlite", recorded)
    monkeypatch.setattr(schema, "check_ours", readers_fail)

    with pytest.raises(StorageError, match="disk I/O error"):
        async with open_store(str(tmp_path / "m.db"), read_connections=3):
            pytest.fail("open_store yielded without its readers")

    assert [c.name for c in opened] == ["writer", "reader-0"]
    alive = {t.ident for t in threading.enumerate()}
    assert not any(c.thread_id in alive for c in opened)
    with pytest.raises(StorageError, match="closed"):
        await opened[0].run(lambda c: None)


async def test_a_store_is_unusable_after_its_block_ends(tmp_path: Path) -> None:
    async with open_store(str(tmp_path / "m.db")) as opened:
        await opened.controls.set_note(42, "hi")
    with pytest.raises(StorageError, match="closed"):
        await opened.controls.of([42])
    with pytest.raises(StorageError, match="closed"):
        await opened.controls.set_note(42, "again")


@pytest.mark.parametrize("bad", [0, -1, True])
async def test_open_store_needs_at_least_one_reader(tmp_path: Path, bad: object) -> None:
    with pytest.raises(InvalidInput, match="read_connections"):
        async with open_store(str(tmp_path / "m.db"), read_connections=bad):  # type: ignore[arg-type]
            pytest.fail("opened without readers")
    assert not (tmp_path / "m.db").exists()


async def test_a_path_in_a_missing_directory_fails_with_a_storage_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "missing" / "m.db"
    with pytest.raises(StorageError, match=str(path)):
        async with open_store(str(path)):
            pytest.fail("opened a file that cannot exist")


# ---- MemoryRow validation -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("persona", "Warren"),
        ("persona", ""),
        ("subject", "Dan"),
        ("subject", "u:0"),
        ("kind", "gossip"),
        ("text", ""),
        ("text", "   "),
        ("text", "x" * 201),
        ("text", 42),
        ("text", "Dan said \ud800 something."),
        ("room_id", "r\udc00"),
        ("importance", 0),
        ("importance", 11),
        ("importance", 5.0),
        ("importance", True),
        ("created", datetime(2026, 8, 18, 12, 0)),
        ("created", "yesterday"),
        ("created", None),
        ("created", 1755500000),
        ("last_recalled", datetime(2026, 8, 18, 12, 0)),
        ("last_recalled", "soon"),
        ("witnessed", {0}),
        ("witnessed", {"42"}),
        ("witnessed", 42),
        ("witnessed", "42"),
        ("evidence", ("line-3",)),
        ("evidence", (0,)),
        ("evidence", 3),
        ("valid_from", "July 2026"),
        ("valid_from", "2026-13"),
        ("valid_to", "2026-07-32"),
        ("id", 0),
        ("id", "7"),
        ("closed_by", -3),
        ("room_id", ""),
        ("recall_count", -1),
        ("recall_count", "3"),
    ],
)
def test_a_bad_field_raises_invalid_input_naming_it(field: str, value: object) -> None:
    with pytest.raises(InvalidInput, match=field):
        row(**{field: value})


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"subject": "self"}, "counterpart"),
        ({"subject": "self", "counterpart": "Dan"}, "counterpart"),
        ({"counterpart": "u:17"}, "counterpart"),
        ({"embedding": b"\x01\x02"}, "embedding_scale"),
        ({"embedding": b"\x01\x02", "embedding_scale": 0.1}, "embedder"),
        ({"embedder": "hashing-64"}, "embedding"),
        ({"embedding": "0102", "embedding_scale": 0.1, "embedder": "h"}, "embedding"),
        ({"embedding": b"\x01", "embedding_scale": float("nan"), "embedder": "h"}, "embedding_scale"),
        ({"embedding": b"\x01", "embedding_scale": -1.0, "embedder": "h"}, "embedding_scale"),
        ({"embedding": b"\x01", "embedding_scale": 0.1, "embedder": ""}, "embedder"),
    ],
)
def test_fields_that_go_together_are_checked_together(overrides: dict, named: str) -> None:
    with pytest.raises(InvalidInput, match=named):
        row(**overrides)


def test_a_good_row_normalises_its_values() -> None:
    made = row(witnessed=[17, 42, 42], evidence=[3, 1], created="2026-08-18T20:00:00+08:00")
    assert made.witnessed == frozenset({17, 42})
    assert made.evidence == (3, 1)
    assert made.created == NOW and made.created.tzinfo == timezone.utc
    assert made.about_user == 42 and made.is_open
    assert row(subject="self", counterpart="u:17", kind="promise").about_user == 17
    assert row(subject="world", witnessed=()).about_user is None


async def test_times_are_stored_in_utc_and_naive_ones_are_refused(store: Store) -> None:
    [a] = await store.memories.insert([row()])
    await store.memories.touch({a.id: (NOW.astimezone(SHANGHAI), 1)})
    assert await _raw(store, "SELECT last_recalled FROM persona_memory") == [(NOW.isoformat(),)]

    naive = datetime(2026, 8, 18, 12, 0)
    with pytest.raises(InvalidInput, match="timezone-aware"):
        await store.memories.touch({a.id: (naive, 1)})
    with pytest.raises(InvalidInput, match="timezone-aware"):
        await store.transcript.post("r1", "u:42", "hello", naive)
    assert (await store.memories.about(42))[0].recall_count == 1
    assert await store.transcript.lines("r1") == []
