"""Write throughput: transcript lines per second through the write path.

Run it::

    PYTHONPATH=. .venv/bin/python bench/write_bench.py                 # 100 personas, 2 evenings
    PYTHONPATH=. .venv/bin/python bench/write_bench.py --personas 10 --rounds 1
    PYTHONPATH=. .venv/bin/python bench/write_bench.py --profile out.prof   # cProfile, trio thread
    PYTHONPATH=. .venv/bin/python bench/write_bench.py --url postgresql://…/empty_db  # on PostgreSQL
    PYTHONPATH=. .venv/bin/python bench/write_bench.py --digest   # + a digest of every row written
    PYTHONPATH=. .venv/bin/python bench/write_bench.py --offline-processes 0   # the reader on a thread

The default configuration (``load_settings(None)``: the offline mind, the bundled WordLlama
embedder, SQLite) on a fresh file in a temporary directory, through the real ``open_memory``
with a ``ManualClock``. ``--personas N`` personas (default 100); each has ``--privates`` private
chats (default 3, one human each) and every two personas share one group room with four of
their humans. An evening: every room opens and its blocks are built (untimed: the read path), its lines
are posted (``post_line``; ``--posting sequential``, the default, one room after another and
one line at a time; ``--posting concurrent``, every room at once, each room's lines in order,
as a chat runtime with many live rooms would), every room goes quiet, ``drain()``. Evenings are a week
apart; from the second on the humans also change jobs, homes and habits, so the router meets
rows already there. Lines come from ``chat_lines`` (templates written for this bench).

It prints, per evening and in total: the lines posted; the time to post them; the time from
the first ``RoomWentQuiet`` to ``drain()`` returning (the write path); lines/s end to end (post
+ write path) and for the write path alone; rows written; the process's CPU time per line
(``time.process_time``, every thread) for posting and for the write path — and, beside it, the
CPU of the offline reader's worker processes (``mind.offline_processes``) — and CPU over wall
time (about 1.0: one core, bound by the GIL; less: waiting for a core other work holds). Then a breakdown of the write path,
summed over all personas' slices (they overlap: 100 lanes run at once, so the parts add up to
more than the wall time, and each part includes its wait for the thread or connection it
needs): extraction (the mind's call), embedding, routing (neighbour search and the router's
calls), and storage (every ``store.read``/``store.write``/``store.transcript.lines``/``store.controls.of``
the pipeline awaits). The timers wrap the pipeline's collaborators only; nothing is asserted.

``--digest`` also prints two sha256 digests of every row in the file at the end: *rows* over
the sorted ``(persona, subject, kind, text)``, and *rows+state* over the sorted ``(persona,
subject, counterpart, kind, text, importance, valid_from, closed or open, witnessed,
evidence)``. A speed change must leave both as they were (the output must not change); the
chat is seeded, so the same options give the same digests on any machine.

``--json FILE`` also writes the totals (lines, seconds, lines/s, CPU per line, rows) to FILE,
for ``storage_compare.py`` to read.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import hashlib
import json
import os
import random
import sys
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import attrs
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))

import persona_memory as pm  # noqa: E402
from persona_memory.clock import ManualClock  # noqa: E402
from persona_memory.compose import make_embedder, make_mind  # noqa: E402
from persona_memory.write import pipeline as pipeline_module  # noqa: E402

from chat_lines import Life, group_evening, private_evening  # noqa: E402

START = datetime(2026, 9, 7, 19, 0, tzinfo=timezone.utc)


@attrs.define
class Room:
    room_id: str
    personas: tuple[str, ...]
    humans: dict[int, Life]
    private: bool


@attrs.define
class Timers:
    """Seconds and calls summed per part of the write path."""

    seconds: collections.Counter = attrs.field(factory=collections.Counter)
    calls: collections.Counter = attrs.field(factory=collections.Counter)

    def wrap_async(self, part: str, fn):
        async def timed(*args, **kwargs):
            t = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                self.seconds[part] += time.perf_counter() - t
                self.calls[part] += 1

        return timed

    def wrap_sync(self, part: str, fn):
        def timed(*args, **kwargs):
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[part] += time.perf_counter() - t
                self.calls[part] += 1

        return timed


class TimedStore:
    """The store, with the awaits the write pipeline makes timed as "store"."""

    WRAPPED = ("read", "write", "lines", "user_controls", "names_among")

    def __init__(self, store, timers: Timers) -> None:
        self._store = store
        for name in self.WRAPPED:
            if hasattr(store, name):
                setattr(self, name, timers.wrap_async("store", getattr(store, name)))

    def __getattr__(self, name):
        return getattr(self._store, name)


class TimedMind:
    """The mind, with its two calls timed."""

    def __init__(self, mind, timers: Timers) -> None:
        self.extract = timers.wrap_async("extract", mind.extract)
        self.route = timers.wrap_async("route (mind)", mind.route)
        self.aclose = mind.aclose
        self.processes = getattr(mind, "processes", None)  # the offline reader's workers, for the pipeline
        self.portable_extract = getattr(mind, "portable_extract", None)  # a slice's reading as one worker job


class TimedEmbedder:
    """The embedder, with ``embed`` timed."""

    def __init__(self, embedder, timers: Timers) -> None:
        self._embedder = embedder
        self.embed = timers.wrap_async("embed", embedder.embed)

    def __getattr__(self, name):
        return getattr(self._embedder, name)


def make_rooms(personas: int, privates: int, rng: random.Random) -> list[Room]:
    rooms: list[Room] = []
    uid = 1000
    humans_of: dict[str, dict[int, Life]] = {}
    for i in range(personas):
        slug = f"p{i:03d}"
        humans_of[slug] = {}
        for k in range(privates):
            uid += 1
            life = Life.draw(rng)
            humans_of[slug][uid] = life
            rooms.append(Room(f"dm-{slug}-{k}", (slug,), {uid: life}, True))
    slugs = list(humans_of)
    for a, b in zip(slugs[0::2], slugs[1::2]):
        pool = {**humans_of[a], **humans_of[b]}
        chosen = rng.sample(sorted(pool), min(4, len(pool)))
        rooms.append(Room(f"group-{a}-{b}", (a, b), {u: pool[u] for u in chosen}, False))
    return rooms


def script(rooms: list[Room], rng: random.Random, lines_private: int, lines_group: int,
           round_no: int) -> dict[str, list[tuple[str, str]]]:
    out = {}
    for room in rooms:
        if room.private:
            [(uid, life)] = room.humans.items()
            out[room.room_id] = private_evening(life, rng, room.personas[0], f"u:{uid}", lines_private, round_no)
        else:
            lives = {f"u:{u}": life for u, life in room.humans.items()}
            out[room.room_id] = group_evening(lives, rng, room.personas, lines_group, round_no)
    return out


@attrs.frozen
class Evening:
    lines: int
    post_seconds: float
    write_seconds: float
    rows: int
    post_cpu: float = 0.0  # process CPU seconds (every thread) while posting
    write_cpu: float = 0.0  # … and while the write path ran
    worker_cpu: float = 0.0  # CPU seconds of the offline reader's worker processes meanwhile


async def open_rooms(memory: pm.Memory, rooms: list[Room]) -> None:
    """Every room opens (its humans named ``H<id>``) and each persona's block is built."""
    for room in rooms:
        await memory.send(pm.RoomOpened(
            room_id=room.room_id, personas=room.personas, humans=frozenset(room.humans),
            private=room.private, names={u: f"H{u}" for u in room.humans},
        ))
    for room in rooms:
        for persona in room.personas:
            await memory.block(persona, room.room_id)


