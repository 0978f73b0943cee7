"""The extraction prompt's BEFORE/AFTER run (design §8: a prompt change is measured against
its BEFORE), through the real write path and the HTTP mind.

Run it::

    PYTHONPATH=. .venv/bin/python bench/prompt_compare.py              # the loopback fake
    PM_COMPARE_BASE_URL=https://api.example.com/v1 PM_COMPARE_MODEL=some-flash-model \\
    PM_COMPARE_KEY_ENV=MY_KEY_VARIABLE PYTHONPATH=. .venv/bin/python bench/prompt_compare.py

The same scripted conversations (``chat_lines``, written for these benches; a few personas in
private chats and group rooms over two evenings a week apart, one group room with a topic and
one where a game is mounted half way) are played twice through ``open_memory`` with
``mind.kind = "http"``, each time on a fresh SQLite file:

- BEFORE: the extraction prompt as it stood before the situation lines were added, kept verbatim as
  ``bench/fixtures/extract-before.md``, and that commit's user message: the situation lines
  added since (topic, kit, withheld people) are taken out again, so the model sees exactly
  what it saw then.
- AFTER: the package's ``prompts/extract.md`` and today's user message.

It prints, per prompt: the system prompt's characters and estimated tokens (characters / 4),
the extraction and routing requests sent, the characters sent per extraction request, the
memories the endpoint returned, the rows written, and the candidates dropped by validation,
counted by reason.

The endpoint: by default the loopback fake of the test suite (``tests/openai_server.py``),
started in-process. ITS ANSWERS DO NOT DEPEND ON THE PROMPT: it answers each extraction call
with one memory per human line of the transcript it was sent ("u:N said: <the line>",
importance 5, citing that line) and every routing call with ADD. So with the fake, BEFORE and
AFTER return the same memories and write the same rows; what differs is only what was sent.
That is a check that both prompts render and run end to end, and a measure of their size —
not a measure of quality. A quality comparison needs a real model: set ``PM_COMPARE_BASE_URL``
and ``PM_COMPARE_MODEL`` (and ``PM_COMPARE_KEY_ENV``, the NAME of the variable holding the key)
to any OpenAI-compatible endpoint.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from string import Template

import attrs
import trio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import persona_memory as pm  # noqa: E402
from persona_memory.ids import persona_name  # noqa: E402
from persona_memory.minds import http as http_mind  # noqa: E402

from chat_lines import Life, group_evening, private_evening  # noqa: E402

BEFORE_PROMPT = HERE / "fixtures" / "extract-before.md"
START = datetime(2026, 10, 5, 19, 0, tzinfo=timezone.utc)
SITUATION_ADDED = re.compile(
    r"^(The room's topic|The room has no topic\.|A game or role-play|No game or role-play|"
    r"\d+ other (person|people) present)"
)


def before_messages(request) -> list[dict[str, str]]:
    """Call A's messages as the commit before the prompt change rendered them."""
    messages = http_mind.extraction_messages(request)
    system = Template(BEFORE_PROMPT.read_text(encoding="utf-8")).substitute(
        name=persona_name(request.persona), slug=request.persona
    )
    user = "\n".join(
        line for line in messages[1]["content"].split("\n") if not SITUATION_ADDED.match(line)
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def after_messages(request) -> list[dict[str, str]]:
    return http_mind.extraction_messages(request)


def fake_answer(body: dict) -> dict:
    """The fake model: one memory per human line sent, ADD for every routing call. It reads
    the transcript rows of the user message only, never the prompt."""
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    if system.startswith("You are the manager"):
        return {"event": "ADD"}
    memories = []
    for row in user.split("\n"):
        if not row.startswith('{"id"'):
            continue
        line = json.loads(row)
        if line["speaker"].startswith("u:"):
            memories.append({"subject": line["speaker"], "kind": "fact",
                             "text": f"{line['speaker']} said: {line['text']}"[:200],
                             "importance": 5, "evidence": [line["id"]]})
    return {"memories": memories}


@attrs.define
class Tally:
    extraction_requests: int = 0
    routing_requests: int = 0
    extraction_chars: int = 0
    system_chars: int = 0
    memories_returned: int = 0
    rows: int = 0
    dropped: collections.Counter = attrs.field(factory=collections.Counter)


class CountingMind:
    """The HTTP mind, counting what it sends and what comes back."""

    def __init__(self, mind, tally: Tally, render) -> None:
        self._mind, self._tally, self._render = mind, tally, render

    async def extract(self, request):
        messages = self._render(request)
        self._tally.extraction_requests += 1
        self._tally.system_chars = len(messages[0]["content"])
        self._tally.extraction_chars += sum(len(m["content"]) for m in messages)
        answer = await self._mind._complete(messages)
        items = answer.get("memories") if isinstance(answer, dict) else None
        self._tally.memories_returned += len(items) if isinstance(items, list) else 0
        return answer

    async def route(self, request):
        self._tally.routing_requests += 1
        return await self._mind.route(request)

    async def aclose(self) -> None:
        await self._mind.aclose()


def scenario(rng: random.Random):
    """Rooms and two evenings of lines: (room kwargs, [(speaker, text)] per evening, kit_at)."""
    rooms = []
    lives = {uid: Life.draw(rng) for uid in range(501, 509)}
    for k, (slug, uid) in enumerate([("warren", 501), ("warren", 502), ("nolan", 503), ("nolan", 504),
                                      ("iris", 505), ("iris", 506)]):
        rooms.append((dict(room_id=f"dm-{slug}-{uid}", personas=(slug,), humans={uid}, private=True,
                           names={uid: f"Friend{uid}"}), "private", {uid: lives[uid]}))
    rooms.append((dict(room_id="club", personas=("warren", "nolan"), humans={501, 503, 507},
                       topic="Weekend plans and what everyone is up to",
                       names={501: "Friend501", 503: "Friend503", 507: "Friend507"}),
                  "group", {u: lives[u] for u in (501, 503, 507)}))
    rooms.append((dict(room_id="game-night", personas=("iris",), humans={505, 508},
                       names={505: "Friend505", 508: "Friend508"}),
                  "kit", {u: lives[u] for u in (505, 508)}))
    return rooms


async def play(render, base_url: str, model: str, key_env: str | None, tmp: Path, seed: int) -> Tally:
    tally = Tally()
    overrides = {"storage.path": str(tmp / "compare.db"), "mind.kind": "http", "mind.base_url": base_url,
                 "mind.model": model, "http.max_retries": 1}
    if key_env:
        overrides["mind.api_key_env"] = key_env
    settings = pm.load_settings(None, overrides=overrides)
    mind = CountingMind(pm.compose.make_mind(settings), tally, render)

    def on_report(report) -> None:
        if report.posted is not None:
            tally.rows += len(report.posted.rows)
        for item in report.dropped:
            tally.dropped[item.reason.split(":")[0]] += 1

    rng = random.Random(seed)
    clock = pm.ManualClock(START)
    async with pm.open_memory(settings, clock=clock, mind=mind, on_report=on_report) as memory:
        rooms = scenario(rng)
        for evening in range(2):
            for opened, shape, lives in rooms:
                await memory.send(pm.RoomOpened(**opened))
                if shape == "private":
                    [(uid, life)] = lives.items()
                    lines = private_evening(life, rng, opened["personas"][0], f"u:{uid}", 14, evening)
                else:
                    lines = group_evening({f"u:{u}": l for u, l in lives.items()}, rng,
                                          opened["personas"], 20, evening)
                at = clock.now()
                for k, (speaker, text) in enumerate(lines):
                    if shape == "kit" and k == len(lines) // 2:
                        await memory.send(pm.RoomOpened(**opened, kit="space-pirates"))
                    await memory.post_line(opened["room_id"], speaker, text, at + timedelta(seconds=30 * k))
                if shape == "kit":
                    await memory.send(pm.RoomOpened(**opened))
                await memory.send(pm.RoomWentQuiet(room_id=opened["room_id"]))
            await memory.drain()
            clock.advance(days=7)
    return tally


async def run(args: argparse.Namespace) -> dict[str, Tally]:
    base_url = os.environ.get("PM_COMPARE_BASE_URL")
    model = os.environ.get("PM_COMPARE_MODEL", "fake-model")
    key_env = os.environ.get("PM_COMPARE_KEY_ENV")
    out = {}
    if base_url:
        for label, render in (("BEFORE", before_messages), ("AFTER", after_messages)):
            with tempfile.TemporaryDirectory() as tmp:
                out[label] = await play(render, base_url, model, key_env, Path(tmp), args.seed)
        return out
    from openai_server import OpenAIServer, chat_json_reply, open_openai_server

    for label, render in (("BEFORE", before_messages), ("AFTER", after_messages)):
        async with open_openai_server() as server:

            def answer(request, server=server):
                if request.path.endswith("/chat/completions") and isinstance(request.body, dict):
                    return chat_json_reply(fake_answer(request.body))
                return OpenAIServer._answer(server, request)

            server._answer = answer  # the running server answers as the fake model
            with tempfile.TemporaryDirectory() as tmp:
                out[label] = await play(render, server.base_url, model, None, Path(tmp), args.seed)
    return out


def report(tallies: dict[str, Tally], args: argparse.Namespace) -> None:
    real = os.environ.get("PM_COMPARE_BASE_URL")
    if real:
        print(f"endpoint: {real} (model {os.environ.get('PM_COMPARE_MODEL', 'fake-model')})")
    else:
        print("endpoint: the loopback fake (tests/openai_server.py). ITS ANSWERS DO NOT DEPEND ON "
              "THE PROMPT: the same memories come back for BEFORE and AFTER. The figures below show "
              "what was sent and that both run end to end; they are NOT a quality measurement.")
    print(f"{'':<34} {'BEFORE':>10} {'AFTER':>10}")
    b, a = tallies["BEFORE"], tallies["AFTER"]
    rows = [
        ("system prompt chars", b.system_chars, a.system_chars),
        ("system prompt est. tokens (chars/4)", b.system_chars // 4, a.system_chars // 4),
        ("extraction requests", b.extraction_requests, a.extraction_requests),
        ("chars sent per extraction request", b.extraction_chars // max(1, b.extraction_requests),
         a.extraction_chars // max(1, a.extraction_requests)),
        ("routing requests", b.routing_requests, a.routing_requests),
        ("memories returned", b.memories_returned, a.memories_returned),
        ("rows written", b.rows, a.rows),
        ("candidates dropped", sum(b.dropped.values()), sum(a.dropped.values())),
    ]
    for label, x, y in rows:
        print(f"{label:<34} {x:>10,} {y:>10,}")
    for reason in sorted(set(b.dropped) | set(a.dropped)):
        print(f"  dropped: {reason[:40]:<40} {b.dropped[reason]:>6,} {a.dropped[reason]:>6,}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args(argv)
    report(trio.run(run, args), args)


if __name__ == "__main__":
    main()
