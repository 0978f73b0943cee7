"""Serve the web app with Hypercorn's trio worker, in the caller's nursery.

Rules:
- ``serve_web`` runs until cancelled; ``nursery.start(serve_web, …)`` returns the bound port
  once the socket listens (port ``0`` in ``[web]`` asks the OS for a free one).
- Cancelling it shuts down gracefully, the hypercorn way: stop accepting, let requests in flight
  finish within ``GRACE_SECONDS``, then cancel the rest. The server runs in a shielded scope
  whose deadline is set only when shutdown starts, so the cancellation that asks for shutdown
  does not cut requests short.
- ``persona-memory serve`` runs it inside ``open_memory``: on Ctrl-C the server stops first,
  then leaving ``open_memory`` drains the queued writes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from urllib.parse import urlsplit

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from ..clock import WallClock
from ..memory import Memory
from ..settings import Settings
from .app import build_app
from .auth import WebSecrets

GRACE_SECONDS = 5.0

log = logging.getLogger(__name__)


def hypercorn_config(host: str, port: int) -> Config:
    """Hypercorn's settings: one plain-HTTP bind, logs through ``logging``, no access log."""
    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.errorlog = logging.getLogger("hypercorn.error")
    config.accesslog = None
    config.graceful_timeout = GRACE_SECONDS
    config.include_server_header = False
    return config


async def serve_web(
    memory: Memory,
    settings: Settings,
    *,
    secrets: WebSecrets | None = None,
    clock: WallClock | None = None,
    also_hosts: Iterable[str] = (),
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve the human's pages and the runtime's API for ``memory`` until cancelled.

    Args:
        settings: ``settings.web`` gives host, port, public URL, lifetimes, cookie flags.
        secrets: the signing key and API token; ``None`` reads them from the environment.
        clock: the wall clock for links and sessions (tests inject one).
        also_hosts: names the ``Host`` header may carry besides ``web``'s (``build_app``).

    Reports the bound port through ``task_status.started``.

    Raises:
        ConfigError: a secret is missing from the environment (before anything listens).
        OSError: the address is taken or cannot be bound.
    """
    secrets = secrets or WebSecrets.from_env(settings.web)
    app = build_app(memory, settings.web, secrets, clock=clock, also_hosts=also_hosts, events=settings.events)
    config = hypercorn_config(settings.web.host, settings.web.port)
    stop = trio.Event()
    server_scope = trio.CancelScope(shield=True)

    async def run_server(task_status: trio.TaskStatus[list[str]]) -> None:
        with server_scope:
            await serve(app, config, shutdown_trigger=stop.wait, task_status=task_status)

    async with trio.open_nursery() as nursery:
        binds = await nursery.start(run_server)
        port = urlsplit(binds[0]).port
        log.info("serving the human's pages on %s", binds[0])
        task_status.started(port)
        try:
            await trio.sleep_forever()
        finally:
            app.state.events_ending.set()  # open event streams end; their clients reconnect
            stop.set()
            server_scope.deadline = trio.current_time() + GRACE_SECONDS + 1.0


__all__ = ["GRACE_SECONDS", "hypercorn_config", "serve_web"]
