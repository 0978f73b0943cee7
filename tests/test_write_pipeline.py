"""The write path end to end over a real store, with a scripted mind: one transaction, replay,
routing outcomes, skips, the cap, parking, notices and undo."""

from __future__ import annotations

from datetime import datetime, timezone

import attrs
import pytest

from persona_memory.clock import ManualClock
from persona_memory.compose import make_slot_reader
from persona_memory.embedding import HashingEmbedder
from persona_memory.errors import NotYourNotice, ProviderUnreachable
from persona_memory.minds.fake import FakeMind
from persona_memory.rooms import RoomState
from persona_memory.settings import load_settings
from persona_memory.storage import writes
from persona_memory.write.pipeline import WritePipeline

DAN, CARA = 42, 17
MONDAY = datetime(2026, 8, 10, 9, 0, tzinfo=timezone.utc)

DM = RoomState(room_id="dm", personas=("warren",), present=frozenset({DAN}), private=True, incognito=False, kit=None, topic=None)
GROUP = RoomState(room_id="g", personas=("warren",), present=frozenset({DAN, CARA}), private=False, incognito=False, kit=None, topic=None)


@pytest.fixture
async def store(open_some_store):
    async with open_some_store() as store:
        yield store


def pipeline(store, mind, clock=None, **write_overrides):
    settings = load_settings(None, {f"write.{k}": v for k, v in write_overrides.items()})
    return WritePipeline(
        store, mind, HashingEmbedder(64), clock or ManualClock(MONDAY), settings.write, slots=make_slot_reader()
    )


def memory(subject="u:42", text="u:42 owns a flat in Xuhui.", kind="fact", importance=6, evidence=None, **extra):
    return {"subject": subject, "kind": kind, "text": text, "importance": importance, "evidence": evidence, **extra}


def extracting(*items):
    """A mind that cites the slice's first line unless an item names its own evidence."""

    def extract(request):
        first = request.lines[0].id
        return {"memories": [{**item, "evidence": item["evidence"] or [first]} for item in items]}

    return extract


async def rows_of(store, persona="warren"):
    _, rows = await store.memories.rows(persona)
    return rows


async def test_a_quiet_room_becomes_rows_with_evidence_and_a_notice(store):
    line = await store.transcript.post("dm", "u:42", "I bought a flat in Xuhui in July.", MONDAY, DM.presence)
    mind = FakeMind(extract=extracting(memory(valid_from="2026-07")))
    report = await pipeline(store, mind)("warren", DM)
    (row,) = await rows_of(store)
    assert (row.text, row.evidence, row.witnessed, row.room_id, row.valid_from) == (
        "u:42 owns a flat in Xuhui.", (line,), {DAN}, "dm", "2026-07"
    )
    assert row.embedder == "hashing-64" and row.embedding is not None
    (notice,) = await store.read(lambda c: writes.notices(c, DAN))
    assert notice.text == "Warren noted: owns a flat in Xuhui" and notice.memory_ids == (row.id,)
    assert report.lines == 1
    # the mind saw the slice with its ids, the present set and today's date
    (request,) = mind.extractions
    assert [l.id for l in request.lines] == [line]
    assert [p.ref for p in request.present] == ["u:42"]
    assert request.today.isoformat() == "2026-08-10"


async def test_a_crash_before_commit_leaves_nothing_and_the_next_run_redoes_the_slice(store, monkeypatch):
    await store.transcript.post("dm", "u:42", "I bought a flat and adopted a cat.", MONDAY, DM.presence)
    mind = FakeMind(extract=extracting(memory(), memory(text="u:42 adopted a cat.")))
    real_insert = writes.insert_memories_on

    def insert_then_die(conn, rows):
        real_insert(conn, rows)
        raise RuntimeError("writer killed between its statements")

    monkeypatch.setattr(writes, "insert_memories_on", insert_then_die)
    with pytest.raises(RuntimeError):
        await pipeline(store, mind)("warren", DM)
    assert await rows_of(store) == []
    assert await store.read(lambda c: writes.cursor(c, "warren", "dm")) == 0
    assert await store.read(lambda c: writes.notices(c, DAN)) == []

    monkeypatch.setattr(writes, "insert_memories_on", real_insert)
    await pipeline(store, mind)("warren", DM)
    assert sorted(r.text for r in await rows_of(store)) == ["u:42 adopted a cat.", "u:42 owns a flat in Xuhui."]


