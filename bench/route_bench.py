"""The routing benchmark: one 20-line slice through the real write path,
with 0, 1,000 and 10,000 open rows about the human already stored.

Run it::

    PYTHONPATH=. .venv/bin/python bench/route_bench.py                  # 0, 1,000, 10,000 rows
    PYTHONPATH=. .venv/bin/python bench/route_bench.py --sizes 10000 --reps 30 --profile
    PYTHONPATH=. .venv/bin/python bench/route_bench.py --digest        # + sha256 of the rows per size

For each size it seeds one persona (``warren``) with that many open rows about one human
(``u:42``) in a fresh SQLite file in a temporary directory: sentences of the kinds a chat with a
friend leaves (where they work and live, habits, likes, pets, events with numbers and days),
their vectors from the default configuration's embedder (the bundled WordLlama, 256-d), stored
int8-quantised. Then, through the real ``open_memory`` with the default configuration — the
offline mind, the bundled embedder, SQLite — and a ``ManualClock``:

- a private chat with ``u:42`` opens (the actor loads its rows for the block);
- per repetition, 20 new lines are posted (ten of the human's, ten of the persona's, drawn
  from a pool of chat lines with varying numbers, places and days), the clock moves one day,
  and ``send(RoomWentQuiet)`` → ``drain()`` is timed: extraction, embedding, routing, the
  commit and the actor taking the write in. Two repetitions run first, untimed.

It prints, per size, the median and the 90th percentile of that time; the median CPU time the
process spent on it (``time.process_time``: every thread, the SQLite and worker threads too —
on a machine other work loads, a steadier figure than the wall time); of it, the time spent in
routing (``WritePipeline._route``: embedding the candidates, finding duplicates and neighbours,
the router's answers); and the first slice after the open, timed alone (it pays for preparing
the route index once per load). Nothing here is asserted anywhere; the machine is noisy, so
compare figures printed by one run.

``--digest`` also prints, per size, ``write_bench.digest_rows`` of the file at the end (every row,
with its state: open or closed, importance, evidence, …): the chat is seeded and the clock
manual, so a change that must not change what routing decides prints the same digests.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import statistics
import tempfile
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import trio

import persona_memory as pm
from persona_memory import ManualClock, MemoryRow, load_settings, open_memory
from persona_memory.compose import make_embedder, make_mind
from persona_memory.embedding import quantize
from persona_memory.write.pipeline import WritePipeline
from write_bench import digest_rows

PERSONA = "warren"
HUMAN = 42
NOW = datetime(2026, 9, 1, 12, 0, tzinfo=timezone.utc)
ROOM = dict(room_id="dm", personas=(PERSONA,), humans={HUMAN}, private=True, names={HUMAN: "Dan"})

_PLACES = ("Porto", "Lyon", "Osaka", "Denver", "Leeds", "Bergen", "Tartu", "Cusco", "Perth", "Gdansk")
_THINGS = ("bike", "kayak", "piano", "camera", "tent", "van", "guitar", "telescope", "sofa", "drone")
_FOODS = ("ramen", "tacos", "curry", "oysters", "risotto", "falafel", "dumplings", "paella")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_EMPLOYERS = ("Brightline", "Northwind", "Kestrel Labs", "Harbor Bank", "Maple Health", "Quill Media")
_PETS = ("dog", "cat", "parrot", "rabbit", "tortoise", "hamster")

_ROW_TEMPLATES = (
    "u:42 works at {employer} as a data analyst.",
    "u:42 lives in {place} near the old harbour.",
    "u:42 owns a {thing} they bought in {place}.",
    "u:42 loves {food} from the market on {day}.",
    "u:42 ran {n} miles on {day} before work.",
    "u:42 has a {pet} named {name}.",
    "u:42 visited {place} with their sister for {n} days.",
    "u:42 is learning to repair a {thing} from videos.",
    "u:42 plays five-a-side football every {day}.",
    "u:42 read {n} chapters of a mystery novel on {day}.",
    "u:42 hates waiting in queues at the {place} airport.",
    "u:42 is saving money for a trip to {place} next year.",
    "u:42 cooked {food} for {n} friends on {day}.",
    "u:42 sold an old {thing} to a neighbour.",
)
_NAMES = ("Biscuit", "Pepper", "Rocket", "Juno", "Olive", "Mochi", "Tango", "Ziggy")

_HUMAN_LINES = (
    "I ran {n} miles along the river on {day}.",
    "I finally fixed the chain on my {thing} yesterday.",
    "My sister and I are planning a trip to {place} in the spring.",
    "I love the {food} at the little place near my office.",
    "I read {n} pages of that history book last night.",
    "I adopted a {pet} named {name} last week!",
    "I'm thinking about selling my {thing} soon.",
    "I cooked {food} for {n} people on {day}.",
    "I have a dentist appointment on {day}, wish me luck.",
    "I started taking bookbinding classes at the community centre.",
    "I visited my grandmother in {place} over the weekend.",
    "I bought a secondhand {thing} for {n} dollars.",
    "I'm training for a half marathon in {place}.",
    "I hate the new parking rules at work.",
)
_PERSONA_LINES = (
    "That sounds like a good day.",
    "How did that go?",
    "I'll look up a recipe for {food} and send it to you.",
    "Tell me more about it.",
    "Nice! What made you pick that?",
    "I'm glad to hear it.",
    "I'll remind you about it on {day}.",
    "That must have been tiring.",
    "Oh, I remember you mentioned that.",
    "Good luck with it!",
)


def fill(rng: random.Random, template: str) -> str:
    return template.format(
        place=rng.choice(_PLACES), thing=rng.choice(_THINGS), food=rng.choice(_FOODS),
        day=rng.choice(_DAYS), employer=rng.choice(_EMPLOYERS), pet=rng.choice(_PETS),
        name=rng.choice(_NAMES), n=rng.randint(2, 40),
    )


ROUTE_SECONDS: list[float] = []


def _timed_route():
    real = WritePipeline._route

    async def timed(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return await real(self, *args, **kwargs)
        finally:
            ROUTE_SECONDS.append(time.perf_counter() - start)

    WritePipeline._route = timed


def settings_for(path: Path):
    return load_settings(None, {"storage.path": str(path)})


def seed_rows(count: int, embedder) -> list[MemoryRow]:
    rng = random.Random(9)
    kinds = ("fact", "preference", "event", "relationship")
    texts = [fill(rng, rng.choice(_ROW_TEMPLATES)) for _ in range(count)]
    vectors = [v for i in range(0, count, 1000) for v in embedder.embed_sync(texts[i : i + 1000])]
    rows = []
    for n, (text, vector) in enumerate(zip(texts, vectors)):
        blob, scale = quantize(vector)
        created = NOW - timedelta(days=400) + timedelta(seconds=n * 60)
        rows.append(
            MemoryRow(
                persona=PERSONA, subject=f"u:{HUMAN}", witnessed={HUMAN}, room_id="seed",
                kind=rng.choice(kinds), text=text, importance=rng.randint(3, 9), created=created,
                embedding=blob, embedding_scale=scale, embedder=embedder.name,
            )
        )
    return rows


async def run_size(count: int, reps: int, profile: bool, digest: bool = False) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "route.db"
        settings = settings_for(path)
        embedder = make_embedder(settings)
        clock = ManualClock(NOW)
        events: Counter[str] = Counter()
        mind = make_mind(settings)
        async with open_memory(settings, clock=clock, mind=mind) as memory:
            if getattr(mind, "processes", None) is not None:
                mind.processes.start()  # else they start at the first overlapping slices
            while getattr(mind, "processes", None) is not None and not mind.processes.ready:
                await trio.sleep(0.01)  # the reader's workers import it and load the embedder once
            if count:
                await memory._store.memories.insert(seed_rows(count, embedder))
            await memory.send(pm.RoomOpened(**ROOM))
            await memory.block(PERSONA, "dm")
            rng = random.Random(5)
            times, routing, cpus = [], [], []
            first = None
            profiler = cProfile.Profile() if profile else None
            for rep in range(reps + 2):
                for k in range(10):
                    await memory.post_line("dm", f"u:{HUMAN}", fill(rng, _HUMAN_LINES[(rep * 10 + k) % len(_HUMAN_LINES)]))
                    await memory.post_line("dm", PERSONA, fill(rng, _PERSONA_LINES[(rep + k) % len(_PERSONA_LINES)]))
                clock.advance(days=1)
                before = len(await memory.memories_about(HUMAN))
                if profiler is not None and rep >= 2:
                    profiler.enable()
                ROUTE_SECONDS.clear()
                start, cpu_start = time.perf_counter(), time.process_time()
                await memory.send(pm.RoomWentQuiet(room_id="dm"))
                await memory.drain()
                elapsed = time.perf_counter() - start
                cpu = time.process_time() - cpu_start
                if rep == 0:
                    first = elapsed
                if profiler is not None and rep >= 2:
                    profiler.disable()
                if rep >= 2:
                    times.append(elapsed)
                    cpus.append(cpu)
                    routing.append(sum(ROUTE_SECONDS))
                    events["rows now"] = len(await memory.memories_about(HUMAN)) - before
            open_rows = sum(r.valid_to is None for r in await memory.memories_about(HUMAN))
            digests = await memory._store.read(digest_rows) if digest else None
        if profiler is not None:
            print(f"--- profile at {count:,} rows (cumulative, top 25)")
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
        return {"times": times, "routing": routing, "cpus": cpus, "first": first, "open": open_rows,
                "digests": digests}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 1000, 10000])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--digest", action="store_true",
                        help="print sha256 digests of every row at the end of each size")
    args = parser.parse_args()
    print("a 20-line slice (10 human lines, 10 persona lines) through the real write path:")
    print("RoomWentQuiet -> drain(), default configuration (offline mind, bundled WordLlama 256-d)")
    _timed_route()
    print(f"{'rows about the human':>22} {'p50':>10} {'p90':>10} {'CPU p50':>10} {'routing p50':>12} "
          f"{'first slice':>12} {'open rows after':>16}")
    for count in args.sizes:
        result = trio.run(run_size, count, args.reps, args.profile, args.digest)
        times = sorted(result["times"])
        p50 = statistics.median(times)
        p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
        route = statistics.median(result["routing"])
        print(
            f"{count:>22,} {p50 * 1e3:>8.1f} ms {p90 * 1e3:>8.1f} ms "
            f"{statistics.median(result['cpus']) * 1e3:>7.1f} ms {route * 1e3:>9.1f} ms "
            f"{result['first'] * 1e3:>9.1f} ms {result['open']:>16,}"
        )
        if result["digests"] is not None:
            d = result["digests"]
            print(f"{'':>22} digest of {d['count']} rows: rows {d['rows'][:16]}  rows+state {d['rows+state'][:16]}")


if __name__ == "__main__":
    main()
