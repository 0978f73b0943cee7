"""The one OpenAPI document against the routes: every status it gives a route is one a request
can get there, and every answer a request gets is one it gives (status, media type, schema).

Each route is driven to each of its statuses on a seeded memory, with the token its
``security`` names; the set of (route, status) reached must equal the set documented. Then the
page at /api/docs: served with its packaged stylesheet, it lists every route of the document.
"""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import httpx

from persona_memory.web.app import CSP
from web_helpers import ANA, BEARER, CARA, DAN, RUNTIME, conforms, site  # noqa: F401

BIG = b"x" * (65 * 1024)
ELSEWHERE = {"Host": "somewhere.example"}


class Driver:
    """Calls routes, checks each answer against the document, and keeps what was reached."""

    def __init__(self, client: httpx.AsyncClient, document: dict[str, Any]) -> None:
        self.client = client
        self.document = document
        self.reached: set[tuple[str, str, int]] = set()

    async def hit(self, status: int, method: str, template: str, path: str | None = None, *,
                  token: dict[str, str] | None = None, **kwargs: Any) -> httpx.Response:
        security = self.document["paths"][template][method.lower()]["security"]
        if token is None:
            token = {"runtime": RUNTIME, "controls": BEARER}[next(iter(security[0]))] if security else {}
        headers = {**token, **kwargs.pop("headers", {})}
        got = await self.client.request(method, path or template, headers=headers, **kwargs)
        assert got.status_code == status, (method, path or template, got.status_code, got.text)
        conforms(self.document, method, template, got)
        self.reached.add((method, template, status))
        return got

    def documented(self) -> set[tuple[str, str, int]]:
        return {(method.upper(), path, int(status))
                for path, item in self.document["paths"].items()
                for method, operation in item.items()
                for status in operation["responses"]}


LINES = "/api/rooms/{room_id}/lines"
EVENTS = "/api/rooms/{room_id}/events"
BLOCK = "/api/rooms/{room_id}/personas/{persona}/block"
RECALL = "/api/rooms/{room_id}/personas/{persona}/recall"
DRAIN = "/api/drain"
USER = "/api/users/{user_id}"


