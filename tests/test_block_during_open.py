"""block() asked while RoomOpened is still being delivered must not raise a bare KeyError."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import trio
import trio.testing

import persona_memory as pm
from persona_memory.embedding import HashingEmbedder


async def test_block_asked_while_the_room_opens_is_a_block_or_a_clear_error(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    settings = pm.load_settings(overrides={"storage.path": str(tmp_path / "m.db"), "embedder.kind": "hashing"})
    answers: list[object] = []

    async def ask(persona: str, room_id: str) -> None:
        while True:
            try:
                answers.append(await memory.block(persona, room_id))
                return
            except pm.UnknownRoom:
                await trio.lowlevel.checkpoint()
            except Exception as exc:
                answers.append(exc)
                return

    async with pm.open_memory(settings, clock=pm.ManualClock(datetime(2026, 8, 18, tzinfo=timezone.utc)),
                              embedder=HashingEmbedder(64)) as memory:
        for i in range(20):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(ask, f"second{i}", f"r{i}")
                await trio.lowlevel.checkpoint()
                await memory.send(pm.RoomOpened(f"r{i}", (f"first{i}", f"second{i}"), frozenset({1})))

    assert [a for a in answers if not isinstance(a, str)] == []
