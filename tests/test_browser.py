"""The human's pages in a real browser: Playwright driving Debian's Chromium, headless.

One server (``serve_web`` beside ``open_memory``, on trio in a background thread, port 0) and one
browser for the module; each test gets a fresh browser context (its own cookies). The seeded
story is ``web_helpers.seed``; each test works on its own person so the tests do not depend on
their order: Dan (42) for reading, the note, the switches, export and the attacks; Cara (17)
for undo; Ana (43) for clearing; Eve (66) for the script payloads, and as the other person
whose ids Dan's session tries; Kim (77) and her 119 lines for search, filters, pages, the
narrow screen and the refused mute.

Each page is saved to ``docs/screenshots/`` as it is visited (``-390`` in the name: at 390 px).
"""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import trio
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

import persona_memory as pm
from persona_memory.embedding import HashingEmbedder
from persona_memory.web import Auth, serve_web
from rowfactory import NOW as START
from web_helpers import ANA, CARA, DAN, EVE, KIM, KIM_CLUB, KIM_LINES, SECRETS, SITE_SETTINGS, seed

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
SHOTS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
DESKTOP = {"width": 980, "height": 640}
PHONE = {"width": 390, "height": 844}


class LiveServer:
    """``open_memory`` + ``serve_web`` on trio in a thread; calls into the memory from tests."""

    def __init__(self, settings: pm.Settings) -> None:
        self.settings = settings
        self.clock = pm.ManualClock(START)
        self.ready = threading.Event()
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.port = 0
        self._thread = threading.Thread(target=self._run, name="live-server", daemon=True)

    def __enter__(self) -> LiveServer:
        self._thread.start()
        assert self.ready.wait(60), "the server did not start"
        if self.error is not None:
            raise self.error
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self._thread.join(30)
        assert not self._thread.is_alive(), "the server did not stop"
        if self.error is not None:
            raise self.error

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:  # reported to the test thread
            self.error = exc
            self.ready.set()

    async def _main(self) -> None:
        async with pm.open_memory(self.settings, clock=self.clock, embedder=HashingEmbedder(64)) as memory:
            await seed(memory, self.clock)
            self.memory = memory
            self._token = trio.lowlevel.current_trio_token()
            async with trio.open_nursery() as nursery:
                serve = partial(serve_web, memory, self.settings, secrets=SECRETS, clock=self.clock)
                self.port = await nursery.start(serve)
                self.ready.set()
                await trio.to_thread.run_sync(self.stop.wait, abandon_on_cancel=True)
                nursery.cancel_scope.cancel()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``await fn(*args)`` on the server's trio loop (``memory.memories_about`` …)."""
        return trio.from_thread.run(fn, *args, trio_token=self._token)

    def rows(self, user_id: int) -> dict[int, pm.MemoryRow]:
        return {r.id: r for r in self.call(self.memory.memories_about, user_id)}

    def link(self, user_id: int, *, minted_ago: timedelta = timedelta(0)) -> str:
        """A login link as the runtime would hand it out (``minted_ago`` in the past)."""
        clock = pm.ManualClock(self.clock.now() - minted_ago)
        return f"{self.url}/login?token={Auth(SECRETS, self.settings.web, clock).login_token(user_id)}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    tmp = tmp_path_factory.mktemp("browser")
    settings = pm.load_settings(None, {
        "storage.path": str(tmp / "m.db"), "embedder.kind": "hashing", "embedder.dim": 64,
        **SITE_SETTINGS, "web.port": 0,
    })
    with LiveServer(settings) as live:
        yield live


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert Path(CHROMIUM).exists(), "the browser tests need Debian's Chromium: apt-get install chromium"
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


