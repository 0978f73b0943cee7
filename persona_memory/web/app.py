"""Build the web app: the human's pages and the runtime's JSON API over one ``Memory``.

Rules:
- Every response carries the security headers below: a Content-Security-Policy that allows
  scripts, styles and images from this site only (no inline script, no plugins, no framing,
  forms post only here), ``nosniff``, no referrer to other sites (a login link never leaks onward), and
  ``no-store`` on everything but the static files, so a shared computer's cache keeps no
  one's memories.
- Errors render as a page for people and as ``{"error": …}`` under ``/api/``; their text is
  ours, never the request's.
- A request body over 64 KiB is refused with 413 — as JSON under ``/api/``, as a page
  elsewhere, with the security headers like every answer — when the route reads it, so a
  request without the right token is a 401 first (a note is 400 characters).
- Every error under ``/api/`` is JSON, 404 and 405 included.
- A request whose ``Host`` is not one the app answers to is refused with 400 before any route
  runs, and every absolute URL is built on ``web.public_url`` (``hosts``).
"""

from __future__ import annotations

from collections.abc import Iterable
from http import HTTPStatus
from pathlib import Path

import jinja2
import trio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..clock import WallClock
from ..errors import MemoryClosed
from ..memory import Memory
from ..settings import EventsSettings, WebSettings, load_settings
from .api import Api
from .operations import AccessLog, operation_routes
from .cluster_routes import ClusterRoutes
from .runtime import RuntimeApi
from .event_stream import EventStream
from .auth import Auth, WebSecrets
from .hosts import PublicOrigin, TrustedHost, allowed_hosts
from .pages import Pages
from .reference import Reference

HERE = Path(__file__).parent
MAX_BODY_BYTES = 64 * 1024

CSP = (
    "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
}

_ERROR_TITLES = {
    400: "That request was not understood",
    401: "Please sign in",
    403: "Refused",
    404: "Not found",
    405: "Not allowed",
    413: "Too large",
    503: "Shutting down",
}


class SecurityHeaders:
    """ASGI middleware adding ``SECURITY_HEADERS`` (and ``no-store`` outside ``/static/``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope["path"].startswith("/static/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.decode().lower() not in SECURITY_HEADERS]
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                if not static:
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


class BodyLimit:
    """ASGI middleware: a body over ``limit`` bytes fails the route's read with a 413.

    The refusal is an ``HTTPException`` raised where the route reads the body, so the app's
    error handler renders it (JSON under ``/api/``) inside ``SecurityHeaders``. A declared
    ``Content-Length`` over the limit fails at the first read, before any byte is taken.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length", b"0")
        too_large = HTTPException(413, f"the body is over {self.limit // 1024} KiB")
        seen = 0

        async def limited_receive() -> Message:
            nonlocal seen
            if declared.isdigit() and int(declared) > self.limit:
                raise too_large
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise too_large
            return message

        await self.app(scope, limited_receive, send)


def templates() -> jinja2.Environment:
    """The Jinja2 environment of the pages: autoescape on everywhere, undefined names fail."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def build_app(
    memory: Memory,
    web: WebSettings,
    secrets: WebSecrets,
    *,
    clock: WallClock | None = None,
    also_hosts: Iterable[str] = (),
    events: EventsSettings | None = None,
) -> Starlette:
    """The ASGI app for ``memory``.

    Args:
        web: the ``[web]`` settings (public URL, allowed hosts, link and session lifetimes,
            cookie flags).
        secrets: the signing key and the API token (``WebSecrets.from_env``).
        clock: the wall clock links and sessions expire by (tests inject a ``ManualClock``).
        also_hosts: more names the ``Host`` header may carry (``hosts.allowed_hosts``): a
            cluster worker's advertised address.
        events: the ``[events]`` settings of the ``/api/events`` stream (the defaults if
            ``None``); ``app.state.events_ending`` ends its streams when set (``serve_web``).
    """
    auth = Auth(secrets, web, clock, revocations=memory.revocations)
    env = templates()
    public = PublicOrigin.from_url(web.public_url)
    pages = Pages(memory, auth, env, public)
    api = Api(memory, auth)
    runtime = RuntimeApi(memory, auth)
    events_ending = trio.Event()
    stream = EventStream(memory, auth, events or load_settings(None).events, events_ending)

    def render_error(request: Request, status: int, message: str, headers: dict[str, str] | None = None) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": message}, status_code=status, headers=headers)
        html = env.get_template("error.html").render(
            session=None, user=None, csrf="", done=None, path=request.url.path,
            title=_ERROR_TITLES.get(status, "Something went wrong"), message=message, status=status,
        )
        return HTMLResponse(html, status_code=status, headers=headers)

    def wrong_host(request: Request) -> Response:
        if request.url.path.startswith("/api/"):
            message = ("the Host header names a host this server does not answer to; call it at "
                       "web.public_url or a name in web.allowed_hosts")
        else:
            message = f"This site is not served at that address. Open it at {web.public_url}."
        return render_error(request, 400, message)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        message = exc.detail if exc.detail and exc.detail != _default_phrase(exc.status_code) else _plain(exc.status_code)
        if request.url.path.startswith("/api/") and exc.status_code in (404, 405):
            message = _api_plain(request, exc)
        return render_error(request, exc.status_code, message, exc.headers)

    async def closed(request: Request, exc: Exception) -> Response:
        return render_error(request, 503, "The memory is shutting down. Try again in a moment.")

    cluster = ClusterRoutes(memory, auth).routes() if hasattr(memory, "local_built_block") else []
    app = Starlette(
        routes=[
            *cluster,
            *operation_routes(memory),
            *Reference(env).routes(),
            *runtime.routes(),
            *stream.routes(),
            *api.routes(),
            *pages.routes(),
            Mount("/static", app=StaticFiles(directory=HERE / "static"), name="static"),
        ],
        exception_handlers={HTTPException: http_error, MemoryClosed: closed},
    )
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)
    app.add_middleware(TrustedHost, allowed=allowed_hosts(web, also_hosts), public=public, refuse=wrong_host)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(AccessLog, routes=app.routes)
    app.state.auth = auth
    app.state.memory = memory
    app.state.events_ending = events_ending
    return app


def _default_phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _api_plain(request: Request, exc: HTTPException) -> str:
    if exc.status_code == 405:
        allowed = (exc.headers or {}).get("Allow", "")
        return f"{request.method} is not allowed on {request.url.path}; it takes {allowed or 'no method'}"
    if exc.detail and exc.detail != _default_phrase(404):
        return exc.detail
    return f"there is no route {request.url.path}; the routes are in /api/openapi.json and on /api/docs"


def _plain(status: int) -> str:
    return {
        404: "There is nothing here.",
        405: "That page does not take this kind of request.",
        413: "That request is too large.",
    }.get(status, "That did not work.")
