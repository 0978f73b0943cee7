"""The runtime API's contract: every route's method, path, body and answers, in one table.

``web.runtime`` builds its routes from ``OPERATIONS`` and checks each request body against the
operation's ``body`` schema (``web.shapes``); ``openapi_document()`` renders the same table as
the OpenAPI 3.1 document served at ``/api/openapi.json``. Nothing about a route is said twice.

Rules:
- Every route is under ``/api/`` and needs ``Authorization: Bearer <runtime token>`` (the
  variable named by ``web.runtime_token_env``), except the document itself.
- A room id travels in the path, percent-encoded (it may hold any character but a lone
  surrogate; ``/`` is ``%2F``); a persona is its slug.
- Every answer is JSON. Every error is ``{"error": "..."}`` with one of the statuses below,
  chosen from the facade's error tree in one place (``web.runtime.status_for``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ..ids import MAX_USER_ID
from .json_body import MAX_DEPTH

SLUG = {"type": "string", "pattern": "^[a-z][a-z0-9_-]{0,63}$"}
USER_ID = {"type": "integer", "minimum": 1, "maximum": MAX_USER_ID}
ROOM_ID = {"type": "string", "minLength": 1, "maxLength": 200}
SPEAKER = {"type": "string", "pattern": "^(u:[1-9][0-9]{0,17}|[a-z][a-z0-9_-]{0,63})$"}
ERROR = {
    "type": "object",
    "properties": {"error": {"type": "string", "description": "what went wrong and what to change"}},
    "required": ["error"],
    "additionalProperties": False,
}
STATUS_MEANINGS = {
    400: f"the body is not JSON, nests arrays and objects more than {MAX_DEPTH} deep, or the body or a "
         "path part is not the shape this route takes (the message names the field)",
    401: "no bearer token, or not the runtime's",
    404: "no such route, or the room is not open",
    405: "the route does not take this method",
    409: "the persona, human or speaker named is not in that room",
    413: "the body is over 64 KiB",
    422: "the memory refused a value (the message says which and why); nothing changed",
    503: "the memory is shutting down, or its storage or a provider failed; try again",
}


def _object(properties: Mapping[str, Any], required: tuple[str, ...] = (), **more: Any) -> dict[str, Any]:
    return {"type": "object", "properties": dict(properties), "required": list(required),
            "additionalProperties": False, **more}


def _event(name: str, description: str, properties: Mapping[str, Any] = {}, required: tuple[str, ...] = ()) -> dict[str, Any]:
    return _object({"event": {"const": name}, **properties}, ("event", *required), description=description)


EVENT = {
    "oneOf": [
        _event(
            "opened",
            "RoomOpened: the room opened with these personas and humans in it; the blocks build now.",
            {
                "personas": {"type": "array", "items": SLUG, "minItems": 1, "uniqueItems": True},
                "humans": {"type": "array", "items": USER_ID, "uniqueItems": True},
                "private": {"type": "boolean", "description": "one persona and one human"},
                "incognito": {"type": "boolean", "description": "neither reads nor writes; fixed at first open"},
                "kit": {"type": ["string", "null"], "minLength": 1, "maxLength": 200,
                        "description": "a mounted game or role-play: the room is never written from"},
                "topic": {"type": ["string", "null"], "minLength": 1, "maxLength": 2000,
                          "description": "the opener relevance is measured against"},
                "title": {"type": ["string", "null"], "minLength": 1, "maxLength": 200,
                          "description": "what the human's page calls the room"},
                "names": {"type": "object", "propertyNames": {"pattern": "^[1-9][0-9]{0,17}$"},
                          "additionalProperties": {"type": "string", "minLength": 1, "maxLength": 100},
                          "description": "display names by user id, for rendering only"},
            },
            ("personas", "humans"),
        ),
        _event("member_joined", "MemberJoined: a human joined; the blocks rebuild.",
               {"user_id": USER_ID}, ("user_id",)),
        _event("member_left", "MemberLeft: a human left; the blocks rebuild.",
               {"user_id": USER_ID}, ("user_id",)),
        _event("went_quiet", "RoomWentQuiet: queue the write path for every persona in the room."),
        _event("archived", "RoomArchived: flush the room's writes, then forget its cached blocks."),
    ],
    "discriminator": {"propertyName": "event"},
}

BLOCK = _object(
    {
        "persona": SLUG,
        "room_id": ROOM_ID,
        "text": {"type": "string", "description": "the block; \"\" when the persona may bring nothing"},
        "chars": {"type": "integer", "minimum": 0, "description": "the whole text's length"},
        "char_limit": {"type": "integer", "minimum": 1},
        "meter": _object({"used": {"type": "integer", "minimum": 0}, "limit": {"type": "integer", "minimum": 1}},
                         ("used", "limit"),
                         description="the block's meter: characters of memory lines used, of the limit"),
        "generation": {"type": "integer", "minimum": 1,
                       "description": "the room's version it was built for: new at every open, join, leave"},
        "anthropic": {
            "type": ["object", "null"],
            "description": "append to `system` after the materials' blocks; null when the block is empty",
            "properties": {
                "type": {"const": "text"},
                "text": {"type": "string"},
                "cache_control": _object({"type": {"const": "ephemeral"}}, ("type",)),
            },
            "required": ["type", "text", "cache_control"],
            "additionalProperties": False,
        },
        "openai": {
            "type": ["object", "null"],
            "description": "a system message after the other system messages; null when the block is empty",
            "properties": {"role": {"const": "system"}, "content": {"type": "string"}},
            "required": ["role", "content"],
            "additionalProperties": False,
        },
    },
    ("persona", "room_id", "text", "chars", "char_limit", "meter", "generation", "anthropic", "openai"),
)


@attrs.frozen
class Answer:
    description: str
    schema: dict[str, Any]


@attrs.frozen
class Operation:
    """One route: ``id`` is its operationId and the name of its handler in ``web.runtime``."""

    id: str
    method: str
    path: str
    summary: str
    answers: Mapping[int, Answer]
    body: dict[str, Any] | None = None
    errors: tuple[int, ...] = (400, 401, 404, 413, 503)

    @property
    def path_params(self) -> tuple[str, ...]:
        return tuple(part[1:-1] for part in self.path.split("/") if part.startswith("{"))


PATH_PARAMS = {"room_id": ROOM_ID, "persona": SLUG}


OPERATIONS = (
    Operation(
        "post_line", "POST", "/api/rooms/{room_id}/lines",
        "Append a transcript line (memory.post_line). The id is what memories cite; 0 in an "
        "incognito room, which keeps no line. The room must be open (404) and the speaker in it "
        "(409): a human present or one of its personas; a refused line is not stored.",
        {201: Answer("the line is stored", _object({"id": {"type": "integer", "minimum": 0}}, ("id",)))},
        body=_object(
            {
                "speaker": SPEAKER | {"description": "u:42 for a human, the slug for a persona"},
                "text": {"type": "string", "minLength": 1, "maxLength": 20_000},
                "at": {"type": "string", "format": "date-time",
                       "description": "when it was said (with its offset); omitted: now"},
            },
            ("speaker", "text"),
        ),
        errors=(400, 401, 404, 409, 413, 422, 503),
    ),
    Operation(
        "send_event", "POST", "/api/rooms/{room_id}/events",
        "Send a room event (memory.send): opened, member_joined, member_left, went_quiet, "
        "archived, with the fields of the message.",
        {202: Answer("the event is delivered to the room's personas",
                     _object({"room_id": ROOM_ID, "event": {"type": "string"}}, ("room_id", "event")))},
        body=EVENT,
        errors=(400, 401, 404, 409, 413, 422, 503),
    ),
    Operation(
        "block", "GET", "/api/rooms/{room_id}/personas/{persona}/block",
        "The persona's block for the room (memory.block): cached, built at open, join and leave; "
        "with the generation it was built for and ready system blocks.",
        {200: Answer("the block", BLOCK)},
        errors=(400, 401, 404, 409, 422, 503),
    ),
    Operation(
        "recall", "POST", "/api/rooms/{room_id}/personas/{persona}/recall",
        "The recall note for a human's message (memory.recall): \"\" when nothing clears the bar.",
        {200: Answer("the note, for the user turn", _object({"note": {"type": "string"}}, ("note",)))},
        body=_object({"text": {"type": "string", "maxLength": 20_000}}, ("text",)),
        errors=(400, 401, 404, 409, 413, 422, 503),
    ),
    Operation(
        "drain", "POST", "/api/drain",
        "Wait until every queued write has landed (memory.drain).",
        {200: Answer("every queued write has landed", _object({"drained": {"const": True}}, ("drained",)))},
        errors=(401, 503),
    ),
)


def openapi_document(version: str) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``OPERATIONS``."""
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        responses = {
            str(status): {"description": answer.description,
                          "content": {"application/json": {"schema": answer.schema}}}
            for status, answer in op.answers.items()
        }
        for status in op.errors:
            responses[str(status)] = {"description": STATUS_MEANINGS[status],
                                      "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        entry: dict[str, Any] = {
            "operationId": op.id,
            "summary": op.summary,
            "security": [{"runtime": []}],
            "parameters": [
                {"name": name, "in": "path", "required": True,
                 "schema": PATH_PARAMS[name]}
                for name in op.path_params
            ],
            "responses": responses,
        }
        if op.body is not None:
            entry["requestBody"] = {"required": True, "content": {"application/json": {"schema": op.body}}}
        paths.setdefault(op.path, {})[op.method.lower()] = entry
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "persona-memory runtime API",
            "version": version,
            "description": "The chat runtime's calls over HTTP: transcript lines, room events, "
                           "blocks, recall notes, drain. The same names and meanings as the "
                           "in-process API (shared/API.md).",
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "paths": paths,
        "components": {
            "schemas": {"Error": ERROR},
            "securitySchemes": {"runtime": {"type": "http", "scheme": "bearer",
                                            "description": "the token in web.runtime_token_env"}},
        },
    }
