"""The humans' switches reach the very next block and recall note, though an open costs no
read when nothing it could see has changed (``Store.changes``).

Each test flips a switch between two opens (or two notes) and asserts what the persona is
handed next; the last ones count the state reads, and what the store counts as a change.
Dan is ``u:42``, Cara ``u:17``; Warren is the persona.
"""

from __future__ import annotations

from datetime import timedelta

from conftest import NOW
from rowfactory import make_row

import trio
import pytest
import trio.testing

import persona_memory as pm
from persona_memory.minds.fake import FakeMind
from persona_memory.rows import MemoryRow

DAN, CARA = 42, 17
CHOIR = "Dan sings bass in a church choir."
BEES = "Cara keeps bees on a rooftop."


def about(user_id: int, text: str) -> MemoryRow:
    return make_row(id=None, subject=f"u:{user_id}", text=text, created=NOW - timedelta(days=2))


def group(room_id: str, *humans: int) -> pm.RoomOpened:
    return pm.RoomOpened(room_id=room_id, personas=("warren",), humans=set(humans), topic="singing and bees")


GROUP_SCOPE = {"scope.v1_proven": False, "recall.min_score": 0.05}


async def test_a_mute_between_two_opens_shows_in_the_next_block_and_unmuting_brings_it_back(
    open_test_memory,
) -> None:
    async with open_test_memory(GROUP_SCOPE) as memory:
        await memory._store.memories.insert([about(DAN, CHOIR), about(CARA, BEES)])
        await memory.send(group("g1", DAN, CARA))
        first = await memory.block("warren", "g1")
        await memory.set_muted(DAN, "warren", True)
        await memory.send(group("g2", DAN, CARA))
        muted = await memory.block("warren", "g2")
        await memory.set_muted(DAN, "warren", False)
        await memory.send(group("g3", DAN, CARA))
        unmuted = await memory.block("warren", "g3")
    assert CHOIR in first and BEES in first
    assert CHOIR not in muted and BEES in muted
    assert CHOIR in unmuted


async def test_memory_off_between_two_notes_empties_the_next_note(open_test_memory) -> None:
    async with open_test_memory(GROUP_SCOPE) as memory:
        await memory.send(pm.RoomOpened(room_id="g", personas=("warren",), humans={DAN, CARA}))
        await memory.block("warren", "g")
        await memory._store.memories.insert([about(DAN, CHOIR)])  # not in the block: for the note
        before = await memory.recall("warren", "g", "Who sings in a choir?")
        await memory.set_memory_on(DAN, False)
        after = await memory.recall("warren", "g", "Who sings in a choir?")
        await memory.set_memory_on(DAN, True)
        again = await memory.recall("warren", "g", "Who sings in a choir?")
        block = await memory.block("warren", "g")
    assert CHOIR in before
    assert after == ""
    # switched back on, Dan's rows are in the room's live block again, so the note leaves them out
    assert CHOIR in block and again == ""


async def test_a_delete_between_two_opens_is_gone_from_the_next_block_and_note(open_test_memory) -> None:
    async with open_test_memory(GROUP_SCOPE) as memory:
        await memory._store.memories.insert([about(DAN, CHOIR), about(DAN, "Dan sings in the shower too.")])
        await memory.send(group("g1", DAN))
        assert CHOIR in await memory.block("warren", "g1")
        await memory.send(pm.RoomArchived(room_id="g1"))
        (choir,) = [r for r in await memory.memories_about(DAN) if r.text == CHOIR]
        await memory.delete_memory(DAN, choir.id)
        await memory.send(group("g2", DAN))
        block = await memory.block("warren", "g2")
        note = await memory.recall("warren", "g2", "Does anyone sing bass in a choir?")
    assert CHOIR not in block and "shower" in block
    assert CHOIR not in note


async def test_a_new_note_shows_at_the_next_open(open_test_memory) -> None:
    async with open_test_memory(GROUP_SCOPE) as memory:
        await memory.send(group("g1", DAN))
        await memory.block("warren", "g1")
        await memory.set_memory_note(DAN, "Call me Danny, please.")
        await memory.send(group("g2", DAN))
        assert "Call me Danny, please." in await memory.block("warren", "g2")


async def test_a_human_not_read_before_is_read_with_their_switches(open_test_memory) -> None:
    async with open_test_memory(GROUP_SCOPE) as memory:
        await memory._store.memories.insert([about(DAN, CHOIR), about(CARA, BEES)])
        await memory.set_memory_on(CARA, False)
        await memory.send(group("g1", DAN))
        assert CHOIR in await memory.block("warren", "g1")
        await memory.send(pm.MemberJoined(room_id="g1", user_id=CARA))
        joined = await memory.block("warren", "g1")
    assert CHOIR in joined and BEES not in joined


async def test_a_switch_written_through_the_store_directly_is_seen_too(open_test_memory) -> None:
    async with open_test_memory(GROUP_SCOPE) as memory:
        await memory._store.memories.insert([about(DAN, CHOIR)])
        await memory.send(group("g1", DAN))
        assert CHOIR in await memory.block("warren", "g1")
        await memory._store.write(
            lambda conn: conn.execute("INSERT INTO persona_memory_mute (user_id, persona) VALUES (42, 'warren')")
        )
        await memory.send(group("g2", DAN))
        assert CHOIR not in await memory.block("warren", "g2")


