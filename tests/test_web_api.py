"""The runtime's JSON API under /api/: bearer auth, per-user scoping, and each operation."""

from __future__ import annotations

import pytest

from web_helpers import ANA, BEARER, CARA, DAN, sign_in, site  # noqa: F401

ROUTES = [
    ("POST", "/api/users/42/login-link"),
    ("GET", "/api/users/42/memories"),
    ("DELETE", "/api/users/42/memories"),
    ("GET", "/api/users/42/memories/1"),
    ("DELETE", "/api/users/42/memories/1"),
    ("GET", "/api/users/42/notices"),
    ("POST", "/api/users/42/notices/1/undo"),
    ("GET", "/api/users/42/controls"),
    ("PUT", "/api/users/42/note"),
    ("PUT", "/api/users/42/memory-on"),
    ("PUT", "/api/users/42/muted/warren"),
    ("GET", "/api/users/42/export"),
]


async def api(site, method, path, **kwargs):
    return await site.client.request(method, path, headers=BEARER, **kwargs)


async def test_without_the_right_bearer_every_route_answers_401_and_nothing_changes(site):
    before = await site.memory.memories_about(DAN)
    await sign_in(site.client, site.auth, DAN)  # a browser session is no API credential
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": BEARER["Authorization"][:-1]},
                    {"Authorization": "Basic " + BEARER["Authorization"][7:]}):
        for method, path in ROUTES:
            got = await site.client.request(method, path, headers=headers, json={"note": "x", "on": False})
            assert got.status_code == 401, (method, path, headers)
            assert got.json() == {"error": "a valid bearer token is required"}
            assert got.headers["www-authenticate"] == "Bearer"
    assert await site.memory.memories_about(DAN) == before
    assert (await site.memory.user_controls(DAN)).memory_note == ""


async def test_the_runtime_gets_a_login_link_for_a_person(site):
    got = await api(site, "POST", "/api/users/42/login-link")
    assert got.status_code == 201 and got.json()["expires_in"] == 15 * 60
    url = got.json()["url"]
    assert url.startswith("http://testserver/login?token=")
    assert await site.auth.check_login(url.split("token=", 1)[1]) == DAN


async def test_memories_lists_every_line_about_the_person_open_and_closed(site):
    got = (await api(site, "GET", "/api/users/42/memories")).json()["memories"]
    rows = await site.memory.memories_about(DAN)
    assert [m["id"] for m in got] == [r.id for r in rows]
    assert {m["open"] for m in got} == {True, False}
    assert all(m["subject"] in ("u:42", "self") for m in got)


async def test_one_line_comes_with_the_transcript_lines_it_cites(site):
    row = next(r for r in await site.memory.memories_about(DAN) if r.kind == "promise" and r.persona == "warren")
    got = (await api(site, "GET", f"/api/users/42/memories/{row.id}")).json()
    assert got["memory"]["text"] == row.text
    assert [line["id"] for line in got["evidence"]] == list(row.evidence)
    assert got["evidence"][0]["speaker"] == "warren"


async def test_delete_removes_one_line_and_another_users_id_is_404_and_unchanged(site):
    (cara_row,) = await site.memory.memories_about(CARA)
    row = (await site.memory.memories_about(DAN))[0]
    assert (await api(site, "DELETE", f"/api/users/42/memories/{row.id}")).status_code == 204
    assert row.id not in {r.id for r in await site.memory.memories_about(DAN)}
    again = await api(site, "DELETE", f"/api/users/42/memories/{row.id}")
    assert again.status_code == 404 and "error" in again.json()
    for method in ("GET", "DELETE"):
        assert (await api(site, method, f"/api/users/42/memories/{cara_row.id}")).status_code == 404
    assert await site.memory.memories_about(CARA) == [cara_row]


async def test_clear_for_one_persona_or_all(site):
    got = await api(site, "DELETE", "/api/users/43/memories", params={"persona": "nolan"})
    assert got.json() == {"deleted": 1}
    assert {r.persona for r in await site.memory.memories_about(ANA)} == {"warren"}
    assert (await api(site, "DELETE", "/api/users/43/memories")).json() == {"deleted": 2}
    assert await site.memory.memories_about(ANA) == []
    assert len(await site.memory.memories_about(CARA)) == 1
    assert (await api(site, "DELETE", "/api/users/43/memories", params={"persona": "Not A Slug"})).status_code == 404


async def test_notices_and_undo_for_the_notification_rail(site):
    notices = (await api(site, "GET", "/api/users/42/notices")).json()["notices"]
    assert [n["text"].split(":")[0] for n in notices] == ["Nolan noted", "Warren noted", "Warren noted"]
    newest = notices[0]
    undone = await api(site, "POST", f"/api/users/42/notices/{newest['id']}/undo")
    assert undone.json() == {"deleted": newest["memory_ids"]}
    assert (await api(site, "POST", f"/api/users/42/notices/{newest['id']}/undo")).status_code == 404
    (cara_notice,) = await site.memory.notices(CARA)
    assert (await api(site, "POST", f"/api/users/42/notices/{cara_notice.id}/undo")).status_code == 404
    assert await site.memory.notices(CARA) == [cara_notice]


