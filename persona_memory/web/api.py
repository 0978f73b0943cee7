"""The JSON API under ``/api/``: the human's controls, for the chat runtime.

Rules:
- Only the chat runtime calls it, with ``Authorization: Bearer <token>`` (the token is in the
  environment variable named by ``web.api_token_env``). No cookie is read here, so the API
  needs no CSRF token; without the right bearer every route answers 401.
- The runtime acts for one person at a time: every route is under ``/api/users/{user_id}``
  and every query is scoped to that id. Another person's memory or notice id answers 404.
- Errors are ``{"error": "..."}`` with 400 (malformed request, or a body nested more than
  ``json_body.MAX_DEPTH`` deep: refused before it is parsed), 401, 404 or 422 (a value
  the facade refused, e.g. a note over 400 characters; nothing was stored).
- Muting names a persona the person has met (it keeps lines about them, shared a room with
  them, or was muted by them); any other slug is a 404 that says so, and nothing changes — a
  typo must not look like success while the real persona keeps remembering.
- The shapes are documented in ``API.md`` beside this module.
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ..errors import InvalidInput, NotYourMemory, NotYourNotice
from ..ids import check_persona, check_user_id
from ..memory import Memory
from . import json_body, views
from .auth import Auth

MAX_ID = 2**63 - 1


class Api:
    """The runtime's routes, over one ``Memory`` and one ``Auth``."""

    def __init__(self, memory: Memory, auth: Auth) -> None:
        self.memory = memory
        self.auth = auth

    def routes(self) -> list[BaseRoute]:
        user = "/api/users/{user_id:int}"
        return [
            Route(f"{user}/login-link", self.login_link, methods=["POST"]),
            Route(f"{user}/memories", self.memories, methods=["GET"]),
            Route(f"{user}/memories", self.clear, methods=["DELETE"]),
            Route(f"{user}/memories/{{memory_id:int}}", self.memory_line, methods=["GET"]),
            Route(f"{user}/memories/{{memory_id:int}}", self.delete, methods=["DELETE"]),
            Route(f"{user}/notices", self.notices, methods=["GET"]),
            Route(f"{user}/notices/{{notice_id:int}}/undo", self.undo, methods=["POST"]),
            Route(f"{user}/controls", self.controls, methods=["GET"]),
            Route(f"{user}/note", self.set_note, methods=["PUT"]),
            Route(f"{user}/memory-on", self.set_memory_on, methods=["PUT"]),
            Route(f"{user}/muted/{{persona}}", self.set_muted, methods=["PUT"]),
            Route(f"{user}/export", self.export, methods=["GET"]),
        ]

    def user(self, request: Request) -> int:
        """The user id of the route, once the bearer token is checked."""
        if not self.auth.bearer_ok(request.headers.get("authorization")):
            raise HTTPException(401, "a valid bearer token is required", headers={"WWW-Authenticate": "Bearer"})
        user_id = request.path_params["user_id"]
        if not 1 <= user_id <= MAX_ID:
            raise HTTPException(404, f"no user {user_id}")
        return check_user_id(user_id)

    async def login_link(self, request: Request) -> Response:
        uid = self.user(request)
        return JSONResponse({"url": self.auth.login_url(uid), "expires_in": self.auth.link_seconds}, status_code=201)

    async def memories(self, request: Request) -> Response:
        uid = self.user(request)
        rows = await self.memory.memories_about(uid)
        return JSONResponse({"memories": [views.row_json(r) for r in rows]})

    async def memory_line(self, request: Request) -> Response:
        uid = self.user(request)
        memory_id = _id(request.path_params["memory_id"], "memory")
        row = next((r for r in await self.memory.memories_about(uid) if r.id == memory_id), None)
        if row is None:
            raise _not_found("memory", memory_id, uid)
        try:
            lines = await self.memory.evidence(uid, memory_id)
        except NotYourMemory:
            raise _not_found("memory", memory_id, uid) from None
        return JSONResponse({"memory": views.row_json(row), "evidence": [views.line_json(x) for x in lines]})

    async def delete(self, request: Request) -> Response:
        uid = self.user(request)
        memory_id = _id(request.path_params["memory_id"], "memory")
        try:
            await self.memory.delete_memory(uid, memory_id)
        except NotYourMemory:
            raise _not_found("memory", memory_id, uid) from None
        return Response(status_code=204)

    async def clear(self, request: Request) -> Response:
        uid = self.user(request)
        persona = request.query_params.get("persona")
        if persona is not None:
            persona = _persona(persona)
        deleted = await self.memory.clear_memories(uid, persona)
        return JSONResponse({"deleted": deleted})

    async def notices(self, request: Request) -> Response:
        uid = self.user(request)
        return JSONResponse({"notices": [views.notice_json(n) for n in await self.memory.notices(uid)]})

    async def undo(self, request: Request) -> Response:
        uid = self.user(request)
        notice_id = _id(request.path_params["notice_id"], "notice")
        try:
            deleted = await self.memory.undo(uid, notice_id)
        except NotYourNotice:
            raise _not_found("notice", notice_id, uid) from None
        return JSONResponse({"deleted": deleted})

    async def controls(self, request: Request) -> Response:
        uid = self.user(request)
        return JSONResponse(await self._controls(uid))

    async def _controls(self, uid: int) -> dict[str, Any]:
        controls = await self.memory.user_controls(uid)
        personas = sorted(set(await self.memory.personas_for(uid)) | controls.muted)
        meters = {p: await self.memory.meter(uid, p) for p in personas}
        return views.controls_json(controls, personas, meters)

    async def set_note(self, request: Request) -> Response:
        uid = self.user(request)
        note = (await _body(request, "note")).get("note")
        if not isinstance(note, str):
            raise HTTPException(400, 'send {"note": "..."} (a string; "" clears the note)')
        try:
            await self.memory.set_memory_note(uid, note)
        except InvalidInput as exc:
            raise HTTPException(422, str(exc)) from None
        return JSONResponse(await self._controls(uid))

    async def set_memory_on(self, request: Request) -> Response:
        uid = self.user(request)
        on = (await _body(request, "on")).get("on")
        if not isinstance(on, bool):
            raise HTTPException(400, 'send {"on": true} or {"on": false}')
        await self.memory.set_memory_on(uid, on)
        return JSONResponse(await self._controls(uid))

    async def set_muted(self, request: Request) -> Response:
        uid = self.user(request)
        persona = _persona(request.path_params["persona"])
        muted = (await _body(request, "muted")).get("muted")
        if not isinstance(muted, bool):
            raise HTTPException(400, 'send {"muted": true} or {"muted": false}')
        met = await self.memory.personas_for(uid)
        if persona not in met:
            raise HTTPException(
                404,
                f"persona {persona!r} keeps no lines about u:{uid} and has never been in a room with "
                f"them; nothing was changed (their personas: {', '.join(met) or 'none yet'})",
            )
        await self.memory.set_muted(uid, persona, muted)
        return JSONResponse(await self._controls(uid))

    async def export(self, request: Request) -> Response:
        uid = self.user(request)
        return JSONResponse(await self.memory.export(uid))


async def _body(request: Request, field: str) -> dict[str, Any]:
    """The JSON object of a request that takes exactly one ``field``; anything else is a 400
    that says so (an unknown field is named, never silently ignored)."""
    try:
        data = json_body.parse(await request.body())
    except json_body.TooDeep as exc:
        raise HTTPException(400, str(exc)) from None
    except json_body.NotJson:
        raise HTTPException(400, "the body must be a JSON object") from None
    if not isinstance(data, dict):
        raise HTTPException(400, "the body must be a JSON object")
    unknown = sorted(set(data) - {field})
    if unknown:
        raise HTTPException(
            400, f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                 f"this route takes only {field!r}"
        )
    return data


def _id(value: int, what: str) -> int:
    if not 1 <= value <= MAX_ID:
        raise HTTPException(404, f"no {what} {value}")
    return value


def _not_found(what: str, item_id: int, uid: int) -> HTTPException:
    return HTTPException(404, f"{what} {item_id} does not exist or is not u:{uid}'s")


def _persona(value: str) -> str:
    try:
        return check_persona(value)
    except InvalidInput as exc:
        raise HTTPException(404, str(exc)) from None
