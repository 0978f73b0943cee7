"""The human's pages over HTTP: what a signed-in person sees and can do, and what is refused."""

from __future__ import annotations

import json
import re

import attrs
import markupsafe
import pytest

import persona_memory as pm
from web_helpers import (  # noqa: F401
    ANA, CARA, DAN, EVE, EVIL_ROOM, KIM, KIM_CLUB, KIM_LINES, LENA, PAYLOADS, csrf_of, sign_in, site,
)

CSP = (
    "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'self'"
)
PAGES = ["/", "/note", "/switches", "/notices", "/export", "/export.json", "/clear", "/memories/1"]


async def rows_of(site, uid):
    return {r.id: r for r in await site.memory.memories_about(uid)}


async def test_the_memories_page_groups_lines_by_persona_with_dates_kinds_origins_arcs_and_meters(site):
    await sign_in(site.client, site.auth, DAN)
    page = (await site.client.get("/")).text
    mine = await rows_of(site, DAN)
    assert {r.persona for r in mine.values()} == {"nolan", "warren"}
    assert page.count('<section class="persona') == 2
    assert page.index('<h2 id="h-nolan">Nolan</h2>') < page.index('<h2 id="h-warren">Warren</h2>')
    for row in mine.values():
        section = page[page.index(f'id="persona-{row.persona}"'):]
        assert section.index(f'id="line-{row.id}"') < section.index("</section>")
        assert f'href="/memories/{row.id}"' in page
        assert f'action="/memories/{row.id}/delete"' in page
    closed = next(r for r in mine.values() if not r.is_open)
    block = page[page.index(f'id="line-{closed.id}"'):]
    assert page[: page.index(f'id="line-{closed.id}"')].rstrip().endswith('<li class="line closed"')
    assert f"{closed.valid_from} → {closed.valid_to}" in block.split("</li>")[0]
    assert "Replaced by: You sold the flat in Xuhui" in block.split("</li>")[0]
    assert "No longer true" in page
    used, limit = await site.memory.meter(DAN, "warren")
    assert f'<meter min="0" max="{limit}" value="{used}">' in page and used > 0
    assert "in a private chat with Warren" in page and "open loop" in page and "promise" in page
    for other in (CARA, ANA, EVE):
        for row in (await rows_of(site, other)).values():
            assert row.text not in page


async def test_lines_about_the_reader_read_in_the_second_person_and_no_raw_id_shows(site):
    await sign_in(site.client, site.auth, DAN)
    page = (await site.client.get("/")).text
    main = page[page.index("<main>"):]
    for shown in ("You sold the flat in Xuhui", "You sold your Tesla shares",
                  "the valuation made them nervous", "You are interviewing at Tencent",
                  "Warren said he would send you the 1988 shareholder letter",
                  "Nolan said he would send you his notes", "You are flying to Berlin"):
        assert markupsafe.escape(shown) in main, shown
    assert "u:42" not in page and "dm-dan" not in page
    assert "Signed in as <strong>Dan</strong>" in page


async def test_other_people_show_by_their_latest_name_and_rooms_by_their_title(site):
    await sign_in(site.client, site.auth, KIM)
    page = (await site.client.get("/", params={"q": "Lena"})).text
    assert "You went to a glazing workshop with Lena in the spring." in page
    assert "You and Lena share a studio on Thursdays." in page
    assert f"in “{KIM_CLUB}”" in page and "club-7f3c" not in page and "u:18" not in page
    await site.memory.send(pm.RoomOpened(room_id="club-7f3c", personas=("nolan", "ada"),
                                         humans=frozenset({KIM, LENA}), names={LENA: "Lena Wu"}))
    page = (await site.client.get("/", params={"q": "studio"})).text
    assert "You and Lena Wu share a studio" in page  # the name given last
    assert f"in “{KIM_CLUB}”" in page  # a reopen without a title keeps the title
    await site.memory.send(pm.RoomOpened(room_id="club-7f3c", personas=("nolan", "ada"),
                                         humans=frozenset({KIM, LENA}), title="Clay on Saturdays"))
    assert "in “Clay on Saturdays”" in (await site.client.get("/", params={"q": "studio"})).text
    unnamed = await site.memory.memories_about(KIM)
    await site.memory._store.memories.insert([attrs.evolve(
        unnamed[0], id=None, text="u:77 lent u:55 a bicycle pump.", room_id="room-1b44-unknown")])
    page = (await site.client.get("/", params={"q": "pump"})).text
    assert "You lent u:55 a bicycle pump." in page and "in a chat" in page and "room-1b44" not in page


