"""The HTTP API's contract: every route's method, path, parameters, body and answers, in tables.

This module holds the runtime API's table (``RUNTIME_OPERATIONS``) and what every table is
made of; ``web.controls_contract`` holds the human-control API's, and ``web.openapi`` renders
all of them as the one OpenAPI 3.1 document served at ``/api/openapi.json``. Each route is
built from its ``Operation`` (``web.runtime``, ``web.api``, ``web.reference``), and a body is
checked against the operation's ``body`` schema (``web.shapes``) before a handler sees it.
Nothing about a route is said twice.

Rules:
- Every route is under ``/api/``. A runtime route needs ``Authorization: Bearer <runtime
  token>`` (``web.runtime_token_env``), a human-control route the API token
  (``web.api_token_env``); the document and its page need none.
- A room id travels in the path, percent-encoded (it may hold any character but a lone
  surrogate; ``/`` is ``%2F``); a persona is its slug; a user, memory or notice id is digits.
- Every answer but a 204 and the page is JSON. Every error is ``{"error": "..."}`` with one of
  the statuses an operation lists; ``STATUS_MEANINGS`` says what each means, and an operation's
  ``meanings`` says it more precisely where the route has its own reasons (the runtime's
  facade errors are mapped to statuses in one place, ``web.runtime.status_for``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from ..events.kinds import KINDS as EVENT_KINDS
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
HOST_REFUSED = "the Host header names a host this server does not answer to (web.allowed_hosts)"
STATUS_MEANINGS = {
    400: f"the body is not JSON, nests arrays and objects more than {MAX_DEPTH} deep, or is not the "
         f"shape this route takes (the message names the field); or {HOST_REFUSED}",
    401: "no bearer token, or not this API's token",
    404: "no such route",
    409: "the persona, human or speaker named is not in that room",
    413: "the body is over 64 KiB",
    422: "the memory refused a value (the message says which and why); nothing changed",
    503: "the memory is shutting down, or its storage or a provider failed; try again",
}
ROOM_REFUSALS = ("a room id that is only spaces or holds a lone surrogate (text that is not "
                 "valid Unicode)")


def object_schema(properties: Mapping[str, Any], required: tuple[str, ...] = (), **more: Any) -> dict[str, Any]:
    """An object of exactly ``properties``; ``required`` must be present."""
    return {"type": "object", "properties": dict(properties), "required": list(required),
            "additionalProperties": False, **more}


def _event(name: str, description: str, properties: Mapping[str, Any] = {}, required: tuple[str, ...] = ()) -> dict[str, Any]:
    return object_schema({"event": {"const": name}, **properties}, ("event", *required), description=description)


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

BLOCK = object_schema(
    {
        "persona": SLUG,
        "room_id": ROOM_ID,
        "text": {"type": "string", "description": "the block; \"\" when the persona may bring nothing"},
        "chars": {"type": "integer", "minimum": 0, "description": "the whole text's length"},
        "char_limit": {"type": "integer", "minimum": 1},
        "meter": object_schema({"used": {"type": "integer", "minimum": 0}, "limit": {"type": "integer", "minimum": 1}},
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
                "cache_control": object_schema({"type": {"const": "ephemeral"}}, ("type",)),
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


RUNTIME_TAG = "runtime"
CONTROLS_TAG = "human controls"


@attrs.frozen
class Answer:
    """One status an operation answers with on success: what it means and the body's schema
    (``None``: no body), of ``media_type``."""

    description: str
    schema: dict[str, Any] | None
    media_type: str = "application/json"


@attrs.frozen
class Operation:
    """One route: ``id`` is its operationId and the name of its handler.

    ``errors`` are the error statuses the route can answer with; ``meanings`` replaces
    ``STATUS_MEANINGS`` for a status this route has its own reasons for. ``query`` holds its
    optional query parameters' schemas, ``headers`` its optional request headers'. ``security`` names the token it needs (a
    ``SECURITY_SCHEMES`` key), ``None`` for none. ``tag`` groups it in the document.
    """

    id: str
    method: str
    path: str
    summary: str
    answers: Mapping[int, Answer]
    body: dict[str, Any] | None = None
    errors: tuple[int, ...] = (400, 401, 404, 413, 503)
    meanings: Mapping[int, str] = attrs.field(factory=dict)
    query: Mapping[str, dict[str, Any]] = attrs.field(factory=dict)
    headers: Mapping[str, dict[str, Any]] = attrs.field(factory=dict)
    security: str | None = "runtime"
    tag: str = RUNTIME_TAG

    @property
    def path_params(self) -> tuple[str, ...]:
        return tuple(part[1:-1] for part in self.path.split("/") if part.startswith("{"))

    @property
    def route_path(self) -> str:
        """The path as Starlette matches it: each parameter with its convertor."""
        path = self.path
        for name in self.path_params:
            if name in CONVERTORS:
                path = path.replace(f"{{{name}}}", f"{{{name}:{CONVERTORS[name]}}}")
        return path

    def meaning(self, status: int) -> str:
        return self.meanings.get(status) or STATUS_MEANINGS[status]


SECURITY_SCHEMES = {
    "runtime": {"type": "http", "scheme": "bearer",
                "description": "the runtime API's token: the value of the variable web.runtime_token_env "
                               "names (PERSONA_MEMORY_RUNTIME_TOKEN by default)"},
    "controls": {"type": "http", "scheme": "bearer",
                 "description": "the human-control API's token: the value of the variable web.api_token_env "
                                "names (PERSONA_MEMORY_API_TOKEN by default)"},
}
ROW_ID = {"type": "integer", "minimum": 1, "maximum": MAX_USER_ID}
PATH_PARAMS = {"room_id": ROOM_ID, "persona": SLUG, "user_id": USER_ID, "memory_id": ROW_ID, "notice_id": ROW_ID}
# Starlette's convertors; ``room_id`` is ``web.runtime``'s (any characters, ``%2F`` included), and
# a parameter not named here matches one path segment.
CONVERTORS = {"room_id": "room_id", "user_id": "int", "memory_id": "int", "notice_id": "int"}


def _runtime_meanings(more: Mapping[int, str]) -> dict[int, str]:
    """What 400, 401 and 404 mean on a runtime route, with the route's own ``more``."""
    return {
        400: f"the body is not JSON, nests arrays and objects more than {MAX_DEPTH} deep, or the body or "
             f"a path part is not the shape this route takes (the message names the field); or {HOST_REFUSED}",
        401: "no bearer token, or not the runtime's token",
        404: "the room is not open (never opened, or archived); or no such route",
        **more,
    }