class Watch:
    """What must never happen on our pages: a dialog, a script error, a CSP violation (a refused
    inline script would be one). Error statuses the tests provoke are not problems."""

    def __init__(self, page: Page) -> None:
        self.dialogs: list[str] = []
        self.problems: list[str] = []
        page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        page.on("pageerror", lambda e: self.problems.append(str(e)))
        page.on("console", self._console)

    def _console(self, message: Any) -> None:
        if message.type == "error" and not message.text.startswith("Failed to load resource"):
            self.problems.append(message.text)


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport=DESKTOP, accept_downloads=True)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext) -> Iterator[Page]:
    opened = context.new_page()
    opened.watch = Watch(opened)  # type: ignore[attr-defined]
    yield opened
    assert opened.watch.dialogs == []  # type: ignore[attr-defined]
    assert opened.watch.problems == []  # type: ignore[attr-defined]


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def sign_in(page: Page, server: LiveServer, user_id: int, *, screenshot: bool = False) -> None:
    page.goto(server.link(user_id))
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    if screenshot:
        shot(page, "login")
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("heading", name="What personas remember about you")).to_be_visible()


def test_a_person_signs_in_by_link_and_sees_every_line_with_its_origin(server, context, page):
    sign_in(page, server, DAN, screenshot=True)
    (cookie,) = context.cookies()
    assert (cookie["name"], cookie["httpOnly"], cookie["sameSite"], cookie["secure"]) == (
        "pm_session", True, "Lax", False)
    rows = server.rows(DAN)
    for row in rows.values():
        expect(page.locator(f"#line-{row.id} .text")).not_to_contain_text("u:42")
    sold = next(r for r in rows.values() if "sold the flat" in r.text)
    expect(page.locator(f"#line-{sold.id} .text")).to_have_text(
        "You sold the flat in Xuhui in the week of 2026-09-21, the commute was killing you.")
    expect(page.locator(f"#line-{sold.id} .room")).to_have_text("in a private chat with Warren")
    expect(page.locator(".who")).to_have_text("Signed in as Dan")
    expect(page.locator("main")).not_to_contain_text("dm-dan")
    closed = next(r for r in rows.values() if not r.is_open)
    line = page.locator(f"#line-{closed.id}")
    expect(line).to_have_class("line closed")
    expect(line.locator(".arc")).to_have_text(f"{closed.valid_from} → {closed.valid_to}")
    expect(line.locator(".replaced")).to_have_text("Replaced by: " + page.locator(f"#line-{sold.id} .text").inner_text())
    assert line.locator(".text").evaluate("e => getComputedStyle(e).textDecorationLine") == "line-through"
    used, limit = server.call(server.memory.meter, DAN, "warren")
    expect(page.locator("#persona-warren meter")).to_have_attribute("value", str(used))
    expect(page.locator("#persona-warren .meter")).to_contain_text(f"{used} / {limit:,}")
    shot(page, "memories")

    promise = next(r for r in rows.values() if r.kind == "promise" and r.persona == "warren")
    expect(page.locator(f"#line-{promise.id} .text")).to_contain_text("Warren said he would send you")
    page.locator(f"#line-{promise.id}").get_by_role("link", name="where from?").click()
    expect(page.get_by_role("heading", name="Where this came from")).to_be_visible()
    expect(page.locator(".transcript")).to_contain_text("I'll send you the 1988 shareholder letter")
    shot(page, "evidence")


def test_deleting_a_line_takes_it_off_the_page_and_out_of_the_store(server, page):
    sign_in(page, server, DAN)
    victim = next(r for r in server.rows(DAN).values() if "loves reading" in r.text)
    page.get_by_role("button", name=f"Delete line {victim.id}").click()
    expect(page.get_by_role("status")).to_contain_text("The line is deleted")
    expect(page.locator(f"#line-{victim.id}")).to_have_count(0)
    assert victim.id not in server.rows(DAN)


def test_undoing_a_notice_deletes_the_lines_it_announced(server, page):
    sign_in(page, server, CARA)
    (notice,) = server.call(server.memory.notices, CARA)
    page.get_by_role("link", name="Notices").click()
    expect(page.locator(f"#notice-{notice.id} .text")).to_have_text(notice.text)
    page.get_by_role("button", name=f"Undo notice {notice.id}").click()
    expect(page.get_by_role("status")).to_contain_text("Undone")
    expect(page.get_by_text("No notices.")).to_be_visible()
    assert not set(notice.memory_ids) & set(server.rows(CARA))