async def test_controls_note_switch_and_mute(site):
    got = (await api(site, "GET", "/api/users/42/controls")).json()
    assert got["memory_on"] is True and got["memory_note"] == "" and got["note_limit"] == 400
    assert [p["persona"] for p in got["personas"]] == ["nolan", "warren"]
    for persona in got["personas"]:
        used, limit = await site.memory.meter(DAN, persona["persona"])
        assert persona["muted"] is False and persona["meter"] == {"used": used, "limit": limit} and used > 0
    saved = await api(site, "PUT", "/api/users/42/note", json={"note": "Call me Dan."})
    assert saved.json()["memory_note"] == "Call me Dan."
    off = await api(site, "PUT", "/api/users/42/memory-on", json={"on": False})
    assert off.json()["memory_on"] is False
    muted = await api(site, "PUT", "/api/users/42/muted/nolan", json={"muted": True})
    assert {p["persona"]: p["muted"] for p in muted.json()["personas"]} == {"nolan": True, "warren": False}
    controls = await site.memory.user_controls(DAN)
    assert (controls.memory_on, controls.memory_note, controls.muted) == (False, "Call me Dan.", {"nolan"})


@pytest.mark.parametrize("muted", [True, False])
async def test_muting_a_persona_the_person_never_met_is_refused_with_404_and_changes_nothing(site, muted):
    refused = await api(site, "PUT", "/api/users/42/muted/nobody", json={"muted": muted})
    assert refused.status_code == 404
    assert refused.json() == {"error": "persona 'nobody' keeps no lines about u:42 and has never been in a "
                                       "room with them; nothing was changed (their personas: nolan, warren)"}
    assert refused.headers["content-security-policy"].startswith("default-src 'self'")
    assert (await api(site, "PUT", "/api/users/42/muted/ada", json={"muted": True})).status_code == 404  # Kim's
    assert (await site.memory.user_controls(DAN)).muted == frozenset()
    shown = (await api(site, "GET", "/api/users/42/controls")).json()["personas"]
    assert [p["persona"] for p in shown] == ["nolan", "warren"]
    met = await api(site, "PUT", "/api/users/43/muted/nolan", json={"muted": True})  # Ana met Nolan
    assert met.status_code == 200 and (await site.memory.user_controls(ANA)).muted == {"nolan"}
    never_met = await api(site, "PUT", "/api/users/500/muted/warren", json={"muted": True})
    assert never_met.status_code == 404 and "their personas: none yet" in never_met.json()["error"]


async def test_a_401_char_note_is_refused_with_422_and_nothing_stored(site):
    await api(site, "PUT", "/api/users/42/note", json={"note": "Call me Dan."})
    refused = await api(site, "PUT", "/api/users/42/note", json={"note": "x" * 401})
    assert refused.status_code == 422 and "401 characters; the limit is 400" in refused.json()["error"]
    assert (await site.memory.user_controls(DAN)).memory_note == "Call me Dan."


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/users/42/note", {"note": 5}),
        ("/api/users/42/note", ["x"]),
        ("/api/users/42/memory-on", {"on": "false"}),
        ("/api/users/42/muted/warren", {}),
        ("/api/users/42/memory-on", None),
    ],
)
async def test_malformed_bodies_answer_400(site, path, body):
    kwargs = {"json": body} if body is not None else {"content": b"{not json"}
    got = await api(site, "PUT", path, **kwargs)
    assert got.status_code == 400 and "error" in got.json()
    controls = await site.memory.user_controls(DAN)
    assert (controls.memory_on, controls.memory_note, controls.muted) == (True, "", frozenset())


@pytest.mark.parametrize(
    ("path", "body", "named"),
    [
        ("/api/users/42/note", {"note": "Call me Dan.", "notes": "again"}, "body: unknown field 'notes'; the fields are note"),
        ("/api/users/42/memory-on", {"on": False, "forever": True}, "unknown field 'forever'"),
        ("/api/users/42/muted/warren", {"mute": True}, "body: unknown field 'mute'; the fields are muted"),
    ],
)
async def test_an_unknown_field_is_refused_by_name_and_nothing_changes(site, path, body, named):
    got = await api(site, "PUT", path, json=body)
    assert got.status_code == 400 and named in got.json()["error"]
    controls = await site.memory.user_controls(DAN)
    assert (controls.memory_on, controls.memory_note, controls.muted) == (True, "", frozenset())


async def test_export_is_the_facades_export(site):
    got = (await api(site, "GET", "/api/users/42/export")).json()
    assert got == await site.memory.export(DAN)


async def test_unknown_api_paths_and_ids_out_of_range_answer_json_404(site):
    for path in ("/api/nowhere", "/api/users/0/memories", "/api/users/99999999999999999999/memories",
                 "/api/users/42/memories/99999999999999999999"):
        got = await api(site, "GET", path)
        assert got.status_code == 404 and "error" in got.json(), path


DEEP = b"[" * 30_000 + b"]" * 30_000  # 60 KB: under the body cap, far deeper than any body nests


@pytest.mark.parametrize(("path", "field"), [
    ("/api/users/42/note", "note"), ("/api/users/42/memory-on", "on"), ("/api/users/42/muted/warren", "muted"),
])
async def test_a_body_nested_too_deep_is_a_400_that_says_so_and_changes_nothing(site, path, field):
    before = await site.memory.user_controls(DAN)
    deep = await api(site, "PUT", path, content=DEEP)
    assert deep.status_code == 400 and deep.headers["content-type"] == "application/json"
    assert deep.json() == {"error": "the body nests arrays and objects more than 32 deep; send the flat "
                                    "object this route takes (its fields are in /api/openapi.json or API.md)"}
    at_the_limit = await api(site, "PUT", path, content=b"[" * 32 + b"]" * 32)
    assert at_the_limit.status_code == 400 and at_the_limit.json() == {"error": "body: must be an object, got an array"}
    assert await site.memory.user_controls(DAN) == before


async def test_brackets_inside_a_string_are_text_not_nesting(site):
    note = "[{" * 40 + " is how I draw a staircase."
    got = await api(site, "PUT", "/api/users/42/note", json={"note": note})
    assert got.status_code == 200 and got.json()["memory_note"] == note