def workers_cpu(mind) -> float:
    """CPU seconds (user + system) the offline reader's worker processes have used so far
    (``/proc``; 0 without workers, or where ``/proc`` is not there)."""
    processes = getattr(mind, "processes", None)
    total = 0.0
    for pid in processes.pids() if processes is not None else ():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


warm_up: list[float] = []
"""How long the reader's worker processes took to be up after the memory opened (untimed)."""

write_threads: collections.Counter = collections.Counter()
"""The write path's CPU seconds by kind of thread, over every evening (``threads_cpu``)."""


def threads_cpu() -> collections.Counter:
    """CPU seconds (user + system) each thread of this process has used so far, summed by the
    thread's kind (its name up to the first ``-`` or digit; ``/proc``, Linux only)."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    spent: collections.Counter = collections.Counter()
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path("/proc/self/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = names.get(int(task.name), "other (not Python's)")
        kind = "event loop" if name == "MainThread" else name.split("-")[0].rstrip("0123456789 ")
        spent[kind] += (int(fields[11]) + int(fields[12])) / tick
    return spent


def digest_rows(conn) -> dict[str, str]:
    """The two digests of every row in the file (see the module's docstring)."""
    rows = conn.execute(
        "SELECT persona, subject, counterpart, kind, text, importance, valid_from, valid_to IS NULL,"
        " witnessed, evidence FROM persona_memory"
    ).fetchall()
    plain = sorted((r[0], r[1], r[3], r[4]) for r in rows)
    full = sorted(tuple(r) for r in rows)

    def sha(items) -> str:
        return hashlib.sha256(json.dumps(items, ensure_ascii=False).encode()).hexdigest()

    return {"rows": sha(plain), "rows+state": sha(full), "count": str(len(rows))}


async def run(args: argparse.Namespace) -> tuple[list[Evening], Timers, int, dict[str, str] | None]:
    rng = random.Random(args.seed)
    rooms = make_rooms(args.personas, args.privates, rng)
    timers = Timers()
    rows_written = collections.Counter()
    write_threads.clear()
    warm_up.clear()

    def on_report(report) -> None:
        if report.posted is not None:
            rows_written["rows"] += len(report.posted.rows)

    with tempfile.TemporaryDirectory() as tmp:
        place = {"storage.url": args.url} if args.url else {"storage.path": str(Path(tmp) / "bench.db")}
        if args.offline_processes is not None:
            place["mind.offline_processes"] = args.offline_processes
        settings = pm.load_settings(None, overrides=place)
        embedder = await trio.to_thread.run_sync(make_embedder, settings)
        clock = ManualClock(START)
        original_pipeline = pipeline_module.WritePipeline

        def timed_pipeline(store, mind, embedder, clock, settings, **kwargs):
            return original_pipeline(TimedStore(store, timers), mind, embedder, clock, settings, **kwargs)

        evenings: list[Evening] = []
        pm_memory = sys.modules["persona_memory.memory"]
        pm_memory.WritePipeline = timed_pipeline  # open_memory builds the pipeline by this name
        mind = TimedMind(make_mind(settings), timers)
        if mind.processes is not None:  # a slice's reading, check and embedding as one worker job
            mind.processes.run = timers.wrap_async("reader jobs (worker)", mind.processes.run)
        for name, part in (("neighbours", "route (neighbours)"), ("exact_duplicate", "route (duplicates)")):
            if callable(getattr(pipeline_module, name, None)):  # the routing the pipeline calls today
                setattr(pipeline_module, name, timers.wrap_sync(part, getattr(pipeline_module, name)))
        try:
            embedder = TimedEmbedder(embedder, timers)
            async with pm.open_memory(settings, clock=clock, embedder=embedder, mind=mind,
                                      on_report=on_report) as memory:
                started = time.perf_counter()
                if mind.processes is not None:
                    mind.processes.start()  # else they start at the first overlapping slices
                while mind.processes is not None and not mind.processes.ready:
                    await trio.sleep(0.01)  # the workers import the reader and load the embedder once
                warm_up.append(time.perf_counter() - started)
                for round_no in range(args.rounds):
                    lines = script(rooms, rng, args.lines_private, args.lines_group, round_no)
                    before = rows_written["rows"]
                    await open_rooms(memory, rooms)  # the read path, untimed
                    t0, c0, w0 = time.perf_counter(), time.process_time(), workers_cpu(mind)
                    at = clock.now()

                    async def post_room(room: Room) -> None:
                        for k, (speaker, text) in enumerate(lines[room.room_id]):
                            await memory.post_line(room.room_id, speaker, text, at + timedelta(seconds=20 * k))

                    if args.posting == "sequential":
                        for room in rooms:
                            await post_room(room)
                    else:
                        async with trio.open_nursery() as nursery:
                            for room in rooms:
                                nursery.start_soon(post_room, room)
                    t1, c1 = time.perf_counter(), time.process_time()
                    threads_before = threads_cpu()
                    if args.profile and round_no == args.rounds - 1:
                        profiler = cProfile.Profile()
                        profiler.enable()
                    for room in rooms:
                        await memory.send(pm.RoomWentQuiet(room_id=room.room_id))
                    await memory.drain()
                    t2, c2, w2 = time.perf_counter(), time.process_time(), workers_cpu(mind)
                    write_threads.update(threads_cpu())
                    write_threads.subtract(threads_before)
                    if args.profile and round_no == args.rounds - 1:
                        profiler.disable()
                        profiler.dump_stats(args.profile)
                    n = sum(len(v) for v in lines.values())
                    evenings.append(Evening(n, t1 - t0, t2 - t1, rows_written["rows"] - before, c1 - c0, c2 - c1,
                                            w2 - w0))
                    for room in rooms:
                        await memory.send(pm.RoomArchived(room_id=room.room_id))
                    await memory.drain()
                    clock.advance(days=7)
                digests = await memory._store.read(digest_rows) if args.digest else None
        finally:
            pm_memory.WritePipeline = original_pipeline
    return evenings, timers, len(rooms), digests


def report(evenings: list[Evening], timers: Timers, rooms: int, args: argparse.Namespace) -> None:
    print(f"write bench: {args.personas} personas, {rooms} rooms ({args.privates} private chats "
          f"each, a group room per two personas), {args.rounds} evening(s), {args.posting} posting; "
          f"offline mind, WordLlama, {'PostgreSQL' if args.url else 'SQLite temp file'}")
    print(f"{'evening':>8} {'lines':>7} {'post s':>8} {'write s':>8} {'end-to-end l/s':>15} "
          f"{'write-path l/s':>15} {'rows':>6}")
    for i, e in enumerate(evenings, 1):
        print(f"{i:>8} {e.lines:>7} {e.post_seconds:>8.2f} {e.write_seconds:>8.2f} "
              f"{e.lines / (e.post_seconds + e.write_seconds):>15,.0f} "
              f"{e.lines / e.write_seconds:>15,.0f} {e.rows:>6}")
    lines = sum(e.lines for e in evenings)
    post = sum(e.post_seconds for e in evenings)
    write = sum(e.write_seconds for e in evenings)
    print(f"{'total':>8} {lines:>7} {post:>8.2f} {write:>8.2f} {lines / (post + write):>15,.0f} "
          f"{lines / write:>15,.0f} {sum(e.rows for e in evenings):>6}")
    print(f"lines/s end to end (post + write path): {lines / (post + write):,.0f}")
    post_cpu = sum(e.post_cpu for e in evenings)
    write_cpu = sum(e.write_cpu for e in evenings)
    print(f"CPU per line (every thread, process_time): posting {1e6 * post_cpu / lines:,.0f} µs, "
          f"write path {1e6 * write_cpu / lines:,.0f} µs; CPU / wall: posting {post_cpu / post:.2f}, "
          f"write path {write_cpu / write:.2f}")
    worker_cpu = sum(e.worker_cpu for e in evenings)
    if warm_up and warm_up[0] > 0.05:
        print(f"the reader's worker processes were up {warm_up[0]:.2f} s after the memory opened "
              f"(importing the reader, loading the embedder); the timing starts after")
    if worker_cpu:
        print(f"the offline reader's worker processes besides (/proc, posting + write path): "
              f"{1e6 * worker_cpu / lines:,.0f} µs CPU per line")
    if write_threads:
        print("the write path's CPU by thread (/proc), µs per line: " + ", ".join(
            f"{kind} {1e6 * seconds / lines:,.0f}" for kind, seconds in write_threads.most_common() if seconds > 0))
    print("breakdown of the write path, summed over all slices (they overlap; waits included):")
    total = sum(timers.seconds.values()) or 1.0
    for part, seconds in sorted(timers.seconds.items(), key=lambda kv: -kv[1]):
        print(f"  {part:<20} {seconds:8.2f} s  {timers.calls[part]:>7} calls  "
              f"{1e3 * seconds / max(1, timers.calls[part]):8.3f} ms/call  {100 * seconds / total:5.1f} %")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--personas", type=int, default=100)
    parser.add_argument("--privates", type=int, default=3, help="private chats per persona")
    parser.add_argument("--lines-private", type=int, default=24, help="lines per private chat per evening")
    parser.add_argument("--lines-group", type=int, default=40, help="lines per group room per evening")
    parser.add_argument("--rounds", type=int, default=2, help="evenings, a week apart")
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--posting", choices=("sequential", "concurrent"), default="sequential",
                        help="post one room after another, or every room at once (each in order)")
    parser.add_argument("--offline-processes", type=int, metavar="N",
                        help="mind.offline_processes (default: the setting's default; 0 reads on a thread)")
    parser.add_argument("--profile", metavar="FILE", help="cProfile the last evening's write path (trio thread)")
    parser.add_argument("--url", help="store in this empty PostgreSQL database instead of a fresh SQLite file")
    parser.add_argument("--digest", action="store_true",
                        help="print sha256 digests of every row written (a speed change must not move them)")
    parser.add_argument("--json", metavar="FILE", help="also write the totals to FILE as JSON")
    args = parser.parse_args(argv)
    if args.personas < 1 or args.privates < 1 or args.rounds < 1:
        parser.error("--personas, --privates and --rounds must be at least 1")
    return args