RUNTIME_OPERATIONS = (
    Operation(
        "post_line", "POST", "/api/rooms/{room_id}/lines",
        "Append a transcript line (memory.post_line). The id is what memories cite; 0 in an "
        "incognito room, which keeps no line. The room must be open (404) and the speaker in it "
        "(409): a human present or one of its personas; a refused line is not stored.",
        {201: Answer("the line is stored", object_schema({"id": {"type": "integer", "minimum": 0}}, ("id",)))},
        body=object_schema(
            {
                "speaker": SPEAKER | {"description": "u:42 for a human, the slug for a persona"},
                "text": {"type": "string", "minLength": 1, "maxLength": 20_000},
                "at": {"type": "string", "format": "date-time",
                       "description": "when it was said (with its offset), between 1970 and 2199 "
                                      "(422 outside them); omitted: now"},
            },
            ("speaker", "text"),
        ),
        errors=(400, 401, 404, 409, 413, 422, 503),
        meanings=_runtime_meanings({
            409: "the speaker is not in the room: neither a human present nor one of its personas",
            422: "the memory refused a value; nothing was stored: `at` outside 1970..2199 (dates are "
                 f"computed from it and must not overflow), text that is only spaces, or {ROOM_REFUSALS}",
        }),
    ),
    Operation(
        "send_event", "POST", "/api/rooms/{room_id}/events",
        "Send a room event (memory.send): opened, member_joined, member_left, went_quiet, "
        "archived, with the fields of the message.",
        {202: Answer("the event is delivered to the room's personas",
                     object_schema({"room_id": ROOM_ID, "event": {"type": "string"}}, ("room_id", "event")))},
        body=EVENT,
        errors=(400, 401, 404, 409, 413, 422, 503),
        meanings=_runtime_meanings({
            404: "the room is not open, for an event other than opened; or no such route",
            409: "member_left names a human who is not in the room",
            422: "the memory refused the event; nothing changed: reopening a room id with the other "
                 "`incognito` (it is fixed when the room id is first opened), a private room that is not "
                 "exactly one persona and one human, member_joined for a human already in the room or "
                 "into a private room, a topic, title, kit or name that is only spaces, "
                 f"or {ROOM_REFUSALS}",
        }),
    ),
    Operation(
        "block", "GET", "/api/rooms/{room_id}/personas/{persona}/block",
        "The persona's block for the room (memory.block): cached, built at open, join and leave; "
        "with the generation it was built for and ready system blocks.",
        {200: Answer("the block", BLOCK)},
        errors=(400, 401, 404, 409, 422, 503),
        meanings=_runtime_meanings({
            400: f"a path part is not the shape this route takes (the message names it); or {HOST_REFUSED}",
            409: "the persona is not in that room",
            422: f"the memory refused a value: {ROOM_REFUSALS}",
        }),
    ),
    Operation(
        "recall", "POST", "/api/rooms/{room_id}/personas/{persona}/recall",
        "The recall note for a human's message (memory.recall): \"\" when nothing clears the bar.",
        {200: Answer("the note, for the user turn", object_schema({"note": {"type": "string"}}, ("note",)))},
        body=object_schema({"text": {"type": "string", "maxLength": 20_000}}, ("text",)),
        errors=(400, 401, 404, 409, 413, 422, 503),
        meanings=_runtime_meanings({
            409: "the persona is not in that room",
            422: f"the memory refused a value: {ROOM_REFUSALS}",
        }),
    ),
    Operation(
        "drain", "POST", "/api/drain",
        "Wait until every queued write has landed (memory.drain). Takes no body.",
        {200: Answer("every queued write has landed", object_schema({"drained": {"const": True}}, ("drained",)))},
        errors=(400, 401, 503),
        meanings={400: HOST_REFUSED, 401: "no bearer token, or not the runtime's token"},
    ),
)