async def test_a_replay_after_the_commit_adds_nothing(store):
    await store.transcript.post("dm", "u:42", "I bought a flat.", MONDAY, DM.presence)
    mind = FakeMind(extract=extracting(memory()))
    report = await pipeline(store, mind)("warren", DM)
    assert len(await rows_of(store)) == 1
    replayed = await store.write(lambda c: writes.post_plan(c, report.plan, MONDAY))
    assert replayed.replay and replayed.rows == ()
    again = await pipeline(store, mind)("warren", DM)
    assert again.lines == 0 and len(mind.extractions) == 1
    assert len(await rows_of(store)) == 1


async def test_update_closes_the_old_row_and_links_the_arc(store):
    clock = ManualClock(MONDAY)
    await store.transcript.post("dm", "u:42", "I own a flat in Xuhui.", MONDAY, DM.presence)
    await pipeline(store, FakeMind(extract=extracting(memory(text="u:42 owns a flat in Xuhui.", valid_from="2026-07"))), clock)("warren", DM)
    clock.set(datetime(2026, 11, 20, tzinfo=timezone.utc))
    await store.transcript.post("dm", "u:42", "I sold the flat in Xuhui this month.", clock.now(), DM.presence)
    mind = FakeMind(
        extract=extracting(memory(kind="event", text="u:42 sold the flat in Xuhui.", valid_from="2026-11")),
        route=lambda request: {"event": "UPDATE", "old_id": "0"},
    )
    await pipeline(store, mind, clock, neighbour_min_cosine=0.3)("warren", DM)
    assert [n.text for n in mind.routings[0].neighbours] == ["u:42 owns a flat in Xuhui."]
    rows = {r.text: r for r in await rows_of(store)}
    old, new = rows["u:42 owns a flat in Xuhui."], rows["u:42 sold the flat in Xuhui."]
    assert (old.valid_to, old.closed_by) == ("2026-11", new.id)
    assert new.valid_to is None


async def test_close_ends_a_row_with_nothing_replacing_it(store):
    await store.transcript.post("dm", "u:42", "I play tennis every week.", MONDAY, DM.presence)
    await pipeline(store, FakeMind(extract=extracting(memory(text="u:42 plays tennis every week."))))("warren", DM)
    await store.transcript.post("dm", "u:42", "I no longer play tennis.", MONDAY, DM.presence)
    mind = FakeMind(
        extract=extracting(memory(text="u:42 no longer plays tennis every week.")),
        route=lambda request: {"event": "CLOSE", "old_id": "0"},
    )
    await pipeline(store, mind, neighbour_min_cosine=0.3)("warren", DM)
    rows = await store.memories.about(DAN)
    assert [(r.text, r.valid_to, r.closed_by) for r in rows] == [("u:42 plays tennis every week.", "2026-08-10", None)]


async def test_none_and_exact_duplicates_add_nothing_and_skip_the_router(store):
    await store.transcript.post("dm", "u:42", "I own a flat in Xuhui.", MONDAY, DM.presence)
    await pipeline(store, FakeMind(extract=extracting(memory())))("warren", DM)
    await store.transcript.post("dm", "u:42", "As I said, I own a flat in Xuhui.", MONDAY, DM.presence)
    mind = FakeMind(extract=extracting(memory(text="U:42 owns a flat in Xuhui")))
    report = await pipeline(store, mind)("warren", DM)
    assert mind.routings == []  # decided before any model call
    assert [d.why for d in report.decisions] == ["exact duplicate"]
    assert len(await rows_of(store)) == 1


