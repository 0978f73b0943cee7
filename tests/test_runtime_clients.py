"""The runtime API's clients against a live ``persona-memory serve`` in another process.

A chat runtime that is not Python-on-trio in the same process: the blocking client, the async
client under plain asyncio, each through a whole conversation over real HTTP.
"""

from __future__ import annotations

import asyncio

import pytest

import persona_memory as pm
from persona_memory.client import AsyncRuntimeClient, RuntimeClient

from web_helpers import SECRETS, live_server as server  # noqa: F401

DAN = 42


def opened(room_id: str, topic: str | None = None) -> pm.RoomOpened:
    return pm.RoomOpened(room_id=room_id, personas=("warren",), humans=frozenset({DAN}), private=True,
                         topic=topic, names={DAN: "Dan"})


def test_the_blocking_client_through_a_whole_conversation(server: str) -> None:
    with RuntimeClient(server, SECRETS.runtime_token) as memory:
        memory.send(opened("sync-1"))
        assert memory.post_line("sync-1", "u:42", "I restore old motorbikes in my garage.") > 0
        memory.send(pm.RoomWentQuiet(room_id="sync-1"))
        memory.drain()
        memory.send(pm.RoomArchived(room_id="sync-1"))
        memory.send(opened("sync-1", topic="How is the motorbike coming along?"))
        built = memory.built_block("warren", "sync-1")
        assert "motorbikes" in built.text and built.generation >= 1
        assert built.anthropic_system_block() == {"type": "text", "text": built.text,
                                                  "cache_control": {"type": "ephemeral"}}
        assert memory.block("warren", "sync-1") == built.text
        assert memory.recall("warren", "sync-1", "motorbikes") == ""  # already in the block
        with pytest.raises(pm.NotInRoom, match="persona 'nolan' is not in room 'sync-1'"):
            memory.block("nolan", "sync-1")
        with pytest.raises(pm.UnknownRoom, match="is not open"):
            memory.send(pm.MemberJoined(room_id="never-opened", user_id=7))
        with pytest.raises(pm.InvalidInput, match="at most 20000"):
            memory.post_line("sync-1", "u:42", "x" * 20_001)
        with pytest.raises(pm.UnknownRoom, match="room 'never-opened' is not open"):
            memory.post_line("never-opened", "u:42", "Hello?")
        with pytest.raises(pm.NotInRoom, match="u:7 is not in room 'sync-1'"):
            memory.post_line("sync-1", "u:7", "Let me in.")


def test_a_wrong_token_is_a_configuration_error(server: str) -> None:
    with RuntimeClient(server, "not-the-token") as memory:
        with pytest.raises(pm.ConfigError, match="runtime_token_env"):
            memory.drain()


def test_the_async_client_from_plain_asyncio(server: str) -> None:
    async def runtime() -> tuple[str, str]:
        async with AsyncRuntimeClient(server, SECRETS.runtime_token) as memory:
            await memory.send(opened("async-1"))
            await asyncio.gather(*(
                memory.post_line("async-1", "u:42", text)
                for text in ("I keep two ferrets named Salt and Pepper.", "I work night shifts at the harbour.")
            ))
            await memory.send(pm.RoomWentQuiet(room_id="async-1"))
            await memory.drain()
            await memory.send(pm.RoomArchived(room_id="async-1"))
            await memory.send(opened("async-1", topic="ferrets"))
            return await memory.block("warren", "async-1"), await memory.recall("warren", "async-1", "harbour")

    block, note = asyncio.run(runtime())
    assert "ferrets" in block
    assert "harbour" in block + note