async def test_a_title_longer_than_200_characters_is_refused_like_a_topic():
    with pytest.raises(pm.InvalidInput, match="title must be None or a non-empty string of at most 200"):
        pm.RoomOpened(room_id="r", personas=("warren",), humans={KIM}, title="t" * 201)
    with pytest.raises(pm.InvalidInput, match="title"):
        pm.RoomOpened(room_id="r", personas=("warren",), humans={KIM}, title="   ")
    assert pm.RoomOpened(room_id="r", personas=("warren",), humans={KIM}, title="t" * 200).title == "t" * 200


async def test_119_lines_come_in_pages_of_50_with_links_that_work_without_script(site):
    await sign_in(site.client, site.auth, KIM)
    mine = await rows_of(site, KIM)
    assert len(mine) == KIM_LINES
    seen: list[int] = []
    href = "/"
    for number in (1, 2, 3):
        page = (await site.client.get(href)).text
        ids = [int(i) for i in re.findall(r'<li class="line(?: closed)?" id="line-(\d+)"', page)]
        assert len(ids) == (50 if number < 3 else 19)
        assert f"page {number} of 3" in page and f'<span aria-current="page">{number}</span>' in page
        seen += ids
        if number < 3:
            href = re.search(r'<a href="([^"]+)" rel="next">', page).group(1).replace("&amp;", "&")
            assert href == f"/?page={number + 1}"
    assert sorted(seen) == sorted(mine) and len(set(seen)) == KIM_LINES
    assert 'rel="next"' not in page and 'rel="prev"' in page


async def test_search_and_filters_are_a_get_form_and_keep_the_page_scoped(site):
    await sign_in(site.client, site.auth, KIM)
    form = (await site.client.get("/")).text
    assert '<form method="get" action="/" class="find"' in form
    for name in ("q", "persona", "kind", "state"):
        assert f'name="{name}"' in form
    page = (await site.client.get("/", params={"q": "cat", "persona": "ada", "kind": "event", "state": "current"})).text
    texts = re.findall(r'<p class="text">([^<]*)</p>', page)
    assert texts == ["You adopted a second cat from the shelter."]
    assert '<option value="ada" selected>' in page and 'value="cat"' in page
    assert "1 of your 119 lines matches" in page
    closed = (await site.client.get("/", params={"state": "closed"})).text
    assert closed.count('<li class="line closed"') == 9 and '<li class="line"' not in closed
    nothing = (await site.client.get("/", params={"q": "Tencent"})).text  # Dan's line, not Kim's
    assert "No line matches “Tencent”" in nothing and "<li class=\"line" not in nothing
    bad = await site.client.get("/", params={"kind": "gossip"})
    assert bad.status_code == 400 and "There is no kind &#39;gossip&#39;" in bad.text
    assert (await site.client.get("/", params={"page": "9"})).status_code == 200
    assert "There is no page 9" in (await site.client.get("/", params={"page": "9"})).text