def totals(evenings: list[Evening], rooms: int, args: argparse.Namespace) -> dict:
    """The totals ``report`` prints, as numbers (seconds; CPU per line in seconds)."""
    lines = sum(e.lines for e in evenings)
    post = sum(e.post_seconds for e in evenings)
    write = sum(e.write_seconds for e in evenings)
    post_cpu = sum(e.post_cpu for e in evenings)
    write_cpu = sum(e.write_cpu for e in evenings)
    return {
        "backend": "postgresql" if args.url else "sqlite",
        "personas": args.personas, "rooms": rooms, "rounds": args.rounds, "posting": args.posting,
        "lines": lines, "rows": sum(e.rows for e in evenings),
        "post_seconds": post, "write_seconds": write,
        "end_to_end_lines_per_second": lines / (post + write),
        "write_path_lines_per_second": lines / write,
        "post_cpu_per_line": post_cpu / lines, "write_cpu_per_line": write_cpu / lines,
        "post_cpu_over_wall": post_cpu / post, "write_cpu_over_wall": write_cpu / write,
        "worker_cpu_per_line": sum(e.worker_cpu for e in evenings) / lines,
    }


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    evenings, timers, rooms, digests = trio.run(run, args)
    if args.json:
        Path(args.json).write_text(json.dumps(totals(evenings, rooms, args), indent=1))
    report(evenings, timers, rooms, args)
    if digests is not None:
        print(f"rows in the file: {digests['count']}")
        print(f"digest rows       (persona, subject, kind, text): {digests['rows']}")
        print(f"digest rows+state (… importance, valid_from, open, witnessed, evidence): {digests['rows+state']}")


if __name__ == "__main__":
    main()
