"""The human-control JSON API under ``/api/users/{user_id}``, for the chat runtime.

Rules:
- The routes are built from ``controls_contract.CONTROL_OPERATIONS``: each operation's id is
  the name of its handler here, and its body is checked against the operation's schema
  (``web.shapes``, after ``json_body.parse``) before the handler sees it — a body that is not
  JSON, nests more than ``json_body.MAX_DEPTH`` deep, misses a field, has a field of the wrong
  type or one the route does not take is a 400 that names it, and nothing changes.
- Only the chat runtime calls it, with ``Authorization: Bearer <token>`` (the token is in the
  environment variable named by ``web.api_token_env``). No cookie is read here, so the API
  needs no CSRF token; without the right bearer every route answers 401, before its body is read.
- The runtime acts for one person at a time: every query is scoped to the path's user id.
  Another person's memory or notice id answers 404.
- Errors are ``{"error": "..."}`` with the statuses the table lists for the route: 400, 401,
  404, 413, 422 (a note the facade refused: nothing was stored), 503 (the memory is shutting
  down, or its storage failed).
- Muting names a persona the person has met (it keeps lines about them, shared a room with
  them, or was muted by them); any other slug is a 404 that says so, and nothing changes — a
  typo must not look like success while the real persona keeps remembering.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ..errors import InvalidInput, NotYourMemory, NotYourNotice, StorageError
from ..ids import MAX_USER_ID, check_persona
from ..memory import Memory
from . import json_body, shapes, views
from .auth import Auth
from .contract import Operation
from .controls_contract import CONTROL_OPERATIONS

Handler = Callable[[Request, int, Any], Awaitable[Response]]


class Api:
    """The runtime's routes, over one ``Memory`` and one ``Auth``."""

    def __init__(self, memory: Memory, auth: Auth) -> None:
        self.memory = memory
        self.auth = auth

    def routes(self) -> list[BaseRoute]:
        return [Route(op.route_path, self._endpoint(op), methods=[op.method], name=op.id)
                for op in CONTROL_OPERATIONS]

    def _endpoint(self, op: Operation) -> Callable[[Request], Awaitable[Response]]:
        handler: Handler = getattr(self, op.id)

        async def endpoint(request: Request) -> Response:
            uid = self.user(request)
            body = await _body(request, op.body) if op.body is not None else None
            try:
                return await handler(request, uid, body)
            except StorageError:
                raise HTTPException(503, "the memory's storage failed; try again in a moment") from None

        endpoint.__name__ = op.id
        return endpoint

    def user(self, request: Request) -> int:
        """The user id of the route, once the bearer token is checked."""
        if not self.auth.bearer_ok(request.headers.get("authorization")):
            raise HTTPException(401, "a valid bearer token is required", headers={"WWW-Authenticate": "Bearer"})
        return _id(request.path_params["user_id"], "user")

    async def login_link(self, request: Request, uid: int, _body: None) -> Response:
        return JSONResponse({"url": self.auth.login_url(uid), "expires_in": self.auth.link_seconds}, status_code=201)

    async def memories(self, request: Request, uid: int, _body: None) -> Response:
        rows = await self.memory.memories_about(uid)
        return JSONResponse({"memories": [views.row_json(r) for r in rows]})

    async def memory_line(self, request: Request, uid: int, _body: None) -> Response:
        memory_id = _id(request.path_params["memory_id"], "memory")
        row = next((r for r in await self.memory.memories_about(uid) if r.id == memory_id), None)
        if row is None:
            raise _not_found("memory", memory_id, uid)
        try:
            lines = await self.memory.evidence(uid, memory_id)
        except NotYourMemory:
            raise _not_found("memory", memory_id, uid) from None
        return JSONResponse({"memory": views.row_json(row), "evidence": [views.line_json(x) for x in lines]})

    async def delete_memory(self, request: Request, uid: int, _body: None) -> Response:
        memory_id = _id(request.path_params["memory_id"], "memory")
        try:
            await self.memory.delete_memory(uid, memory_id)
        except NotYourMemory:
            raise _not_found("memory", memory_id, uid) from None
        return Response(status_code=204)

    async def clear_memories(self, request: Request, uid: int, _body: None) -> Response:
        persona = request.query_params.get("persona")
        if persona is not None:
            persona = _persona(persona)
        deleted = await self.memory.clear_memories(uid, persona)
        return JSONResponse({"deleted": deleted})

    async def notices(self, request: Request, uid: int, _body: None) -> Response:
        return JSONResponse({"notices": [views.notice_json(n) for n in await self.memory.notices(uid)]})

    async def undo_notice(self, request: Request, uid: int, _body: None) -> Response:
        notice_id = _id(request.path_params["notice_id"], "notice")
        try:
            deleted = await self.memory.undo(uid, notice_id)
        except NotYourNotice:
            raise _not_found("notice", notice_id, uid) from None
        return JSONResponse({"deleted": deleted})

    async def controls(self, request: Request, uid: int, _body: None) -> Response:
        return JSONResponse(await self._controls(uid))

    async def _controls(self, uid: int) -> dict[str, Any]:
        controls = await self.memory.user_controls(uid)
        personas = sorted(set(await self.memory.personas_for(uid)) | controls.muted)
        meters = {p: await self.memory.meter(uid, p) for p in personas}
        return views.controls_json(controls, personas, meters)

    async def set_note(self, request: Request, uid: int, body: dict[str, Any]) -> Response:
        try:
            await self.memory.set_memory_note(uid, body["note"])
        except InvalidInput as exc:
            raise HTTPException(422, str(exc)) from None
        return JSONResponse(await self._controls(uid))

    async def set_memory_on(self, request: Request, uid: int, body: dict[str, Any]) -> Response:
        await self.memory.set_memory_on(uid, body["on"])
        return JSONResponse(await self._controls(uid))

    async def set_muted(self, request: Request, uid: int, body: dict[str, Any]) -> Response:
        persona = _persona(request.path_params["persona"])
        met = await self.memory.personas_for(uid)
        if persona not in met:
            raise HTTPException(
                404,
                f"persona {persona!r} keeps no lines about u:{uid} and has never been in a room with "
                f"them; nothing was changed (their personas: {', '.join(met) or 'none yet'})",
            )
        await self.memory.set_muted(uid, persona, body["muted"])
        return JSONResponse(await self._controls(uid))

    async def export(self, request: Request, uid: int, _body: None) -> Response:
        return JSONResponse(await self.memory.export(uid))


async def _body(request: Request, schema: dict[str, Any]) -> Any:
    """The request's JSON body, once it has the shape ``schema`` gives; else a 400 that says
    what is wrong (an unknown field is named, never silently ignored)."""
    try:
        return shapes.check(schema, json_body.parse(await request.body()))
    except shapes.ShapeRefused as exc:
        raise HTTPException(400, str(exc)) from None


def _id(value: int, what: str) -> int:
    if not 1 <= value <= MAX_USER_ID:
        raise HTTPException(404, f"no {what} {value}")
    return value


def _not_found(what: str, item_id: int, uid: int) -> HTTPException:
    return HTTPException(404, f"{what} {item_id} does not exist or is not u:{uid}'s")


def _persona(value: str) -> str:
    try:
        return check_persona(value)
    except InvalidInput as exc:
        raise HTTPException(404, str(exc)) from None