async def test_every_documented_status_is_reached_and_every_answer_is_documented(site) -> None:
    document = (await site.client.get("/api/openapi.json")).json()
    d = Driver(site.client, document)
    memory = site.memory

    # the runtime API
    opened = {"event": "opened", "personas": ["warren"], "humans": [DAN]}
    await d.hit(202, "POST", EVENTS, "/api/rooms/doc-room/events", json=opened)
    await d.hit(400, "POST", EVENTS, "/api/rooms/doc-room/events", json={"event": "renamed"})
    await d.hit(401, "POST", EVENTS, "/api/rooms/doc-room/events", token={}, json=opened)
    await d.hit(404, "POST", EVENTS, "/api/rooms/never/events", json={"event": "member_joined", "user_id": CARA})
    await d.hit(409, "POST", EVENTS, "/api/rooms/doc-room/events", json={"event": "member_left", "user_id": CARA})
    await d.hit(413, "POST", EVENTS, "/api/rooms/doc-room/events", content=BIG)
    flipped = await d.hit(422, "POST", EVENTS, "/api/rooms/doc-room/events", json={**opened, "incognito": True})
    assert "incognito" in flipped.json()["error"]

    line = {"speaker": "u:42", "text": "The documentation is finally written."}
    await d.hit(201, "POST", LINES, "/api/rooms/doc-room/lines", json=line)
    await d.hit(400, "POST", LINES, "/api/rooms/doc-room/lines", json={"speaker": "u:42"})
    await d.hit(401, "POST", LINES, "/api/rooms/doc-room/lines", token={}, json=line)
    await d.hit(404, "POST", LINES, "/api/rooms/never/lines", json=line)
    await d.hit(409, "POST", LINES, "/api/rooms/doc-room/lines", json={**line, "speaker": "u:17"})
    await d.hit(413, "POST", LINES, "/api/rooms/doc-room/lines", content=BIG)
    too_early = await d.hit(422, "POST", LINES, "/api/rooms/doc-room/lines", json={**line, "at": "1969-12-31T23:00:00Z"})
    assert "between 1970 and 2199" in too_early.json()["error"]

    await d.hit(200, "GET", BLOCK, "/api/rooms/doc-room/personas/warren/block")
    await d.hit(400, "GET", BLOCK, "/api/rooms/doc-room/personas/Warren/block")
    await d.hit(401, "GET", BLOCK, "/api/rooms/doc-room/personas/warren/block", token={})
    await d.hit(404, "GET", BLOCK, "/api/rooms/never/personas/warren/block")
    await d.hit(409, "GET", BLOCK, "/api/rooms/doc-room/personas/nolan/block")
    await d.hit(422, "GET", BLOCK, "/api/rooms/%20%20/personas/warren/block")

    ask = {"text": "What did I say about documentation?"}
    await d.hit(200, "POST", RECALL, "/api/rooms/doc-room/personas/warren/recall", json=ask)
    await d.hit(400, "POST", RECALL, "/api/rooms/doc-room/personas/warren/recall", json={})
    await d.hit(401, "POST", RECALL, "/api/rooms/doc-room/personas/warren/recall", token={}, json=ask)
    await d.hit(404, "POST", RECALL, "/api/rooms/never/personas/warren/recall", json=ask)
    await d.hit(409, "POST", RECALL, "/api/rooms/doc-room/personas/nolan/recall", json=ask)
    await d.hit(413, "POST", RECALL, "/api/rooms/doc-room/personas/warren/recall", content=BIG)
    await d.hit(422, "POST", RECALL, "/api/rooms/%20%20/personas/warren/recall", json=ask)

    site.app.state.events_ending.set()  # so the stream ends after its first line and can be read whole
    stream = await d.hit(200, "GET", "/api/events")
    assert stream.text.startswith(": events after ")
    await d.hit(400, "GET", "/api/events", params={"after": "yesterday"})
    await d.hit(400, "GET", "/api/events", params={"kinds": "memory.forgotten"})
    await d.hit(401, "GET", "/api/events", token={})

    await d.hit(200, "POST", DRAIN)
    await d.hit(400, "POST", DRAIN, headers=ELSEWHERE)
    await d.hit(401, "POST", DRAIN, token={})

    # the human-control API
    dans = await memory.memories_about(DAN)
    caras = await memory.memories_about(CARA)
    notice = (await memory.notices(DAN))[0]
    for method, path in (("POST", "/login-link"), ("GET", "/memories"), ("DELETE", "/memories"),
                         ("GET", "/memories/{memory_id}"), ("DELETE", "/memories/{memory_id}"),
                         ("GET", "/notices"), ("POST", "/notices/{notice_id}/undo"), ("GET", "/controls"),
                         ("GET", "/export")):
        template = USER + path
        concrete = template.replace("{memory_id}", str(dans[0].id)).replace("{notice_id}", str(notice.id))
        await d.hit(400, method, template, concrete.replace("{user_id}", "42"), headers=ELSEWHERE)
        await d.hit(401, method, template, concrete.replace("{user_id}", "42"), token=RUNTIME)
        await d.hit(404, method, template, concrete.replace("{user_id}", "0"))
    for method, path, field, value in (("PUT", "/note", "note", "Call me Dan."), ("PUT", "/memory-on", "on", True),
                                       ("PUT", "/muted/{persona}", "muted", True)):
        template = USER + path
        concrete = template.replace("{persona}", "warren").replace("{user_id}", "42")
        await d.hit(400, "PUT", template, concrete, json={field: value, "also": 1})
        await d.hit(401, "PUT", template, concrete, token={}, json={field: value})
        await d.hit(404, "PUT", template, template.replace("{persona}", "warren").replace("{user_id}", "0"),
                    json={field: value})
        await d.hit(413, "PUT", template, concrete, content=BIG)
        await d.hit(200, "PUT", template, concrete, json={field: value})
    await d.hit(404, "PUT", USER + "/muted/{persona}", "/api/users/42/muted/nobody", json={"muted": True})
    over = await d.hit(422, "PUT", USER + "/note", "/api/users/42/note", json={"note": "n" * 401})
    assert "the limit is 400" in over.json()["error"]

    await d.hit(201, "POST", USER + "/login-link", "/api/users/42/login-link")
    await d.hit(200, "GET", USER + "/memories", "/api/users/42/memories")
    await d.hit(200, "GET", USER + "/memories/{memory_id}", f"/api/users/42/memories/{dans[0].id}")
    await d.hit(404, "GET", USER + "/memories/{memory_id}", f"/api/users/42/memories/{caras[0].id}")
    await d.hit(200, "GET", USER + "/notices", "/api/users/42/notices")
    await d.hit(200, "POST", USER + "/notices/{notice_id}/undo", f"/api/users/42/notices/{notice.id}/undo")
    await d.hit(200, "GET", USER + "/controls", "/api/users/42/controls")
    await d.hit(200, "GET", USER + "/export", "/api/users/42/export")
    still = await memory.memories_about(DAN)
    await d.hit(204, "DELETE", USER + "/memories/{memory_id}", f"/api/users/42/memories/{still[0].id}")
    await d.hit(404, "DELETE", USER + "/memories/{memory_id}", f"/api/users/42/memories/{caras[0].id}")
    await d.hit(404, "DELETE", USER + "/memories", "/api/users/43/memories", params={"persona": "Not a slug"})
    cleared = await d.hit(200, "DELETE", USER + "/memories", "/api/users/43/memories", params={"persona": "nolan"})
    assert cleared.json() == {"deleted": 1} and len(await memory.memories_about(ANA)) == 2

    # the reference
    for template in ("/api/openapi.json", "/api/docs"):
        await d.hit(200, "GET", template)
        await d.hit(400, "GET", template, headers=ELSEWHERE)

    # a memory shutting down answers 503 on every route that reaches it
    await memory.supervisor.shut_down()
    for method, template, path, kwargs in (
        ("POST", LINES, "/api/rooms/doc-room/lines", {"json": line}),
        ("POST", EVENTS, "/api/rooms/doc-room/events", {"json": {"event": "went_quiet"}}),
        ("GET", BLOCK, "/api/rooms/doc-room/personas/warren/block", {}),
        ("POST", RECALL, "/api/rooms/doc-room/personas/warren/recall", {"json": ask}),
        ("POST", DRAIN, DRAIN, {}),
        ("GET", "/api/events", "/api/events", {}),
        ("GET", USER + "/memories", "/api/users/42/memories", {}),
        ("DELETE", USER + "/memories", "/api/users/42/memories", {}),
        ("GET", USER + "/memories/{memory_id}", f"/api/users/42/memories/{still[1].id}", {}),
        ("DELETE", USER + "/memories/{memory_id}", f"/api/users/42/memories/{still[1].id}", {}),
        ("GET", USER + "/notices", "/api/users/42/notices", {}),
        ("POST", USER + "/notices/{notice_id}/undo", f"/api/users/42/notices/{notice.id}/undo", {}),
        ("GET", USER + "/controls", "/api/users/42/controls", {}),
        ("PUT", USER + "/note", "/api/users/42/note", {"json": {"note": ""}}),
        ("PUT", USER + "/memory-on", "/api/users/42/memory-on", {"json": {"on": True}}),
        ("PUT", USER + "/muted/{persona}", "/api/users/42/muted/warren", {"json": {"muted": False}}),
        ("GET", USER + "/export", "/api/users/42/export", {}),
    ):
        await d.hit(503, method, template, path, **kwargs)

    assert d.reached == d.documented(), (
        f"documented but not reached: {sorted(d.documented() - d.reached)}; "
        f"reached but not documented: {sorted(d.reached - d.documented())}"
    )


