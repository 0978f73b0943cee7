"""Property-based: schemathesis drives the live server from the document it serves.

Bounded (``MAX_EXAMPLES`` generated requests per route and mode, valid and invalid), against a
real ``persona-memory serve`` process. Every answer must be a documented status with a
documented body and content type, and no request may crash the server (no 500), whatever the
input. (schemathesis's own pytest plugin does not load under pytest 9 yet, so the test draws
cases from its Hypothesis strategies directly.)
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.config import SchemathesisConfig
from schemathesis.generation import GenerationMode

from web_helpers import RUNTIME, live_server  # noqa: F401

MAX_EXAMPLES = 30
# A body can have the documented shape and still be refused by the memory with a documented
# 422 (a time outside 1970..2199, a private room with two humans: rules a schema cannot say),
# and a body can be refused for its size (413) before its shape is read.
CHECKS = SchemathesisConfig.from_dict({"checks": {
    "positive_data_acceptance": {"expected-statuses": ["2XX", 404, 409, 422]},
    "negative_data_rejection": {"expected-statuses": [400, 401, 404, 405, 409, 413, 422]},
}})


@pytest.fixture(scope="module")
def served_schema(live_server: str):  # noqa: F811
    return schemathesis.openapi.from_url(f"{live_server}/api/openapi.json", config=CHECKS)


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=["valid", "invalid"])
def test_every_answer_is_documented(served_schema, live_server: str, mode: GenerationMode) -> None:  # noqa: F811
    operations = [result.ok() for result in served_schema.get_all_operations()]
    assert {f"{op.method.upper()} {op.path}" for op in operations} >= {
        "POST /api/rooms/{room_id}/lines", "POST /api/rooms/{room_id}/events",
        "GET /api/rooms/{room_id}/personas/{persona}/block", "POST /api/rooms/{room_id}/personas/{persona}/recall",
        "POST /api/drain",
    }
    for operation in operations:
        if mode is GenerationMode.NEGATIVE and operation.body is None and not operation.path_parameters:
            continue  # nothing to make invalid

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck),
                  derandomize=True, database=None)
        def answer_is_documented(case) -> None:
            case.call_and_validate(base_url=live_server, headers=RUNTIME)

        answer_is_documented()
