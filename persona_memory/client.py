"""Clients of the runtime API over HTTP: ``RuntimeClient`` (blocking) and ``AsyncRuntimeClient``.

For a chat runtime in another process (or on another host) than ``persona-memory serve``::

    with RuntimeClient("http://127.0.0.1:8710", token=os.environ["PERSONA_MEMORY_RUNTIME_TOKEN"]) as memory:
        memory.send(pm.RoomOpened(room_id="r1", personas=("warren",), humans=frozenset({42}), private=True))
        line_id = memory.post_line("r1", "u:42", "I got the job!")
        block = memory.block("warren", "r1")          # a BuiltBlock: .text, .generation, .anthropic_system_block()
        note = memory.recall("warren", "r1", "I got the job!")
        memory.send(pm.RoomWentQuiet(room_id="r1"))

``AsyncRuntimeClient`` has the same calls as coroutines (httpx's async client: asyncio or trio).

Rules:
- The calls, their arguments and their results are the in-process ``Memory``'s (``post_line``,
  ``send``, ``block``, ``built_block``, ``recall``, ``drain``); the paths are ``web.contract``'s.
  ``post_line`` over HTTP is ``Memory.post_line(..., require_present=True)``: a line for a room
  that is not open, or from a speaker not in it, is refused and not stored.
- The server's errors come back as the same classes: 400 and 422 ``InvalidInput`` (409
  ``NotInRoom``, 404 ``UnknownRoom``), 503 ``MemoryClosed``; 401 ``ConfigError`` (the token is
  configuration); a transport failure or any other status ``ProviderUnreachable``. The message
  is the server's.
- Room ids are percent-encoded into the path, so any room id travels.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx

from .core.placement import BuiltBlock
from .errors import (
    ConfigError,
    InvalidInput,
    MemoryClosed,
    NotInRoom,
    PersonaMemoryError,
    ProviderUnreachable,
    UnknownRoom,
)
from .messages import RoomEvent
from .event_json import event_body

DEFAULT_TIMEOUT = 30.0


def _room(room_id: str) -> str:
    return quote(room_id, safe="").replace(".", "%2E")  # no dot segment for a client to fold


def _line(speaker: str, text: str, at: datetime | None) -> dict[str, Any]:
    body: dict[str, Any] = {"speaker": speaker, "text": text}
    if at is not None:
        body["at"] = at.isoformat()
    return body


def error_of(response: httpx.Response) -> PersonaMemoryError:
    """The facade's error an error answer of the runtime API stands for (see the rules)."""
    try:
        message = response.json()["error"]
    except (ValueError, KeyError, TypeError):
        message = response.text[:200] or response.reason_phrase
    kind = {400: InvalidInput, 401: ConfigError, 404: UnknownRoom, 409: NotInRoom, 422: InvalidInput,
            503: MemoryClosed}.get(response.status_code, ProviderUnreachable)
    if kind is UnknownRoom and "room" not in message:
        kind = InvalidInput
    if kind is ConfigError:
        message = f"the runtime API refused the token ({message}); check web.runtime_token_env"
    return kind(f"{response.request.method} {response.request.url.path}: {message}")


def _answer(response: httpx.Response) -> Any:
    if response.is_success:
        return response.json()
    raise error_of(response)


def _built(answer: dict[str, Any]) -> BuiltBlock:
    return BuiltBlock(answer["persona"], answer["room_id"], answer["text"], answer["generation"],
                      answer["char_limit"], answer["meter"]["used"])


class RuntimeClient:
    """The runtime API from blocking code. Close it (``with`` or ``close()``)."""

    def __init__(self, base_url: str, token: str, *, timeout: float = DEFAULT_TIMEOUT,
                 transport: httpx.BaseTransport | None = None) -> None:
        self._http = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"},
                                  timeout=timeout, transport=transport)

    def __enter__(self) -> RuntimeClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        try:
            response = self._http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise ProviderUnreachable(f"{method} {path}: {exc!r}") from exc
        return _answer(response)

    def post_line(self, room_id: str, speaker: str, text: str, at: datetime | None = None) -> int:
        return self._call("POST", f"/api/rooms/{_room(room_id)}/lines", _line(speaker, text, at))["id"]

    def send(self, event: RoomEvent) -> None:
        self._call("POST", f"/api/rooms/{_room(event.room_id)}/events", event_body(event))

    def built_block(self, persona: str, room_id: str) -> BuiltBlock:
        return _built(self._call("GET", f"/api/rooms/{_room(room_id)}/personas/{persona}/block"))

    def block(self, persona: str, room_id: str) -> str:
        return self.built_block(persona, room_id).text

    def recall(self, persona: str, room_id: str, text: str) -> str:
        return self._call("POST", f"/api/rooms/{_room(room_id)}/personas/{persona}/recall", {"text": text})["note"]

    def drain(self) -> None:
        self._call("POST", "/api/drain")


class AsyncRuntimeClient:
    """The runtime API from async code (asyncio or trio). Close it (``async with`` or ``aclose()``)."""

    def __init__(self, base_url: str, token: str, *, timeout: float = DEFAULT_TIMEOUT,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._http = httpx.AsyncClient(base_url=base_url, headers={"Authorization": f"Bearer {token}"},
                                       timeout=timeout, transport=transport)

    async def __aenter__(self) -> AsyncRuntimeClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self, method: str, path: str, body: Any = None) -> Any:
        try:
            response = await self._http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise ProviderUnreachable(f"{method} {path}: {exc!r}") from exc
        return _answer(response)

    async def post_line(self, room_id: str, speaker: str, text: str, at: datetime | None = None) -> int:
        return (await self._call("POST", f"/api/rooms/{_room(room_id)}/lines", _line(speaker, text, at)))["id"]

    async def send(self, event: RoomEvent) -> None:
        await self._call("POST", f"/api/rooms/{_room(event.room_id)}/events", event_body(event))

    async def built_block(self, persona: str, room_id: str) -> BuiltBlock:
        return _built(await self._call("GET", f"/api/rooms/{_room(room_id)}/personas/{persona}/block"))

    async def block(self, persona: str, room_id: str) -> str:
        return (await self.built_block(persona, room_id)).text

    async def recall(self, persona: str, room_id: str, text: str) -> str:
        return (await self._call("POST", f"/api/rooms/{_room(room_id)}/personas/{persona}/recall", {"text": text}))["note"]

    async def drain(self) -> None:
        await self._call("POST", "/api/drain")
