"""The routes one cluster worker answers for the others: a ``block``, a ``recall`` or a human's
edit forwarded to the owner of the persona, and a ``drain`` of this worker (``cluster/node.py``, ``cluster/forward.py``). Not part of the runtime API: a runtime calls
``/api/…`` on any worker, and the worker forwards here when another one owns the persona.

Rules:
- Only in ``serve --worker`` (the memory is a ``ClusterMemory``), with the runtime's bearer
  token; JSON in, JSON out, errors as the runtime API's (``runtime.status_for``).
- They answer only from this worker's own cache: a worker that does not own the persona now
  answers ``421 Misdirected Request`` and never forwards again, so a call travels one hop.
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ..errors import InvalidInput, NotOwnedHere, PersonaMemoryError
from ..cluster.forward import MISDIRECTED, edit_answer, edit_of
from . import json_body
from .auth import Auth
from .runtime import status_for


class ClusterRoutes:
    def __init__(self, memory: Any, auth: Auth) -> None:
        self.memory = memory
        self.auth = auth

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/cluster/built-block", self.built_block, methods=["POST"]),
            Route("/cluster/recall", self.recall, methods=["POST"]),
            Route("/cluster/edit", self.edit, methods=["POST"]),
            Route("/cluster/drain", self.drain, methods=["POST"]),
        ]

    async def _json(self, request: Request) -> Any:
        if not self.auth.runtime_bearer_ok(request.headers.get("authorization")):
            raise HTTPException(401, "a valid runtime bearer token is required", headers={"WWW-Authenticate": "Bearer"})
        try:
            return json_body.parse(await request.body())
        except json_body.NotJson:
            raise InvalidInput("the body must be JSON") from None

    async def _body(self, request: Request, fields: tuple[str, ...]) -> dict[str, str]:
        body = await self._json(request)
        if not isinstance(body, dict) or sorted(body) != sorted(fields) or not all(isinstance(body[f], str) for f in fields):
            raise InvalidInput(f"the body must be a JSON object of the strings {', '.join(fields)}")
        return body

    async def built_block(self, request: Request) -> Response:
        try:
            body = await self._body(request, ("persona", "room_id"))
            built = await self.memory.local_built_block(body["persona"], body["room_id"])
        except PersonaMemoryError as exc:
            return _error(exc)
        return JSONResponse({"text": built.text, "generation": built.generation, "char_limit": built.char_limit,
                             "used": built.used})

    async def recall(self, request: Request) -> Response:
        try:
            body = await self._body(request, ("persona", "room_id", "text"))
            note = await self.memory.local_recall(body["persona"], body["room_id"], body["text"])
        except PersonaMemoryError as exc:
            return _error(exc)
        return JSONResponse({"note": note})


    async def edit(self, request: Request) -> Response:
        try:
            body = await self._json(request)
            persona = body.get("persona") if isinstance(body, dict) else None
            if not isinstance(persona, str):
                raise InvalidInput("an edit names the persona whose row it is: {\"persona\": str, ...}")
            edit = edit_of(body)
            result = edit_answer(edit, await self.memory.local_edit(persona, edit))
        except PersonaMemoryError as exc:
            return _error(exc)
        return JSONResponse({"result": result})


    async def drain(self, request: Request) -> Response:
        try:
            if await self._json(request) != {}:
                raise InvalidInput("a drain takes the empty object {}")
            await self.memory.local_drain()
        except PersonaMemoryError as exc:
            return _error(exc)
        return JSONResponse({})


def _error(exc: PersonaMemoryError) -> Response:
    status = MISDIRECTED if isinstance(exc, NotOwnedHere) else status_for(exc)
    return JSONResponse({"error": str(exc)}, status_code=status)