async def test_each_line_says_whether_it_rides_in_the_private_block_now(site):
    await sign_in(site.client, site.auth, KIM)
    used, limit, loaded = await site.memory.private_block(KIM, "ada")
    assert (used, limit) == await site.memory.meter(KIM, "ada") and loaded
    page = (await site.client.get("/", params={"persona": "ada"})).text
    ada = [r for r in (await rows_of(site, KIM)).values() if r.persona == "ada"]
    riding = [r for r in ada if r.id in loaded]
    assert 0 < len(riding) < sum(1 for r in ada if r.is_open)
    for row in ada:
        item = page[page.index(f'id="line-{row.id}"'):].split("</li>")[0]
        if not row.is_open:
            assert "block now" not in item
        elif row.id in loaded:
            assert '<span class="rides">in the block now</span>' in item
        else:
            assert '<span class="waits">not in the block now</span>' in item
    open_count = sum(1 for r in ada if r.is_open)
    assert f'<strong class="riding">{len(riding)} of {open_count}</strong> current lines about you ride' in page
    await site.memory.set_muted(KIM, "ada", True)
    muted = (await site.client.get("/", params={"persona": "ada"})).text
    assert '<span class="rides">' not in muted and "forgets you" in muted


async def test_the_origin_link_shows_the_transcript_lines_the_line_cites(site):
    await sign_in(site.client, site.auth, DAN)
    row = next(r for r in (await rows_of(site, DAN)).values() if r.kind == "open_loop" and r.persona == "warren")
    page = (await site.client.get(f"/memories/{row.id}")).text
    assert "Where this came from" in page and "You are interviewing at Tencent on Thursday" in page
    assert "I&#39;m interviewing at Tencent on Thursday. Ask me how it went!" in page
    assert '<span class="speaker">You</span>' in page
    assert "in a private chat with Warren:" in page and "dm-dan" not in page


async def test_deleting_a_line_removes_it_and_says_so(site):
    csrf = await sign_in(site.client, site.auth, DAN)
    victim = next(iter((await rows_of(site, DAN)).values()))
    done = await site.client.post(f"/memories/{victim.id}/delete", data={"csrf": csrf})
    assert done.status_code == 303 and done.headers["location"] == "/?done=deleted"
    assert victim.id not in await rows_of(site, DAN)
    page = (await site.client.get(done.headers["location"])).text
    assert "The line is deleted" in page and victim.text not in page
    again = await site.client.post(f"/memories/{victim.id}/delete", data={"csrf": csrf})
    assert again.status_code == 404


async def test_another_users_ids_answer_404_and_change_nothing(site):
    csrf = await sign_in(site.client, site.auth, DAN)
    caras = await rows_of(site, CARA)
    cara_notices = await site.memory.notices(CARA)
    (cara_row,) = caras.values()
    assert (await site.client.get(f"/memories/{cara_row.id}")).status_code == 404
    gone = await site.client.post(f"/memories/{cara_row.id}/delete", data={"csrf": csrf})
    assert gone.status_code == 404 and "no such line" in gone.text
    undo = await site.client.post(f"/notices/{cara_notices[0].id}/undo", data={"csrf": csrf})
    assert undo.status_code == 404
    for path in ("/memories/0", "/memories/99999999999999999999999", "/memories/999999"):
        assert (await site.client.get(path)).status_code == 404
    assert await rows_of(site, CARA) == caras
    assert await site.memory.notices(CARA) == cara_notices


async def test_clear_for_one_persona_asks_first_then_deletes_only_that_personas_lines(site):
    csrf = await sign_in(site.client, site.auth, ANA)
    confirm = await site.client.get("/clear", params={"persona": "warren"})
    assert "Clear everything Warren remembers about you?" in confirm.text
    assert "This deletes the 2 lines Warren keeps about you" in confirm.text
    assert {r.persona for r in (await rows_of(site, ANA)).values()} == {"warren", "nolan"}
    done = await site.client.post("/clear", data={"csrf": csrf, "persona": "warren"})
    assert done.status_code == 303 and done.headers["location"] == "/?done=cleared"
    assert {r.persona for r in (await rows_of(site, ANA)).values()} == {"nolan"}


