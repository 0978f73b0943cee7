"""The human-control API's contract: its routes, their bodies and answers, in one table.

``web.api`` builds its routes from ``CONTROL_OPERATIONS`` and checks each body against the
operation's ``body`` schema (``web.shapes``); ``web.openapi`` renders the same table into the
document at ``/api/openapi.json``. The answer schemas describe ``web.views``' JSON shapes and
``Memory.export``.

Rules:
- Every route is under ``/api/users/{user_id}`` and needs the human-control API's bearer token
  (``web.api_token_env``); the runtime acts for one person per request.
- A memory or notice id that is not that person's, a user id outside 1..2^63-1, and a persona
  that is not a slug or that the person has never met are 404s, and change nothing.
- A body is one JSON object with exactly the fields its schema lists; anything else is a 400
  that names the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..rows import IMPORTANCE_HIGHEST, IMPORTANCE_LOWEST, KINDS, NOTE_LIMIT
from .contract import (
    CONTROLS_TAG,
    HOST_REFUSED,
    ROW_ID,
    SLUG,
    Answer,
    Operation,
    object_schema,
)
from .json_body import MAX_DEPTH

USER_REF = {"type": "string", "pattern": "^u:[1-9][0-9]{0,18}$", "description": "u:42"}
WHEN = {"type": "string", "format": "date-time"}
PARTIAL_DATE = {"type": ["string", "null"], "description": "an ISO date, possibly partial: 2026, 2026-07, 2026-07-17"}
IDS = {"type": "array", "items": ROW_ID}

LINE = object_schema(
    {
        "id": ROW_ID,
        "persona": SLUG | {"description": "the persona that keeps the line"},
        "subject": {"type": "string", "description": "u:42, or self for the persona's own promise"},
        "counterpart": {"type": ["string", "null"], "description": "on a self line: the human it is with"},
        "kind": {"type": "string", "enum": list(KINDS)},
        "text": {"type": "string"},
        "importance": {"type": "integer", "minimum": IMPORTANCE_LOWEST, "maximum": IMPORTANCE_HIGHEST},
        "created": WHEN | {"description": "when the line was noted"},
        "valid_from": PARTIAL_DATE,
        "valid_to": PARTIAL_DATE | {"description": "when it stopped being true; null while it is open"},
        "closed_by": {"type": ["integer", "null"], "description": "the line that replaced it"},
        "open": {"type": "boolean"},
        "room_id": {"type": ["string", "null"], "description": "the room it was noted in"},
        "evidence": IDS | {"description": "the transcript lines it cites"},
    },
    ("id", "persona", "subject", "counterpart", "kind", "text", "importance", "created", "valid_from",
     "valid_to", "closed_by", "open", "room_id", "evidence"),
    description="a memory line about the person",
)
SPOKEN = object_schema(
    {"id": ROW_ID, "room_id": {"type": "string"}, "speaker": {"type": "string"}, "text": {"type": "string"},
     "at": WHEN},
    ("id", "room_id", "speaker", "text", "at"),
    description="a transcript line a memory cites",
)
NOTICE = object_schema(
    {"id": ROW_ID, "persona": SLUG, "room_id": {"type": ["string", "null"]}, "text": {"type": "string"},
     "memory_ids": IDS | {"description": "the lines undo deletes"}, "created": WHEN},
    ("id", "persona", "room_id", "text", "memory_ids", "created"),
    description="a toast: which persona noted what",
)
METER = object_schema({"used": {"type": "integer", "minimum": 0}, "limit": {"type": "integer", "minimum": 1}},
                ("used", "limit"))
CONTROLS = object_schema(
    {
        "user": USER_REF,
        "memory_on": {"type": "boolean", "description": "personas remember this person"},
        "memory_note": {"type": "string", "description": "what every persona should remember; \"\" for none"},
        "note_limit": {"const": NOTE_LIMIT},
        "personas": {"type": "array", "items": object_schema(
            {"persona": SLUG, "muted": {"type": "boolean"},
             "meter": {"type": ["object", "null"], "properties": METER["properties"],
                       "required": METER["required"], "additionalProperties": False,
                       "description": "the private block's characters used, of its limit"}},
            ("persona", "muted", "meter"),
        )},
    },
    ("user", "memory_on", "memory_note", "note_limit", "personas"),
    description="the person's switches and note, with each persona they have met",
)
EXPORT = object_schema(
    {
        "user": USER_REF,
        "exported": WHEN,
        "personas_remember_me": {"type": "boolean"},
        "memory_note": {"type": "string"},
        "muted_personas": {"type": "array", "items": SLUG},
        "memories": {"type": "array", "items": object_schema(
            {
                "id": ROW_ID, "persona": SLUG, "kind": {"type": "string", "enum": list(KINDS)},
                "text": {"type": "string"},
                "importance": {"type": "integer", "minimum": IMPORTANCE_LOWEST, "maximum": IMPORTANCE_HIGHEST},
                "open": {"type": "boolean"}, "valid_from": PARTIAL_DATE, "valid_to": PARTIAL_DATE,
                "replaced_by": {"type": ["integer", "null"]}, "noted": WHEN,
                "last_recalled": {"type": ["string", "null"], "format": "date-time"},
                "times_recalled": {"type": "integer", "minimum": 0},
                "room": {"type": ["string", "null"]},
                "witnessed_by": {"type": "array", "items": USER_REF},
                "evidence": {"type": "array", "items": object_schema(
                    {"line": ROW_ID, "speaker": {"type": "string"}, "text": {"type": "string"}, "at": WHEN},
                    ("line", "speaker", "text", "at"),
                )},
            },
            ("id", "persona", "kind", "text", "importance", "open", "valid_from", "valid_to", "replaced_by",
             "noted", "last_recalled", "times_recalled", "room", "witnessed_by", "evidence"),
        )},
        "notices": {"type": "array", "items": object_schema(
            {"id": ROW_ID, "persona": SLUG, "text": {"type": "string"}, "memories": IDS, "at": WHEN},
            ("id", "persona", "text", "memories", "at"),
        )},
    },
    ("user", "exported", "personas_remember_me", "memory_note", "muted_personas", "memories", "notices"),
    description="everything personas keep about the person: the page's download",
)

NO_USER = "the user id is outside 1..2^63-1; or no such route"


def _meanings(body: bool, more: Mapping[int, str]) -> dict[int, str]:
    """What 400, 401 and 404 mean on a human-control route, with the route's own ``more``."""
    bad = (f"the body is not JSON, nests arrays and objects more than {MAX_DEPTH} deep, or is not the "
           f"object this route takes (the message names the field); or {HOST_REFUSED}") if body else HOST_REFUSED
    return {400: bad, 401: "no bearer token, or not the human-control API's token", 404: NO_USER,
            503: "the memory is shutting down, or its storage failed; try again", **more}


