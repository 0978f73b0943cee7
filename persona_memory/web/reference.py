"""The API's reference: the OpenAPI document at ``/api/openapi.json`` and the page at ``/api/docs``.

Rules:
- Both routes are ``openapi.REFERENCE_OPERATIONS``, so they are in the document they serve,
  and neither needs a token: the document says nothing about anyone.
- The page is rendered on the server from the same document (``routes_of``), with the
  pages' Jinja2 templates and a packaged stylesheet: no script, nothing fetched from
  elsewhere, so it reads the same in any browser, under the app's Content-Security-Policy.
- Schemas are shown as the document has them (JSON, escaped by the template engine: a
  parameter's on one line, a body's indented); an error's body is named ``Error`` and shown
  once, at the top.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs
import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ..version import installed_version
from . import openapi


@attrs.frozen
class ParamView:
    name: str
    where: str
    required: bool
    schema: str


@attrs.frozen
class AnswerView:
    """A status: its meaning, and its body as JSON-schema text, or the name of a shared
    schema (``Error``), or the media type of a body that is not JSON; all ``None``: no body."""

    status: str
    description: str
    schema: str | None = None
    ref: str | None = None
    media: str | None = None


@attrs.frozen
class RouteView:
    """One operation as the page shows it."""

    id: str
    method: str
    path: str
    summary: str
    token: str | None
    params: tuple[ParamView, ...]
    body: str | None
    answers: tuple[AnswerView, ...]


@attrs.frozen
class TagView:
    name: str
    description: str
    routes: tuple[RouteView, ...]


def routes_of(document: Mapping[str, Any]) -> list[TagView]:
    """The document's operations, grouped by tag in the document's order of tags."""
    by_tag: dict[str, list[RouteView]] = {tag["name"]: [] for tag in document.get("tags", [])}
    for path, item in document["paths"].items():
        for method, op in item.items():
            view = RouteView(
                id=op["operationId"],
                method=method.upper(),
                path=path,
                summary=op.get("summary", ""),
                token=next((name for need in op.get("security", []) for name in need), None),
                params=tuple(ParamView(p["name"], p["in"], p.get("required", False),
                                       json.dumps(p["schema"], ensure_ascii=False))
                             for p in op.get("parameters", [])),
                body=_json(op["requestBody"]["content"]["application/json"]["schema"]) if "requestBody" in op else None,
                answers=tuple(_answer(status, answer) for status, answer in op["responses"].items()),
            )
            by_tag.setdefault(op.get("tags", ["other"])[0], []).append(view)
    descriptions = {tag["name"]: tag.get("description", "") for tag in document.get("tags", [])}
    return [TagView(name, descriptions.get(name, ""), tuple(views)) for name, views in by_tag.items() if views]


def _answer(status: str, answer: Mapping[str, Any]) -> AnswerView:
    for media_type, content in answer.get("content", {}).items():
        shown = content["schema"]
        if "$ref" in shown:
            return AnswerView(status, answer["description"], ref=shown["$ref"].rsplit("/", 1)[1])
        if media_type == "application/json":
            return AnswerView(status, answer["description"], schema=_json(shown))
        return AnswerView(status, answer["description"], media=media_type)
    return AnswerView(status, answer["description"])


def _json(schema: Any) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False)


class Reference:
    """The two reference routes; ``env`` is the pages' Jinja2 environment."""

    def __init__(self, env: jinja2.Environment) -> None:
        self.env = env

    def routes(self) -> list[BaseRoute]:
        handlers: dict[str, Callable[[Request], Awaitable[Response]]] = {
            "openapi": self.document, "docs": self.page,
        }
        return [Route(op.route_path, handlers[op.id], methods=[op.method], name=op.id)
                for op in openapi.REFERENCE_OPERATIONS]

    async def document(self, request: Request) -> Response:
        return JSONResponse(openapi.openapi_document(installed_version()))

    async def page(self, request: Request) -> Response:
        document = openapi.openapi_document(installed_version())
        html = self.env.get_template("api_docs.html").render(
            session=None, user=None, csrf="", done=None, path=request.url.path,
            document=document, tags=routes_of(document), error=_json(document["components"]["schemas"]["Error"]),
            schemes=document["components"]["securitySchemes"], document_path=openapi.DOCUMENT_PATH,
        )
        return HTMLResponse(html)
