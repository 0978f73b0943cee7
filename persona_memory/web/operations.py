"""What an operator's tools read: ``/healthz``, ``/readyz``, ``/metrics``, and an access log.

Rules:
- ``GET /healthz`` answers 200 ``{"status": "alive"}`` whenever the process serves at all: a
  liveness probe restarts a process that stops answering it, nothing else.
- ``GET /readyz`` answers 200 ``{"status": "ready"}`` when the memory is open, its store
  answers, and no persona is escalated (a slice parked after its writer failed it
  ``supervisor.max_restarts`` times); otherwise 503 with the problems and the escalated
  personas, so the operator sees what to fix (``persona-memory doctor`` shows the errors).
- ``GET /metrics``: the memory's Prometheus metrics (``metrics.py``), in the text format.
  None of these needs a token: they say nothing about anyone's memories.
- The access log (logger ``persona_memory.access``, INFO): one line per request with the
  method, the route's path *template* (``/api/rooms/{room_id}/lines``, never the room id), the
  status and the duration in milliseconds. Never a header, a token, a query string or a body.
"""

from __future__ import annotations

import logging
import time

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..memory import Memory
from ..metrics import CONTENT_TYPE

access_log = logging.getLogger("persona_memory.access")


def operation_routes(memory: Memory) -> list[BaseRoute]:
    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "alive"})

    async def readyz(request: Request) -> Response:
        readiness = await memory.readiness()
        if readiness.ready:
            return JSONResponse({"status": "ready"})
        return JSONResponse(
            {"status": "not ready", "problems": list(readiness.problems), "escalated": list(readiness.escalated)},
            status_code=503,
        )

    async def metrics(request: Request) -> Response:
        return Response(memory.metrics.render(), media_type=CONTENT_TYPE)

    return [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ]


def route_template(routes: list[BaseRoute], scope: Scope) -> str:
    """The path template of the route ``scope`` matches; ``(unmatched)`` when none does."""
    for route in routes:
        match, _ = route.matches(scope)
        if match is not Match.NONE:
            path = getattr(route, "path", None)
            if path is not None:
                return path.replace(":room_id}", "}").replace(":int}", "}").replace(":path}", "}")
            return "(mounted)"
    return "(unmatched)"


class AccessLog:
    """ASGI middleware: after each request, one line — method, template, status, duration."""

    def __init__(self, app: ASGIApp, routes: list[BaseRoute]) -> None:
        self.app = app
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            access_log.info(
                "%s %s %d %.1fms",
                scope["method"],
                route_template(self.routes, scope),
                status,
                (time.perf_counter() - started) * 1000,
            )
