"""Which ``Host`` a request may name, and the public origin every URL of the app is built on.

A browser sends whatever ``Host`` the address it was given resolves to, so a name the app does
not know means a misrouted request or an attack (a poisoned redirect, DNS rebinding). The app
therefore answers only to the names it is configured with, and never builds a URL on the name
a request chose.

Rules:
- A request's ``Host`` (its port, letter case and a trailing dot aside) must be one of the
  allowed names: the public URL's host; ``web.host`` when it is one address (not ``0.0.0.0``
  or ``::``); the names the caller adds (a cluster worker's advertised address); and
  ``web.allowed_hosts`` — or, when that list is empty, the loopback names. Any other ``Host``
  is refused with 400 before a route runs. A request with no ``Host`` (HTTP/1.0) is served: it
  names nothing.
- An allowed request reaches the app as if made to the public URL: its ASGI ``scheme`` and
  ``host`` are the public URL's, so every absolute URL Starlette builds (the redirect that adds
  or drops a trailing slash) is on the public URL. The one exception is a public URL derived
  from port 0 (``serve --port 0``: the port is the OS's choice, unknown when the app is built),
  where the request keeps its own, allowed, ``Host``.
- ``PublicOrigin.of(scope)`` is the origin a same-site form comes from: what the ``Origin``
  check compares against, never the request's ``Host``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

import attrs
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..settings import WebSettings

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_ANY_ADDRESS = frozenset({"", "0.0.0.0", "::"})


def allowed_hosts(web: WebSettings, also: Iterable[str] = ()) -> frozenset[str]:
    """The host names a request may carry (see the rules), normalized as ``host_name`` does."""
    names = {urlsplit(web.public_url).hostname or ""}
    if web.host not in _ANY_ADDRESS:
        names.add(web.host)
    names.update(also)
    names.update(web.allowed_hosts or LOOPBACK_NAMES)
    return frozenset(_normal(n) for n in names if n)


def host_name(header: str) -> str | None:
    """The host of a ``Host`` header (``name``, ``name:port``, ``[v6]:port``), lower case and
    without a trailing dot; ``None`` when it is not a host at all."""
    header = header.strip()
    if header.startswith("["):
        inside, bracket, port = header[1:].partition("]")
        if not bracket or (port and not (port.startswith(":") and port[1:].isdigit())):
            return None
        try:
            return str(ipaddress.IPv6Address(inside))
        except ValueError:
            return None
    name, colon, port = header.partition(":")
    if colon and not port.isdigit():
        return None
    return _normal(name) or None


def _normal(name: str) -> str:
    name = name.lower().rstrip(".")
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return name


@attrs.frozen
class PublicOrigin:
    """The scheme and ``host[:port]`` of ``web.public_url``; ``netloc`` is ``None`` when the
    port is 0 (see the rules)."""

    scheme: str
    netloc: str | None

    @classmethod
    def from_url(cls, url: str) -> PublicOrigin:
        origin = _origin(url)
        if origin is None:
            raise ValueError(f"{url!r} is not an http:// or https:// URL")
        scheme, netloc = origin
        return cls(scheme, None if netloc.endswith(":0") else netloc)

    def of(self, scope: Scope) -> str:
        """The origin the app is served at, for a request already through ``TrustedHost``."""
        if self.netloc is not None:
            return f"{self.scheme}://{self.netloc}"
        host = dict(scope.get("headers", [])).get(b"host", b"").decode("latin-1")
        return f"{scope.get('scheme', 'http')}://{host}"

    def is_origin_of(self, origin: str, scope: Scope) -> bool:
        """Whether an ``Origin`` header names this origin (letter case and a default port aside)."""
        return _origin(origin) == _origin(self.of(scope))


def _origin(url: str) -> tuple[str, str] | None:
    """``(scheme, host[:port])`` of an http(s) URL, lower case, its default port left out."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname.lower()
    default = 443 if parts.scheme.lower() == "https" else 80
    return parts.scheme.lower(), host if port in (None, default) else f"{host}:{port}"


class TrustedHost:
    """ASGI middleware: refuse a ``Host`` outside ``allowed`` with ``refuse(request)`` (a 400
    rendered by the app), and show the app the public origin (see the rules)."""

    def __init__(
        self, app: ASGIApp, allowed: frozenset[str], public: PublicOrigin, refuse: Callable[[Request], Response]
    ) -> None:
        self.app = app
        self.allowed = allowed
        self.public = public
        self.refuse = refuse

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = scope.get("headers", [])
        given = [value for key, value in headers if key == b"host"]
        if given and (len(given) > 1 or host_name(given[0].decode("latin-1")) not in self.allowed):
            await self.refuse(Request(scope))(scope, receive, send)
            return
        if self.public.netloc is not None:
            kept = [(k, v) for k, v in headers if k != b"host"]
            scope = {**scope, "scheme": self.public.scheme,
                     "headers": [(b"host", self.public.netloc.encode("latin-1")), *kept]}
        await self.app(scope, receive, send)
