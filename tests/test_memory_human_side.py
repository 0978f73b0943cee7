"""The human's side of the facade: controls, personas, provenance, the meter, clear-all,
export, and deletes that reach cached blocks at once."""

from __future__ import annotations

import json

import pytest

import persona_memory as pm

DAN, CARA = 42, 17
DM = dict(room_id="dm", personas=("warren",), humans={DAN}, private=True, names={DAN: "Dan"})


async def told(memory, room, *lines):
    for speaker, text in lines:
        await memory.post_line(room, speaker, text)
    await memory.send(pm.RoomWentQuiet(room_id=room))
    await memory.drain()


async def test_controls_personas_and_provenance(open_test_memory):
    async with open_test_memory() as memory:
        assert await memory.user_controls(DAN) == pm.UserControls(user_id=DAN)
        await memory.send(pm.RoomOpened(**DM))
        await memory.send(pm.RoomOpened(room_id="g", personas=("nolan", "warren"), humans={DAN, CARA}))
        await memory.set_muted(DAN, "zed", True)
        await memory.set_memory_note(DAN, "Call me Dan.")
        controls = await memory.user_controls(DAN)
        assert (controls.memory_note, controls.muted, controls.memory_on) == ("Call me Dan.", {"zed"}, True)
        assert await memory.personas_for(DAN) == ["nolan", "warren", "zed"]
        await told(memory, "dm", ("u:42", "I adopted a greyhound named Pixel."))
        (row,) = await memory.memories_about(DAN)
        (line,) = await memory.evidence(DAN, row.id)
        assert (line.speaker, line.text, line.room_id) == ("u:42", "I adopted a greyhound named Pixel.", "dm")
        with pytest.raises(pm.NotYourMemory):
            await memory.evidence(CARA, row.id)


async def test_an_answer_is_kept_with_the_question_it_answers(open_test_memory):
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(**DM))
        await told(memory, "dm", ("warren", "Which instrument did you pick up in the end?"),
                   ("u:42", "I picked the cello, I practise every evening after work."))
        (row,) = await memory.memories_about(DAN)
        lines = await memory.evidence(DAN, row.id)
        assert [(line.speaker, line.text) for line in lines] == [
            ("warren", "Which instrument did you pick up in the end?"),
            ("u:42", "I picked the cello, I practise every evening after work."),
        ]


async def test_the_meter_is_what_a_private_chat_block_would_use(open_test_memory):
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(**DM))
        assert await memory.meter(DAN, "warren") == (0, 1200)
        await told(memory, "dm", ("u:42", "I adopted a greyhound named Pixel."))
        await memory.send(pm.RoomOpened(**DM))
        block = await memory.block("warren", "dm")
        used, limit = await memory.meter(DAN, "warren")
        assert f'chars="{used}/{limit}"' in block and used > 0
        await memory.set_muted(DAN, "warren", True)
        assert await memory.meter(DAN, "warren") == (0, 1200)


async def test_a_delete_reaches_the_cached_block_at_once(open_test_memory):
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(**DM))
        await told(memory, "dm", ("u:42", "I adopted a greyhound named Pixel."), ("u:42", "I play the cello every Sunday."))
        await memory.send(pm.RoomOpened(**DM))
        assert "Pixel" in await memory.block("warren", "dm")
        pixel = next(r for r in await memory.memories_about(DAN) if "Pixel" in r.text)
        await memory.delete_memory(DAN, pixel.id)
        block = await memory.block("warren", "dm")
        assert "Pixel" not in block and "cello" in block


async def test_clear_all_for_one_persona_then_for_everyone(open_test_memory):
    async with open_test_memory() as memory:
        for persona in ("warren", "nolan"):
            await memory.send(pm.RoomOpened(room_id=persona, personas=(persona,), humans={DAN}, private=True))
            await told(memory, persona, ("u:42", "I adopted a greyhound named Pixel."))
        await memory.send(pm.RoomOpened(room_id="cara", personas=("warren",), humans={CARA}, private=True))
        await told(memory, "cara", ("u:17", "I run marathons every spring."))
        assert await memory.clear_memories(DAN, "warren") == 1
        assert [r.persona for r in await memory.memories_about(DAN)] == ["nolan"]
        assert [n.persona for n in await memory.notices(DAN)] == ["nolan"]
        assert await memory.clear_memories(DAN) == 1
        assert await memory.memories_about(DAN) == []
        assert len(await memory.memories_about(CARA)) == 1  # nobody else's lines


async def test_export_holds_every_line_with_dates_origin_and_evidence(open_test_memory):
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(**DM))
        await memory.set_memory_note(DAN, "Call me Dan.")
        await told(memory, "dm", ("u:42", "I own a flat in Xuhui."))
        await told(memory, "dm", ("u:42", "I sold the flat in Xuhui last week."))
        exported = await memory.export(DAN)
        json.dumps(exported)  # JSON-ready
        assert exported["user"] == "u:42" and exported["memory_note"] == "Call me Dan."
        texts = {m["text"]: m for m in exported["memories"]}
        assert set(texts) == {r.text for r in await memory.memories_about(DAN)}
        assert all(m["room"] == "dm" and m["evidence"] and m["noted"] for m in exported["memories"])
        assert len(exported["notices"]) == len(await memory.notices(DAN))
        assert await memory.export(CARA) == {**await memory.export(CARA), "memories": [], "notices": []}


@pytest.fixture
def open_test_memory(open_test_memory, on_each_backend):
    """conftest's ``open_test_memory``, on SQLite and on PostgreSQL: every test here runs on both."""
    from conftest import on_backend

    return on_backend(open_test_memory, on_each_backend)
