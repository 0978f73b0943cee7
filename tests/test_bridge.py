"""``open_memory_in_asyncio`` and ``open_memory_in_thread``: the memory from plain asyncio and
from plain threads.

These tests are plain functions: no trio here. The memory runs on trio in the thread the bridge
starts, exactly as a FastAPI or aiohttp backend would use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import persona_memory as pm
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
        with pytest.raises(pm.UnknownRoom):
            memory.post_line("never-opened", "u:42", "Hello there.", require_present=True)
        results: list[str] = []
        worker = threading.Thread(target=lambda: results.append(memory.block("warren", "r1")))
        worker.start()
        worker.join()
        assert results == [memory.block("warren", "r1")]
    with pytest.raises(pm.MemoryClosed, match="closed"):
        memory.block("warren", "r1")
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


def _public_calls(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    }


@pytest.mark.parametrize("bridged", [pm.AsyncioMemory, pm.ThreadedMemory])
def test_the_bridge_offers_every_call_of_the_memory_with_its_signature(bridged: type) -> None:
    memory = {
        name: signature
        for name, signature in _public_calls(pm.Memory).items()
        if name != "run_sweeps"  # runs until cancelled: the memory's thread has its own sweep
    }
    assert "post_line" in memory and "undo" in memory and "sweep" in memory
    assert _public_calls(bridged) == memory  # names, parameters, defaults and result types
    is_coroutine = bridged is pm.AsyncioMemory
    assert all(inspect.iscoroutinefunction(getattr(bridged, name)) == is_coroutine for name in memory)


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


def test_open_memory_in_asyncio_never_stops_the_loop_while_it_opens_works_and_closes(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)

    async def runtime() -> tuple[list[str], list[float], dict[str, int]]:
        beats: list[float] = []

        async def heartbeat() -> None:
            loop = asyncio.get_running_loop()
            while True:
                await asyncio.sleep(0)
                beats.append(loop.time())

        beating = asyncio.create_task(heartbeat())
        await asyncio.sleep(0)
        during: dict[str, int] = {}
        before = len(beats)
        async with pm.open_memory_in_asyncio(settings, embedder=HashingEmbedder(DIM)) as memory:
            during["enter"] = len(beats) - before
            await memory.send(opened("r1"))
            await memory.post_line("r1", speaker="u:42", text="I keep bees on the roof of my building.")
            await memory.send(pm.RoomWentQuiet(room_id="r1"))
            await memory.drain()
            texts = [row.text for row in await memory.memories_about(DAN)]
            before = len(beats)
        during["exit"] = len(beats) - before
        beating.cancel()
        return texts, beats, during

    texts, beats, during = asyncio.run(runtime())
    assert any("bees" in text for text in texts), texts
    # The heartbeat ran while the memory opened and while it closed: neither blocked the loop.
    assert during["enter"] > 0 and during["exit"] > 0, during
    longest = max(b - a for a, b in zip(beats, beats[1:]))
    print(f"longest gap between heartbeats across enter, use and exit: {longest * 1000:.1f} ms")


def test_async_with_the_thread_bridge_gives_the_blocking_and_the_asyncio_calls(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)

    async def runtime() -> tuple[str, str]:
        async with pm.open_memory_in_thread(settings, embedder=HashingEmbedder(DIM)) as memory:
            assert isinstance(memory, pm.ThreadedMemory)
            await memory.asyncio.send(opened("r1"))
            await asyncio.to_thread(memory.set_memory_note, DAN, "Call me Dan. I keep bees.")
            from_a_thread = await asyncio.to_thread(memory.block, "warren", "r1")
            return from_a_thread, await memory.asyncio.block("warren", "r1")

    from_a_thread, awaited = asyncio.run(runtime())
    assert from_a_thread == awaited


def test_open_memory_in_asyncio_raises_an_error_while_opening_in_the_task(tmp_path: Path) -> None:
    foreign = tmp_path / "m.db"
    foreign.write_bytes(b"a list of seed varieties, not a memory\n" * 100)

    async def runtime() -> None:
        async with pm.open_memory_in_asyncio(settings_for(tmp_path), embedder=HashingEmbedder(DIM)):
            pass

    with pytest.raises(pm.ForeignDatabase):
        asyncio.run(runtime())
    assert foreign.read_bytes().startswith(b"a list of seed varieties")


def _memory_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "persona-memory"]


def test_cancelled_while_entering_the_memory_closes_once_it_has_opened(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    assert _memory_threads() == []

    async def runtime() -> list[object]:
        entered: list[object] = []

        async def use() -> None:
            async with pm.open_memory_in_asyncio(settings, embedder=HashingEmbedder(DIM)) as memory:
                entered.append(memory)
                await asyncio.sleep(3600)

        task = asyncio.create_task(use())
        await asyncio.sleep(0)  # the task is waiting for the memory to open
        assert _memory_threads()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(1000):  # the memory finishes opening, then closes, in its own thread
            if not _memory_threads():
                break
            await asyncio.sleep(0.01)
        return entered

    assert asyncio.run(runtime()) == []
    assert _memory_threads() == []
    with pm.open_memory_in_thread(settings, embedder=HashingEmbedder(DIM)) as memory:
        assert memory.readiness().ready  # the file was left closed and whole


def test_open_memory_in_asyncio_holds_the_memory_in_an_asgi_lifespan(tmp_path: Path) -> None:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    settings = settings_for(tmp_path)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, pm.AsyncioMemory]]:
        async with pm.open_memory_in_asyncio(settings, embedder=HashingEmbedder(DIM)) as memory:
            yield {"memory": memory}

    async def said(request: Request) -> JSONResponse:
        memory: pm.AsyncioMemory = request.state.memory
        await memory.send(opened("r1"))
        line = await memory.post_line("r1", speaker="u:42", text=(await request.json())["text"])
        await memory.send(pm.RoomWentQuiet(room_id="r1"))
        await memory.drain()
        return JSONResponse({"line": line})

    async def remembered(request: Request) -> JSONResponse:
        memory: pm.AsyncioMemory = request.state.memory
        return JSONResponse([row.text for row in await memory.memories_about(DAN)])

    app = Starlette(routes=[Route("/said", said, methods=["POST"]), Route("/remembered", remembered)],
                    lifespan=lifespan)
    with TestClient(app) as client:
        assert client.post("/said", json={"text": "I restore old pianos for a living."}).json()["line"] > 0
        texts = client.get("/remembered").json()
    assert any("pianos" in text for text in texts), texts
    assert _memory_threads() == []  # the lifespan's end closed the memory