async def test_a_router_that_invents_a_number_is_refused_and_nothing_is_guessed(store):
    await store.transcript.post("dm", "u:42", "I own a flat in Xuhui.", MONDAY, DM.presence)
    await pipeline(store, FakeMind(extract=extracting(memory())))("warren", DM)
    await store.transcript.post("dm", "u:42", "I sold my flat in Xuhui.", MONDAY, DM.presence)
    mind = FakeMind(
        extract=extracting(memory(text="u:42 sold the flat in Xuhui.")),
        route=lambda request: {"event": "UPDATE", "old_id": "3"},
    )
    report = await pipeline(store, mind, neighbour_min_cosine=0.3)("warren", DM)
    assert len(mind.routings) == 1 and len(mind.routings[0].neighbours) == 1
    assert [d.reason for d in report.dropped] == ["routing refused: UPDATE names neighbour '3', but only 1 were offered"]
    assert [(r.text, r.valid_to) for r in await rows_of(store)] == [("u:42 owns a flat in Xuhui.", None)]


async def test_humans_with_memory_off_or_who_muted_the_persona_are_never_sent_to_its_mind(store):
    both = attrs.evolve(GROUP, personas=("warren", "nolan"))
    await store.controls.set_memory_on(DAN, False)
    await store.controls.set_muted(CARA, "warren", True)
    await store.transcript.post("g", "u:42", "I own a flat.", MONDAY, both.presence)
    await store.transcript.post("g", "u:17", "I run marathons.", MONDAY, both.presence)
    mind = FakeMind(extract=lambda r: {"memories": [
        memory(subject="u:17", text="u:17 runs marathons.", evidence=[r.lines[0].id]),
    ]})
    report = await pipeline(store, mind)("warren", both)
    # Neither human may be remembered by Warren: no model call at all, the cursor moves on.
    assert mind.extractions == [] and await rows_of(store) == []
    assert report.lines == 0
    assert await store.read(lambda conn: writes.cursor(conn, "warren", "g")) == 2
    # Cara did not mute Nolan: he may remember her — and he never sees Dan's words.
    await pipeline(store, mind)("nolan", both)
    (request,) = mind.extractions
    assert [(l.speaker, l.text) for l in request.lines] == [("u:17", "I run marathons.")]
    assert [p.user_id for p in request.present] == [CARA]
    assert [r.text for r in await rows_of(store, "nolan")] == ["u:17 runs marathons."]


async def test_the_daily_cap_holds_across_quiet_spells(store):
    mind = FakeMind(extract=lambda r: {"memories": [
        memory(text=f"u:42 mentioned hobby number {l.id}.", evidence=[l.id]) for l in r.lines
    ]})
    for spell in range(3):
        for i in range(3):
            await store.transcript.post("dm", "u:42", f"I have hobby {spell}-{i}.", MONDAY, DM.presence)
        await pipeline(store, mind, daily_cap_per_human=5)("warren", DM)
    assert len(await rows_of(store)) == 5


async def test_a_failing_provider_parks_the_slice_with_its_error_and_backoff(store):
    clock = ManualClock(MONDAY)
    await store.transcript.post("dm", "u:42", "I bought a flat.", MONDAY, DM.presence)

    def down(_request):
        raise ProviderUnreachable("the endpoint timed out 5 times")

    report = await pipeline(store, FakeMind(extract=down), clock, park_backoff_initial_seconds=60.0)("warren", DM)
    assert report.parked == "ProviderUnreachable: the endpoint timed out 5 times"
    behind = await store.read(writes.rooms_behind)
    assert behind == []  # the room was never opened in this store: nothing to sweep
    await store.rooms.save(
        RoomState("dm", personas=("warren",), present=frozenset({DAN}), private=True, incognito=False, kit=None, topic=None),
        MONDAY,
    )
    (item,) = await store.read(writes.rooms_behind)
    assert (item.persona, item.room.room_id, item.parked_until) == ("warren", "dm", datetime(2026, 8, 10, 9, 1, tzinfo=timezone.utc))
    await pipeline(store, FakeMind(extract=down), clock, park_backoff_initial_seconds=60.0)("warren", DM)
    (item,) = await store.read(writes.rooms_behind)
    assert item.parked_until == datetime(2026, 8, 10, 9, 2, tzinfo=timezone.utc)  # doubled
    await pipeline(store, FakeMind(extract=extracting(memory())), clock)("warren", DM)
    assert await store.read(writes.rooms_behind) == []
    assert await store.read(lambda c: writes.parked_attempts(c, "warren", "dm")) == 0


