"""The runtime API under /api/: what a chat runtime in another process sees over HTTP.

Every answer these tests get is also checked against the OpenAPI document the server serves
(the status is documented for that route, and the body has the documented shape), so the
document cannot drift from the routes.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

import persona_memory as pm
from persona_memory.embedding import HashingEmbedder
from persona_memory.web import build_app
from persona_memory.web.app import SECURITY_HEADERS

from conftest import DIM
from web_helpers import BEARER, RUNTIME, SECRETS, SITE_SETTINGS, conforms

DAN, CARA = 42, 17


class Runtime:
    """An httpx client on the app that checks every answer against the served document."""

    def __init__(self, client: httpx.AsyncClient, document: dict[str, Any]) -> None:
        self.client = client
        self.document = document

    async def call(self, method: str, path: str, *, template: str | None = None, headers: dict | None = None,
                   **kwargs: Any) -> httpx.Response:
        response = await self.client.request(method, path, headers=RUNTIME if headers is None else headers, **kwargs)
        if template is not None:
            conforms(self.document, method, template, response)
        return response


@pytest.fixture
async def runtime(make_settings, clock) -> AsyncIterator[Runtime]:
    settings = make_settings(SITE_SETTINGS)
    async with pm.open_memory(settings, clock=clock, embedder=HashingEmbedder(DIM)) as memory:
        app = build_app(memory, settings.web, SECRETS, clock=clock)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as client:
            document = (await client.get("/api/openapi.json")).json()
            yield Runtime(client, document)


LINES = "/api/rooms/{room_id}/lines"
EVENTS = "/api/rooms/{room_id}/events"
BLOCK = "/api/rooms/{room_id}/personas/{persona}/block"
RECALL = "/api/rooms/{room_id}/personas/{persona}/recall"
DRAIN = "/api/drain"


def opened(**changes: Any) -> dict[str, Any]:
    return {"event": "opened", "personas": ["warren"], "humans": [DAN], "private": True,
            "names": {str(DAN): "Dan"}, **changes}


async def test_a_conversation_end_to_end_over_http(runtime: Runtime) -> None:
    call = runtime.call
    assert (await call("POST", "/api/rooms/dm-1/events", template=EVENTS,
                       json=opened(title="Dan and Warren"))).status_code == 202
    first = await call("POST", "/api/rooms/dm-1/lines", template=LINES,
                       json={"speaker": "u:42", "text": "I keep bees on the roof of my building."})
    assert first.status_code == 201 and first.json()["id"] > 0
    await call("POST", "/api/rooms/dm-1/lines", template=LINES,
               json={"speaker": "u:42", "text": "I sing bass in a community choir every Thursday.",
                     "at": "2026-08-18T12:05:00+00:00"})
    assert (await call("POST", "/api/rooms/dm-1/events", template=EVENTS, json={"event": "went_quiet"})).status_code == 202
    assert (await call("POST", "/api/drain", template=DRAIN)).json() == {"drained": True}
    await call("POST", "/api/rooms/dm-1/events", template=EVENTS, json={"event": "archived"})

    await call("POST", "/api/rooms/dm-1/events", template=EVENTS, json=opened(topic="How are the bees?"))
    got = await call("GET", "/api/rooms/dm-1/personas/warren/block", template=BLOCK)
    block = got.json()
    assert "bees" in block["text"] and block["chars"] == len(block["text"]) and block["char_limit"] == 1200
    assert f'chars="{block["meter"]["used"]}/1200"' in block["text"] and block["meter"]["limit"] == 1200
    assert block["anthropic"] == {"type": "text", "text": block["text"], "cache_control": {"type": "ephemeral"}}
    assert block["openai"] == {"role": "system", "content": block["text"]}

    note = await call("POST", "/api/rooms/dm-1/personas/warren/recall", template=RECALL,
                      json={"text": "Do you still sing in that choir on Thursdays?"})
    assert note.status_code == 200
    if "choir" not in block["text"]:
        assert "choir" in note.json()["note"]
    else:
        assert note.json()["note"] == ""  # recall never repeats what the block holds


async def test_the_block_says_which_generation_of_the_room_it_was_built_for(runtime: Runtime) -> None:
    group = {"event": "opened", "personas": ["warren"], "humans": [DAN]}
    await runtime.call("POST", "/api/rooms/g-1/events", json=group)
    before = (await runtime.call("GET", "/api/rooms/g-1/personas/warren/block", template=BLOCK)).json()
    assert before["text"] == "" and before["anthropic"] is None and before["openai"] is None
    await runtime.call("POST", "/api/rooms/g-1/events", json={"event": "member_joined", "user_id": CARA})
    after = (await runtime.call("GET", "/api/rooms/g-1/personas/warren/block", template=BLOCK)).json()
    assert after["generation"] > before["generation"]
    again = (await runtime.call("GET", "/api/rooms/g-1/personas/warren/block", template=BLOCK)).json()
    assert again["generation"] == after["generation"]


async def test_a_room_id_with_any_characters_travels_percent_encoded(runtime: Runtime) -> None:
    room = "team/chat #7 ü\nsecond line"
    path = "/api/rooms/team%2Fchat%20%237%20%C3%BC%0Asecond%20line"
    assert (await runtime.call("POST", f"{path}/events", template=EVENTS, json=opened())).status_code == 202
    got = await runtime.call("GET", f"{path}/personas/warren/block", template=BLOCK)
    assert got.json()["room_id"] == room


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"speaker": "u:42", "txt": "hi"}, "body: unknown field 'txt'; the fields are speaker, text, at"),
        ({"speaker": "u:42"}, "body: missing field 'text'"),
        ({"speaker": "u:42", "text": 7}, "body.text: must be a string, got an integer"),
        ({"speaker": "Dan", "text": "hi"}, "body.speaker: must match"),
        ({"speaker": "u:42", "text": "hi", "at": "yesterday"}, "body.at: must be an ISO 8601 date-time"),
        ({"speaker": "u:42", "text": "hi", "at": "2026-08-18T12:00:00"}, "with its offset"),
        (["u:42", "hi"], "body: must be an object, got an array"),
    ],
)
async def test_a_malformed_line_is_a_400_that_names_the_field(runtime: Runtime, body: Any, message: str) -> None:
    await runtime.call("POST", "/api/rooms/dm-1/events", json=opened())
    got = await runtime.call("POST", "/api/rooms/dm-1/lines", template=LINES, json=body)
    assert got.status_code == 400
    assert message in got.json()["error"]


async def test_a_body_that_is_not_json_is_a_400(runtime: Runtime) -> None:
    got = await runtime.call("POST", "/api/rooms/dm-1/lines", template=LINES, content=b"speaker=u:42&text=hi")
    assert got.status_code == 400 and got.json() == {"error": "the body must be JSON (UTF-8)"}


@pytest.mark.parametrize(("path", "template"), [
    ("/api/rooms/dm-1/lines", LINES), ("/api/rooms/dm-1/events", EVENTS),
    ("/api/rooms/dm-1/personas/warren/recall", RECALL),
])
async def test_a_body_nested_too_deep_is_a_400_before_it_is_parsed(runtime: Runtime, path: str, template: str) -> None:
    await runtime.call("POST", "/api/rooms/dm-1/events", json=opened())
    deep = b'{"text": ' + b"[" * 30_000 + b"]" * 30_000 + b"}"  # 60 KB, under the body cap
    got = await runtime.call("POST", path, template=template, content=deep)
    assert got.status_code == 400
    assert got.json()["error"].startswith("the body nests arrays and objects more than 32 deep; send the flat object")
    shallow = await runtime.call("POST", path, template=template, content=b'{"text": ' + b"[" * 31 + b"]" * 31 + b"}")
    assert shallow.status_code == 400 and "deep" not in shallow.json()["error"]  # refused for its shape instead


async def test_events_say_which_field_is_wrong_for_that_event(runtime: Runtime) -> None:
    got = await runtime.call("POST", "/api/rooms/r/events", template=EVENTS, json={"event": "joined", "user_id": 1})
    assert got.status_code == 400 and "body.event: must be one of 'opened', 'member_joined'" in got.json()["error"]
    got = await runtime.call("POST", "/api/rooms/r/events", template=EVENTS,
                             json={"event": "member_joined", "user_id": True})
    assert got.status_code == 400 and got.json()["error"] == "body.user_id: must be an integer, got a boolean"
    got = await runtime.call("POST", "/api/rooms/r/events", template=EVENTS, json=opened(names={"Dan": "Dan"}))
    assert got.status_code == 400 and "body.names key 'Dan'" in got.json()["error"]


async def test_the_memorys_refusals_map_to_404_409_and_422_and_change_nothing(runtime: Runtime) -> None:
    joined = await runtime.call("POST", "/api/rooms/never/events", template=EVENTS,
                                json={"event": "member_joined", "user_id": CARA})
    assert joined.status_code == 404 and "room 'never' is not open" in joined.json()["error"]
    two_in_private = await runtime.call("POST", "/api/rooms/dm-2/events", template=EVENTS,
                                        json=opened(humans=[DAN, CARA]))
    assert two_in_private.status_code == 422 and "exactly one persona and one human" in two_in_private.json()["error"]
    block = await runtime.call("GET", "/api/rooms/dm-2/personas/warren/block", template=BLOCK)
    assert block.status_code == 404  # the refused open left no room behind
    await runtime.call("POST", "/api/rooms/dm-3/events", json=opened())
    nolan = await runtime.call("GET", "/api/rooms/dm-3/personas/nolan/block", template=BLOCK)
    assert nolan.status_code == 409 and "persona 'nolan' is not in room 'dm-3'" in nolan.json()["error"]
    long_note = await runtime.call("POST", "/api/rooms/dm-3/personas/warren/recall", template=RECALL,
                                   json={"text": "x" * 20_001})
    assert long_note.status_code == 400 and "body.text: must be at most 20000 characters" in long_note.json()["error"]


async def test_a_line_for_a_room_not_open_is_a_404_and_from_someone_not_in_it_a_409_and_neither_is_kept(
    runtime: Runtime,
) -> None:
    memory = runtime.client._transport.app.state.memory  # type: ignore[attr-defined]
    never = await runtime.call("POST", "/api/rooms/never-opened/lines", template=LINES,
                               json={"speaker": "u:42", "text": "Is anyone reading this?"})
    assert never.status_code == 404
    assert "room 'never-opened' is not open" in never.json()["error"] and "opened" in never.json()["error"]
    await runtime.call("POST", "/api/rooms/g-2/events", json={"event": "opened", "personas": ["warren"], "humans": [DAN]})
    first = await runtime.call("POST", "/api/rooms/g-2/lines", template=LINES,
                               json={"speaker": "u:42", "text": "I've started building a canoe."})
    assert first.status_code == 201
    for speaker in ("u:17", "nolan"):
        outsider = await runtime.call("POST", "/api/rooms/g-2/lines", template=LINES,
                                      json={"speaker": speaker, "text": "I wasn't invited but here I am."})
        assert outsider.status_code == 409
        assert outsider.json()["error"].startswith(f"{speaker} is not in room 'g-2' (its humans: u:42; its personas: warren)")
    await runtime.call("POST", "/api/rooms/g-2/events", json={"event": "member_joined", "user_id": CARA})
    joined = await runtime.call("POST", "/api/rooms/g-2/lines", template=LINES,
                                json={"speaker": "u:17", "text": "Sorry I'm late."})
    persona = await runtime.call("POST", "/api/rooms/g-2/lines", template=LINES,
                                 json={"speaker": "warren", "text": "Welcome, both of you."})
    assert joined.status_code == persona.status_code == 201
    await runtime.call("POST", "/api/rooms/g-2/events", json={"event": "archived"})
    archived = await runtime.call("POST", "/api/rooms/g-2/lines", template=LINES,
                                  json={"speaker": "u:42", "text": "One more thing."})
    assert archived.status_code == 404
    kept = await memory._store.transcript.lines("g-2")
    assert [(line.id, line.speaker) for line in kept] == [
        (first.json()["id"], "u:42"), (joined.json()["id"], "u:17"), (persona.json()["id"], "warren")
    ]
    assert await memory._store.transcript.lines("never-opened") == []


async def test_the_runtime_token_is_its_own(runtime: Runtime) -> None:
    for headers in ({}, BEARER, {"Authorization": "Bearer nope"}, {"Authorization": f"Basic {SECRETS.runtime_token}"}):
        got = await runtime.call("POST", "/api/drain", template=DRAIN, headers=headers)
        assert got.status_code == 401 and got.headers["www-authenticate"] == "Bearer"
    humans_api = await runtime.client.get("/api/users/42/controls", headers=RUNTIME)
    assert humans_api.status_code == 401  # and the runtime's token does not open the human-controls API


async def test_every_error_is_json_with_the_security_headers(runtime: Runtime) -> None:
    answers = [
        await runtime.call("POST", "/api/rooms/r/lines", template=LINES, content=b"x" * (65 * 1024)),
        await runtime.call("PUT", "/api/drain"),
        await runtime.call("GET", "/api/nothing-here"),
        await runtime.call("POST", "/api/drain", headers={}),
    ]
    assert [a.status_code for a in answers] == [413, 405, 404, 401]
    for answer in answers:
        assert answer.headers["content-type"] == "application/json"
        assert set(answer.json()) == {"error"}
        for header, value in SECURITY_HEADERS.items():
            assert answer.headers[header] == value
    assert answers[0].json()["error"] == "the body is over 64 KiB"
    assert answers[1].json()["error"] == "PUT is not allowed on /api/drain; it takes POST"
    assert "/api/openapi.json" in answers[2].json()["error"]
    too_large_without_token = await runtime.call("POST", "/api/rooms/r/lines", headers={}, content=b"x" * (65 * 1024))
    assert too_large_without_token.status_code == 401  # the token is checked before the body is read


async def test_the_document_describes_every_route_under_api_the_server_has(runtime: Runtime) -> None:
    document = runtime.document
    assert document["openapi"] == "3.1.0"
    template = re.compile(r":[a-z_]+}")
    served = {
        (template.sub("}", route.path), method)
        for route in runtime.client._transport.app.routes  # type: ignore[attr-defined]
        if getattr(route, "path", "").startswith("/api/")
        for method in route.methods - {"HEAD"}
    }
    documented = {(path, method.upper()) for path, item in document["paths"].items() for method in item}
    assert served == documented
    assert len(documented) == 20  # 6 runtime routes, 12 human-control routes, the document and its page
    for path, item in document["paths"].items():
        for operation in item.values():
            if path.startswith("/api/users/"):
                assert operation["security"] == [{"controls": []}] and "401" in operation["responses"]
            elif path in ("/api/openapi.json", "/api/docs"):
                assert operation["security"] == []
            else:
                assert operation["security"] == [{"runtime": []}] and "401" in operation["responses"]


async def test_health_and_readiness_need_no_token_and_name_escalated_personas(runtime: Runtime) -> None:
    assert (await runtime.client.get("/healthz")).json() == {"status": "alive"}
    assert (await runtime.client.get("/readyz")).json() == {"status": "ready"}
    memory = runtime.client._transport.app.state.memory  # type: ignore[attr-defined]
    await memory._store.write(lambda conn: conn.execute(
        "INSERT INTO parked_slices VALUES ('nolan', 'g-7', 'ProviderNonsense: not JSON', 5, '2026-08-18T13:00:00+00:00')"
    ))
    not_ready = await runtime.client.get("/readyz")
    assert not_ready.status_code == 503
    assert not_ready.json()["escalated"] == ["nolan"]
    assert "nolan's writer failed a slice too often" in not_ready.json()["problems"][0]
    assert (await runtime.client.get("/healthz")).status_code == 200


async def test_the_access_log_has_one_line_per_request_and_no_secrets(runtime: Runtime, caplog) -> None:
    caplog.set_level("INFO", logger="persona_memory.access")
    await runtime.call("POST", "/api/rooms/secret-room-7/events", json=opened())
    await runtime.call("POST", "/api/rooms/secret-room-7/lines", json={"speaker": "u:42", "text": "My PIN is 4321."})
    await runtime.call("GET", "/api/users/42/controls", headers=BEARER)
    lines = [r.getMessage() for r in caplog.records if r.name == "persona_memory.access"]
    assert [line.rsplit(" ", 1)[0] for line in lines] == [
        "POST /api/rooms/{room_id}/events 202",
        "POST /api/rooms/{room_id}/lines 201",
        "GET /api/users/{user_id}/controls 200",
    ]
    assert all(line.endswith("ms") for line in lines)
    logged = " ".join(lines)
    for secret in ("secret-room-7", "4321", SECRETS.runtime_token, SECRETS.api_token, "/42/"):
        assert secret not in logged


def sample(text: str, name: str, **labels: str) -> float:
    """The value of one sample in Prometheus text (0 when absent)."""
    wanted = name + ("{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}" if labels else "")
    for line in text.splitlines():
        if line.startswith(wanted + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


async def test_metrics_count_what_the_memory_did_and_name_nobody(runtime: Runtime) -> None:
    call = runtime.call
    await call("POST", "/api/rooms/dm-m/events", json=opened(topic="Hello"))
    await call("POST", "/api/rooms/dm-m/lines", json={"speaker": "u:42", "text": "I breed koi in a pond behind my house."})
    await call("POST", "/api/rooms/dm-m/events", json={"event": "went_quiet"})
    await call("POST", "/api/drain")
    await call("POST", "/api/rooms/dm-m/personas/warren/recall", json={"text": "How are the koi doing?"})
    got = await runtime.client.get("/metrics")
    assert got.status_code == 200 and got.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = got.text
    assert sample(text, "persona_memory_routing_outcomes_total", event="ADD") >= 1
    assert sample(text, "persona_memory_notices_posted_total") >= 1
    assert sample(text, "persona_memory_slices_written_total") == 1
    assert sample(text, "persona_memory_provider_call_seconds_count", call="extract") == 1
    assert sample(text, "persona_memory_provider_call_seconds_count", call="embed") >= 2  # the rows and the message
    assert sample(text, "persona_memory_block_build_seconds_count") >= 1
    assert sample(text, "persona_memory_recall_seconds_count") == 1
    assert sample(text, "persona_memory_live_actors") == 1
    assert sample(text, "persona_memory_mailbox_depth") == 0
    for personal in ("warren", "dm-m", "koi", "u:42", "Dan"):
        assert personal not in text


def test_every_room_event_survives_the_trip_through_json() -> None:
    from persona_memory.event_json import event_body, event_of

    events = [
        pm.RoomOpened(room_id="r", personas=("warren", "nolan"), humans=frozenset({DAN, CARA}), incognito=True,
                      kit="a murder-mystery game", topic="Who did it?", title="Friday games", names={DAN: "Dan"}),
        pm.MemberJoined(room_id="r", user_id=CARA),
        pm.MemberLeft(room_id="r", user_id=CARA),
        pm.RoomWentQuiet(room_id="r"),
        pm.RoomArchived(room_id="r"),
    ]
    for event in events:
        back = event_of("r", json.loads(json.dumps(event_body(event))))
        assert back == event and getattr(back, "names", None) == getattr(event, "names", None)
