"""The memory's calls as the bridge offers them: ``ThreadedMemory`` (blocking methods) and
``AsyncioMemory`` (coroutines for any asyncio loop).

Rules:
- Each class has exactly the public calls of ``Memory`` (all but ``run_sweeps``, which runs
  until cancelled), with the same names, parameters, defaults and result types, written out so
  an editor and a type checker see them; ``tests/test_bridge.py`` holds them to ``Memory``'s.
- A call does nothing here but hand its arguments to the memory's trio thread (``_Calls``):
  the arguments are checked, and the errors raised, by ``Memory`` itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Protocol

from .core.placement import BuiltBlock
from .events.kinds import Delivered
from .memory import Readiness
from .messages import RoomEvent
from .rows import MemoryRow, UserControls
from .storage import writes
from .storage.rooms import RoomFacts
from .storage.queries import TranscriptLine


class _Calls(Protocol):
    """What the facades need of the thread that runs the memory (``bridge._TrioThread``)."""

    def call(self, name: str, /, *args: Any, **kwargs: Any) -> Any: ...

    async def wait(self, name: str, /, *args: Any, **kwargs: Any) -> Any: ...


class AsyncioMemory:
    """The memory's calls as coroutines for asyncio: each runs on the memory's trio thread and
    is awaited without blocking the loop. A call whose caller is cancelled still runs to its
    end in the memory (a write is never cut in half)."""

    def __init__(self, runner: _Calls) -> None:
        self._runner = runner

    async def readiness(self) -> Readiness:
        """``Memory.readiness``, awaited without blocking the loop."""
        return await self._runner.wait("readiness")

    async def post_line(
        self, room_id: str, speaker: str, text: str, at: datetime | None = None, *, require_present: bool = False
    ) -> int:
        """``Memory.post_line``, awaited without blocking the loop."""
        return await self._runner.wait("post_line", room_id, speaker, text, at, require_present=require_present)

    async def send(self, event: RoomEvent) -> None:
        """``Memory.send``, awaited without blocking the loop."""
        await self._runner.wait("send", event)

    async def block(self, persona: str, room_id: str) -> str:
        """``Memory.block``, awaited without blocking the loop."""
        return await self._runner.wait("block", persona, room_id)

    async def built_block(self, persona: str, room_id: str) -> BuiltBlock:
        """``Memory.built_block``, awaited without blocking the loop."""
        return await self._runner.wait("built_block", persona, room_id)

    async def recall(self, persona: str, room_id: str, text: str) -> str:
        """``Memory.recall``, awaited without blocking the loop."""
        return await self._runner.wait("recall", persona, room_id, text)

    async def drain(self) -> None:
        """``Memory.drain``, awaited without blocking the loop."""
        await self._runner.wait("drain")

    async def set_memory_note(self, user_id: int, note: str) -> None:
        """``Memory.set_memory_note``, awaited without blocking the loop."""
        await self._runner.wait("set_memory_note", user_id, note)

    async def set_memory_on(self, user_id: int, on: bool) -> None:
        """``Memory.set_memory_on``, awaited without blocking the loop."""
        await self._runner.wait("set_memory_on", user_id, on)

    async def set_muted(self, user_id: int, persona: str, muted: bool) -> None:
        """``Memory.set_muted``, awaited without blocking the loop."""
        await self._runner.wait("set_muted", user_id, persona, muted)

    async def memories_about(self, user_id: int) -> list[MemoryRow]:
        """``Memory.memories_about``, awaited without blocking the loop."""
        return await self._runner.wait("memories_about", user_id)

    async def delete_memory(self, user_id: int, memory_id: int) -> None:
        """``Memory.delete_memory``, awaited without blocking the loop."""
        await self._runner.wait("delete_memory", user_id, memory_id)

    async def user_controls(self, user_id: int) -> UserControls:
        """``Memory.user_controls``, awaited without blocking the loop."""
        return await self._runner.wait("user_controls", user_id)

    async def personas_for(self, user_id: int) -> list[str]:
        """``Memory.personas_for``, awaited without blocking the loop."""
        return await self._runner.wait("personas_for", user_id)

    async def evidence(self, user_id: int, memory_id: int) -> list[TranscriptLine]:
        """``Memory.evidence``, awaited without blocking the loop."""
        return await self._runner.wait("evidence", user_id, memory_id)

    async def meter(self, user_id: int, persona: str) -> tuple[int, int]:
        """``Memory.meter``, awaited without blocking the loop."""
        return await self._runner.wait("meter", user_id, persona)

    async def private_block(self, user_id: int, persona: str) -> tuple[int, int, frozenset[int]]:
        """``Memory.private_block``, awaited without blocking the loop."""
        return await self._runner.wait("private_block", user_id, persona)

    async def room_facts(self, room_ids: Iterable[str]) -> dict[str, RoomFacts]:
        """``Memory.room_facts``, awaited without blocking the loop."""
        return await self._runner.wait("room_facts", room_ids)

    async def display_names(self, user_ids: Iterable[int]) -> dict[int, str]:
        """``Memory.display_names``, awaited without blocking the loop."""
        return await self._runner.wait("display_names", user_ids)

    async def clear_memories(self, user_id: int, persona: str | None = None) -> int:
        """``Memory.clear_memories``, awaited without blocking the loop."""
        return await self._runner.wait("clear_memories", user_id, persona)

    async def export(self, user_id: int) -> dict:
        """``Memory.export``, awaited without blocking the loop."""
        return await self._runner.wait("export", user_id)

    async def notices(self, user_id: int) -> list[writes.Notice]:
        """``Memory.notices``, awaited without blocking the loop."""
        return await self._runner.wait("notices", user_id)

    async def undo(self, user_id: int, notice_id: int) -> list[int]:
        """``Memory.undo``, awaited without blocking the loop."""
        return await self._runner.wait("undo", user_id, notice_id)

    async def events_after(self, after_id: int, limit: int = 100) -> list[Delivered]:
        """``Memory.events_after``, awaited without blocking the loop."""
        return await self._runner.wait("events_after", after_id, limit)

    async def newest_event(self) -> int:
        """``Memory.newest_event``, awaited without blocking the loop."""
        return await self._runner.wait("newest_event")

    async def sweep(
        self, *, parked_only: bool = False, personas: Iterable[str] | None = None
    ) -> datetime | None:
        """``Memory.sweep``, awaited without blocking the loop."""
        return await self._runner.wait("sweep", parked_only=parked_only, personas=personas)


class ThreadedMemory:
    """The memory's calls as blocking methods, from any thread but the memory's own;
    ``.asyncio`` has the same calls as coroutines."""

    def __init__(self, runner: _Calls) -> None:
        self._runner = runner
        self.asyncio = AsyncioMemory(runner)

    def readiness(self) -> Readiness:
        """``Memory.readiness``, waiting in the calling thread."""
        return self._runner.call("readiness")

    def post_line(
        self, room_id: str, speaker: str, text: str, at: datetime | None = None, *, require_present: bool = False
    ) -> int:
        """``Memory.post_line``, waiting in the calling thread."""
        return self._runner.call("post_line", room_id, speaker, text, at, require_present=require_present)

    def send(self, event: RoomEvent) -> None:
        """``Memory.send``, waiting in the calling thread."""
        self._runner.call("send", event)

    def block(self, persona: str, room_id: str) -> str:
        """``Memory.block``, waiting in the calling thread."""
        return self._runner.call("block", persona, room_id)

    def built_block(self, persona: str, room_id: str) -> BuiltBlock:
        """``Memory.built_block``, waiting in the calling thread."""
        return self._runner.call("built_block", persona, room_id)

    def recall(self, persona: str, room_id: str, text: str) -> str:
        """``Memory.recall``, waiting in the calling thread."""
        return self._runner.call("recall", persona, room_id, text)

    def drain(self) -> None:
        """``Memory.drain``, waiting in the calling thread."""
        self._runner.call("drain")

    def set_memory_note(self, user_id: int, note: str) -> None:
        """``Memory.set_memory_note``, waiting in the calling thread."""
        self._runner.call("set_memory_note", user_id, note)

    def set_memory_on(self, user_id: int, on: bool) -> None:
        """``Memory.set_memory_on``, waiting in the calling thread."""
        self._runner.call("set_memory_on", user_id, on)

    def set_muted(self, user_id: int, persona: str, muted: bool) -> None:
        """``Memory.set_muted``, waiting in the calling thread."""
        self._runner.call("set_muted", user_id, persona, muted)

    def memories_about(self, user_id: int) -> list[MemoryRow]:
        """``Memory.memories_about``, waiting in the calling thread."""
        return self._runner.call("memories_about", user_id)

    def delete_memory(self, user_id: int, memory_id: int) -> None:
        """``Memory.delete_memory``, waiting in the calling thread."""
        self._runner.call("delete_memory", user_id, memory_id)

    def user_controls(self, user_id: int) -> UserControls:
        """``Memory.user_controls``, waiting in the calling thread."""
        return self._runner.call("user_controls", user_id)

    def personas_for(self, user_id: int) -> list[str]:
        """``Memory.personas_for``, waiting in the calling thread."""
        return self._runner.call("personas_for", user_id)

    def evidence(self, user_id: int, memory_id: int) -> list[TranscriptLine]:
        """``Memory.evidence``, waiting in the calling thread."""
        return self._runner.call("evidence", user_id, memory_id)

    def meter(self, user_id: int, persona: str) -> tuple[int, int]:
        """``Memory.meter``, waiting in the calling thread."""
        return self._runner.call("meter", user_id, persona)

    def private_block(self, user_id: int, persona: str) -> tuple[int, int, frozenset[int]]:
        """``Memory.private_block``, waiting in the calling thread."""
        return self._runner.call("private_block", user_id, persona)

    def room_facts(self, room_ids: Iterable[str]) -> dict[str, RoomFacts]:
        """``Memory.room_facts``, waiting in the calling thread."""
        return self._runner.call("room_facts", room_ids)

    def display_names(self, user_ids: Iterable[int]) -> dict[int, str]:
        """``Memory.display_names``, waiting in the calling thread."""
        return self._runner.call("display_names", user_ids)

    def clear_memories(self, user_id: int, persona: str | None = None) -> int:
        """``Memory.clear_memories``, waiting in the calling thread."""
        return self._runner.call("clear_memories", user_id, persona)

    def export(self, user_id: int) -> dict:
        """``Memory.export``, waiting in the calling thread."""
        return self._runner.call("export", user_id)

    def notices(self, user_id: int) -> list[writes.Notice]:
        """``Memory.notices``, waiting in the calling thread."""
        return self._runner.call("notices", user_id)

    def undo(self, user_id: int, notice_id: int) -> list[int]:
        """``Memory.undo``, waiting in the calling thread."""
        return self._runner.call("undo", user_id, notice_id)

    def events_after(self, after_id: int, limit: int = 100) -> list[Delivered]:
        """``Memory.events_after``, waiting in the calling thread."""
        return self._runner.call("events_after", after_id, limit)

    def newest_event(self) -> int:
        """``Memory.newest_event``, waiting in the calling thread."""
        return self._runner.call("newest_event")

    def sweep(self, *, parked_only: bool = False, personas: Iterable[str] | None = None) -> datetime | None:
        """``Memory.sweep``, waiting in the calling thread."""
        return self._runner.call("sweep", parked_only=parked_only, personas=personas)