async def test_clear_everything_asks_first_then_deletes_every_line_about_the_person_only(site):
    csrf = await sign_in(site.client, site.auth, ANA)
    caras = await rows_of(site, CARA)
    confirm = await site.client.get("/clear")
    assert "Clear everything every persona remembers about you?" in confirm.text
    assert "This deletes all 3 lines personas keep about you" in confirm.text
    await site.client.post("/clear", data={"csrf": csrf, "persona": ""})
    assert await rows_of(site, ANA) == {}
    assert await rows_of(site, CARA) == caras
    page = (await site.client.get("/?done=cleared")).text
    assert "Cleared." in page and "keeps no lines about you" in page
    assert "There is nothing to clear" in (await site.client.get("/clear")).text


async def test_the_note_is_saved_and_a_401_char_note_is_refused_with_nothing_stored(site):
    csrf = await sign_in(site.client, site.auth, DAN)
    saved = await site.client.post("/note", data={"csrf": csrf, "note": "Call me Dan. I'm vegetarian."})
    assert saved.status_code == 303
    page = (await site.client.get(saved.headers["location"])).text
    assert "Call me Dan. I&#39;m vegetarian.</textarea>" in page and "28 / 400" in page
    refused = await site.client.post("/note", data={"csrf": csrf, "note": "x" * 401})
    assert refused.status_code == 422
    assert "401 characters; the limit is 400" in refused.text and "Nothing was saved" in refused.text
    assert "x" * 401 + "</textarea>" in refused.text and 'class="counter over"' in refused.text
    assert (await site.memory.user_controls(DAN)).memory_note == "Call me Dan. I'm vegetarian."


async def test_a_400_char_note_with_browser_line_breaks_fits_the_limit(site):
    csrf = await sign_in(site.client, site.auth, DAN)
    typed = ("y" * 99 + "\r\n") * 4
    assert len(typed) == 404
    assert (await site.client.post("/note", data={"csrf": csrf, "note": typed})).status_code == 303
    assert (await site.memory.user_controls(DAN)).memory_note == ("y" * 99 + "\n") * 4


async def test_the_switches_turn_memory_off_and_mute_one_persona_and_say_what_each_does(site):
    csrf = await sign_in(site.client, site.auth, DAN)
    page = (await site.client.get("/switches")).text
    assert "Personas remember me" in page and "Now: <strong>On</strong>" in page
    assert "stops reading and writing lines about you" in page
    assert "The lines it already keeps stay until you delete them" in page
    assert "Incognito is chosen when a room is created" in page
    off = await site.client.post("/switches/memory", data={"csrf": csrf, "on": "0"})
    assert off.headers["location"] == "/switches?done=memory-off"
    mute = await site.client.post("/switches/mute", data={"csrf": csrf, "persona": "warren", "muted": "1"})
    assert mute.headers["location"] == "/switches?done=muted"
    controls = await site.memory.user_controls(DAN)
    assert controls.memory_on is False and controls.muted == {"warren"}
    page = (await site.client.get("/switches")).text
    assert "Now: <strong>Off</strong>" in page and "Remember me again" in page
    assert "Memory is off" in (await site.client.get("/")).text
    assert (await site.client.post("/switches/memory", data={"csrf": csrf, "on": "maybe"})).status_code == 400
    await site.client.post("/switches/memory", data={"csrf": csrf, "on": "1"})
    await site.client.post("/switches/mute", data={"csrf": csrf, "persona": "warren", "muted": "0"})
    controls = await site.memory.user_controls(DAN)
    assert controls.memory_on is True and controls.muted == frozenset()


async def test_forgetting_a_persona_the_person_never_met_is_refused_with_a_message(site):
    csrf = await sign_in(site.client, site.auth, DAN)
    for persona in ("nobody", "ada"):  # a typo; a persona only Kim has met
        refused = await site.client.post("/switches/mute", data={"csrf": csrf, "persona": persona, "muted": "1"})
        assert refused.status_code == 404
        assert f"There is no persona “{persona}” among yours, so nothing was switched" in refused.text
        assert 'role="alert"' in refused.text and "Forget me, one persona at a time" in refused.text
    assert (await site.memory.user_controls(DAN)).muted == frozenset()
    page = (await site.client.get("/switches")).text
    assert "Nobody" not in page and '<span class="name">Ada</span>' not in page
    assert "Nobody" not in (await site.client.get("/")).text


