"""The read-path benchmark (issue 2): how long a persona's block takes, cold and cached.

Run it::

    .venv/bin/python bench/block_bench.py                 # 100, 1,000 and 10,000 rows
    .venv/bin/python bench/block_bench.py --sizes 1000 --reps 500 --profile

For each size it seeds one persona (``warren``) with that many open rows (``seed_rows``) in a
fresh SQLite file in a temporary directory, then, through the real ``open_memory`` with a
``ManualClock`` and ``HashingEmbedder(256)`` (not WordLlama: the vectors are made and quantised
fast; the read path does the same work for either), measures:

- first load, fresh process: a new Python process opens the memory and sends the first
  ``RoomOpened``; the actor reads and decodes every row, then builds. Timed from ``send`` to
  ``block`` returning (imports and opening the store are not counted).
- first load, in process: the same on a fresh ``open_memory`` in this process (it also warms
  the actor for what follows).
- cold block build: ``send(RoomOpened(new room id))`` → ``block()`` returning, with the row
  index already loaded. Each repetition uses a new room, so nothing is cached; between
  repetitions (outside the timing) the room is archived and the memory drained, so each open
  is measured alone, not overlapped with the previous one's touch write.
- cached ``block()``: the same room asked again and again.

The room is a group room with four humans present and ``scope.v1_proven = false``, so personal
rows load. Then, in the same process, it times the parts of a cold open separately — the room
write (``store.save_room``), the state read (``store.read_state``), a bare thread hop on each
connection, the topic embedding and the pure build — and the core functions the build calls
(each wrapped where ``core.block`` finds it), so the share of each is visible.

``--blas-threads N`` sets ``OPENBLAS_NUM_THREADS`` before numpy loads: numpy's OpenBLAS hands
every relevance product (candidates × 256) to one thread per CPU, which on a busy machine costs
more than the product. No timing here is asserted anywhere.
"""

from __future__ import annotations

import os
import sys

if "--blas-threads" in sys.argv[:-1]:  # must be set before numpy loads OpenBLAS
    _threads = sys.argv[sys.argv.index("--blas-threads") + 1]
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = _threads

import argparse
import cProfile
import functools
import gc
import inspect
import io
import json
import platform
import pstats
import sqlite3
import subprocess
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Awaitable, Callable

import attrs
import numpy as np
import trio

from persona_memory import ManualClock, RoomArchived, RoomOpened, load_settings, open_memory
from persona_memory.actors.row_index import RowIndex
from persona_memory.compose import block_rules
from persona_memory.core import ranking
from persona_memory.core.audience import Audience, visible_memories
from persona_memory.core.block import build_block

try:
    from persona_memory.core.block import build_from_table  # the prepared-table path, if present
except ImportError:
    build_from_table = None
from persona_memory.embedding import HashingEmbedder
from persona_memory.storage.store import StoredRoom

from seed_rows import PERSONA, PRESENT, TOPIC, make_rows

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
DIM = 256
NAMES = {1: "Dan", 2: "Cara", 3: "Nolan", 4: "Mei"}
TARGET_COLD_P50 = 1e-3
TARGET_COLD_P99 = 2e-3
TARGET_CACHED_P99 = 20e-6
BUILD = "core.block build (pure)"


def settings_for(path: Path):
    return load_settings(
        overrides={
            "storage.path": str(path),
            "scope.v1_proven": False,
            "embedder.kind": "hashing",
            "embedder.dim": DIM,
        }
    )


def opened(room_id: str) -> RoomOpened:
    return RoomOpened(
        room_id=room_id,
        personas=(PERSONA,),
        humans=PRESENT,
        private=False,
        topic=TOPIC,
        names=NAMES,
    )


def pct(samples: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples), q))


def fmt(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


# ---- seeding and the first load ------------------------------------------------------------


async def seed(path: Path, count: int) -> None:
    rows = make_rows(count, now=NOW, dim=DIM)
    async with open_memory(settings_for(path), clock=ManualClock(NOW), embedder=HashingEmbedder(DIM)) as memory:
        await memory._store.insert_memories(rows)
        for uid in PRESENT:
            await memory.set_memory_note(uid, f"Call me {NAMES[uid]}. I'm vegetarian.")


async def first_open(path: Path) -> float:
    """Time the first ``RoomOpened`` → ``block()`` of a fresh ``open_memory``."""
    async with open_memory(settings_for(path), clock=ManualClock(NOW), embedder=HashingEmbedder(DIM)) as memory:
        start = time.perf_counter()
        await memory.send(opened("first-load"))
        await memory.block(PERSONA, "first-load")
        elapsed = time.perf_counter() - start
        await memory.send(RoomArchived(room_id="first-load"))
    return elapsed


def first_load_fresh_process(path: Path, runs: int) -> list[float]:
    """Run ``first_open`` in ``runs`` new Python processes; each prints its seconds."""
    out = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, __file__, "--first-load-child", str(path)],
            check=True,
            capture_output=True,
            text=True,
        )
        out.append(json.loads(done.stdout)["seconds"])
    return out


