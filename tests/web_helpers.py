"""Shared by the web tests: secrets, a seeded story, and a signed-in httpx client.

``seed(memory, clock)`` writes, through the real write path (the bundled offline mind):

- Dan (u:42) and Warren: the design's story — the flat that was bought and later sold (a
  closed line with its arc), the Tesla shares, the interview (an open loop), the promise of the
  1988 letter — and the notices it raised; and Dan and Nolan: films.
- Cara (u:17) and Warren: index funds; Cara is the other user whose ids Dan's session tries.
- Ana (u:43): lines kept by Warren and by Nolan, for clearing.
- Eve (u:66): lines, a notice, a room id and a transcript line that carry script, image and
  ``javascript:`` payloads, inserted directly (the store takes any text a person typed).
- Kim (u:77): ``KIM_LINES`` lines (``seed_kim``) kept by Warren, Nolan and Ada, from a private
  chat with Warren and a group chat titled ``KIM_CLUB``, a few of them closed, some naming
  Lena (u:18) — for search, filters, pages, and who rides in the block. Inserted directly.

Dates come from the injected ``ManualClock``, so pages and screenshots are stable.
``open_site`` / the ``site`` fixture give that memory with its web app and an httpx client;
``sign_in`` follows a login link as a person would.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any, AsyncIterator, Callable, Iterator

import attrs
import httpx
import pytest

import persona_memory as pm
from persona_memory.demo import FIRST_CHAT, LATER_CHAT
from persona_memory.embedding import HashingEmbedder
from persona_memory.rows import MemoryRow
from persona_memory.web import Auth, WebSecrets, build_app, shapes

DAN, CARA, ANA, EVE = 42, 17, 43, 66
KIM, LENA = 77, 18
KIM_LINES = 119
KIM_CLUB = "Saturday bookbinding circle"
SECRETS = WebSecrets(
    signing_key="s" * 16 + "-test-signing-key-0123456789",
    api_token="t" * 16 + "-test-api-token-0123456789",
    runtime_token="r" * 16 + "-test-runtime-token-0123456789",
)
BEARER = {"Authorization": f"Bearer {SECRETS.api_token}"}
RUNTIME = {"Authorization": f"Bearer {SECRETS.runtime_token}"}
SECRET_ENV = {
    "PERSONA_MEMORY_WEB_SECRET": SECRETS.signing_key,
    "PERSONA_MEMORY_API_TOKEN": SECRETS.api_token,
    "PERSONA_MEMORY_RUNTIME_TOKEN": SECRETS.runtime_token,
}

PAYLOADS = (
    "<script>window.pwned = 1; document.title = 'pwned'</script> Eve likes tea.",
    '<img src=x onerror="window.pwned = 1; document.title = \'pwned\'"> Eve has a dog.',
    "javascript:window.pwned=1 is Eve's favourite link, see [here](javascript:window.pwned=1).",
    '<a href="javascript:window.pwned=1">Eve\'s site</a> and https://example.com/x.png',
)
NOLAN_CHAT = [
    ("u:42", "Nolan, I'm rewatching Memento this weekend. It's my favourite film."),
    ("nolan", "Good choice. I'll send you my notes on its colour scenes before Saturday."),
    ("u:42", "I'm flying to Berlin for the film festival in February."),
]
EVIL_ROOM = '<img src=x onerror="window.pwned=1">'


async def chat(memory: pm.Memory, clock: pm.ManualClock, room_id: str, lines: list[tuple[str, str]]) -> list[int]:
    out = []
    for speaker, text in lines:
        out.append(await memory.post_line(room_id, speaker, text, at=clock.now()))
        clock.advance(minutes=1)
    return out


async def quiet(memory: pm.Memory, room_id: str) -> None:
    await memory.send(pm.RoomWentQuiet(room_id=room_id))
    await memory.drain()


async def seed(memory: pm.Memory, clock: pm.ManualClock) -> None:
    """Write the story above (the clock ends 40 days after where it started)."""
    start = clock.now()
    dm = dict(personas=("warren",), private=True, incognito=False, kit=None)
    await memory.send(pm.RoomOpened(room_id="dm-dan", humans=frozenset({DAN}), topic="Hi Warren!",
                                    names={DAN: "Dan"}, **dm))
    await chat(memory, clock, "dm-dan", FIRST_CHAT)
    await quiet(memory, "dm-dan")
    clock.set(start + timedelta(days=37))
    await memory.send(pm.RoomOpened(room_id="dm-dan", humans=frozenset({DAN}), topic="The flat?", **dm))
    await chat(memory, clock, "dm-dan", LATER_CHAT)
    await quiet(memory, "dm-dan")

    await memory.send(pm.RoomOpened(room_id="dm-dan-nolan", humans=frozenset({DAN}), topic="Films",
                                    **{**dm, "personas": ("nolan",)}))
    await chat(memory, clock, "dm-dan-nolan", NOLAN_CHAT)
    await quiet(memory, "dm-dan-nolan")

    await memory.send(pm.RoomOpened(room_id="dm-cara", humans=frozenset({CARA}), topic="Funds", **dm))
    await chat(memory, clock, "dm-cara", [
        ("u:17", "Warren, I prefer index funds to picking single stocks. Is that lazy?"),
        ("warren", "Not lazy at all."),
    ])
    await quiet(memory, "dm-cara")

    clock.set(start + timedelta(days=40))
    now = clock.now()
    await memory.send(pm.RoomOpened(room_id="dm-ana", humans=frozenset({ANA}), topic="Hello", **dm))
    await memory.send(pm.RoomOpened(room_id="dm-ana-nolan", humans=frozenset({ANA}), topic="Hi",
                                    **{**dm, "personas": ("nolan",)}))
    await memory._store.memories.insert([
        MemoryRow(persona="warren", subject="u:43", kind="fact", importance=5, created=now,
                  text="u:43 works as a nurse in Pudong.", room_id="dm-ana", witnessed={ANA}),
        MemoryRow(persona="warren", subject="u:43", kind="preference", importance=4, created=now,
                  text="u:43 prefers green tea to coffee.", room_id="dm-ana", witnessed={ANA}),
        MemoryRow(persona="nolan", subject="u:43", kind="event", importance=6, created=now,
                  text="u:43 ran the Shanghai half marathon in October.", room_id="dm-ana-nolan",
                  witnessed={ANA}),
    ])

    await memory.send(pm.RoomOpened(room_id=EVIL_ROOM, humans=frozenset({EVE}), topic="hi", **dm))
    said = await chat(memory, clock, EVIL_ROOM, [("u:66", PAYLOADS[0]), ("u:66", PAYLOADS[1])])
    rows = await memory._store.memories.insert([
        MemoryRow(persona="warren", subject="u:66", kind="fact", importance=5, created=now, text=text,
                  room_id=EVIL_ROOM, witnessed={EVE}, evidence=said)
        for text in PAYLOADS
    ])
    await memory._store.write(lambda conn: conn.execute(
        "INSERT INTO notices (user_id, persona, room_id, text, memory_ids, created) VALUES (?, ?, ?, ?, ?, ?)",
        (EVE, "warren", EVIL_ROOM, "Warren noted: " + PAYLOADS[1], json.dumps([rows[1].id]), now.isoformat()),
    ))
    await memory.set_memory_note(EVE, PAYLOADS[0])
    await seed_kim(memory, clock)


_KIM_SAYS = (
    ("fact", "u:77 grows chilli peppers on the balcony of the new flat."),
    ("preference", "u:77 prefers green tea to coffee in the morning."),
    ("event", "u:77 went to a glazing workshop with u:18 in the spring."),
    ("open_loop", "u:77 has a driving test next month and wants to be asked how it went."),
    ("relationship", "u:77's cousin teaches calligraphy at a school in Ningbo."),
    ("fact", "u:77 also keeps a notebook of recipes and shares it with their neighbours."),
    ("preference", "u:77 no longer enjoys horror films on weekday evenings."),
    ("fact", "u:77 works night shifts at a bakery near the river."),
    ("event", "u:77 ran a 10 km race in October and beat their own best time."),
    ("preference", "u:77 likes walking to work when it is not raining."),
    ("fact", "u:77 is saving for a kiln of their own."),
    ("relationship", "u:77 and u:18 share a studio on Thursdays."),
    ("open_loop", "u:77 is waiting to hear back about a flat in Jing'an."),
    ("fact", "u:77 speaks Cantonese with their grandmother."),
    ("preference", "u:77 always orders the mushroom dumplings."),
    ("event", "u:77 sold three bowls at the winter market."),
    ("fact", "u:77 has a cat called Biscuit who hates the vacuum cleaner."),
    ("preference", "u:77 reads science fiction before bed."),
    ("open_loop", "u:77 plans to repaint the kitchen in a warm yellow."),
    ("fact", "u:77 was a swimming coach before the bakery job."),
    ("event", "u:77 visited Hangzhou for a weekend and loved the tea fields."),
    ("preference", "u:77 dislikes crowded trains and leaves home early."),
    ("fact", "u:77 volunteers at the animal shelter twice a month."),
    ("relationship", "u:77's sister is getting married in May."),
    ("fact", "u:77 still uses the bicycle their father gave them."),
    ("open_loop", "u:77 wants to learn to throw larger pots this year."),
    ("preference", "u:77 listens to old jazz records while working."),
    ("event", "u:77 fixed the leaking sink without calling anyone."),
    ("fact", "u:77 keeps sourdough starter in the fridge."),
    ("preference", "u:77 finds long phone calls tiring."),
    ("fact", "u:77 does the crossword every Sunday."),
    ("event", "u:77 adopted a second cat from the shelter."),
    ("open_loop", "u:77 is thinking about a trip to Kyoto in the autumn."),
    ("fact", "u:77 teaches themself Japanese with an app."),
    ("preference", "u:77 loves the smell of rain on hot pavement."),
    ("fact", "u:77 recently moved to a quieter street."),
    ("event", "u:77 burned a whole tray of croissants on their first day."),
    ("preference", "u:77 avoids spicy food after a late shift."),
    ("fact", "u:77 collects postcards from every city they visit."),
)


async def seed_kim(memory: pm.Memory, clock: pm.ManualClock) -> None:
    """``KIM_LINES`` lines about Kim: promises from each persona, the rest from ``_KIM_SAYS``
    (the newest first), the oldest nine closed by a newer line."""
    now = clock.now()
    await memory.send(pm.RoomOpened(room_id="dm-kim", personas=("warren",), humans=frozenset({KIM}),
                                    private=True, names={KIM: "Kim"}))
    await memory.send(pm.RoomOpened(room_id="club-7f3c", personas=("nolan", "ada"), humans=frozenset({KIM, LENA}),
                                    names={KIM: "Kim", LENA: "Lena"}, title=KIM_CLUB))
    personas = ("warren", "nolan", "ada")
    rows = []
    for n in range(KIM_LINES):
        persona = personas[n % 3]
        room = "dm-kim" if persona == "warren" else "club-7f3c"
        when = now - timedelta(hours=n)
        if n % 10 == 9:
            rows.append(MemoryRow(persona=persona, subject="self", counterpart="u:77", kind="promise",
                                  importance=6, created=when, room_id=room, witnessed={KIM},
                                  text=f"{persona.title()} promised to send u:77 a photo of the finished vase."))
            continue
        kind, text = _KIM_SAYS[(n // 3) % len(_KIM_SAYS)]
        rows.append(MemoryRow(persona=persona, subject="u:77", kind=kind, importance=5, created=when,
                              text=text, room_id=room, witnessed={KIM}))
    kept = await memory._store.memories.insert(rows[:-9])
    await memory._store.memories.insert([
        attrs.evolve(row, valid_from="2026-05", valid_to="2026-08", closed_by=kept[i].id)
        for i, row in enumerate(rows[-9:])
    ])


def conforms(document: dict[str, Any], method: str, template: str, response: httpx.Response) -> None:
    """Assert ``response`` is one the document gives for that route: a documented status, and a
    body of the documented media type and schema (none where the document gives none)."""
    operation = document["paths"][template][method.lower()]
    documented = operation["responses"]
    assert str(response.status_code) in documented, (method, template, response.status_code, response.text)
    content = documented[str(response.status_code)].get("content")
    if content is None:
        assert response.content == b"", (method, template, response.status_code)
        return
    (media_type, described), = content.items()
    assert response.headers["content-type"].split(";")[0] == media_type
    if media_type != "application/json":
        return
    schema = described["schema"]
    if "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    shapes.check(schema, response.json(), "answer")


def csrf_of(html: str) -> str:
    """The CSRF token in a page's forms."""
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match, "the page has no CSRF field"
    return match.group(1)