async def test_undoing_a_notice_deletes_exactly_the_lines_it_announced(site):
    csrf = await sign_in(site.client, site.auth, DAN)
    notices = await site.memory.notices(DAN)
    page = (await site.client.get("/notices")).text
    for notice in notices:
        assert str(markupsafe.escape(notice.text)) in page  # as the template escapes it
    newest = notices[0]
    before = await rows_of(site, DAN)
    done = await site.client.post(f"/notices/{newest.id}/undo", data={"csrf": csrf})
    assert done.headers["location"] == "/notices?done=undone"
    after = await rows_of(site, DAN)
    assert set(before) - set(after) == set(newest.memory_ids)
    assert newest.text not in (await site.client.get("/notices")).text


async def test_export_downloads_everything_kept_about_the_person_as_json(site):
    csrf = await sign_in(site.client, site.auth, DAN)
    await site.client.post("/note", data={"csrf": csrf, "note": "Call me Dan."})
    await site.client.post("/switches/mute", data={"csrf": csrf, "persona": "nolan", "muted": "1"})
    assert 'href="/export.json" download' in (await site.client.get("/export")).text
    got = await site.client.get("/export.json")
    assert got.headers["content-disposition"] == 'attachment; filename="persona-memory-u42.json"'
    assert got.headers["content-type"] == "application/json"
    data = json.loads(got.text)
    mine = await rows_of(site, DAN)
    assert data["user"] == "u:42" and data["memory_note"] == "Call me Dan."
    assert data["personas_remember_me"] is True and data["muted_personas"] == ["nolan"]
    assert {m["id"] for m in data["memories"]} == set(mine)
    closed = next(m for m in data["memories"] if not m["open"])
    assert closed["valid_to"] and closed["replaced_by"] in mine and closed["room"] == "dm-dan"
    assert all(m["noted"] and m["evidence"] for m in data["memories"])
    assert {n["id"] for n in data["notices"]} == {n.id for n in await site.memory.notices(DAN)}
    assert "u:17" not in got.text and "index funds" not in got.text


async def test_memory_text_notes_notices_room_ids_and_transcripts_are_escaped_never_markup(site):
    await sign_in(site.client, site.auth, EVE)
    eve_rows = await rows_of(site, EVE)
    for path in ["/", "/note", "/notices", f"/memories/{min(eve_rows)}"]:
        page = (await site.client.get(path)).text
        assert "&lt;script&gt;window.pwned" in page or "&lt;img src=x" in page
        assert not re.search(r"<script(?![^>]*src=\"/static/note\.js\")", page)
        assert "<img" not in page and 'href="javascript:' not in page.lower()
        assert "<a href=\"https://example.com" not in page
    assert "in a private chat with Warren" in (await site.client.get("/")).text
    assert EVIL_ROOM not in (await site.client.get("/")).text
    assert str(markupsafe.escape(PAYLOADS[2])) in (await site.client.get("/")).text


async def test_every_response_carries_the_csp_and_personal_pages_are_not_cached(site):
    await sign_in(site.client, site.auth, DAN)
    for path in PAGES + ["/login", "/no-such-page", "/static/style.css", "/api/users/42/memories"]:
        got = await site.client.get(path)
        assert got.headers["content-security-policy"] == CSP, path
        assert got.headers["x-content-type-options"] == "nosniff"
        assert got.headers["referrer-policy"] == "same-origin"
        if not path.startswith("/static/"):
            assert got.headers["cache-control"] == "no-store", path


async def test_no_page_has_inline_script_or_inline_style(site):
    await sign_in(site.client, site.auth, DAN)
    for path in PAGES[:5] + ["/clear", "/memories/1"]:
        page = (await site.client.get(path)).text
        assert not re.search(r"<script(?![^>]*\bsrc=)", page), path
        assert " style=" not in page and "<style" not in page and " on" + "click=" not in page


