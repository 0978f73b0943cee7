"""The one OpenAPI 3.1 document of every route under ``/api/``, rendered from the tables. Pure.

``OPERATIONS`` is every table: the runtime API's and its event stream's (``contract``), the human-control API's
(``controls_contract``) and the reference's own two routes (``REFERENCE_OPERATIONS``: this
document and the page that shows it). The routes are built from the same tables, so a route
and its description cannot drift apart; ``web.reference`` serves both.

Rules:
- Every operation lists its success answers and every error status it can answer with, each
  with what it means on that route; an error's body is ``#/components/schemas/Error``.
- A route that needs a token says which scheme (``runtime`` or ``controls``); the reference
  routes need none (``security: []``).
"""

from __future__ import annotations

from typing import Any

from .contract import (
    CONTROLS_TAG,
    ERROR,
    HOST_REFUSED,
    PATH_PARAMS,
    RUNTIME_OPERATIONS,
    RUNTIME_TAG,
    SECURITY_SCHEMES,
    STREAM_OPERATIONS,
    Answer,
    Operation,
)
from .controls_contract import CONTROL_OPERATIONS

REFERENCE_TAG = "reference"
DOCUMENT_PATH = "/api/openapi.json"
PAGE_PATH = "/api/docs"

REFERENCE_OPERATIONS = (
    Operation(
        "openapi", "GET", DOCUMENT_PATH,
        "This document: every route under /api/, its parameters, body and answers. No token.",
        {200: Answer("the OpenAPI 3.1 document", {"type": "object", "required": ["openapi", "paths"]})},
        errors=(400,), meanings={400: HOST_REFUSED}, security=None, tag=REFERENCE_TAG,
    ),
    Operation(
        "docs", "GET", PAGE_PATH,
        "This document as a page: every route with its parameters, body schema and statuses. No token.",
        {200: Answer("the page", {"type": "string"}, media_type="text/html")},
        errors=(400,), meanings={400: HOST_REFUSED}, security=None, tag=REFERENCE_TAG,
    ),
)

OPERATIONS = (*RUNTIME_OPERATIONS, *STREAM_OPERATIONS, *CONTROL_OPERATIONS, *REFERENCE_OPERATIONS)

TAGS = (
    {"name": RUNTIME_TAG, "description": "The chat runtime's calls: transcript lines, room events, blocks, "
                                         "recall notes, drain, and the stream of what changed. Token: runtime."},
    {"name": CONTROLS_TAG, "description": "A person's controls, called by the runtime for that person: "
                                          "their lines, notices, note, switches, export. Token: controls."},
    {"name": REFERENCE_TAG, "description": "This document and its page."},
)


def openapi_document(version: str) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``OPERATIONS``."""
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(op)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "persona-memory HTTP API",
            "version": version,
            "description": "Every call under /api/ of persona-memory serve: the chat runtime's API and "
                           "the human-control API, with the same names and meanings as the in-process "
                           "API. Every error is {\"error\": \"...\"} saying what went wrong and what to change.",
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "tags": list(TAGS),
        "paths": paths,
        "components": {"schemas": {"Error": ERROR}, "securitySchemes": SECURITY_SCHEMES},
    }


def _operation(op: Operation) -> dict[str, Any]:
    responses: dict[str, Any] = {}
    for status, answer in op.answers.items():
        responses[str(status)] = {"description": answer.description}
        if answer.schema is not None:
            responses[str(status)]["content"] = {answer.media_type: {"schema": answer.schema}}
    for status in op.errors:
        responses[str(status)] = {"description": op.meaning(status),
                                  "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    parameters = [{"name": name, "in": "path", "required": True, "schema": PATH_PARAMS[name]}
                  for name in op.path_params]
    parameters += [{"name": name, "in": "query", "required": False, "schema": schema}
                   for name, schema in op.query.items()]
    parameters += [{"name": name, "in": "header", "required": False, "schema": schema}
                   for name, schema in op.headers.items()]
    entry: dict[str, Any] = {
        "operationId": op.id,
        "summary": op.summary,
        "tags": [op.tag],
        "security": [] if op.security is None else [{op.security: []}],
        "parameters": parameters,
        "responses": responses,
    }
    if op.body is not None:
        entry["requestBody"] = {"required": True, "content": {"application/json": {"schema": op.body}}}
    return entry