async def test_the_page_lists_every_route_with_its_parameters_body_and_statuses(site) -> None:
    document = (await site.client.get("/api/openapi.json")).json()
    page = await site.client.get("/api/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == CSP
    html = page.text
    assert "<script" not in html and " style=" not in html  # nothing the CSP would block
    stylesheets = re.findall(r'<link rel="stylesheet" href="([^"]+)"', html)
    assert "/static/api-docs.css" in stylesheets
    for href in stylesheets:
        asset = await site.client.get(href)
        assert asset.status_code == 200 and asset.headers["content-type"].startswith("text/css")
    assert not re.search(r'(?:src|href)="(?:https?:)?//', html)  # nothing fetched from elsewhere
    for path, item in document["paths"].items():
        for method, operation in item.items():
            article = re.search(rf'<article class="route" id="{operation["operationId"]}">(.*?)</article>', html, re.S)
            assert article, (method, path)
            shown = unescape(article.group(1))
            assert f'{method.upper()}</span> <code class="path">{path}</code>' in shown
            for parameter in operation["parameters"]:
                assert f"<code>{parameter['name']}</code>" in shown
            if "requestBody" in operation:
                for field in operation["requestBody"]["content"]["application/json"]["schema"].get("properties", {}):
                    assert f'"{field}"' in shown, (path, field)
            for status, answer in operation["responses"].items():
                assert f'<td class="status">{status}</td><td>{answer["description"]}</td>' in shown, (path, status)