async def test_signed_out_every_page_asks_for_a_login_link_and_every_post_is_refused(site):
    before = await rows_of(site, DAN)
    for path in PAGES:
        got = await site.client.get(path)
        assert got.status_code == 401 and "Open the login link from the chat" in got.text, path
    for path in ["/memories/1/delete", "/clear", "/note", "/switches/memory", "/notices/1/undo", "/logout"]:
        assert (await site.client.post(path, data={"csrf": "x", "on": "0"})).status_code == 401, path
    assert await rows_of(site, DAN) == before
    assert "You are signed out" in (await site.client.get("/login")).text


async def test_a_post_without_a_csrf_token_or_with_another_sessions_token_is_refused(site):
    csrf = await sign_in(site.client, site.auth, DAN)
    async with site.other_client() as other:
        other_csrf = await sign_in(other, site.auth, DAN)
        assert other_csrf != csrf
    row_id = min(await rows_of(site, DAN))
    for data in ({}, {"csrf": ""}, {"csrf": other_csrf}, {"csrf": csrf[:-1] + ("1" if csrf.endswith("0") else "0")}):
        refused = await site.client.post(f"/memories/{row_id}/delete", data=data)
        assert refused.status_code == 403 and "Reload the page" in refused.text
        assert (await site.client.post("/note", data={**data, "note": "hijacked"})).status_code == 403
        assert (await site.client.post("/clear", data=data)).status_code == 403
    assert row_id in await rows_of(site, DAN)
    assert (await site.memory.user_controls(DAN)).memory_note == ""


async def test_a_post_from_another_site_is_refused_even_with_the_token(site):
    csrf = await sign_in(site.client, site.auth, DAN)
    row_id = min(await rows_of(site, DAN))
    for headers in ({"Origin": "https://evil.example"}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"},
                    {"Sec-Fetch-Site": "same-site", "Origin": "http://testserver"}):
        refused = await site.client.post(f"/memories/{row_id}/delete", data={"csrf": csrf}, headers=headers)
        assert refused.status_code == 403 and "another site" in refused.text
    assert row_id in await rows_of(site, DAN)
    same = await site.client.post(f"/memories/{row_id}/delete", data={"csrf": csrf},
                                  headers={"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"})
    assert same.status_code == 303


async def test_signing_out_ends_the_session_even_for_a_copied_cookie(site):
    csrf = await sign_in(site.client, site.auth, DAN)
    cookie = site.client.cookies.get("pm_session")
    out = await site.client.post("/logout", data={"csrf": csrf})
    assert out.status_code == 303 and out.headers["location"] == "/login"
    assert 'pm_session=""' in out.headers["set-cookie"] and "Max-Age=0" in out.headers["set-cookie"]
    async with site.other_client() as copied:
        copied.cookies.set("pm_session", cookie)
        assert (await copied.get("/")).status_code == 401


async def test_unknown_pages_answer_a_404_page_and_big_bodies_413(site):
    csrf = await sign_in(site.client, site.auth, DAN)
    missing = await site.client.get("/nowhere")
    assert missing.status_code == 404 and "<h1>Not found</h1>" in missing.text
    assert (await site.client.get("/note", params={"done": "<b>x</b>"})).text.count("<b>x</b>") == 0
    big = await site.client.post("/note", data={"csrf": csrf, "note": "z" * 70_000})
    assert big.status_code == 413
    assert (await site.memory.user_controls(DAN)).memory_note == ""


@pytest.mark.parametrize("path", ["/note", "/switches", "/notices", "/export"])
async def test_the_nav_marks_the_current_page(site, path):
    await sign_in(site.client, site.auth, DAN)
    page = (await site.client.get(path)).text
    assert f'<a href="{path}" aria-current="page">' in page
    assert page.count('aria-current="page"') == 1
    assert csrf_of(page)
