"""``open_memory_in_thread``: the memory from plain asyncio and from plain threads.

These tests are plain functions: no trio here. The memory runs on trio in the thread the bridge
starts, exactly as a FastAPI or aiohttp backend would use it.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from pathlib import Path

import pytest

import persona_memory as pm
from persona_memory.bridge import CALLS
from persona_memory.embedding import HashingEmbedder

from conftest import DIM, settings_for

DAN = 42


def opened(room_id: str) -> pm.RoomOpened:
    return pm.RoomOpened(room_id=room_id, personas=("warren",), humans=frozenset({DAN}), private=True,
                         names={DAN: "Dan"})


def test_a_whole_conversation_from_plain_asyncio(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)

    async def runtime() -> tuple[str, list[str], int]:
        ticks = 0

        async def heartbeat() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0)
                ticks += 1

        beating = asyncio.create_task(heartbeat())
        with pm.open_memory_in_thread(settings, embedder=HashingEmbedder(DIM)) as memory:
            await memory.asyncio.send(opened("r1"))
            ids = await asyncio.gather(*(
                memory.asyncio.post_line("r1", speaker="u:42", text=text)
                for text in ("I keep bees on the roof of my building.", "I just adopted a greyhound named Pilot.")
            ))
            assert len(set(ids)) == 2
            await memory.asyncio.send(pm.RoomWentQuiet(room_id="r1"))
            await memory.asyncio.drain()
            await memory.asyncio.send(pm.RoomArchived(room_id="r1"))
            await memory.asyncio.send(opened("r2"))
            block = await memory.asyncio.block("warren", "r2")
            rows = await memory.asyncio.memories_about(DAN)
        beating.cancel()
        return block, [row.text for row in rows], ticks

    block, texts, ticks = asyncio.run(runtime())
    assert any("bees" in text for text in texts), texts
    assert "bees" in block
    assert ticks > 0  # the asyncio loop kept running while the memory worked


def test_the_blocking_calls_from_a_plain_thread_with_the_same_errors(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    with pm.open_memory_in_thread(settings, embedder=HashingEmbedder(DIM)) as memory:
        memory.send(opened("r1"))
        assert memory.block("warren", "r1") == ""
        with pytest.raises(pm.InvalidInput, match="400"):
            memory.set_memory_note(DAN, "x" * 401)
        assert memory.user_controls(DAN).memory_note == ""
        memory.set_memory_note(DAN, "Call me Dan. I keep bees.")
        with pytest.raises(pm.UnknownRoom):
            memory.block("warren", "never-opened")
        results: list[str] = []
        worker = threading.Thread(target=lambda: results.append(memory.block("warren", "r1")))
        worker.start()
        worker.join()
        assert results == [memory.block("warren", "r1")]
    with pytest.raises(pm.MemoryClosed, match="closed"):
        memory.block("warren", "r1")
    with pytest.raises(AttributeError, match="no call 'blok'"):
        memory.blok("warren", "r1")
    with pm.open_memory_in_thread(settings, embedder=HashingEmbedder(DIM)) as again:
        assert again.user_controls(DAN).memory_note == "Call me Dan. I keep bees."


def test_an_error_while_opening_is_raised_in_the_callers_thread(tmp_path: Path) -> None:
    foreign = tmp_path / "m.db"
    foreign.write_bytes(b"this is somebody's spreadsheet, not a memory\n" * 100)
    with pytest.raises(pm.ForeignDatabase):
        with pm.open_memory_in_thread(settings_for(tmp_path), embedder=HashingEmbedder(DIM)):
            pass
    assert foreign.read_bytes().startswith(b"this is somebody's spreadsheet")


def test_open_memory_under_asyncio_says_to_use_the_bridge(tmp_path: Path) -> None:
    async def wrong() -> None:
        async with pm.open_memory(settings_for(tmp_path)):
            pass

    with pytest.raises(pm.NotOnTrio, match="open_memory_in_thread") as refused:
        asyncio.run(wrong())
    assert "persona-memory serve" in str(refused.value) and "trio.run" in str(refused.value)
    assert not (tmp_path / "m.db").exists()


def test_the_bridge_offers_every_call_of_the_memory() -> None:
    public = {
        name
        for name, member in inspect.getmembers(pm.Memory, inspect.iscoroutinefunction)
        if not name.startswith("_") and name != "run_sweeps"  # run_sweeps runs until cancelled
    }
    assert set(CALLS) == public


def test_a_call_whose_asyncio_caller_gave_up_still_lands_whole(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)

    async def runtime() -> list[str]:
        with pm.open_memory_in_thread(settings, embedder=HashingEmbedder(DIM)) as memory:
            await memory.asyncio.send(opened("r1"))
            impatient = asyncio.create_task(
                memory.asyncio.post_line("r1", speaker="u:42", text="I sing bass in a community choir.")
            )
            await asyncio.sleep(0)  # the call has been handed to the memory
            impatient.cancel()
            with pytest.raises(asyncio.CancelledError):
                await impatient
        # Closing waited for the call to finish; the line is there for the next write.
        with pm.open_memory_in_thread(settings, embedder=HashingEmbedder(DIM)) as memory:
            await memory.asyncio.send(opened("r1"))
            await memory.asyncio.send(pm.RoomWentQuiet(room_id="r1"))
            await memory.asyncio.drain()
            return [row.text for row in await memory.asyncio.memories_about(DAN)]

    texts = asyncio.run(runtime())
    assert any("choir" in text for text in texts), texts