async def test_undo_deletes_exactly_the_announced_rows_and_reopens_what_they_closed(store):
    clock = ManualClock(MONDAY)
    await store.transcript.post("dm", "u:42", "I own a flat in Xuhui.", MONDAY, DM.presence)
    await pipeline(store, FakeMind(extract=extracting(memory())), clock)("warren", DM)
    await store.transcript.post("dm", "u:42", "I sold the flat and got a dog.", MONDAY, DM.presence)
    mind = FakeMind(
        extract=extracting(memory(kind="event", text="u:42 sold the flat in Xuhui."), memory(text="u:42 has a dog named Biscuit.")),
        route=lambda request: {"event": "UPDATE", "old_id": "0"} if "flat" in request.text else {"event": "ADD"},
    )
    await pipeline(store, mind, clock, neighbour_min_cosine=0.3)("warren", DM)
    notices = await store.read(lambda c: writes.notices(c, DAN))
    latest = notices[0]
    assert latest.text == "Warren noted: sold the flat in Xuhui · has a dog named Biscuit"
    with pytest.raises(NotYourNotice):
        await store.write(lambda c: writes.undo(c, CARA, latest.id, MONDAY))
    deleted = await store.write(lambda c: writes.undo(c, DAN, latest.id, MONDAY))
    assert sorted(deleted) == sorted(latest.memory_ids)
    rows = await store.memories.about(DAN)
    assert [(r.text, r.valid_to, r.closed_by) for r in rows] == [("u:42 owns a flat in Xuhui.", None, None)]
    assert [n.id for n in await store.read(lambda c: writes.notices(c, DAN))] == [notices[1].id]
    with pytest.raises(NotYourNotice):
        await store.write(lambda c: writes.undo(c, DAN, latest.id, MONDAY))


@pytest.mark.parametrize("names_ahead", [256, 0], ids=["names with the backlog", "names read by the slice"])
async def test_a_row_naming_a_user_met_elsewhere_is_refused_however_the_names_are_read(store, monkeypatch, names_ahead):
    from persona_memory.write import pipeline as module

    monkeypatch.setattr(module, "NAMES_AHEAD", names_ahead)
    await store.rooms.record([], [], {CARA: ("Cara Lind", MONDAY)})
    await store.transcript.post("dm", "u:42", "I went climbing with Cara on Sunday.", MONDAY, DM.presence)
    mind = FakeMind(extract=extracting(
        memory(kind="event", text="u:42 went climbing with Cara on Sunday."),
        memory(kind="event", text="u:42 went climbing on Sunday."),
    ))
    asked = []
    real_names_among = module.names_among

    def names_among(conn, words):
        asked.append(sorted(words))
        return real_names_among(conn, words)

    monkeypatch.setattr(module, "names_among", names_among)
    report = await pipeline(store, mind)("warren", DM)
    assert [r.text for r in await rows_of(store)] == ["u:42 went climbing on Sunday."]
    assert [d.reason for d in report.dropped] == ["names another user: 'Cara' in a row about u:42"]
    assert len(asked) == (0 if names_ahead else 1)  # the backlog's read brought the names, or a read of their own


async def test_the_daily_cap_counts_what_the_first_half_of_a_split_slice_wrote(store):
    from persona_memory.errors import ProviderInputTooLong

    def extract(request):
        if len(request.lines) > 1:
            raise ProviderInputTooLong("the request exceeds the model's context length")
        line = request.lines[0]
        return {"memories": [memory(text=f"u:42 planted bulb number {line.id}.", evidence=[line.id])]}

    for i in range(2):
        await store.transcript.post("dm", "u:42", f"I planted bulb {i} today.", MONDAY, DM.presence)
    report = await pipeline(store, FakeMind(extract=extract), daily_cap_per_human=1)("warren", DM)
    assert [r.text for r in await rows_of(store)] == ["u:42 planted bulb number 1."]
    assert report.lines == 2
