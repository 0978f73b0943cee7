"""``FakeMind``: a mind whose answers a test writes, in the manner of httpx's ``MockTransport``.

Give it two handlers — functions of the request returning the JSON-shaped answer (or raising,
e.g. ``ProviderUnreachable``) — and it records every request it was asked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .port import ExtractionRequest, RoutingRequest

Handler = Callable[[Any], Any | Awaitable[Any]]


def _nothing(_request: Any) -> Any:
    return {"memories": []}


def _add(_request: Any) -> Any:
    return {"event": "ADD"}


class FakeMind:
    """A scripted ``Mind``. ``extractions`` and ``routings`` list what it was asked."""

    def __init__(self, extract: Handler = _nothing, route: Handler = _add) -> None:
        self._extract = extract
        self._route = route
        self.extractions: list[ExtractionRequest] = []
        self.routings: list[RoutingRequest] = []
        self.closed = False

    async def extract(self, request: ExtractionRequest) -> Any:
        self.extractions.append(request)
        return await _maybe_await(self._extract(request))

    async def route(self, request: RoutingRequest) -> Any:
        self.routings.append(request)
        return await _maybe_await(self._route(request))

    async def aclose(self) -> None:
        self.closed = True


async def _maybe_await(value: Any) -> Any:
    if isinstance(value, Awaitable):
        return await value
    return value
