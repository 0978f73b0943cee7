"""``GET /api/events``: the outbox as Server-Sent Events on ``persona-memory serve``, resumable
with ``Last-Event-ID``, filtered by kind, with heartbeats, ending when the server stops."""

from __future__ import annotations

import json
from functools import partial

import httpx
import trio

import persona_memory as pm
from persona_memory.embedding import HashingEmbedder
from persona_memory.web import serve_web
from web_helpers import BEARER, RUNTIME, SECRETS, SITE_SETTINGS

DAN = 42
DM = dict(room_id="dm", personas=("warren",), humans={DAN}, private=True, names={DAN: "Dan"})
GUARD_SECONDS = 60.0  # a deadlock guard: a stream that never sends fails the test, it times nothing


async def read_messages(response: httpx.Response, count: int, *, comments: list[str] | None = None) -> list[dict]:
    """The next ``count`` SSE messages of ``response`` as ``{"id", "event", "data"}``; comment
    lines go to ``comments``."""
    out: list[dict] = []
    message: dict = {}
    with trio.fail_after(GUARD_SECONDS):
        async for line in response.aiter_lines():
            if line.startswith(":"):
                if comments is not None:
                    comments.append(line)
            elif line == "":
                if message:
                    out.append(message)
                    message = {}
                    if len(out) == count:
                        return out
            else:
                field, _, value = line.partition(": ")
                message[field] = json.loads(value) if field == "data" else value
    return out


async def test_the_stream_sends_each_event_resumes_after_the_last_id_and_filters_kinds(make_settings, clock):
    settings = make_settings({**SITE_SETTINGS, "web.port": 0, "events.poll_seconds": 0.02})
    async with pm.open_memory(settings, clock=clock, embedder=HashingEmbedder(64)) as memory:
        async with trio.open_nursery() as nursery:
            port = await nursery.start(partial(serve_web, memory, settings, secrets=SECRETS, clock=clock))
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=GUARD_SECONDS) as client:
                await memory.set_memory_note(DAN, "Call me Dan, never Daniel.")
                await memory.set_memory_on(DAN, False)
                async with client.stream("GET", "/api/events?after=0", headers=RUNTIME) as got:
                    assert got.status_code == 200
                    assert got.headers["content-type"].startswith("text/event-stream")
                    first, second = await read_messages(got, 2)
                assert (first["event"], second["event"]) == ("controls.changed", "controls.changed")
                assert first["id"] == str(first["data"]["id"]) and int(second["id"]) > int(first["id"])
                assert first["data"]["data"] == {"user_id": DAN, "control": "note", "value": None, "persona": None}
                assert "text" not in first["data"] and "Daniel" not in json.dumps(first)

                await memory.set_muted(DAN, "warren", True)
                resumed = {**RUNTIME, "Last-Event-ID": first["id"]}
                async with client.stream("GET", "/api/events", headers=resumed) as got:
                    again, third = await read_messages(got, 2)
                assert again == second
                assert third["data"]["data"] == {"user_id": DAN, "control": "muted", "value": True, "persona": "warren"}

                async with client.stream("GET", "/api/events?kinds=memory.noted", headers=RUNTIME) as got:
                    await memory.set_memory_on(DAN, True)  # not kinds this stream asked for
                    await memory.set_muted(DAN, "warren", False)
                    await memory.send(pm.RoomOpened(**DM))
                    await memory.post_line("dm", "u:42", "I adopted a greyhound named Pixel.")
                    await memory.send(pm.RoomWentQuiet(room_id="dm"))
                    (noted,) = await read_messages(got, 1)
                (notice,) = await memory.notices(DAN)
                assert noted["event"] == "memory.noted" and noted["data"]["data"]["notice_id"] == notice.id
                assert "greyhound" not in json.dumps(noted)
            nursery.cancel_scope.cancel()


async def test_an_idle_stream_sends_heartbeats_and_ends_when_the_server_stops(make_settings, clock):
    settings = make_settings({**SITE_SETTINGS, "web.port": 0, "events.poll_seconds": 0.02,
                              "events.heartbeat_seconds": 0.05})
    async with pm.open_memory(settings, clock=clock, embedder=HashingEmbedder(64)) as memory:
        async with trio.open_nursery() as nursery:
            server = trio.CancelScope()

            async def serve(task_status: trio.TaskStatus[int]) -> None:
                with server:
                    await serve_web(memory, settings, secrets=SECRETS, clock=clock, task_status=task_status)

            port = await nursery.start(serve)
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=GUARD_SECONDS) as client:
                async with client.stream("GET", "/api/events", headers=RUNTIME) as got:
                    comments: list[str] = []
                    with trio.fail_after(GUARD_SECONDS):
                        lines = got.aiter_lines()
                        async for line in lines:
                            comments.append(line)
                            if line == ": keep-alive":
                                break
                        server.cancel()  # the server shuts down and the stream ends: a stream cut
                        rest = [line async for line in lines]  # at the grace deadline would raise here
            assert comments[0].startswith(": events after ")
            assert all(not line.startswith(("id:", "data:")) for line in comments + rest)


async def test_the_stream_needs_the_runtime_token_and_a_well_formed_resume_point(make_settings, clock):
    settings = make_settings({**SITE_SETTINGS, "web.port": 0})
    async with pm.open_memory(settings, clock=clock, embedder=HashingEmbedder(64)) as memory:
        async with trio.open_nursery() as nursery:
            port = await nursery.start(partial(serve_web, memory, settings, secrets=SECRETS, clock=clock))
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                assert (await client.get("/api/events")).status_code == 401
                assert (await client.get("/api/events", headers=BEARER)).status_code == 401  # the controls token
                bad = await client.get("/api/events", headers={**RUNTIME, "Last-Event-ID": "yesterday"})
                assert bad.status_code == 400 and "Last-Event-ID" in bad.json()["error"]
                bad = await client.get("/api/events?kinds=memory.forgotten", headers=RUNTIME)
                assert bad.status_code == 400 and "memory.forgotten" in bad.json()["error"]
            nursery.cancel_scope.cancel()
