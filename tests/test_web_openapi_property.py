"""Property-based: schemathesis drives the live server from the document it serves.

Every route of the document — the runtime API, the human-control API, the document and its page;
all but the event stream, whose answer lasts until the server stops (its statuses are reached in
``test_web_document``) — is driven with the token its ``security`` names (``runtime`` or
``controls``; an invalid case drawn without it is sent without it), bounded (``MAX_EXAMPLES``
generated requests per route and mode, valid and invalid), against a real ``persona-memory
serve`` process. Every answer must be a documented status with a documented body and content
type, a route that needs a token must refuse a request without it or with a wrong one, and no
request may crash the server (no 500), whatever the input. (schemathesis's own pytest plugin
does not load under pytest 9 yet, so the test draws cases from its Hypothesis strategies
directly.)
"""

from __future__ import annotations

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.config import SchemathesisConfig
from schemathesis.generation import GenerationMode

from web_helpers import BEARER, RUNTIME, live_server  # noqa: F401

MAX_EXAMPLES = 25
TOKENS = {"runtime": RUNTIME, "controls": BEARER}
# A request can have the documented shape and still be refused with a status its route
# documents: 404 (no such room, memory or notice — the generated ids name nothing), 409 (a
# speaker not in the room), 422 (a time outside 1970..2199, a room reopened with the other
# `incognito`, a note over 400 characters: rules the document states in words, not in schema),
# and a body can be refused for its size (413) before its shape is read.
CHECKS = SchemathesisConfig.from_dict({"checks": {
    "positive_data_acceptance": {"expected-statuses": ["2XX", 404, 409, 422]},
    "negative_data_rejection": {"expected-statuses": [400, 401, 404, 405, 409, 413, 422]},
}})


@pytest.fixture(scope="module")
def served_schema(live_server: str):  # noqa: F811
    # Loaded from the fetched text rather than with ``from_url``, which leaves out the route that
    # serves the document itself.
    document = httpx.get(f"{live_server}/api/openapi.json", timeout=30).json()
    return schemathesis.openapi.from_dict(document, config=CHECKS)


def token_for(operation) -> dict[str, str]:
    """The header of the scheme the operation's ``security`` names; none for a public route."""
    needs = [name for need in operation.definition.raw.get("security", []) for name in need]
    return TOKENS[needs[0]] if needs else {}


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=["valid", "invalid"])
def test_every_answer_of_every_route_is_documented(served_schema, live_server: str, mode: GenerationMode) -> None:  # noqa: F811
    operations = [result.ok() for result in served_schema.get_all_operations()]
    labels = {f"{op.method.upper()} {op.path}" for op in operations}
    assert labels >= {
        "POST /api/rooms/{room_id}/lines", "POST /api/rooms/{room_id}/events",
        "GET /api/rooms/{room_id}/personas/{persona}/block", "POST /api/rooms/{room_id}/personas/{persona}/recall",
        "POST /api/drain", "GET /api/events",
        "POST /api/users/{user_id}/login-link", "GET /api/users/{user_id}/memories",
        "DELETE /api/users/{user_id}/memories", "GET /api/users/{user_id}/memories/{memory_id}",
        "DELETE /api/users/{user_id}/memories/{memory_id}", "GET /api/users/{user_id}/notices",
        "POST /api/users/{user_id}/notices/{notice_id}/undo", "GET /api/users/{user_id}/controls",
        "PUT /api/users/{user_id}/note", "PUT /api/users/{user_id}/memory-on",
        "PUT /api/users/{user_id}/muted/{persona}", "GET /api/users/{user_id}/export",
        "GET /api/openapi.json", "GET /api/docs",
    }
    assert {tuple(token_for(op).values()) for op in operations} == {
        (RUNTIME["Authorization"],), (BEARER["Authorization"],), (),
    }
    for operation in operations:
        raw = operation.definition.raw
        if any("text/event-stream" in answer.get("content", {}) for answer in raw["responses"].values()):
            continue  # a stream that lasts until the server stops: a call would wait for its end
        if mode is GenerationMode.NEGATIVE and not raw.get("parameters") and "requestBody" not in raw \
                and not raw.get("security"):
            continue  # nothing to make invalid: no parameter, no body, no token

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck),
                  derandomize=True, database=None)
        def answer_is_documented(case) -> None:
            # An invalid case may be invalid for leaving the token out; giving it back would
            # make the server accept what the case meant it to refuse.
            dropped = mode is GenerationMode.NEGATIVE and "authorization" not in {h.lower() for h in case.headers or {}}
            case.call_and_validate(base_url=live_server, headers={} if dropped else token_for(operation))

        answer_is_documented()
