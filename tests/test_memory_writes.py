"""The write path through the facade: quiet rooms become rows, toasts, undo, delete, skips,
the sweep and parking — what a chat runtime and a human would see."""

from __future__ import annotations

import pytest
import trio

import persona_memory as pm
from persona_memory.errors import NotYourMemory, NotYourNotice, ProviderUnreachable
from persona_memory.minds.fake import FakeMind

from conftest import on_backend

DAN, CARA = 42, 17


@pytest.fixture
def open_test_memory(open_test_memory, on_each_backend):
    """conftest's ``open_test_memory``, on SQLite and on PostgreSQL: every test here runs on both."""
    return on_backend(open_test_memory, on_each_backend)
DM = dict(room_id="dm", personas=("warren",), humans={DAN}, private=True, names={DAN: "Dan"})


async def chat(memory, room_id, *lines):
    return [await memory.post_line(room_id, speaker, text) for speaker, text in lines]


async def quiet(memory, room_id):
    await memory.send(pm.RoomWentQuiet(room_id=room_id))
    await memory.drain()


async def test_the_offline_mind_turns_a_private_chat_into_memories_the_next_open_shows(open_test_memory):
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(**DM))
        assert await memory.block("warren", "dm") == ""
        ids = await chat(
            memory, "dm",
            ("u:42", "I'm interviewing at Tencent on Thursday. Ask me how it went!"),
            ("warren", "I'll send you the 1988 shareholder letter before then."),
            ("u:42", "I love long walks along the Bund."),
        )
        await quiet(memory, "dm")
        # a write during a live room lands at the next open, not before
        assert await memory.block("warren", "dm") == ""
        await memory.send(pm.RoomOpened(**DM))
        block = await memory.block("warren", "dm")
        assert "u:42 is interviewing at Tencent on Thursday" in block
        assert "Warren said he would send u:42 the 1988 shareholder letter" in block
        assert "u:42 loves long walks along the Bund" in block
        rows = await memory.memories_about(DAN)
        assert {r.kind for r in rows} == {"open_loop", "promise", "preference"}
        assert all(set(r.evidence) <= set(ids) for r in rows)
        assert all(r.witnessed == {DAN} and r.room_id == "dm" for r in rows)
        (notice,) = await memory.notices(DAN)
        assert notice.text.startswith("Warren noted: is interviewing at Tencent on Thursday")
        assert sorted(notice.memory_ids) == sorted(r.id for r in rows)


async def test_undo_deletes_the_announced_rows_through_the_actor_and_the_next_open_reflects_it(open_test_memory):
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(**DM))
        await chat(memory, "dm", ("u:42", "I adopted a cat named Miso last week."))
        await quiet(memory, "dm")
        (notice,) = await memory.notices(DAN)
        with pytest.raises(NotYourNotice):
            await memory.undo(CARA, notice.id)
        assert await memory.undo(DAN, notice.id) == list(notice.memory_ids)
        assert await memory.memories_about(DAN) == []
        assert await memory.notices(DAN) == []
        await memory.send(pm.RoomOpened(**DM))
        assert "Miso" not in await memory.block("warren", "dm")


async def test_delete_memory_only_deletes_rows_about_that_human(open_test_memory):
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(**DM))
        await chat(memory, "dm", ("u:42", "I play the cello in an orchestra."))
        await quiet(memory, "dm")
        (row,) = await memory.memories_about(DAN)
        with pytest.raises(NotYourMemory):
            await memory.delete_memory(CARA, row.id)
        with pytest.raises(ValueError):
            await memory.delete_memory(DAN, "1")
        assert [r.id for r in await memory.memories_about(DAN)] == [row.id]
        await memory.delete_memory(DAN, row.id)
        assert await memory.memories_about(DAN) == []
        with pytest.raises(NotYourMemory):
            await memory.delete_memory(DAN, row.id)


@pytest.mark.parametrize(
    ("opened", "why"),
    [
        (dict(incognito=True), "an incognito room neither reads nor writes"),
        (dict(kit="werewolf"), "a room with a kit mounted is never written from"),
    ],
)
async def test_skipped_rooms_are_never_read(open_test_memory, opened, why):
    mind = FakeMind()
    async with open_test_memory(mind=mind) as memory:
        await memory.send(pm.RoomOpened(**{**DM, **opened}))
        await chat(memory, "dm", ("u:42", "I'm a werewolf hunter from the north."))
        await quiet(memory, "dm")
        await memory.send(pm.RoomArchived(room_id="dm"))
        await memory.drain()
        assert mind.extractions == [], why
        assert await memory.memories_about(DAN) == []


async def test_memory_off_and_mute_keep_the_write_path_away(open_test_memory):
    async with open_test_memory() as memory:
        await memory.set_memory_on(DAN, False)
        await memory.send(pm.RoomOpened(**DM))
        await chat(memory, "dm", ("u:42", "I adopted a cat named Miso."))
        await quiet(memory, "dm")
        assert await memory.memories_about(DAN) == []
        await memory.set_memory_on(DAN, True)
        await memory.set_muted(DAN, "warren", True)
        await chat(memory, "dm", ("u:42", "I bought a red bicycle."))
        await quiet(memory, "dm")
        assert await memory.memories_about(DAN) == []
        await memory.set_muted(DAN, "warren", False)
        await chat(memory, "dm", ("u:42", "I started learning the piano."))
        await quiet(memory, "dm")
        assert [r.text for r in await memory.memories_about(DAN)] == ["u:42 started learning the piano."]


