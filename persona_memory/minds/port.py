"""The mind port: the two model calls of the write path (design §2), and what they are given.

A ``Mind`` answers two questions about one persona's quiet room:

``await extract(request)`` — call A. Given the transcript slice since the persona's cursor
    (line ids kept), the persona's current block for the people present, the present set with
    their ``u:`` ids, today's date and the room's situation (private or group, its topic, a
    kit mounted before or after the lines), return candidate memories as JSON-shaped data::

        {"memories": [{"subject": "u:42" | "self" | "world",
                       "counterpart": "u:42" (self rows only),
                       "kind": "fact|preference|event|promise|open_loop|relationship",
                       "text": "one standalone third-person sentence, <= 200 chars",
                       "importance": 1..10,
                       "valid_from": "2026-07" (only when a time was stated),
                       "evidence": [line ids]}]}

``await route(request)`` — call B. Given one checked candidate and its numbered neighbours
    (``[{"id": "0", "text": ...}, ...]``), return ``{"event": "ADD|UPDATE|CLOSE|NONE",
    "old_id": "0"}`` (``old_id`` for UPDATE and CLOSE only).

Rules:
- What a mind returns is untrusted: code checks every field before anything is stored
  (``write.validation``), and maps ``old_id`` back to a row id itself (``write.routing``).
- A mind that cannot answer raises ``ProviderError``; one that answers nonsense may return it —
  validation drops it and says why.
- Implementations: ``OfflineMind`` (rule-based, bundled) and ``HttpMind`` (any
  OpenAI-compatible chat endpoint). Tests script their own.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Protocol

import attrs


@attrs.frozen
class Line:
    """One transcript line as the mind sees it."""

    id: int
    speaker: str  # "u:42" or a persona slug
    text: str
    at: datetime


@attrs.frozen
class Person:
    """A human present in the room: the id rows must use, and the name to read the text by."""

    user_id: int
    name: str | None = None

    @property
    def ref(self) -> str:
        return f"u:{self.user_id}"


@attrs.frozen
class ExtractionRequest:
    """What call A is given: the slice, who heard it, and the room's situation.

    ``personas``: every persona in the room (this one included). ``topic``: the room's topic
    (``RoomOpened.topic``), if any. ``kit_earlier``: the game or role-play mounted in this room
    before some line of the slice (its lines are not in the slice; people may still speak in
    character). ``kit_later``: one mounted after the slice's lines (they were said before it).
    ``withheld``: how many humans heard the slice whose lines are left out (memory off, or
    this persona muted). A mind may ignore the situation fields; the defaults say "nothing".
    """

    persona: str
    lines: tuple[Line, ...]
    present: tuple[Person, ...]
    block: str
    today: date
    private: bool
    personas: tuple[str, ...] = ()
    topic: str | None = None
    kit_earlier: str | None = None
    kit_later: str | None = None
    withheld: int = 0


@attrs.frozen
class Neighbour:
    label: str  # "0".."4": the only handle the router gets
    text: str


@attrs.frozen
class RoutingRequest:
    persona: str
    subject: str
    kind: str
    text: str
    valid_from: str | None
    neighbours: tuple[Neighbour, ...]


class Mind(Protocol):
    """The model behind the write path. See the module docstring for the contract."""

    async def extract(self, request: ExtractionRequest) -> Any: ...

    async def route(self, request: RoutingRequest) -> Any: ...

    async def aclose(self) -> None: ...
