"""``GET /api/events``: the outbox as Server-Sent Events, for the chat runtime.

The route is ``contract.STREAM_OPERATIONS``'s, described with the others at ``/api/openapi.json``.

Rules:
- The runtime's bearer token (``web.runtime_token_env``), as the rest of the runtime API;
  without it, 401.
- Each event is one SSE message: ``id:`` the event id (increasing), ``event:`` its kind,
  ``data:`` its JSON (``events.kinds.Delivered.message``) — ids and switches only, never
  text about a person; the runtime asks the API for what it wants to show.
- Resumable: a reconnecting client sends ``Last-Event-ID`` (browsers' EventSource does) and
  gets every event after it; ``?after=N`` does the same for a first connection, ``after=0``
  from the oldest kept. With neither, the stream starts at the newest event: what happens from
  now on. ``?kinds=a,b`` keeps only those kinds.
- The stream reads the outbox table, so any worker sharing the store serves every event. It
  looks for new ones every ``events.poll_seconds`` and, when idle for ``heartbeat_seconds``,
  sends a comment line so proxies keep the connection open. It ends when the server shuts
  down or the memory closes; the client reconnects with ``Last-Event-ID``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import trio
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from ..errors import MemoryClosed
from ..events.kinds import KINDS, Delivered, check_kinds
from ..memory import Memory
from ..settings import EventsSettings
from .auth import Auth
from .contract import STREAM_OPERATIONS

MAX_ID = 2**63 - 1


def frame(one: Delivered) -> bytes:
    """One event as an SSE message."""
    data = json.dumps(one.message(), separators=(",", ":"), ensure_ascii=False)
    return f"id: {one.id}\nevent: {one.kind}\ndata: {data}\n\n".encode()


class EventStream:
    """The ``/api/events`` route over ``memory``; ``ending`` is set when the server shuts down."""

    def __init__(self, memory: Memory, auth: Auth, events: EventsSettings, ending: trio.Event) -> None:
        self.memory = memory
        self.auth = auth
        self.events = events
        self.ending = ending

    def routes(self) -> list[BaseRoute]:
        return [Route(op.route_path, self.stream, methods=[op.method], name=op.id) for op in STREAM_OPERATIONS]

    async def stream(self, request: Request) -> Response:
        if not self.auth.runtime_bearer_ok(request.headers.get("authorization")):
            raise HTTPException(401, "a valid runtime bearer token is required", headers={"WWW-Authenticate": "Bearer"})
        after = _after(request)
        kinds = _kinds(request)
        if after is None:
            after = await self.memory.newest_event()
        return StreamingResponse(
            self._frames(after, kinds),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def _frames(self, after: int, kinds: frozenset[str]) -> AsyncIterator[bytes]:
        yield f": events after {after}\n\n".encode()
        quiet_since = trio.current_time()
        while not self.ending.is_set():
            try:
                batch = await self.memory.events_after(after, 100)
            except MemoryClosed:
                return
            for one in batch:
                after = one.id
                if one.kind in kinds:
                    yield frame(one)
                    quiet_since = trio.current_time()
            if len(batch) == 100:
                continue
            if trio.current_time() - quiet_since >= self.events.heartbeat_seconds:
                yield b": keep-alive\n\n"
                quiet_since = trio.current_time()
            with trio.move_on_after(self.events.poll_seconds):
                await self.ending.wait()


def _after(request: Request) -> int | None:
    """Where the client resumes: ``Last-Event-ID``, else ``?after=``, else ``None``."""
    given = request.headers.get("last-event-id")
    where = "the Last-Event-ID header"
    if given is None:
        given = request.query_params.get("after")
        where = "?after="
    if given is None:
        return None
    if not given.strip().isdigit() or int(given) > MAX_ID:
        raise HTTPException(400, f"{where} must be an event id (a whole number >= 0), got {given!r}")
    return int(given)


def _kinds(request: Request) -> frozenset[str]:
    given = request.query_params.get("kinds")
    if given is None:
        return frozenset(KINDS)
    try:
        return check_kinds([k.strip() for k in given.split(",") if k.strip()], "?kinds=")
    except ValueError as exc:
        raise HTTPException(400, str(exc)) from None