# ---- the end-to-end measurement ------------------------------------------------------------


@attrs.define
class SizeResult:
    rows: int
    visible: int = 0
    block_chars: int = 0
    first_fresh: list[float] = attrs.field(factory=list)
    first_inproc: float = 0.0
    cold: list[float] = attrs.field(factory=list)
    cached: list[float] = attrs.field(factory=list)
    parts: dict[str, list[float]] = attrs.field(factory=dict)
    steps: dict[str, tuple[list[float], int]] = attrs.field(factory=dict)
    profile: str = ""


async def timed(fn: Callable[[], Awaitable[object]], reps: int) -> list[float]:
    """The seconds each of ``reps`` awaits of ``fn()`` took."""
    out = []
    for _ in range(reps):
        start = time.perf_counter()
        await fn()
        out.append(time.perf_counter() - start)
    return out


async def measure(path: Path, result: SizeResult, *, cold_reps: int, cached_calls: int, profile: bool) -> None:
    """Warm the actor (the in-process first load), then time cold opens, cached calls, parts."""
    settings = settings_for(path)
    embedder = HashingEmbedder(DIM)
    async with open_memory(settings, clock=ManualClock(NOW), embedder=embedder) as memory:
        start = time.perf_counter()
        await memory.send(opened("warm"))
        text = await memory.block(PERSONA, "warm")
        result.first_inproc = time.perf_counter() - start
        result.block_chars = len(text)
        await memory.drain()

        gc.collect()
        for i in range(cold_reps):
            room = f"cold-{i}"
            start = time.perf_counter()
            await memory.send(opened(room))
            await memory.block(PERSONA, room)
            result.cold.append(time.perf_counter() - start)
            await memory.send(RoomArchived(room_id=room))
            await memory.drain()

        block = memory.block
        samples = result.cached
        perf = time.perf_counter
        for _ in range(cached_calls):
            start = perf()
            await block(PERSONA, "warm")
            samples.append(perf() - start)

        await measure_parts(memory._store, embedder, settings, result, cold_reps, profile)


