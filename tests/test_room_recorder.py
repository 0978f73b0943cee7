"""Rooms are recorded off the path to the block: ``send(RoomOpened)`` → ``block()`` waits on no
write, a store that refuses writes still serves blocks, and ``incognito`` stays fixed."""

from __future__ import annotations

import pytest
import trio

import persona_memory as pm
from persona_memory.actors.room_recorder import PendingRoom, then
from persona_memory.errors import InvalidInput, StorageError

from conftest import NOW
from rowfactory import make_row

DAN = 42
FLAT = "Dan owns a flat in Xuhui, bought Jul 2026."


def dm(room_id: str = "dm", *, incognito: bool = False) -> pm.RoomOpened:
    return pm.RoomOpened(room_id=room_id, personas=("warren",), humans={DAN}, private=True,
                         incognito=incognito, names={DAN: "Dan"})


async def recorded(memory) -> list[tuple]:
    return await memory._store.read(
        lambda c: [tuple(r) for r in c.execute("SELECT room_id, incognito, archived IS NOT NULL FROM rooms")]
    )


def hold_writes(memory, monkeypatch) -> trio.Event:
    """Every write of the store waits until the returned event is set."""
    gate = trio.Event()
    store = memory._store
    write = store.write

    async def held(fn):
        await gate.wait()
        return await write(fn)

    monkeypatch.setattr(store, "write", held)
    return gate


async def refuse_writes(memory, refuse: bool = True) -> None:
    """Make SQLite itself refuse every write on the writer connection, as a read-only file does."""
    await memory._store._writer.run(lambda c: c.execute(f"PRAGMA query_only = {int(refuse)}"))


async def test_a_block_is_served_while_the_room_write_is_still_waiting(open_test_memory, monkeypatch) -> None:
    async with open_test_memory() as memory:
        await memory._store.memories.insert([make_row(id=None, text=FLAT, witnessed={DAN})])
        gate = hold_writes(memory, monkeypatch)

        with trio.fail_after(5):
            await memory.send(dm())
            block = await memory.block("warren", "dm")

        assert FLAT in block
        assert await recorded(memory) == []
        gate.set()
        await memory.drain()
        assert await recorded(memory) == [("dm", 0, 0)]


async def test_a_store_that_refuses_writes_still_serves_blocks_and_logs_the_failure(
    open_test_memory, caplog
) -> None:
    async with open_test_memory() as memory:
        await memory._store.memories.insert([make_row(id=None, text=FLAT, witnessed={DAN})])
        await refuse_writes(memory)

        await memory.send(dm())
        block = await memory.block("warren", "dm")
        with pytest.raises(StorageError, match="could not be recorded"):
            await memory.drain()

        assert FLAT in block
        assert "could not record 1 room(s)" in caplog.text
        assert "readonly" in caplog.text
        assert "recall stamps were not written" in caplog.text  # the touch, logged
        assert memory.supervisor.restarts == 0  # and no writer crashed over it
        assert await memory.block("warren", "dm") == block
        assert await memory.personas_for(DAN) == ["warren"]  # the human's page still reads
        assert await recorded(memory) == []

        await refuse_writes(memory, False)  # the storage is back: the record lands
        await memory.drain()
        assert await recorded(memory) == [("dm", 0, 0)]


async def test_a_flip_of_incognito_is_refused_before_the_room_was_recorded(open_test_memory, monkeypatch) -> None:
    async with open_test_memory() as memory:
        gate = hold_writes(memory, monkeypatch)
        await memory.send(dm(incognito=True))
        await memory.send(pm.RoomArchived(room_id="dm"))

        with pytest.raises(InvalidInput, match="incognito is fixed"):
            await memory.send(dm(incognito=False))
        assert await memory.post_line("dm", "u:42", "Said after the room closed.") == 0
        assert await recorded(memory) == []
        gate.set()
        await memory.drain()
        assert await recorded(memory) == [("dm", 1, 1)]
        assert await memory._store.transcript.lines("dm") == []


async def test_a_flip_of_incognito_is_refused_for_a_room_an_earlier_run_recorded(open_test_memory) -> None:
    async with open_test_memory() as memory:
        await memory.send(dm(incognito=False))
    async with open_test_memory() as memory:
        with pytest.raises(InvalidInput, match="incognito is fixed"):
            await memory.send(dm(incognito=True))
        await memory.send(dm(incognito=False))
        assert await memory.block("warren", "dm") == ""


async def test_leaving_the_memory_records_the_rooms_still_pending(open_test_memory, tmp_path) -> None:
    async with open_test_memory() as memory:
        for room_id in ("a", "b", "c"):
            await memory.send(dm(room_id))
        await memory.send(pm.RoomArchived(room_id="b"))
    async with open_test_memory() as memory:
        assert sorted(await recorded(memory)) == [("a", 0, 0), ("b", 0, 1), ("c", 0, 0)]


def test_pending_records_keep_what_happened_last() -> None:
    room = pm.RoomOpened(room_id="dm", personas=("warren",), humans=frozenset({DAN}), private=True)
    opened = PendingRoom(room, NOW)
    archived = PendingRoom(None, None, archived=NOW)

    assert then(None, archived) == archived
    assert then(opened, archived) == PendingRoom(room, NOW, archived=NOW)
    assert then(then(opened, archived), opened) == opened
    assert then(archived, opened) == opened
