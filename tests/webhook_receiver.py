"""A webhook receiver on loopback for the event tests: a Starlette app served by Hypercorn's
trio worker in the test's nursery. It answers each POST with the next status of ``answers``
(200 once they run out) and keeps every request it got, in order."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import attrs
import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from persona_memory.events import EVENT_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, verify


GUARD_SECONDS = 60.0


@attrs.frozen
class Received:
    path: str
    event_id: str
    timestamp: str
    signed: str
    body: bytes
    status: int

    def verifies(self, secret: str, now: float) -> bool:
        return verify(secret.encode(), self.timestamp, self.signed, self.body, now=now)


@attrs.define
class Receiver:
    answers: list[int] = attrs.field(factory=list)
    got: list[Received] = attrs.field(factory=list)
    _changed: trio.Event = attrs.field(factory=trio.Event)

    async def handle(self, request: Request) -> Response:
        status = self.answers.pop(0) if self.answers else 200
        self.got.append(Received(
            request.url.path,
            request.headers.get(EVENT_ID_HEADER, ""),
            request.headers.get(TIMESTAMP_HEADER, ""),
            request.headers.get(SIGNATURE_HEADER, ""),
            await request.body(),
            status,
        ))
        self._changed.set()
        self._changed = trio.Event()
        return Response(status_code=status)

    def taken(self, path: str | None = None) -> list[Received]:
        """The requests answered 2xx (at ``path``, if given)."""
        return [r for r in self.got if r.status < 300 and (path is None or r.path == path)]

    async def wait_for(self, count: int, path: str | None = None, *, taken: bool = True) -> list[Received]:
        """Wait until ``count`` requests (answered 2xx, unless ``taken`` is false) arrived.
        A deadlock guard fails the test, naming what arrived, if none comes for a minute."""
        while True:
            seen = self.taken(path) if taken else [r for r in self.got if path is None or r.path == path]
            if len(seen) >= count:
                return seen
            with trio.move_on_after(GUARD_SECONDS) as waited:
                await self._changed.wait()
            if waited.cancelled_caught:
                raise AssertionError(f"waited for {count} requests at {path or 'any path'}; got {self.got}")

    async def serve(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve on 127.0.0.1 until cancelled; ``task_status`` gets the port."""
        app = Starlette(routes=[Route("/{hook}", self.handle, methods=["POST"])])
        config = Config()
        config.bind = ["127.0.0.1:0"]
        config.errorlog = logging.getLogger("hypercorn.error")
        config.accesslog = None
        config.graceful_timeout = 0.1

        async def run(task_status: trio.TaskStatus[list[str]]) -> None:
            await serve(app, config, shutdown_trigger=trio.sleep_forever, task_status=task_status)

        async with trio.open_nursery() as nursery:
            binds = await nursery.start(run)
            task_status.started(urlsplit(binds[0]).port)