def test_the_notices_page(server, page):
    sign_in(page, server, DAN)
    page.get_by_role("link", name="Notices").click()
    for notice in server.call(server.memory.notices, DAN):
        expect(page.locator(f"#notice-{notice.id} .text")).to_have_text(notice.text)
    shot(page, "notices")


def test_the_note_counts_live_saves_and_a_401_char_note_is_refused(server, page):
    sign_in(page, server, DAN)
    page.get_by_role("link", name="Your note").click()
    note = page.get_by_label("Your note")
    note.fill("Call me Dan. I'm vegetarian, and I'd rather talk about books than markets.")
    expect(page.locator("#note-count")).to_have_text("74 / 400")
    page.get_by_role("button", name="Save note").click()
    expect(page.get_by_role("status")).to_contain_text("Your note is saved")
    expect(note).to_have_value("Call me Dan. I'm vegetarian, and I'd rather talk about books than markets.")
    shot(page, "note")

    note.fill("x" * 401)
    expect(page.locator("#note-count")).to_have_text("401 / 400")
    expect(page.locator("#note-count")).to_have_class("counter over")
    page.get_by_role("button", name="Save note").click()
    expect(page.get_by_role("alert")).to_contain_text("401 characters; the limit is 400")
    expect(page.get_by_role("alert")).to_contain_text("Nothing was saved")
    expect(note).to_have_value("x" * 401)
    shot(page, "note-refused")
    stored = server.call(server.memory.user_controls, DAN).memory_note
    assert stored == "Call me Dan. I'm vegetarian, and I'd rather talk about books than markets."


def test_the_switches_turn_memory_off_and_mute_a_persona(server, page):
    sign_in(page, server, DAN)
    page.get_by_role("link", name="Switches").click()
    expect(page.locator("#memory-switch .state")).to_contain_text("On")
    page.get_by_role("button", name="Turn memory off").click()
    expect(page.get_by_role("status")).to_contain_text("Memory is off")
    page.get_by_role("button", name="Warren: forget me").click()
    expect(page.get_by_role("status")).to_contain_text("forgets you")
    expect(page.locator("#mute-switches")).to_contain_text("forgets you")
    expect(page.locator("#incognito")).to_contain_text("Incognito is chosen when a room is created")
    shot(page, "switches")
    controls = server.call(server.memory.user_controls, DAN)
    assert controls.memory_on is False and controls.muted == {"warren"}
    page.get_by_role("button", name="Turn memory on").click()
    page.get_by_role("button", name="Let Warren remember me again").click()
    expect(page.locator("#mute-switches")).to_contain_text("remembers you")
    controls = server.call(server.memory.user_controls, DAN)
    assert controls.memory_on is True and controls.muted == frozenset()


def test_export_downloads_everything_as_json(server, page):
    sign_in(page, server, DAN)
    page.get_by_role("link", name="Export").click()
    shot(page, "export")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download everything (JSON)").click()
    assert download.value.suggested_filename == "persona-memory-u42.json"
    data = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
    assert data["user"] == "u:42"
    assert {m["id"] for m in data["memories"]} == set(server.rows(DAN))
    assert any(not m["open"] and m["valid_to"] for m in data["memories"])


def test_clear_all_for_one_persona_then_for_everyone_each_after_a_confirmation(server, page):
    sign_in(page, server, ANA)
    page.get_by_role("link", name="Clear everything Nolan remembers about you…").click()
    expect(page.get_by_role("heading")).to_have_text("Clear everything Nolan remembers about you?")
    shot(page, "clear")
    page.get_by_role("button", name="Yes, delete 1 line").click()
    expect(page.get_by_role("status")).to_contain_text("Cleared")
    assert {r.persona for r in server.rows(ANA).values()} == {"warren"}
    page.get_by_role("link", name="Clear everything every persona remembers about you…").click()
    page.get_by_role("link", name="No, keep them").click()
    assert len(server.rows(ANA)) == 2
    page.get_by_role("link", name="Clear everything every persona remembers about you…").click()
    page.get_by_role("button", name="Yes, delete 2 lines").click()
    expect(page.get_by_text("Warren keeps no lines about you.")).to_be_visible()
    assert server.rows(ANA) == {}