async def test_opens_and_notes_with_nothing_changed_read_no_state(open_test_memory) -> None:
    async with open_test_memory(GROUP_SCOPE) as memory:
        store = memory._store
        await store.memories.insert([about(DAN, CHOIR), about(CARA, BEES)])
        reads: list[frozenset[int]] = []
        real = store.read_state

        async def counted(persona, user_ids):
            reads.append(frozenset(user_ids))
            return await real(persona, user_ids)

        store.read_state = counted  # type: ignore[method-assign]
        await memory.send(group("g1", DAN, CARA))
        await memory.block("warren", "g1")
        await memory.post_line("g1", "u:42", "Good morning, everyone.")  # a line changes no switch
        await memory.drain()  # the room is recorded: no switch either
        await memory.send(group("g2", DAN))
        await memory.block("warren", "g2")
        await memory.recall("warren", "g2", "Who sings?")
        await memory.drain()  # the note's rows are touched: no switch either
        assert reads == [frozenset({DAN, CARA})]
        await memory.set_memory_note(CARA, "Bees are my thing.")
        await memory.send(group("g3", DAN, CARA))
        assert "Bees are my thing." in await memory.block("warren", "g3")
        assert reads == [frozenset({DAN, CARA}), frozenset({DAN, CARA})]


async def test_the_store_counts_the_writes_that_can_change_a_state_read(open_test_memory) -> None:
    async with open_test_memory() as memory:
        store = memory._store
        await store.memories.insert([about(DAN, CHOIR)])
        start = store.changes
        await memory.send(pm.RoomOpened(room_id="r1", personas=("warren",), humans={DAN}, private=True))
        assert CHOIR in await memory.block("warren", "r1")
        await memory.post_line("r1", "u:42", "Hello there.")
        await memory.drain()
        (row,) = await memory.memories_about(DAN)
        assert row.recall_count == 1  # the block's row was touched
        assert store.changes == start  # a line, a room record, a touch: no switch and no row
        await memory.set_muted(DAN, "warren", True)  # switches reach the actors as messages
        await memory.set_memory_on(CARA, False)
        await memory.set_memory_note(DAN, "Call me Dan.")
        assert store.changes == start
        await store.memories.insert([about(CARA, BEES)])
        assert store.changes == start + 1


def counting_state_reads(store) -> list[frozenset[int]]:
    reads: list[frozenset[int]] = []
    real = store.read_state

    async def counted(persona, user_ids):
        reads.append(frozenset(user_ids))
        return await real(persona, user_ids)

    store.read_state = counted  # type: ignore[method-assign]
    return reads


def keeping_the_first_line(text: str, gate: trio.Event | None = None) -> FakeMind:
    """A mind that keeps the first line of a slice as one fact about Dan — once ``gate`` is
    set, if one is given."""

    async def extract(request):
        if gate is not None:
            await gate.wait()
        return {"memories": [{"subject": "u:42", "kind": "fact", "text": text, "importance": 6,
                              "evidence": [request.lines[0].id]}]}

    return FakeMind(extract=extract)


async def test_the_open_after_the_personas_own_write_shows_it_and_reads_no_state(open_test_memory) -> None:
    async with open_test_memory(GROUP_SCOPE, mind=keeping_the_first_line("u:42 repairs old clocks.")) as memory:
        await memory.send(group("g1", DAN))
        await memory.block("warren", "g1")
        reads = counting_state_reads(memory._store)
        await memory.post_line("g1", "u:42", "I repair old clocks at the weekend.")
        await memory.send(pm.RoomWentQuiet(room_id="g1"))
        await memory.drain()
        await memory.send(group("g2", DAN))
        assert "repairs old clocks" in await memory.block("warren", "g2")
        assert reads == []


async def test_a_mute_while_the_persona_writes_shows_at_the_next_open(open_test_memory) -> None:
    gate = trio.Event()
    async with open_test_memory(GROUP_SCOPE, mind=keeping_the_first_line("u:42 repairs old clocks.", gate)) as memory:
        await memory._store.memories.insert([about(DAN, CHOIR)])
        await memory.send(group("g1", DAN))
        assert CHOIR in await memory.block("warren", "g1")
        await memory.post_line("g1", "u:42", "I repair old clocks at the weekend.")
        await memory.send(pm.RoomWentQuiet(room_id="g1"))
        await trio.testing.wait_all_tasks_blocked()  # the write path waits on the mind
        await memory.set_muted(DAN, "warren", True)  # meanwhile, on the human's page
        gate.set()
        await memory.drain()
        await memory.send(group("g2", DAN))
        block = await memory.block("warren", "g2")
    assert CHOIR not in block and "clocks" not in block


@pytest.fixture
def open_test_memory(open_test_memory, on_each_backend):
    """conftest's ``open_test_memory``, on SQLite and on PostgreSQL: every test here runs on both."""
    from conftest import on_backend

    return on_backend(open_test_memory, on_each_backend)
