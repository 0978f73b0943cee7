"""The store's operations that ``test_store.py`` leaves to the facade tests, each seen from its
caller, on both backends: rooms and names, the transcript and cited lines, notices and undo,
the humans' side (who holds what, clearing), parked slices, the sweep's work list, and a plan
posted by two stores at once. Every test runs on SQLite and on PostgreSQL (``open_some_store``).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, AsyncIterator

import pytest
import trio

from persona_memory.errors import InvalidInput, NotYourMemory, NotYourNotice, StorageError
from persona_memory.rooms import Presence, RoomState
from persona_memory.rows import MemoryRow
from persona_memory.storage import writes
from persona_memory.storage.postgres_session import translated
from persona_memory.storage.store import Store, open_postgres_store
from persona_memory.plans import Closing, NoticeDraft, WritePlan

AT = datetime(2026, 9, 3, 18, 30, tzinfo=timezone.utc)
MIA, OWEN = 51, 52


@pytest.fixture
async def store(open_some_store) -> AsyncIterator[Store]:
    async with open_some_store() as opened:
        yield opened


def room(room_id: str = "kitchen", **overrides: Any) -> RoomState:
    fields: dict[str, Any] = {
        "room_id": room_id,
        "private": False,
        "incognito": False,
        "kit": None,
        "topic": "weekend plans",
        "personas": ("iris",),
        "present": frozenset({MIA, OWEN}),
        "names": {MIA: "Mia Okafor", OWEN: "Owen"},
    }
    fields.update(overrides)
    return RoomState(**fields)


def memory(**overrides: Any) -> MemoryRow:
    fields: dict[str, Any] = {
        "persona": "iris",
        "subject": f"u:{MIA}",
        "kind": "fact",
        "text": "Mia repairs old bicycles in her garage.",
        "importance": 5,
        "witnessed": {MIA},
        "created": AT,
    }
    fields.update(overrides)
    return MemoryRow(**fields)


def heard_by_iris(*humans: int) -> Presence:
    return Presence(frozenset(humans or {MIA, OWEN}), ("iris",))


# ---- rooms and names -------------------------------------------------------------------------


async def test_record_rooms_opens_archives_and_names_in_one_go(store: Store) -> None:
    await store.rooms.save(room("secret", incognito=True), AT)
    refused = await store.rooms.record(
        [(room("kitchen", title="Bike talk"), AT), (room("secret", incognito=False), AT)],
        [("porch", AT)],
        {OWEN: ("Owen Lindqvist", AT + timedelta(minutes=1))},
    )
    assert refused == ["secret"]
    assert await store.rooms.flags() == {"kitchen": False, "secret": True}
    assert await store.rooms.incognito("secret") is True
    assert await store.rooms.incognito("kitchen") is False
    assert await store.rooms.incognito("never-opened") is None
    assert await store.names.of([MIA, OWEN, 99]) == {MIA: "Mia Okafor", OWEN: "Owen Lindqvist"}
    facts = await store.rooms.facts(["kitchen", "secret", "nowhere"])
    assert set(facts) == {"kitchen", "secret"}
    assert facts["kitchen"].title == "Bike talk" and facts["kitchen"].personas == ("iris",)
    assert facts["kitchen"].private is False


async def test_reopening_a_room_keeps_its_title_and_archiving_clears_nothing_else(store: Store) -> None:
    await store.rooms.save(room(title="Bike talk"), AT)
    await store.rooms.save(room(topic="rain", private=True), AT + timedelta(hours=1))
    await store.rooms.archive("kitchen", AT + timedelta(hours=2))
    facts = (await store.rooms.facts(["kitchen"]))["kitchen"]
    assert facts.title == "Bike talk" and facts.private is True
    with pytest.raises(InvalidInput, match="incognito"):
        await store.rooms.save(room(incognito=True), AT)


async def test_names_among_finds_users_by_the_first_word_of_their_name_in_any_case(store: Store) -> None:
    await store.rooms.save(room(), AT)
    assert await store.names.among(["MIA", "owen", "nobody"]) == {MIA: "Mia Okafor", OWEN: "Owen"}
    assert await store.names.among(["okafor"]) == {}
    assert await store.names.among([]) == {}


# ---- the transcript ----------------------------------------------------------------------------


async def test_lines_keep_who_heard_them_and_an_incognito_room_keeps_none(store: Store) -> None:
    await store.rooms.save(room(), AT)
    await store.rooms.save(room("secret", incognito=True), AT)
    first = await store.transcript.post("kitchen", f"u:{MIA}", "My chain snapped on the hill.", AT, heard_by_iris())
    second = await store.transcript.post("kitchen", "iris", "Did you walk it home?", AT + timedelta(seconds=5),
                                   Presence(frozenset({MIA}), ("iris",), kit="quiz"))
    unheard = await store.transcript.post("kitchen", f"u:{OWEN}", "Anyone here?", AT + timedelta(minutes=9), None)
    assert await store.transcript.post("secret", f"u:{MIA}", "Just between us.", AT, heard_by_iris()) == 0
    assert 0 < first < second < unheard
    lines = await store.transcript.lines("kitchen")
    assert [l.text for l in lines] == ["My chain snapped on the hill.", "Did you walk it home?", "Anyone here?"]
    assert lines[0].at == AT and lines[0].humans == {MIA, OWEN} and lines[0].heard_by("iris")
    assert not lines[1].heard_by("iris") and lines[1].presence.kit == "quiz"
    assert lines[2].presence is None and not lines[2].heard_by("iris")
    assert [l.id for l in await store.transcript.lines("kitchen", after_id=first, limit=1)] == [second]
    assert [l.text for l in await store.transcript.cited("kitchen", [unheard, first, 10**9])] == [
        "My chain snapped on the hill.", "Anyone here?"
    ]
    assert await store.transcript.cited("secret", [first]) == [] and await store.transcript.cited(None, [first]) == []
    assert await store.transcript.lines("secret") == []


# ---- notices and undo --------------------------------------------------------------------------


async def _posted(store: Store, cursor_from: int = 0, cursor_to: int = 3) -> writes.Posted:
    plan = WritePlan(
        persona="iris",
        room_id="kitchen",
        cursor_from=cursor_from,
        cursor_to=cursor_to,
        inserts=(memory(), memory(subject=f"u:{OWEN}", witnessed={OWEN}, text="Owen bakes rye bread.")),
        notices=(NoticeDraft(MIA, "Iris will remember your bicycle work.", (0,)),
                 NoticeDraft(OWEN, "Iris will remember your bread.", (1,))),
    )
    return await store.write(lambda conn: writes.post_plan(conn, plan, AT))


async def test_a_notice_is_undone_once_by_its_own_user_and_persona(store: Store) -> None:
    posted = await _posted(store)
    mia_notice, owen_notice = posted.notice_ids
    (notice,) = await store.notices.of(MIA)
    assert notice.id == mia_notice and notice.memory_ids == (posted.rows[0].id,) and notice.created == AT
    assert await store.notices.persona_of(MIA, mia_notice) == "iris"
    with pytest.raises(NotYourNotice):
        await store.notices.persona_of(MIA, owen_notice)
    with pytest.raises(NotYourNotice):
        await store.notices.undo(MIA, mia_notice, AT, persona="someone-else")
    assert await store.notices.undo(MIA, mia_notice, AT, persona="iris") == [posted.rows[0].id]
    assert await store.notices.of(MIA) == []
    with pytest.raises(NotYourNotice):
        await store.notices.undo(MIA, mia_notice, AT, persona="iris")
    assert [r.text for r in await store.memories.about(OWEN)] == ["Owen bakes rye bread."]
    assert await store.memories.about(MIA) == []


async def test_a_plan_closes_rows_and_undo_reopens_them(store: Store) -> None:
    (old,) = await store.memories.insert([memory(text="Mia rides a red road bike.")])
    plan = WritePlan(
        persona="iris", room_id="kitchen", cursor_from=0, cursor_to=4,
        inserts=(memory(text="Mia rides a green gravel bike."),),
        closings=(Closing(old.id, "2026-09", 0),),
        notices=(NoticeDraft(MIA, "Iris noted your new bike.", (0,)),),
    )  # fmt: skip
    posted = await store.write(lambda conn: writes.post_plan(conn, plan, AT))
    assert [c.row_id for c in posted.closed] == [old.id] and posted.versions[1] > posted.versions[0]
    _, rows = await store.memories.rows("iris")
    assert {r.text: r.valid_to for r in rows} == {
        "Mia rides a red road bike.": "2026-09", "Mia rides a green gravel bike.": None
    }
    await store.notices.undo(MIA, posted.notice_ids[0], AT, persona="iris")
    _, rows = await store.memories.rows("iris")
    assert [(r.text, r.valid_to, r.closed_by) for r in rows] == [("Mia rides a red road bike.", None, None)]


async def test_a_plan_commits_only_what_the_humans_left_it_while_it_was_made(store: Store) -> None:
    """Between making a plan (the model reading) and its commit, Mia deleted the row it would
    replace and Owen muted Iris: the replacement, Owen's row and the row citing Owen's line are
    left out; the rest commits, with the cursor move and a notice worded for what is left."""
    (old,) = await store.memories.insert([memory(text="Mia rides a red road bike.")])
    mia_line = await store.transcript.post("kitchen", f"u:{MIA}", "I ride a gravel bike now.", AT, heard_by_iris())
    owen_line = await store.transcript.post("kitchen", f"u:{OWEN}", "Mia fixed my brakes.", AT, heard_by_iris())
    plan = WritePlan(
        persona="iris", room_id="kitchen", cursor_from=0, cursor_to=owen_line,
        inserts=(
            memory(text="Mia rides a green gravel bike.", evidence=(mia_line,)),
            memory(text="Mia keeps spare tubes.", evidence=(mia_line,)),
            memory(text="Mia fixed Owen's brakes.", evidence=(owen_line,)),
            memory(subject=f"u:{OWEN}", text="Owen's brakes squeaked.", evidence=(owen_line,), witnessed={OWEN}),
        ),
        closings=(Closing(old.id, "2026-09", 0),),
        notices=(
            NoticeDraft(MIA, "Iris noted: rides a green gravel bike · keeps spare tubes · fixed brakes", (0, 1, 2)),
            NoticeDraft(OWEN, "Iris noted: brakes squeaked", (3,)),
        ),
    )  # fmt: skip
    await store.memories.delete(MIA, old.id, persona="iris")
    await store.controls.set_muted(OWEN, "iris", True)
    posted = await store.write(lambda conn: writes.post_plan(conn, plan, AT))
    assert [r.text for r in posted.rows] == ["Mia keeps spare tubes."] and posted.closed == ()
    assert [r.text for r in await store.memories.about(MIA)] == ["Mia keeps spare tubes."]
    assert await store.memories.about(OWEN) == [] and await store.notices.of(OWEN) == []
    (notice,) = await store.notices.of(MIA)
    assert notice.memory_ids == (posted.rows[0].id,) and "gravel" not in notice.text
    assert await store.read(lambda c: writes.cursor(c, "iris", "kitchen")) == owen_line


# ---- the humans' side --------------------------------------------------------------------------


async def test_who_holds_what_about_a_user_and_clearing_it(store: Store) -> None:
    await store.rooms.save(room(personas=("iris", "basil")), AT)
    await store.controls.set_muted(MIA, "quill", True)
    await store.controls.set_muted(MIA, "quill", True)  # again: still one mute
    posted = await _posted(store)
    (kept_by_basil,) = await store.memories.insert([memory(persona="basil", text="Mia races on Sundays.")])
    assert await store.personas_for(MIA) == ["basil", "iris", "quill"]
    assert await store.personas_for(OWEN) == ["basil", "iris"]
    assert await store.personas_for(99) == []
    assert await store.memories.holders_about(MIA) == ["basil", "iris"]
    assert await store.memories.persona_of(MIA, kept_by_basil.id) == "basil"
    with pytest.raises(NotYourMemory):
        await store.memories.persona_of(OWEN, kept_by_basil.id)
    with pytest.raises(NotYourMemory):
        await store.memories.delete(MIA, kept_by_basil.id, persona="iris")

    assert await store.memories.clear_about(MIA, "iris", AT) == 1
    assert [r.persona for r in await store.memories.about(MIA)] == ["basil"]
    assert await store.notices.of(MIA) == []  # the notice of a cleared row offers no undo
    assert [n.id for n in await store.notices.of(OWEN)] == [posted.notice_ids[1]]
    assert (await store.memories.delete(MIA, kept_by_basil.id, persona="basil")).text == "Mia races on Sundays."
    assert await store.memories.holders_about(MIA) == []


# ---- parked slices and the sweep's work list ---------------------------------------------------


async def test_parked_slices_count_their_attempts_and_come_due(store: Store) -> None:
    retry = AT + timedelta(minutes=5)
    assert await store.write(lambda c: writes.park(c, "iris", "kitchen", "TimeoutError: slow", retry)) == 1
    assert await store.write(lambda c: writes.park(c, "iris", "kitchen", "TimeoutError: slower", retry)) == 2
    assert await store.read(lambda c: writes.parked_attempts(c, "iris", "kitchen")) == 2
    assert await store.backlog.parked_personas() == ["iris"]
    assert await store.backlog.parked_due(AT) == 0
    assert await store.backlog.parked_due(retry) == 1
    await store.write(lambda c: writes.unpark(c, "iris", "kitchen"))
    assert await store.backlog.parked_personas() == [] and await store.backlog.parked_due(retry) == 0


async def test_rooms_behind_lists_each_persona_with_lines_past_its_cursor(store: Store) -> None:
    await store.rooms.save(room(personas=("iris", "basil")), AT)
    await store.rooms.save(room("secret", incognito=True), AT)
    await store.rooms.save(room("quiet"), AT)
    for k in range(3):
        await store.transcript.post("kitchen", f"u:{MIA}", f"Spoke {k} is bent.", AT, heard_by_iris())
    await _posted(store, cursor_to=(await store.transcript.lines("kitchen"))[-1].id)
    retry = AT + timedelta(hours=1)
    await store.write(lambda c: writes.park(c, "basil", "kitchen", "ProviderError: down", retry))
    (behind,) = await store.backlog.rooms_behind()
    assert behind.persona == "basil" and behind.room.room_id == "kitchen" and behind.parked_until == retry
    assert behind.room.names == {MIA: "Mia Okafor", OWEN: "Owen"} and behind.room.present == {MIA, OWEN}
    # One persona's own (a cluster worker settling it): the cast's or a cursor's rooms only.
    assert [b.persona for b in await store.backlog.rooms_behind("basil")] == ["basil"]
    assert await store.backlog.rooms_behind("iris") == [] and await store.backlog.rooms_behind("nobody") == []
    await store.transcript.post("kitchen", f"u:{MIA}", "The chain squeaks too.", AT, heard_by_iris())
    assert [(b.persona, b.room.room_id) for b in await store.backlog.rooms_behind("iris")] == [("iris", "kitchen")]


# ---- one transaction, and replay adds nothing -------------------------------------------------


async def test_a_plan_that_fails_midway_leaves_nothing_behind(store: Store) -> None:
    bad = WritePlan(
        persona="iris", room_id="kitchen", cursor_from=0, cursor_to=2,
        inserts=(memory(),),
        notices=(NoticeDraft(MIA, "noted", (0, 5)),),  # no insert 5: fails after the rows went in
    )  # fmt: skip
    with pytest.raises(IndexError):
        await store.write(lambda conn: writes.post_plan(conn, bad, AT))
    assert await store.memories.about(MIA) == [] and await store.notices.of(MIA) == []
    assert await store.read(lambda c: writes.cursor(c, "iris", "kitchen")) == 0
    assert (await _posted(store)).rows  # the cursor is where it was: the real plan goes in


async def test_a_plan_posted_by_two_stores_at_once_writes_once(open_some_store) -> None:
    async with open_some_store() as one, open_some_store() as other:
        for cursor_from, cursor_to in [(0, 3), (3, 7)]:  # a first cursor, then one that moves
            results: list[writes.Posted] = []

            async def post(store: Store) -> None:
                results.append(await _posted(store, cursor_from, cursor_to))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(post, one)
                nursery.start_soon(post, other)
            assert sorted(r.replay for r in results) == [False, True]
            assert await one.read(lambda c: writes.cursor(c, "iris", "kitchen")) == cursor_to
        assert [r.text for r in await other.memories.about(MIA)] == ["Mia repairs old bicycles in her garage."] * 2
        assert len(await other.notices.of(MIA)) == 2


async def test_a_value_the_schema_refuses_is_a_storage_error_and_changes_nothing(store: Store) -> None:
    with pytest.raises(StorageError):
        await store.write(lambda c: c.execute("INSERT INTO users (user_id) VALUES (?)", (-4,)))
    assert (await store.controls.of([4]))[4].memory_on is True


# ---- the PostgreSQL session's placeholders (pure) ----------------------------------------------


def test_placeholders_become_psycopgs_and_quoted_text_and_casts_stay() -> None:
    assert translated("SELECT * FROM t WHERE a = ? AND b LIKE 'x?%' AND c = :name AND d = ?::bigint") == (
        "SELECT * FROM t WHERE a = %s AND b LIKE 'x?%' AND c = %(name)s AND d = %s::bigint"
    )
    assert translated("SELECT 5 % ?, 'it''s :not'") == "SELECT 5 %% %s, 'it''s :not'"


# ---- the counters --------------------------------------------------------------------------------


async def test_changes_count_the_writes_a_state_read_may_see_and_own_writes_a_tasks_own(store: Store) -> None:
    start = store.changes
    await store.rooms.save(room(), AT)
    await store.transcript.post("kitchen", f"u:{MIA}", "The brakes squeak again.", AT, heard_by_iris())
    (kept,) = await store.memories.insert([memory()])
    await store.memories.touch({kept.id: (AT, 2)})
    assert store.changes == start + 1  # a room, a line, a touch: uncounted; the row: counted
    await store.controls.set_note(MIA, "Ask me about wheels.")  # whoever sets a switch tells the actors
    await store.controls.set_muted(MIA, "basil", True)
    assert store.changes == start + 1
    with store.own_writes() as own:
        await store.memories.insert([memory()])
        await store.write(lambda c: c.execute("UPDATE users SET memory_on = ? WHERE user_id = ?", (False, MIA)))
    assert own == [2] and store.changes == start + 3
    with pytest.raises(StorageError):  # a write that failed counts too: it ran
        await store.write(lambda c: c.execute("INSERT INTO users (user_id) VALUES (?)", (0,)))
    assert store.changes == start + 4


async def test_a_postgresql_writer_waiting_on_a_locked_row_gives_up_after_its_lock_timeout(postgres_url: str) -> None:
    import psycopg

    async with open_postgres_store(postgres_url, lock_timeout_ms=200) as store:
        await _posted(store)
        with psycopg.connect(postgres_url) as other:  # another process, holding the cursor row
            other.execute("UPDATE cursors SET last_line_id = last_line_id WHERE persona = 'iris'")
            with pytest.raises(StorageError, match="lock timeout"):
                await _posted(store, 3, 9)
            other.rollback()
        assert (await _posted(store, 3, 9)).rows  # the lock gone, the plan goes in
        assert await store.read(lambda c: writes.cursor(c, "iris", "kitchen")) == 9