def test_script_image_and_javascript_link_payloads_in_memory_text_do_not_run(server, page):
    sign_in(page, server, EVE)
    eve = server.rows(EVE)
    for path in ["/", "/notices", "/note", f"/memories/{min(eve)}"]:
        page.goto(server.url + path)
        assert page.evaluate("typeof window.pwned") == "undefined", path
        assert page.title() != "pwned"
        assert page.locator("main img, main script, main iframe, main object").count() == 0
        assert page.locator("a[href^='javascript:' i]").count() == 0
        assert page.locator("main a[href*='example.com']").count() == 0
        if path == "/":
            for row in eve.values():
                expect(page.locator(f"#line-{row.id} .text")).to_have_text(row.text)
            shot(page, "attack-payloads")
            page.locator(".text", has_text="javascript:").first.click()
            assert page.url == server.url + "/"
    expect(page.locator(".transcript")).to_contain_text("<script>window.pwned = 1")
    assert page.evaluate("typeof window.pwned") == "undefined"


def test_another_users_ids_give_404_and_change_nothing(server, page):
    sign_in(page, server, DAN)
    eves = server.rows(EVE)
    theirs = eves[min(eves)]
    answer = page.goto(f"{server.url}/memories/{theirs.id}")
    assert answer is not None and answer.status == 404
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    page.goto(server.url + "/")
    form = page.locator("form.delete").first
    form.evaluate(f"f => f.action = '/memories/{theirs.id}/delete'")
    with page.expect_response(f"**/memories/{theirs.id}/delete") as answer:
        form.get_by_role("button").click()
    assert answer.value.status == 404
    expect(page.locator("main")).to_contain_text("There is no such line among yours")
    assert server.rows(EVE) == eves


def test_a_post_without_the_csrf_token_or_with_another_sessions_token_is_refused(server, browser, page):
    sign_in(page, server, DAN)
    before = server.rows(DAN)
    target = min(before)
    form = page.locator(f"#line-{target} form.delete")
    form.locator("input[name=csrf]").evaluate("i => i.remove()")
    with page.expect_response(f"**/memories/{target}/delete") as answer:
        form.get_by_role("button").click()
    assert answer.value.status == 403
    expect(page.locator("main")).to_contain_text("Reload the page and try again")

    other = browser.new_context()
    try:
        other_page = other.new_page()
        sign_in(other_page, server, DAN)
        their_token = other_page.locator("input[name=csrf]").first.input_value()
    finally:
        other.close()
    page.goto(server.url + "/")
    mine = page.locator("input[name=csrf]").first.input_value()
    assert their_token != mine
    form = page.locator(f"#line-{target} form.delete")
    form.locator("input[name=csrf]").evaluate("(i, t) => i.value = t", their_token)
    with page.expect_response(f"**/memories/{target}/delete") as answer:
        form.get_by_role("button").click()
    assert answer.value.status == 403
    assert server.rows(DAN) == before


def test_a_form_on_another_site_cannot_change_anything(server, context, page):
    sign_in(page, server, DAN)
    before = server.rows(DAN)
    target = min(before)
    token = page.locator("input[name=csrf]").first.input_value()
    evil = (
        f'<form id="f" method="post" action="{server.url}/memories/{target}/delete">'
        f'<input name="csrf" value="{token}"></form>'
        "<script>document.getElementById('f').submit()</script>"
    )
    context.route("http://evil.test/**", lambda route: route.fulfill(status=200, content_type="text/html", body=evil))
    with page.expect_response(f"**/memories/{target}/delete") as answer:
        page.goto("http://evil.test/")
    assert answer.value.status in (401, 403)
    assert server.rows(DAN) == before