EVENT_ID = {"type": "integer", "minimum": 0, "maximum": MAX_USER_ID}

# The outbox as Server-Sent Events (``web.event_stream``): a runtime route, served apart from
# ``web.runtime`` because its answer is a stream that lasts until the server shuts down.
STREAM_OPERATIONS = (
    Operation(
        "events", "GET", "/api/events",
        "The outbox as Server-Sent Events: each message's id is the event id, its event the kind "
        f"({', '.join(EVENT_KINDS)}), its data the event's JSON (ids and switches, never text about "
        "a person). Resume with Last-Event-ID or ?after=; with neither, the stream starts at the "
        "newest event. The stream lasts until the server shuts down; a comment line is sent when "
        "it is idle.",
        {200: Answer("the stream", {"type": "string"}, media_type="text/event-stream")},
        errors=(400, 401, 503),
        meanings={
            400: "Last-Event-ID or ?after= is not an event id (a whole number >= 0), or ?kinds= names "
                 f"a kind there is not; or {HOST_REFUSED}",
            401: "no bearer token, or not the runtime's token",
            503: "the memory is shutting down; reconnect with Last-Event-ID",
        },
        query={
            "after": EVENT_ID | {"description": "the events after this id; 0: from the oldest kept"},
            "kinds": {"type": "string", "description": "only these kinds, comma-separated: "
                                                       + ",".join(EVENT_KINDS)},
        },
        headers={"Last-Event-ID": EVENT_ID | {"description": "resume after this event (EventSource sends it)"}},
    ),
)