async def test_archiving_flushes_the_room(open_test_memory):
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(**DM))
        await chat(memory, "dm", ("u:42", "I moved to Hangzhou for a new job."))
        await memory.send(pm.RoomArchived(room_id="dm"))
        await memory.drain()
        assert [r.text for r in await memory.memories_about(DAN)] == ["u:42 moved to Hangzhou for a new job."]
        with pytest.raises(pm.UnknownRoom):
            await memory.block("warren", "dm")


async def test_the_sweep_catches_a_room_whose_cursor_fell_behind(open_test_memory):
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(**DM))
        # lines arrive, but the room never goes quiet (the runtime missed the signal)
        await chat(memory, "dm", ("u:42", "I'm allergic to peanuts."))
        assert await memory.memories_about(DAN) == []
        assert await memory.sweep() is None
        await memory.drain()
        assert [r.text for r in await memory.memories_about(DAN)] == ["u:42 is allergic to peanuts."]
        await memory.sweep()
        await memory.drain()
        assert len(await memory.memories_about(DAN)) == 1


async def test_a_failing_mind_parks_the_slice_and_a_later_sweep_writes_it(open_test_memory, clock):
    failing = True

    def extract(request):
        if failing:
            raise ProviderUnreachable("timed out after 5 attempts")
        return {"memories": [{"subject": "u:42", "kind": "fact", "text": "u:42 is allergic to peanuts.", "importance": 7, "evidence": [request.lines[0].id]}]}

    async with open_test_memory({"write.park_backoff_initial_seconds": 60.0}, mind=FakeMind(extract=extract)) as memory:
        await memory.send(pm.RoomOpened(**DM))
        await chat(memory, "dm", ("u:42", "I'm allergic to peanuts."))
        await quiet(memory, "dm")
        assert await memory.memories_about(DAN) == []
        retry_at = await memory.sweep()  # parked: not retried before its time
        assert retry_at is not None and (retry_at - clock.now()).total_seconds() == 60.0
        failing = False
        clock.advance(seconds=61)
        assert await memory.sweep() is None
        await memory.drain()
        assert [r.text for r in await memory.memories_about(DAN)] == ["u:42 is allergic to peanuts."]


async def test_a_third_persons_claim_in_a_group_is_not_stored_about_them(open_test_memory):
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(room_id="g", personas=("warren",), humans={DAN, CARA}, names={DAN: "Dan", CARA: "Cara"}))
        await chat(memory, "g", ("u:42", "Cara is pregnant, by the way."), ("u:17", "I run marathons every spring."))
        await quiet(memory, "g")
        assert await memory.memories_about(CARA) != []
        assert all("pregnant" not in r.text for r in await memory.memories_about(CARA))
        assert all("pregnant" not in r.text for r in await memory.memories_about(DAN))


async def test_a_parked_slice_is_retried_by_the_background_check_when_due(open_test_memory, clock):
    # On trio's real clock: the full sweep (a day) never comes during the test, so only the
    # frequent check of parked slices can write the row.
    failing = True

    def extract(request):
        if failing:
            raise ProviderUnreachable("HTTP 503 five times")
        return {"memories": [{"subject": "u:42", "kind": "fact", "text": "u:42 keeps bees.", "importance": 5, "evidence": [request.lines[0].id]}]}

    settings = {"write.park_backoff_initial_seconds": 0.05, "write.sweep_interval_seconds": 86400.0}
    async with open_test_memory(settings, mind=FakeMind(extract=extract)) as memory:
        await memory.send(pm.RoomOpened(**DM))
        await chat(memory, "dm", ("u:42", "I keep bees on my roof."))
        await quiet(memory, "dm")
        assert await memory.memories_about(DAN) == []
        failing = False
        clock.advance(seconds=1)  # the wall clock passes the retry time
        for _ in range(200):  # wait (at most 10 s) for the background check to come round
            await trio.sleep(0.05)
            await memory.drain()
            if await memory.memories_about(DAN):
                break
        assert [r.text for r in await memory.memories_about(DAN)] == ["u:42 keeps bees."]


async def test_a_persona_dropped_from_a_reopened_room_flushes_what_it_heard(open_test_memory):
    cast = dict(room_id="g", humans={DAN}, private=False)
    async with open_test_memory({"scope.v1_proven": False}) as memory:
        await memory.send(pm.RoomOpened(**cast, personas=("warren", "nolan")))
        await chat(memory, "g", ("u:42", "I restore old motorcycles in my garage."))
        await memory.send(pm.RoomOpened(**cast, personas=("warren",)))  # Nolan leaves the cast
        await memory.drain()
        assert [r.persona for r in await memory.memories_about(DAN)] == ["nolan"]
        with pytest.raises(pm.NotInRoom):
            await memory.block("nolan", "g")
