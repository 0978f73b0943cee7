"""The exam's scenario played through the real facade, with every write path's input recorded.

``await play(settings, turns=8)`` opens a memory of its own on a temporary SQLite file with the
group scope switched on (``scope.v1_proven = false``), the configured embedder, and the
configured mind wrapped in a ``RecordingMind``, then plays:

- plant: Dan and Warren's private chat; the room goes quiet; drain.
- present: the group room with Warren, Nolan, Dan and Cara; the probe's turns; quiet; drain.
- absent: Dan leaves that room (``MemberLeft``); the probe's turns again; quiet; drain.

It returns what each persona's context held in each phase: its block for the room as the
runtime would get it, and every ``ExtractionRequest`` its write path sent. Nothing here
counts; ``counting`` does.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import attrs

from ..clock import ManualClock
from ..compose import make_mind
from ..embedding import Embedder
from ..memory import Memory, open_memory
from ..messages import MemberLeft, RoomOpened, RoomWentQuiet
from ..minds.port import ExtractionRequest, Mind, RoutingRequest
from ..settings import Settings
from . import scenario as s


class RecordingMind:
    """A ``Mind`` that passes every call to ``inner`` and records each extraction request,
    tagged with the phase set in ``phase`` when it was sent. It owns ``inner`` and closes it."""

    def __init__(self, inner: Mind) -> None:
        self.inner = inner
        self.phase = ""
        self.requests: list[tuple[str, ExtractionRequest]] = []

    async def extract(self, request: ExtractionRequest) -> Any:
        self.requests.append((self.phase, request))
        return await self.inner.extract(request)

    async def route(self, request: RoutingRequest) -> Any:
        return await self.inner.route(request)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def sent(self, phase: str, persona: str) -> tuple[ExtractionRequest, ...]:
        return tuple(r for p, r in self.requests if p == phase and r.persona == persona)


@attrs.frozen
class Seen:
    """One persona's context in one phase: its block for the room, and its write path's input."""

    block: str
    requests: tuple[ExtractionRequest, ...]


@attrs.frozen
class Played:
    """What every context held. ``seen[(phase, persona)]``; the plant has Warren only."""

    seen: Mapping[tuple[str, str], Seen]
    rows_written: int


def exam_settings(settings: Settings, path: str) -> Settings:
    """``settings`` for the exam's own memory: the store at ``path``, the group scope on, and
    no webhooks (the exam's made-up people are nobody the runtime should hear of)."""
    return attrs.evolve(
        settings,
        storage=attrs.evolve(settings.storage, path=path),
        scope=attrs.evolve(settings.scope, v1_proven=False),
        events=attrs.evolve(settings.events, webhooks=()),
    )


async def play(
    settings: Settings,
    *,
    turns: int,
    clock: ManualClock | None = None,
    embedder: Embedder | None = None,
) -> Played:
    """Play plant, present and absent through ``open_memory`` on a temporary file.

    Args:
        settings: the loaded settings; the exam changes only ``storage.path`` and
            ``scope.v1_proven`` for its own memory.
        turns: how many of the probe's turns to play in each probe phase.
        clock: moved a minute per line said; default today 18:00 UTC.
        embedder: overrides the configured embedder (tests).
    """
    if clock is None:
        now = datetime.now(timezone.utc)
        clock = ManualClock(now.replace(hour=18, minute=0, second=0, microsecond=0))
    with tempfile.TemporaryDirectory(prefix="persona-memory-exam-") as tmp:
        exam = exam_settings(settings, str(Path(tmp) / "exam.db"))
        mind = RecordingMind(make_mind(exam))
        async with open_memory(exam, clock=clock, embedder=embedder, mind=mind) as memory:
            seen = await _play(memory, mind, clock, turns)
            rows = 0
            for user_id in s.NAMES:
                rows += len(await memory.memories_about(user_id))
    return Played(seen=seen, rows_written=rows)


async def _say(memory: Memory, clock: ManualClock, room_id: str, speaker: str, text: str) -> None:
    await memory.post_line(room_id, speaker, text, at=clock.now())
    clock.advance(minutes=1)


async def _quiet(memory: Memory, mind: RecordingMind, room_id: str, phase: str) -> None:
    mind.phase = phase
    await memory.send(RoomWentQuiet(room_id=room_id))
    await memory.drain()


async def _probe(memory: Memory, clock: ManualClock, turns: int) -> None:
    for turn in s.PROBE[:turns]:
        await _say(memory, clock, s.GROUP_ROOM, turn.speaker, turn.text)
        await _say(memory, clock, s.GROUP_ROOM, s.WARREN, turn.warren)
        await _say(memory, clock, s.GROUP_ROOM, s.NOLAN, turn.nolan)


async def _play(
    memory: Memory, mind: RecordingMind, clock: ManualClock, turns: int
) -> dict[tuple[str, str], Seen]:
    blocks: dict[tuple[str, str], str] = {}

    dm = RoomOpened(
        room_id=s.DM_ROOM, personas=(s.WARREN,), humans={s.DAN}, private=True, names=s.NAMES
    )
    await memory.send(dm)
    blocks[s.PLANT, s.WARREN] = await memory.block(s.WARREN, s.DM_ROOM)
    for speaker, text in s.PLANT_CHAT:
        await _say(memory, clock, s.DM_ROOM, speaker, text)
    await _quiet(memory, mind, s.DM_ROOM, s.PLANT)

    clock.advance(hours=20)
    await memory.send(
        RoomOpened(
            room_id=s.GROUP_ROOM,
            personas=s.PERSONAS,
            humans={s.DAN, s.CARA},
            private=False,
            names=s.NAMES,
            topic=s.PROBE[0].text,
        )
    )
    for persona in s.PERSONAS:
        blocks[s.PRESENT, persona] = await memory.block(persona, s.GROUP_ROOM)
    await _say(memory, clock, s.GROUP_ROOM, *s.DAN_ARRIVES)
    await _probe(memory, clock, turns)
    await _quiet(memory, mind, s.GROUP_ROOM, s.PRESENT)

    clock.advance(minutes=10)
    await memory.send(MemberLeft(room_id=s.GROUP_ROOM, user_id=s.DAN))
    for persona in s.PERSONAS:
        blocks[s.ABSENT, persona] = await memory.block(persona, s.GROUP_ROOM)
    await _probe(memory, clock, turns)
    await _quiet(memory, mind, s.GROUP_ROOM, s.ABSENT)

    return {key: Seen(block, mind.sent(*key)) for key, block in blocks.items()}
