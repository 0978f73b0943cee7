"""The human's side (design §5): pages to see, delete, undo, write and switch off what personas
remember, and a JSON API doing the same for the chat runtime.

::

    build_app(memory, settings.web, WebSecrets.from_env(settings.web))   # an ASGI app
    await nursery.start(serve_web, memory, settings)                     # serve it; → port

Modules: ``auth`` (login links, sessions, CSRF, the bearer token), ``hosts`` (the ``Host``
header checked, the public origin), ``json_body`` (a JSON body read with its nesting bounded),
``views`` (pure view models), ``pages`` (HTML routes), ``api`` (JSON routes), ``app``
(assembly, security headers), ``serve`` (Hypercorn's trio worker). ``API.md`` documents the
JSON API.
"""

from .app import build_app
from .auth import Auth, LinkRefused, Session, WebSecrets
from .serve import serve_web

__all__ = ["Auth", "LinkRefused", "Session", "WebSecrets", "build_app", "serve_web"]