def _controls(op_id: str, method: str, path: str, summary: str, answers: dict[int, Answer],
              body: dict[str, Any] | None = None, errors: tuple[int, ...] = (400, 401, 404, 503),
              meanings: Mapping[int, str] = {}, query: Mapping[str, dict[str, Any]] = {}) -> Operation:
    return Operation(op_id, method, f"/api/users/{{user_id}}{path}", summary, answers, body=body,
                     errors=errors, meanings=_meanings(body is not None, meanings), query=dict(query),
                     security="controls", tag=CONTROLS_TAG)


def _field(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return object_schema({name: schema}, (name,))


CONTROLS_ANSWER = {200: Answer("the controls after the change", CONTROLS)}
WITH_BODY = (400, 401, 404, 413, 503)

CONTROL_OPERATIONS = (
    _controls(
        "login_link", "POST", "/login-link",
        "A one-time login link for the person's pages, signed, valid for web.login_link_minutes.",
        {201: Answer("the link", object_schema({"url": {"type": "string", "format": "uri"},
                                          "expires_in": {"type": "integer", "minimum": 1,
                                                         "description": "seconds"}},
                                         ("url", "expires_in")))},
        errors=(400, 401, 404),  # signed here: the memory is not asked, so no 503
    ),
    _controls(
        "memories", "GET", "/memories",
        "Every line personas keep about the person, open and closed.",
        {200: Answer("the lines", _field("memories", {"type": "array", "items": LINE}))},
    ),
    _controls(
        "clear_memories", "DELETE", "/memories",
        "Delete every line one persona keeps about the person (?persona=warren), or every line.",
        {200: Answer("how many lines were deleted", _field("deleted", {"type": "integer", "minimum": 0}))},
        query={"persona": SLUG | {"description": "only this persona's lines; omitted: every line"}},
        meanings={404: f"persona is not a persona slug (nothing was deleted); or {NO_USER}"},
    ),
    _controls(
        "memory_line", "GET", "/memories/{memory_id}",
        "One line and the transcript lines it cites.",
        {200: Answer("the line and its evidence",
                     object_schema({"memory": LINE, "evidence": {"type": "array", "items": SPOKEN}}, ("memory", "evidence")))},
        meanings={404: f"the memory does not exist or is not about this person; or {NO_USER}"},
    ),
    _controls(
        "delete_memory", "DELETE", "/memories/{memory_id}",
        "Delete one line: personas do not have it from the next time a chat opens.",
        {204: Answer("deleted", None)},
        meanings={404: f"the memory does not exist or is not about this person; nothing changed; or {NO_USER}"},
    ),
    _controls(
        "notices", "GET", "/notices",
        "The recent toasts, newest first.",
        {200: Answer("the notices", _field("notices", {"type": "array", "items": NOTICE}))},
    ),
    _controls(
        "undo_notice", "POST", "/notices/{notice_id}/undo",
        "Undo a toast: delete exactly the lines it announced.",
        {200: Answer("the ids of the lines deleted", _field("deleted", IDS))},
        meanings={404: f"the notice does not exist or is not this person's; nothing changed; or {NO_USER}"},
    ),
    _controls(
        "controls", "GET", "/controls",
        "The person's switches, note, and each persona's mute and meter.",
        {200: Answer("the controls", CONTROLS)},
    ),
    _controls(
        "set_note", "PUT", "/note",
        f"Set what personas should remember about the person: at most {NOTE_LIMIT} characters; \"\" clears it.",
        CONTROLS_ANSWER,
        body=_field("note", {"type": "string", "description": f"at most {NOTE_LIMIT} characters (422 over)"}),
        errors=(*WITH_BODY, 422),
        meanings={422: f"the note is over {NOTE_LIMIT} characters or holds a lone surrogate; nothing was stored"},
    ),
    _controls(
        "set_memory_on", "PUT", "/memory-on",
        "Switch every persona's memory of the person on or off.",
        CONTROLS_ANSWER,
        body=_field("on", {"type": "boolean"}),
        errors=WITH_BODY,
    ),
    _controls(
        "set_muted", "PUT", "/muted/{persona}",
        "Mute a persona for the person (it neither reads nor writes lines about them) or unmute it.",
        CONTROLS_ANSWER,
        body=_field("muted", {"type": "boolean"}),
        errors=WITH_BODY,
        meanings={404: "the persona is not a slug, or keeps no lines about the person and has never been "
                       "in a room with them (the message lists the ones they have met); nothing changed; "
                       f"or {NO_USER}"},
    ),
    _controls(
        "export", "GET", "/export",
        "Everything personas keep about the person, as JSON: the page's download.",
        {200: Answer("the export", EXPORT)},
    ),
)