async def sign_in(client: httpx.AsyncClient, auth: Auth, user_id: int) -> str:
    """Follow a login link as a person would; return the CSRF token of the session."""
    token = auth.login_token(user_id)
    page = await client.get("/login", params={"token": token})
    assert page.status_code == 200 and "Continue" in page.text
    done = await client.post("/login", data={"token": token})
    assert done.status_code == 303 and done.headers["location"] == "/"
    home = await client.get("/")
    assert home.status_code == 200
    return csrf_of(home.text)


def client_for(app: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver")


SITE_SETTINGS = {"web.public_url": "http://testserver", "write.neighbour_min_cosine": 0.2}


@attrs.frozen
class Site:
    """A seeded memory, its web app's ``Auth``, and an httpx client talking to the app."""

    memory: pm.Memory
    auth: Auth
    client: httpx.AsyncClient
    clock: pm.ManualClock
    app: Any

    def other_client(self) -> httpx.AsyncClient:
        """A second browser (its own cookie jar) on the same app."""
        return client_for(self.app)


@asynccontextmanager
async def open_site(settings: pm.Settings, clock: pm.ManualClock) -> AsyncIterator[Site]:
    """Open the memory on ``settings``, seed it, and build the app with ``SECRETS``."""
    async with pm.open_memory(settings, clock=clock, embedder=HashingEmbedder(64)) as memory:
        await seed(memory, clock)
        app = build_app(memory, settings.web, SECRETS, clock=clock)
        async with client_for(app) as client:
            yield Site(memory=memory, auth=app.state.auth, client=client, clock=clock, app=app)


@pytest.fixture
async def site(make_settings: Callable[..., pm.Settings], clock: pm.ManualClock) -> AsyncIterator[Site]:
    async with open_site(make_settings(SITE_SETTINGS), clock) as opened:
        yield opened


@pytest.fixture(scope="module")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``persona-memory serve`` on a free port; yields its base URL.

    Its log (an access line per request) goes to a file: a pipe nobody reads fills after a
    thousand or so requests, and the server then blocks on its next log line.
    """
    home = tmp_path_factory.mktemp("serve")
    config = home / "config.toml"
    config.write_text('[embedder]\nkind = "hashing"\ndim = 64\n[web]\nport = 0\n', encoding="utf-8")
    log_path = home / "serve.log"
    with open(log_path, "w", encoding="utf-8") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "persona_memory.cli", "serve", "--config", str(config), "--db", str(home / "m.db")],
            stdout=subprocess.PIPE, stderr=log, text=True, env={**os.environ, **SECRET_ENV},
        )
    try:
        first = proc.stdout.readline()  # type: ignore[union-attr]
        assert first.startswith("persona-memory: serving http://127.0.0.1:"), first + log_path.read_text()
        port = int(first.split(":")[3].split(" ")[0])
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