def test_a_tampered_expired_or_used_login_link_is_refused(server, context, page):
    good = server.link(DAN)
    head, _, signature = good.rpartition(".")
    tampered = f"{head}.{'A' if signature[0] != 'A' else 'B'}{signature[1:]}"
    answer = page.goto(tampered)
    assert answer is not None and answer.status == 403
    expect(page.locator("main")).to_contain_text("This login link is not valid")
    shot(page, "link-refused")

    answer = page.goto(server.link(DAN, minted_ago=timedelta(minutes=16)))
    assert answer is not None and answer.status == 403
    expect(page.locator("main")).to_contain_text("This login link has expired")
    assert context.cookies() == []

    page.goto(good)
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("heading", name="What personas remember about you")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="You are signed out")).to_be_visible()
    answer = page.goto(good)
    assert answer is not None and answer.status == 403
    expect(page.locator("main")).to_contain_text("was used already")
    answer = page.goto(server.url + "/")
    assert answer is not None and answer.status == 401


def page_height(page: Page) -> int:
    return page.evaluate("document.documentElement.scrollHeight")


def test_119_lines_come_in_pages_of_50_at_desktop_and_390_px_wide(server, browser, page):
    sign_in(page, server, KIM)
    expect(page.locator("#count")).to_contain_text("119 lines · showing 1–50, page 1 of 3")
    expect(page.locator("li.line")).to_have_count(50)
    desktop = page_height(page)
    shot(page, "memories-paged")
    page.get_by_role("navigation", name="Pages").get_by_role("link", name="Next →").click()
    expect(page.locator("#count")).to_contain_text("showing 51–100, page 2 of 3")
    page.get_by_role("navigation", name="Pages").get_by_role("link", name="3").click()
    expect(page.locator("li.line")).to_have_count(KIM_LINES - 100)
    expect(page.get_by_role("navigation", name="Pages").locator("[aria-current=page]")).to_have_text("3")

    phone = browser.new_context(viewport=PHONE, device_scale_factor=1, is_mobile=True, has_touch=True)
    try:
        small = phone.new_page()
        small.watch = Watch(small)  # type: ignore[attr-defined]
        sign_in(small, server, KIM)
        expect(small.locator("li.line")).to_have_count(50)
        narrow = page_height(small)
        assert small.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        for selector in ("form.find", "li.line .text", "nav.pages", ".persona meter"):
            box = small.locator(selector).first.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], selector
        shot(small, "memories-390")
        small.get_by_label("Words", exact=True).fill("cat")
        small.get_by_role("button", name="Show").click()
        expect(small.locator("#count")).to_contain_text("of your 119 lines match")
        shot(small, "memories-search-390")
        assert small.watch.problems == [] and small.watch.dialogs == []  # type: ignore[attr-defined]
    finally:
        phone.close()
    print(f"\n119 lines, page 1 of 3: {desktop} px tall at {DESKTOP['width']} px, {narrow} px at {PHONE['width']} px")
    assert desktop < 6000 and narrow < 11000  # all lines on one page: far taller


def test_search_and_filters_work_without_javascript(server, browser):
    plain = browser.new_context(viewport=DESKTOP, java_script_enabled=False)
    try:
        page = plain.new_page()
        sign_in(page, server, KIM)
        page.get_by_label("Words", exact=True).fill("shelter")
        page.get_by_label("Persona", exact=True).select_option(label="Nolan")
        page.get_by_label("Kind", exact=True).select_option(label="event")
        page.get_by_label("Lines", exact=True).select_option(label="Current")
        page.get_by_role("button", name="Show").click()
        assert "q=shelter" in page.url and "persona=nolan" in page.url and "kind=event" in page.url
        expect(page.locator("li.line .text")).to_have_text(["You adopted a second cat from the shelter."])
        expect(page.locator("#count")).to_have_text("1 of your 119 lines matches")
        expect(page.get_by_label("Persona", exact=True)).to_have_value("nolan")
        expect(page.locator("li.line .room")).to_have_text([f"in “{KIM_CLUB}”"])
        shot(page, "memories-search")
        page.get_by_role("link", name="Show all").click()
        page.get_by_label("Lines", exact=True).select_option(label="No longer true")
        page.get_by_role("button", name="Show").click()
        expect(page.locator("li.line.closed")).to_have_count(9)
        expect(page.locator("li.line:not(.closed)")).to_have_count(0)
        page.get_by_label("Lines", exact=True).select_option(label="Current")
        page.get_by_role("button", name="Show").click()
        expect(page.locator("#count")).to_contain_text("110 of your 119 lines match · showing 1–50, page 1 of 3")
        page.get_by_role("link", name="Next →").click()
        assert "state=current" in page.url and "page=2" in page.url
        expect(page.locator("li.line")).to_have_count(50)
        expect(page.locator("li.line.closed")).to_have_count(0)
    finally:
        plain.close()


