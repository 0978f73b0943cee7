"""The runtime's calls over HTTP: the routes of ``web.contract``'s table, over one ``Memory``.

Rules:
- Each route is built from its ``contract.Operation``; its body is checked against the
  operation's schema before the memory sees it, so an unknown field, a wrong type or a missing
  field is a 400 that names it, and nothing reaches the memory. The body is parsed by
  ``json_body.parse``, so one nested deeper than ``json_body.MAX_DEPTH`` is a 400 too.
- The facade's errors map to statuses here and nowhere else (``status_for``); every error is
  ``{"error": "..."}``, its text the facade's message.
- The runtime token is its own secret (``web.runtime_token_env``), not the human-controls API's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.convertors import Convertor, register_url_convertor
from starlette.routing import BaseRoute, Route

from ..errors import (
    InvalidInput,
    MemoryClosed,
    NotInRoom,
    PersonaMemoryError,
    ProviderError,
    StorageError,
    UnknownRoom,
)
from ..memory import Memory
from . import contract, json_body, shapes
from ..event_json import event_of
from .auth import Auth

Handler = Callable[[Request, Any], Awaitable[Response]]


class RoomIdConvertor(Convertor[str]):
    """A room id in a path: any characters, newlines and ``/`` (sent as ``%2F``) included."""

    regex = r"[\s\S]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("room_id", RoomIdConvertor())


def status_for(error: PersonaMemoryError) -> int:
    """The HTTP status of one of the facade's errors (``errors.py`` draws the tree)."""
    match error:
        case shapes.ShapeRefused():
            return 400
        case UnknownRoom():
            return 404
        case NotInRoom():
            return 409
        case InvalidInput():
            return 422
        case MemoryClosed() | StorageError() | ProviderError():
            return 503
        case _:
            return 503


class RuntimeApi:
    """The runtime's routes over ``memory``; ``auth`` checks the runtime's bearer token."""

    def __init__(self, memory: Memory, auth: Auth) -> None:
        self.memory = memory
        self.auth = auth

    def routes(self) -> list[BaseRoute]:
        return [Route(op.route_path, self._endpoint(op), methods=[op.method], name=op.id)
                for op in contract.RUNTIME_OPERATIONS]

    def _endpoint(self, op: contract.Operation) -> Callable[[Request], Awaitable[Response]]:
        handler: Handler = getattr(self, op.id)

        async def endpoint(request: Request) -> Response:
            if not self.auth.runtime_bearer_ok(request.headers.get("authorization")):
                raise HTTPException(401, "a valid runtime bearer token is required",
                                    headers={"WWW-Authenticate": "Bearer"})
            try:
                for name in op.path_params:
                    shapes.check(contract.PATH_PARAMS[name], request.path_params[name], f"path.{name}")
                body = await _body(request, op.body) if op.body is not None else None
                return await handler(request, body)
            except PersonaMemoryError as exc:
                return JSONResponse({"error": str(exc)}, status_code=status_for(exc))

        endpoint.__name__ = op.id
        return endpoint

    async def post_line(self, request: Request, body: dict[str, Any]) -> Response:
        at = datetime.fromisoformat(body["at"]) if "at" in body else None
        line_id = await self.memory.post_line(
            request.path_params["room_id"], body["speaker"], body["text"], at, require_present=True
        )
        return JSONResponse({"id": line_id}, status_code=201)

    async def send_event(self, request: Request, body: dict[str, Any]) -> Response:
        room_id = request.path_params["room_id"]
        await self.memory.send(event_of(room_id, body))
        return JSONResponse({"room_id": room_id, "event": body["event"]}, status_code=202)

    async def block(self, request: Request, _body: None) -> Response:
        built = await self.memory.built_block(request.path_params["persona"], request.path_params["room_id"])
        return JSONResponse({
            "persona": built.persona,
            "room_id": built.room_id,
            "text": built.text,
            "chars": built.chars,
            "char_limit": built.char_limit,
            "meter": {"used": built.used, "limit": built.char_limit},
            "generation": built.generation,
            "anthropic": built.anthropic_system_block(),
            "openai": built.openai_system_message(),
        })

    async def recall(self, request: Request, body: dict[str, Any]) -> Response:
        note = await self.memory.recall(request.path_params["persona"], request.path_params["room_id"], body["text"])
        return JSONResponse({"note": note})

    async def drain(self, request: Request, _body: None) -> Response:
        await self.memory.drain()
        return JSONResponse({"drained": True})


async def _body(request: Request, schema: dict[str, Any]) -> Any:
    return shapes.check(schema, json_body.parse(await request.body()))