async def measure_parts(store, embedder, settings, result: SizeResult, reps: int, profile: bool) -> None:
    """Time the parts of a cold open one by one, on the same open store."""
    counter = iter(range(10**9))

    async def save_room() -> None:
        room = StoredRoom(
            room_id=f"part-{next(counter)}",
            private=False,
            incognito=False,
            kit=None,
            topic=TOPIC,
            personas=(PERSONA,),
            humans=PRESENT,
        )
        await store.save_room(room, NOW)

    result.parts["store.save_room (write hop + commit)"] = await timed(save_room, reps)
    result.parts["store.write(no-op) (bare write hop)"] = await timed(lambda: store.write(lambda c: None), reps)
    result.parts["store.read_state (read hop)"] = await timed(lambda: store.read_state(PERSONA, PRESENT), reps)
    result.parts["store.read(no-op) (bare read hop)"] = await timed(lambda: store.read(lambda c: None), reps)
    result.parts["embedder.embed([topic])"] = await timed(lambda: embedder.embed([TOPIC]), reps)

    version, rows = await store.persona_rows(PERSONA)
    index = RowIndex()
    index.load(version, rows)
    _, controls = await store.read_state(PERSONA, PRESENT)
    topic = ranking.Topic(vector=(await embedder.embed([TOPIC]))[0], embedder=embedder.name)
    rules = block_rules(settings)
    args = dict(
        vectors=index.vectors,
        replaced=index.replaced,
        controls=controls,
        topic=topic,
        names=NAMES,
        now=NOW,
        rules=rules,
    )

    table = getattr(index, "table", None)
    if build_from_table is not None and table is not None:
        del args["vectors"], args["replaced"]

        def build() -> object:
            return build_from_table(PERSONA, room_audience(), table, **args)

        def prepare() -> object:
            return type(table).from_rows(index.open_rows.values(), index.vectors, index.replaced)

    else:

        def build() -> object:
            return build_block(PERSONA, room_audience(), index.open_rows.values(), **args)

        prepare = None

    builds = []
    for _ in range(reps):
        start = time.perf_counter()
        build()
        builds.append(time.perf_counter() - start)
    result.parts[BUILD] = builds

    if prepare is not None:
        prepared = []
        for _ in range(max(reps // 10, 3)):
            start = time.perf_counter()
            prepare()
            prepared.append(time.perf_counter() - start)
        result.parts["RowTable.from_rows (once per load)"] = prepared
    result.steps = step_timings(build, reps)
    result.visible = len(visible_memories(PERSONA, room_audience(), index.open_rows.values(), controls, v1_proven=False))

    if profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(reps):
            build()
        profiler.disable()
        buffer = io.StringIO()
        pstats.Stats(profiler, stream=buffer).sort_stats("tottime").print_stats(18)
        result.profile = buffer.getvalue()


def room_audience() -> Audience:
    return Audience(present=PRESENT, private=False, incognito=False)


def step_timings(build: Callable[[], object], reps: int) -> dict[str, tuple[list[float], int]]:
    """Time each core function a build calls, by wrapping it where ``core.block`` finds it.

    Wraps the functions ``core.block`` imported from ``persona_memory.core`` and the top-level
    functions of the core modules it imported whole (``ranking``), so it follows whatever the
    build calls today. Nested calls are timed too (``take`` includes the lines it renders).
    Returns ``{name: (seconds per build, calls per build)}``.
    """
    import persona_memory.core.block as block_module

    totals: dict[str, float] = {}
    calls: dict[str, int] = {}
    patched: list[tuple[object, str, object]] = []

    def wrap(owner: object, name: str, fn: Callable) -> None:
        label = f"{fn.__module__.rsplit('.', 1)[-1]}.{name}"

        @functools.wraps(fn)
        def timed_fn(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                totals[label] = totals.get(label, 0.0) + time.perf_counter() - start
                calls[label] = calls.get(label, 0) + 1

        patched.append((owner, name, fn))
        setattr(owner, name, timed_fn)

    for name, value in list(vars(block_module).items()):
        if inspect.isfunction(value) and value.__module__.startswith("persona_memory.core."):
            if value.__module__ != block_module.__name__:
                wrap(block_module, name, value)
        elif inspect.ismodule(value) and value.__name__.startswith("persona_memory.core."):
            for fname, fn in list(vars(value).items()):
                if inspect.isfunction(fn) and fn.__module__ == value.__name__:
                    wrap(value, fname, fn)
    out: dict[str, tuple[list[float], int]] = {}
    try:
        for _ in range(reps):
            totals.clear()
            calls.clear()
            build()
            for label, seconds in totals.items():
                samples, _ = out.setdefault(label, ([], calls[label]))
                samples.append(seconds)
                out[label] = (samples, calls[label])
    finally:
        for owner, name, fn in reversed(patched):
            setattr(owner, name, fn)
    return out


# ---- reporting -----------------------------------------------------------------------------


def blas() -> str:
    try:
        info = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        name = f"{info.get('name', '?')} {info.get('version', '')}".strip()
    except Exception:  # numpy < 2 or an unusual build
        name = "unknown"
    threads = os.environ.get("OPENBLAS_NUM_THREADS") or f"default (up to {os.cpu_count()})"
    return f"BLAS {name}, threads {threads}"


def machine() -> str:
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs "
        f"({platform.processor() or 'unknown cpu'}), Python {platform.python_version()}, "
        f"numpy {np.__version__}, trio {trio.__version__}, SQLite {sqlite3.sqlite_version}; "
        f"load average {os.getloadavg()[0]:.2f} at the end"
    )


def report(results: list[SizeResult], args: argparse.Namespace) -> None:
    print("persona-memory read-path benchmark (issue 2)")
    print(f"machine : {machine()}")
    print(f"          {blas()}")
    print(
        f"setup   : one persona, group room, {len(PRESENT)} humans present (+4 absent), "
        "scope.v1_proven=false, all six kinds, importance 1..10, created over 180 days"
    )
    print(
        f"vectors : {DIM}-d from HashingEmbedder({DIM}) (not WordLlama), int8-quantised; "
        "a topic on every room; SQLite WAL in a temp dir; ManualClock"
    )
    print(f"command : {' '.join([Path(sys.executable).name, *sys.argv])}")
    print()
    head = (
        f"{'rows':>7} {'visible':>7} {'first load':>11} {'first load':>11} "
        f"{'cold p50':>9} {'cold p99':>9} {'reps':>5} {'cached p50':>10} {'cached p99':>10} {'calls':>6}"
    )
    print(head)
    print(f"{'':>7} {'':>7} {'(new proc)':>11} {'(in proc)':>11}")
    print("-" * len(head))
    for r in results:
        print(
            f"{r.rows:>7,} {r.visible:>7,} {fmt(float(np.median(r.first_fresh))) if r.first_fresh else '-':>11} "
            f"{fmt(r.first_inproc):>11} {fmt(pct(r.cold, 50)):>9} {fmt(pct(r.cold, 99)):>9} {len(r.cold):>5} "
            f"{fmt(pct(r.cached, 50)):>10} {fmt(pct(r.cached, 99)):>10} {len(r.cached):>6}"
        )
    print()
    print(
        f"targets : cold ≤ {fmt(TARGET_COLD_P50)} p50 and ≤ {fmt(TARGET_COLD_P99)} p99 at 1,000 rows; "
        f"cached ≤ {fmt(TARGET_CACHED_P99)} p99"
    )
    for r in results:
        cached_ok = pct(r.cached, 99) <= TARGET_CACHED_P99
        line = f"  {r.rows:>6,} rows: cached p99 {'met' if cached_ok else 'MISSED'}"
        if r.rows == 1000:
            p50_ok = pct(r.cold, 50) <= TARGET_COLD_P50
            p99_ok = pct(r.cold, 99) <= TARGET_COLD_P99
            line += f"; cold p50 {'met' if p50_ok else 'MISSED'}; cold p99 {'met' if p99_ok else 'MISSED'}"
        print(line)
    if any(r.first_fresh for r in results):
        print(
            f"  first load (new proc): the median over {args.first_load_runs} fresh process(es); "
            "the actor reads and decodes every row once"
        )

    for r in results:
        if r.rows not in args.parts_for:
            continue
        cold50 = pct(r.cold, 50)
        print()
        print(f"parts of a cold open at {r.rows:,} rows (cold p50 {fmt(cold50)}, block {r.block_chars} chars)")
        print(f"  {'part':<40} {'p50':>9} {'p99':>9} {'of cold p50':>12}")
        in_path = (
            "store.save_room (write hop + commit)",
            "store.read_state (read hop)",
            "embedder.embed([topic])",
            BUILD,
        )
        for name, samples in r.parts.items():
            share = f"{pct(samples, 50) / cold50:>11.0%}" if name in in_path else f"{'(ref)':>12}"
            print(f"  {name:<40} {fmt(pct(samples, 50)):>9} {fmt(pct(samples, 99)):>9} {share}")
        rest = cold50 - sum(pct(r.parts[n], 50) for n in in_path)
        print(f"  {'rest: routing, mailbox, scheduling':<40} {fmt(max(rest, 0.0)):>9} {'':>9} {max(rest, 0) / cold50:>11.0%}")
        build50 = pct(r.parts[BUILD], 50)
        if r.steps:
            print("  core functions a build calls (each wrapped and timed; nested calls count in both):")
            print(f"    {'function':<38} {'p50':>9} {'p99':>9} {'of build':>12} {'calls':>6}")
            ranked = sorted(r.steps.items(), key=lambda kv: -pct(kv[1][0], 50))
            for name, (samples, count) in ranked:
                print(
                    f"    {name:<38} {fmt(pct(samples, 50)):>9} {fmt(pct(samples, 99)):>9} "
                    f"{pct(samples, 50) / build50:>11.0%} {count:>6}"
                )
        if r.profile:
            print()
            print(f"cProfile of the build × {len(r.cold)} at {r.rows:,} rows (by own time):")
            print("\n".join(r.profile.splitlines()[:40]))


# ---- main ----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000], help="open rows per run")
    parser.add_argument("--reps", type=int, default=200, help="cold opens per size (default 200)")
    parser.add_argument(
        "--reps-large", type=int, default=50, help="cold opens for sizes of 10,000 rows or more (default 50)"
    )
    parser.add_argument("--cached-calls", type=int, default=10_000, help="cached block() calls (default 10,000)")
    parser.add_argument("--first-load-runs", type=int, default=3, help="fresh processes for the first load (0: skip)")
    parser.add_argument(
        "--parts-for", type=int, nargs="*", default=None, help="sizes to break down (default: all sizes)"
    )
    parser.add_argument("--profile", action="store_true", help="also cProfile the build")
    parser.add_argument(
        "--blas-threads",
        metavar="N",
        help="set OPENBLAS_NUM_THREADS (and OMP/MKL) to N before numpy loads; default: leave as is",
    )
    parser.add_argument("--first-load-child", metavar="DB", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.parts_for is None:
        args.parts_for = args.sizes
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.first_load_child:
        print(json.dumps({"seconds": trio.run(first_open, Path(args.first_load_child))}))
        return
    results = []
    with tempfile.TemporaryDirectory(prefix="pm-bench-") as tmp:
        for size in args.sizes:
            path = Path(tmp) / f"bench-{size}.db"
            result = SizeResult(rows=size)
            trio.run(seed, path, size)
            if args.first_load_runs:
                result.first_fresh = first_load_fresh_process(path, args.first_load_runs)
            reps = args.reps_large if size >= 10_000 else args.reps
            trio.run(
                functools.partial(
                    measure, path, result, cold_reps=reps, cached_calls=args.cached_calls, profile=args.profile
                )
            )
            results.append(result)
            print(f"  done: {size:,} rows", file=sys.stderr)
    report(results, args)


if __name__ == "__main__":
    main()