def test_each_line_says_whether_it_rides_in_the_block(server, page):
    sign_in(page, server, KIM)
    _, _, loaded = server.call(server.memory.private_block, KIM, "ada")
    page.get_by_label("Persona", exact=True).select_option(label="Ada")
    page.get_by_role("button", name="Show").click()
    ada = [r for r in server.rows(KIM).values() if r.persona == "ada"]
    for row in ada:
        meta = page.locator(f"#line-{row.id} .meta")
        if not row.is_open:
            expect(meta).not_to_contain_text("block now")
        elif row.id in loaded:
            expect(meta.locator(".rides")).to_have_text("in the block now")
        else:
            expect(meta.locator(".waits")).to_have_text("not in the block now")
    riding = sum(1 for r in ada if r.id in loaded)
    current = sum(1 for r in ada if r.is_open)
    expect(page.locator("#persona-ada .meter")).to_contain_text(f"{riding} of {current} current lines about you ride in it now")
    assert page.locator("#persona-ada .rides").first.evaluate("e => getComputedStyle(e).color") != (
        page.locator("#persona-ada .waits").first.evaluate("e => getComputedStyle(e).color"))


def test_forgetting_a_persona_never_met_is_refused_and_shown(server, page):
    sign_in(page, server, KIM)
    page.get_by_role("link", name="Switches").click()
    names = page.locator("#mute-switches .name").all_inner_texts()
    assert names == ["Ada", "Nolan", "Warren"]
    form = page.locator("#mute-switches form").first
    form.locator("input[name=persona]").evaluate("i => i.value = 'nobody'")
    with page.expect_response("**/switches/mute") as answer:
        form.get_by_role("button").click()
    assert answer.value.status == 404
    expect(page.get_by_role("alert")).to_contain_text("There is no persona “nobody” among yours, so nothing was switched")
    expect(page.locator("#mute-switches .name")).to_have_text(names)
    shot(page, "mute-refused")
    assert server.call(server.memory.user_controls, KIM).muted == frozenset()


def test_the_api_reference_page_shows_every_route_from_this_server_alone(server, page):
    document = json.loads(page.request.get(server.url + "/api/openapi.json").text())
    fetched: list[str] = []
    page.on("request", lambda request: fetched.append(request.url))
    page.goto(server.url + "/api/docs")
    expect(page.get_by_role("heading", name="persona-memory HTTP API")).to_be_visible()
    routes = page.locator("article.route")
    expect(routes).to_have_count(sum(len(item) for item in document["paths"].values()))
    for path, item in document["paths"].items():
        for method, operation in item.items():
            route = page.locator(f"article#{operation['operationId']}")
            expect(route.locator(".route-head")).to_have_text(f"{method.upper()} {path}")
            expect(route.locator("td.status")).to_have_count(len(operation["responses"]))
    # the packaged stylesheet applied (the page is wider than the others), nothing from elsewhere
    assert page.evaluate("getComputedStyle(document.querySelector('main')).maxWidth") == "1024px"
    assert fetched and all(url.startswith(server.url + "/") for url in fetched), fetched
    page.screenshot(path=str(SHOTS / "api-docs.png"))  # the first screen: the page is long
