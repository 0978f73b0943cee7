"""The read-path benchmark: a persona's block, cold, cached and after a write,
beside the in-process floor of the same work; and the recall note.

Run it::

    .venv/bin/python bench/block_bench.py                 # 100, 1,000 and 10,000 rows
    .venv/bin/python bench/block_bench.py --sizes 1000 10000 50000
    .venv/bin/python bench/block_bench.py --embedder hashing   # HashingEmbedder(256), as before
    .venv/bin/python bench/block_bench.py --url postgresql://…/any_db   # on PostgreSQL (see below)
    .venv/bin/python bench/block_bench.py --sizes 10000 --first-load-runs 5 --first-load-only

For each size it seeds one persona (``warren``) with that many open rows (``seed_rows``) in a
fresh SQLite file in a temporary directory — their vectors from the default configuration's
embedder (the bundled WordLlama, 256-d; ``--embedder hashing`` for ``HashingEmbedder(256)``),
embedded in batches and int8-quantised — then, through the real ``open_memory`` with a
``ManualClock`` and that same embedder (which embeds each room's topic), measures:

- first load, fresh process: a new Python process opens the memory and sends the first
  ``RoomOpened``; the actor reads every row, prepares its table, then builds. Timed from
  ``send`` to ``block`` returning (imports and opening the store are not counted), beside the
  CPU seconds the process spent meanwhile (every thread): on a shared machine the wall time
  also holds the waits for a core. The offline reader's worker processes start only when
  slices first overlap, so none warms up beside this load; the same is timed again in other
  new processes that start them and wait for them to be up before sending.
- first writes, in the same fresh process right after its first load: the room goes quiet
  after 20 lines, ``RoomWentQuiet`` → ``drain()`` (the first quiet slice, alone); then four
  other personas' private rooms go quiet at once (the first burst: overlapping slices start
  the workers, and are read on this side while they warm up). ``--first-load-only`` prints
  the fresh-process figures alone, without the workers-up runs.
- first load, in process: the same on a fresh ``open_memory`` in this process (it also warms
  the actor for what follows).
- cold block build: ``send(RoomOpened(new room id))`` → ``block()`` returning, with the row
  index already loaded. Each repetition uses a new room, so nothing is cached; between
  repetitions (outside the timing) the room is archived and the memory drained, so each open
  is measured alone, not overlapped with the previous one's touch write.
- the floor, alternating with the cold opens: the same work in numpy alone, no actor and no
  SQLite (``make_floor``) — embed the topic, one product of the stored float32 unit vectors
  with it, ``argpartition`` the best rows, join their rendered lines up to 1,200 characters —
  and the ratio of the two medians; for reference, the floor timed again back to back, its
  caches warm (what a cold open never sees: each open follows other work), and that ratio.
- open after a write: a human's line in an open room, ``RoomWentQuiet`` and ``drain`` (the
  offline mind's write path commits a row through the actor's own writer; untimed), then a
  cold open, timed; then a cold open right after it, for the ratio.
- the recall note: ``memory.recall`` for short questions cycled, in the open room; and, on the
  pure table, how often the note that ranks in two stages (past ``recall.SHORTLIST_FROM``
  candidates) equals the exact note (``shortlist=None``) for the same questions: same ids,
  same order.
- cached ``block()``: the same room asked again and again.

The room is a group room with four humans present and ``scope.v1_proven = false``, so personal
rows load. Then, in the same process, it times the parts of a cold open separately — the
state read (``store.read_state``: on the path only after a write that could change what it
reads), a bare thread hop on each connection, the topic embedding and the pure build — and the core functions the build calls
(each wrapped where ``core.block`` finds it), so the share of each is visible; and the cost per
row of seeding, of the pure build, of reading the rows as the actor does
(``store.memories.rows_said``), of loading them (``RowIndex.load``: decoding, preparing the
table) and of the open after a write.

``--blas-threads N`` sets ``OPENBLAS_NUM_THREADS`` before numpy loads: numpy's OpenBLAS hands
every relevance product (candidates × 256) to one thread per CPU, which on a busy machine costs
more than the product. No timing here is asserted anywhere.

``--url postgresql://…/DB`` runs the same on PostgreSQL: for each size the bench creates a
fresh database beside ``DB`` on that server (``DB_block_<rows>``; the URL's user needs
``CREATEDB``; ``DB`` itself is only connected to, never written), seeds it through the same
``insert_memories`` and measures the same figures through ``open_memory`` with ``storage.url``
set to it, and drops it at the end. Without ``--url`` nothing changes: SQLite in a temp dir.
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

from persona_memory import ManualClock, RoomArchived, RoomOpened, RoomWentQuiet, load_settings, open_memory
from persona_memory.actors.row_index import RowIndex
from persona_memory.compose import block_rules, make_embedder, make_mind
from persona_memory.core import ranking
from persona_memory.core.audience import Audience, visible_memories
from persona_memory.core.block import build_block

try:
    from persona_memory.core.block import build_from_table  # the prepared-table path, if present
except ImportError:
    build_from_table = None
try:  # the two-stage recall note, if present
    from persona_memory.compose import recall_rules
    from persona_memory.core import recall as recall_module
    from persona_memory.core.block import candidates as block_candidates
    from persona_memory.core.recall import recall_note

    if "shortlist" not in inspect.signature(recall_note).parameters:
        recall_note = None
except ImportError:
    recall_note = None
from persona_memory.storage.location import redacted
from seed_rows import PERSONA, PRESENT, TOPIC, make_rows

EMBEDDER = {"kind": "wordllama"}  # set from --embedder in main (and in the first-load child)
POSTGRES_SCHEMES = ("postgresql://", "postgres://")

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
DIM = 256
NAMES = {1: "Dan", 2: "Cara", 3: "Nolan", 4: "Mei"}
TARGET_COLD_P50 = 1e-3
TARGET_COLD_P99 = 2e-3
TARGET_CACHED_P99 = 20e-6
BUILD = "core.block build (pure)"
STATE_READ = "store.read_state (after a change only)"
PREPARE = "RowIndex.load (once per load)"
READ = "store.memories.rows_said (once per load)"
FLOOR_TOP = 64  # rows the floor takes before cutting at the budget (lines are >= 40 chars)
CHAR_LIMIT = 1200
QUESTIONS = (
    "How did the interview at Tencent go?",
    "Is Miso the cat doing well?",
    "green tea or coffee this morning?",
    "Who is going to Kyoto?",
    "When does the tea festival open?",
    "did you send me the dumpling recipe",
    "Shall we finish our chess game?",
    "Who works night shifts at the hospital?",
    "How long is the train to Suzhou?",
    "Anyone saving up for a wedding?",
    "Are we still on for board games on Friday?",
    "Do you still run along the lake?",
)
WRITE_LINES = (
    "I just adopted a puppy called Biscuit{n}.",
    "I moved to a new flat in Lisbon last week, number {n}.",
    "My sister is visiting me from Chengdu on day {n}.",
    "I started learning the violin, lesson {n} was hard.",
    "I work as a nurse at the city clinic now, ward {n}.",
    "I am training for a marathon, week {n} of the plan.",
    "I bought a blue bicycle for my commute, frame {n}.",
    "My favourite dish is my grandmother's dumplings, recipe {n}.",
)


def settings_for(path: Path | str):
    """The bench's settings on ``path``: an SQLite file, or a ``postgresql://`` URL (a str)."""
    is_url = isinstance(path, str) and path.startswith(POSTGRES_SCHEMES)
    return load_settings(
        None,
        overrides={
            **({"storage.url": path} if is_url else {"storage.path": str(path)}),
            "scope.v1_proven": False,
            "embedder.kind": EMBEDDER["kind"],
            "embedder.dim": DIM,
            # The seeded rows spread over 180 days: at 50,000 rows today's alone would pass
            # the daily cap, and the mind would keep nothing of the lines the bench writes.
            "write.daily_cap_per_human": 10_000,
        },
    )


@functools.cache
def bench_embedder():
    """The embedder the settings name (one per process): what ``open_memory`` would make."""
    return make_embedder(settings_for(Path("unused.db")))


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
    if seconds != seconds:
        return "-"
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e9:.0f} ns"


# ---- seeding and the first load ------------------------------------------------------------


async def seed(path: Path | str, count: int) -> None:
    rows = make_rows(count, now=NOW, dim=DIM, embedder=bench_embedder())
    async with open_memory(settings_for(path), clock=ManualClock(NOW), embedder=bench_embedder()) as memory:
        await memory._store.memories.insert(rows)
        for uid in PRESENT:
            await memory.set_memory_note(uid, f"Call me {NAMES[uid]}. I'm vegetarian.")


QUIET_PERSONAS = ("nolan", "mara", "iris", "oskar")  # the burst's personas, rowless


async def first_open(path: Path | str, *, reader_up: bool = False) -> dict[str, float]:
    """Time the first ``RoomOpened`` → ``block()`` of a fresh ``open_memory`` (``seconds``),
    and the CPU seconds the process spent meanwhile (``cpu``: every thread; on a shared
    machine the wall time also counts the waits for a core). With ``reader_up``, only once the
    offline reader's worker processes are up (started and waited for before the first send).

    Then, right after it, the first writes: the room goes quiet after 20 lines and
    ``RoomWentQuiet`` → ``drain()`` is timed (``quiet``: one slice, alone); then four other
    personas' private rooms go quiet at once after 10 lines each (``burst``: the slices
    overlap, which is when the write path hands them to the workers if they are up)."""
    settings = settings_for(path)
    mind = make_mind(settings) if reader_up else None
    processes = getattr(mind, "processes", None)
    async with open_memory(settings, clock=ManualClock(NOW), embedder=bench_embedder(), mind=mind) as memory:
        if processes is not None:
            getattr(processes, "start", lambda: None)()
        while processes is not None and not processes.ready:
            await trio.sleep(0.01)
        start, cpu = time.perf_counter(), time.process_time()
        await memory.send(opened("first-load"))
        await memory.block(PERSONA, "first-load")
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu

        for n in range(20):
            line = WRITE_LINES[n % len(WRITE_LINES)].format(n=f"q{n}")
            await memory.post_line("first-load", f"u:{sorted(PRESENT)[n % len(PRESENT)]}", line)
        start = time.perf_counter()
        await memory.send(RoomWentQuiet(room_id="first-load"))
        await memory.drain()
        quiet = time.perf_counter() - start

        for k, persona in enumerate(QUIET_PERSONAS):
            uid = sorted(PRESENT)[k % len(PRESENT)]
            await memory.send(RoomOpened(
                room_id=f"burst-{k}", personas=(persona,), humans={uid}, private=True, names={uid: NAMES[uid]}
            ))
            for n in range(10):
                line = WRITE_LINES[(n + k) % len(WRITE_LINES)].format(n=f"b{k}-{n}")
                await memory.post_line(f"burst-{k}", f"u:{uid}", line)
        start = time.perf_counter()
        for k in range(len(QUIET_PERSONAS)):
            await memory.send(RoomWentQuiet(room_id=f"burst-{k}"))
        await memory.drain()
        burst = time.perf_counter() - start
        await memory.send(RoomArchived(room_id="first-load"))
    if mind is not None:
        await mind.aclose()
    return {"seconds": elapsed, "cpu": cpu, "quiet": quiet, "burst": burst}


def first_load_fresh_process(path: Path | str, runs: int, *, reader_up: bool = False) -> list[dict[str, float]]:
    """Run ``first_open`` in ``runs`` new Python processes; each prints its figures as JSON."""
    out = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, __file__, "--embedder", EMBEDDER["kind"], "--first-load-child", str(path)]
            + (["--first-load-reader-up"] if reader_up else []),
            capture_output=True,
            text=True,
        )
        if done.returncode:
            raise RuntimeError(f"the first-load process failed ({done.returncode}):\n{done.stderr}")
        out.append(json.loads(done.stdout))
    return out


# ---- the end-to-end measurement ------------------------------------------------------------


@attrs.define
class SizeResult:
    rows: int
    visible: int = 0
    block_chars: int = 0
    first_fresh: list[float] = attrs.field(factory=list)
    first_fresh_cpu: list[float] = attrs.field(factory=list)
    first_up: list[tuple[float, float]] = attrs.field(factory=list)  # (seconds, CPU), reader's workers up
    first_quiet: list[float] = attrs.field(factory=list)  # one room quiet right after the first load
    first_burst: list[float] = attrs.field(factory=list)  # four personas' rooms quiet at once, then
    up_quiet: list[float] = attrs.field(factory=list)  # the same two, the reader's workers up
    up_burst: list[float] = attrs.field(factory=list)
    first_inproc: float = 0.0
    cold: list[float] = attrs.field(factory=list)
    floor: list[float] = attrs.field(factory=list)
    floor_warm: list[float] = attrs.field(factory=list)  # back to back, caches warm: for reference
    floor_chars: int = 0
    after_write: list[float] = attrs.field(factory=list)
    after_cold: list[float] = attrs.field(factory=list)
    write_how: dict[str, int] = attrs.field(factory=dict)
    recall: list[float] = attrs.field(factory=list)
    recall_hits: int = 0
    two_stage: tuple[int, int, int] | None = None  # (equal to the exact note, two-stage notes, questions)
    cached: list[float] = attrs.field(factory=list)
    parts: dict[str, list[float]] = attrs.field(factory=dict)
    steps: dict[str, tuple[list[float], int]] = attrs.field(factory=dict)
    profile: str = ""
    seed_seconds: float = 0.0


async def timed(fn: Callable[[], Awaitable[object]], reps: int) -> list[float]:
    """The seconds each of ``reps`` awaits of ``fn()`` took."""
    out = []
    for _ in range(reps):
        start = time.perf_counter()
        await fn()
        out.append(time.perf_counter() - start)
    return out


async def cold_open(memory, room: str) -> float:
    """Time ``send(RoomOpened)`` → ``block()`` of a new room; then, untimed, archive and drain."""
    start = time.perf_counter()
    await memory.send(opened(room))
    await memory.block(PERSONA, room)
    elapsed = time.perf_counter() - start
    await memory.send(RoomArchived(room_id=room))
    await memory.drain()
    return elapsed


async def own_write(memory, n: int) -> str:
    """Make the persona write one row of its own (untimed); say how it landed.

    A human says something in the open room ``warm``, the room goes quiet and the offline
    mind's write path commits the row through the actor's own writer. When the mind keeps
    nothing of a line, the next line is tried (up to eight); only a write of the actor's own
    counts, so the figure is the open after the persona's own write.
    """
    store = memory._store
    before, _ = await store.read_state(PERSONA, PRESENT)
    for attempt in range(8):
        line = WRITE_LINES[(n + attempt) % len(WRITE_LINES)].format(n=f"{n}-{attempt}")
        await memory.post_line("warm", f"u:{1 + (n + attempt) % len(PRESENT)}", line)
        await memory.send(RoomWentQuiet(room_id="warm"))
        await memory.drain()
        after, _ = await store.read_state(PERSONA, PRESENT)
        if after != before:
            return "offline mind"
    raise RuntimeError("the offline mind kept nothing of eight lines: no own write to time")


def make_floor(embedder, table) -> Callable[[], str]:
    """The in-process floor of a cold open's work, in numpy alone (no actor, no SQLite).

    Embed the topic, one product of the stored float32 unit vectors with it, the best
    ``FLOOR_TOP`` rows by ``argpartition``, and their already-rendered lines joined up to
    ``CHAR_LIMIT`` characters.
    """
    ((where, matrix),) = table.spaces.values()  # matrix row i is the table row at where[i]
    matrix = np.ascontiguousarray(matrix, dtype=np.float32)
    lines = [table.lines[pos] for pos in where.tolist()]
    top = min(FLOOR_TOP, len(lines))

    def floor() -> str:
        query = embedder.embed_sync([TOPIC])[0]
        scores = matrix @ query
        best = np.argpartition(-scores, top - 1)[:top]
        best = best[np.argsort(-scores[best])]
        out, used = [], 0
        for pos in best.tolist():
            line = lines[pos]
            if used + len(line) + 1 > CHAR_LIMIT:
                break
            out.append(line)
            used += len(line) + 1
        return "\n".join(out)

    return floor


async def measure(
    path: Path | str,
    result: SizeResult,
    *,
    cold_reps: int,
    write_reps: int,
    recall_reps: int,
    cached_calls: int,
    profile: bool,
) -> None:
    """Warm the actor (the in-process first load), then time cold opens beside the floor, the
    opens after a write, the recall note, cached calls and the parts."""
    settings = settings_for(path)
    embedder = bench_embedder()
    async with open_memory(settings, clock=ManualClock(NOW), embedder=embedder) as memory:
        start = time.perf_counter()
        await memory.send(opened("warm"))
        text = await memory.block(PERSONA, "warm")
        result.first_inproc = time.perf_counter() - start
        result.block_chars = len(text)
        await memory.drain()

        _, rows = await memory._store.memories.rows(PERSONA)
        index = RowIndex()
        index.load(0, rows)
        floor = make_floor(embedder, index.table)
        result.floor_chars = len(floor())

        gc.collect()
        for i in range(cold_reps):  # the floor and the cold open alternate, so both see one load
            start = time.perf_counter()
            floor()
            result.floor.append(time.perf_counter() - start)
            result.cold.append(await cold_open(memory, f"cold-{i}"))
        for _ in range(cold_reps):
            start = time.perf_counter()
            floor()
            result.floor_warm.append(time.perf_counter() - start)

        for i in range(write_reps):
            how = await own_write(memory, i)
            result.write_how[how] = result.write_how.get(how, 0) + 1
            result.after_write.append(await cold_open(memory, f"after-{i}"))
            result.after_cold.append(await cold_open(memory, f"paired-{i}"))

        for i in range(recall_reps):
            question = QUESTIONS[i % len(QUESTIONS)]
            start = time.perf_counter()
            note = await memory.recall(PERSONA, "warm", question)
            result.recall.append(time.perf_counter() - start)
            result.recall_hits += bool(note)
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

    result.parts["store.write(no-op) (bare write hop)"] = await timed(lambda: store.write(lambda c: None), reps)
    result.parts[STATE_READ] = await timed(lambda: store.read_state(PERSONA, PRESENT), reps)
    result.parts["store.read(no-op) (bare read hop)"] = await timed(lambda: store.read(lambda c: None), reps)
    result.parts["embedder.embed([topic])"] = await timed(lambda: embedder.embed([TOPIC]), reps)

    said: dict = {}
    if hasattr(store, "persona_rows_said"):  # what the actor reads (older commits: the rows alone)
        result.parts[READ] = await timed(lambda: store.memories.rows_said(PERSONA), max(reps // 10, 3))
        version, rows, said = await store.memories.rows_said(PERSONA)
    else:
        version, rows = await store.memories.rows(PERSONA)
    index = RowIndex()
    index.load(version, rows, said)
    _, controls = await store.read_state(PERSONA, PRESENT)
    topic = ranking.Topic.of(TOPIC, (await embedder.embed([TOPIC]))[0], embedder.name)
    rules = block_rules(settings)
    args = dict(
        vectors=getattr(index, "vectors", None),  # older commits kept the vectors beside the table
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
            return RowIndex().load(version, rows, said)  # decode the rows and vectors, prepare the table

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
        result.parts[PREPARE] = prepared
    result.steps = step_timings(build, reps)
    result.visible = len(visible_memories(PERSONA, room_audience(), index.open_rows.values(), controls, v1_proven=False))
    if table is not None and recall_note is not None:
        result.two_stage = two_stage_agreement(table, embedder, controls, rules, build)

    if profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(reps):
            build()
        profiler.disable()
        buffer = io.StringIO()
        pstats.Stats(profiler, stream=buffer).sort_stats("tottime").print_stats(18)
        result.profile = buffer.getvalue()


def two_stage_agreement(table, embedder, controls, rules, build) -> tuple[int, int, int]:
    """How often the recall note past ``SHORTLIST_FROM`` candidates (two stages) equals the
    exact note (``shortlist=None``): same ids, same order, for each of ``QUESTIONS`` in the
    bench's room, with that room's block left out as in ``memory.recall``. Returns (equal,
    notes that took the two stages, questions)."""
    shown = build().loaded_ids
    seen = block_candidates(PERSONA, room_audience(), table, controls, v1_proven=rules.v1_proven)
    two = seen.positions.size >= getattr(recall_module, "SHORTLIST_FROM", float("inf"))
    equal = 0
    for question in QUESTIONS:
        query = ranking.Topic.of(question, embedder.embed_sync([question])[0], embedder.name)
        args = dict(controls=controls, query=query, shown=shown, rules=rules, recall=recall_rules(settings_for(Path("x.db"))))
        fast = recall_note(PERSONA, room_audience(), table, **args)
        exact = recall_note(PERSONA, room_audience(), table, **args, shortlist=None) if two else fast
        equal += fast.ids == exact.ids
    return equal, len(QUESTIONS) if two else 0, len(QUESTIONS)


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


def machine(postgres: str | None = None) -> str:
    server = f", PostgreSQL {postgres}" if postgres else ""
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs "
        f"({platform.processor() or 'unknown cpu'}), Python {platform.python_version()}, "
        f"numpy {np.__version__}, trio {trio.__version__}, SQLite {sqlite3.sqlite_version}{server}; "
        f"load average {os.getloadavg()[0]:.2f} at the end"
    )


def shown_argv() -> list[str]:
    """``sys.argv`` as printed: a password in a PostgreSQL URL shows as ``***``."""
    return [redacted(a) if a.startswith(POSTGRES_SCHEMES) else a for a in sys.argv]


def runs_of(samples: list[float]) -> str:
    return ", ".join(fmt(x) for x in samples)


def first_load_lines(results: list[SizeResult], args: argparse.Namespace) -> None:
    """The fresh-process figures: the first load, then the first writes right after it."""
    if not any(r.first_fresh for r in results):
        return
    print(
        f"  first load (new proc): the median over {args.first_load_runs} fresh process(es); "
        "the actor reads and decodes every row once"
    )
    for r in results:
        if r.first_fresh_cpu:
            print(
                f"  {r.rows:>6,} rows: first load (new proc) {fmt(float(np.median(r.first_fresh)))}, "
                f"CPU {fmt(float(np.median(r.first_fresh_cpu)))} (process, every thread; runs: "
                + ", ".join(f"{fmt(w)}/{fmt(c)}" for w, c in zip(r.first_fresh, r.first_fresh_cpu))
                + ")"
            )
        if r.first_quiet:
            print(
                f"  {r.rows:>6,} rows: then its room quiet after 20 lines → drained "
                f"{fmt(float(np.median(r.first_quiet)))} (runs: {runs_of(r.first_quiet)}); "
                f"then {len(QUIET_PERSONAS)} personas' rooms quiet at once → drained "
                f"{fmt(float(np.median(r.first_burst)))} (runs: {runs_of(r.first_burst)})"
            )
        if r.first_up:
            print(
                f"  {r.rows:>6,} rows: the same once the offline reader's worker processes are up "
                f"{fmt(float(np.median([w for w, _ in r.first_up])))}, "
                f"CPU {fmt(float(np.median([c for _, c in r.first_up])))} (runs: "
                + ", ".join(f"{fmt(w)}/{fmt(c)}" for w, c in r.first_up)
                + f"); quiet {fmt(float(np.median(r.up_quiet)))}, burst {fmt(float(np.median(r.up_burst)))}"
            )


def report_first_loads(results: list[SizeResult], args: argparse.Namespace) -> None:
    """``--first-load-only``: the machine, the command and the fresh-process figures."""
    print("persona-memory read-path benchmark: first loads in fresh processes")
    print(f"machine : {machine()}")
    print(f"command : {' '.join([Path(sys.executable).name, *shown_argv()])}")
    first_load_lines(results, args)


def report(results: list[SizeResult], args: argparse.Namespace, postgres: str | None = None) -> None:
    """Print the figures; ``postgres`` is the server's version when the run was on ``--url``."""
    print("persona-memory read-path benchmark (issues 2 and 8)" + (" on PostgreSQL" if postgres else ""))
    print(f"machine : {machine(postgres)}")
    print(f"          {blas()}")
    print(
        f"setup   : one persona, group room, {len(PRESENT)} humans present (+4 absent), "
        "scope.v1_proven=false, all six kinds, importance 1..10, created over 180 days"
    )
    print(
        f"vectors : {DIM}-d from {bench_embedder().name} (--embedder {args.embedder}), the same embedder "
        "for the seeded rows and the topic; int8-quantised; a topic on every room; "
        + (
            f"PostgreSQL {postgres}, a fresh database per size beside {redacted(args.url)}"
            if postgres
            else "SQLite WAL in a temp dir"
        )
        + "; ManualClock"
    )
    print(f"command : {' '.join([Path(sys.executable).name, *shown_argv()])}")
    print()
    head = (
        f"{'rows':>7} {'visible':>7} {'first load':>11} {'first load':>11} "
        f"{'cold p50':>9} {'cold p99':>9} {'floor p50':>9} {'cold/floor':>10} {'reps':>5} "
        f"{'cached p50':>10} {'cached p99':>10} {'calls':>6}"
    )
    print(head)
    print(f"{'':>7} {'':>7} {'(new proc)':>11} {'(in proc)':>11}")
    print("-" * len(head))
    for r in results:
        print(
            f"{r.rows:>7,} {r.visible:>7,} {fmt(float(np.median(r.first_fresh))) if r.first_fresh else '-':>11} "
            f"{fmt(r.first_inproc):>11} {fmt(pct(r.cold, 50)):>9} {fmt(pct(r.cold, 99)):>9} "
            f"{fmt(pct(r.floor, 50)):>9} {pct(r.cold, 50) / pct(r.floor, 50):>9.1f}× {len(r.cold):>5} "
            f"{fmt(pct(r.cached, 50)):>10} {fmt(pct(r.cached, 99)):>10} {len(r.cached):>6}"
        )
    print(
        "  floor: in numpy, no actor or SQLite — embed the topic, one product of the n×256 float32 unit "
        f"vectors with it, argpartition the best {FLOOR_TOP}, join their rendered lines to {CHAR_LIMIT} chars; "
        "timed alternately with the cold opens"
    )
    for r in results:
        print(
            f"  {r.rows:>6,} rows: cold p50 / floor p50 = {pct(r.cold, 50) / pct(r.floor, 50):.1f}× "
            f"(floor p99 {fmt(pct(r.floor, 99))}, {r.floor_chars} chars); for reference, the floor back to back "
            f"with warm caches: p50 {fmt(pct(r.floor_warm, 50))}, cold p50 / that = "
            f"{pct(r.cold, 50) / pct(r.floor_warm, 50):.1f}×"
        )

    print()
    print("open right after the persona's own write (RoomOpened → block(), the index reloads), and a cold")
    print("open right after it (paired); the recall note for short questions in the open room")
    head = (
        f"{'rows':>7} {'after p50':>10} {'after p95':>10} {'cold p50':>9} {'after/cold':>10} {'reps':>5}   "
        f"{'recall p50':>10} {'recall p95':>10} {'notes':>9}"
    )
    print(head)
    print("-" * len(head))
    for r in results:
        if not r.after_write:
            continue
        print(
            f"{r.rows:>7,} {fmt(pct(r.after_write, 50)):>10} {fmt(pct(r.after_write, 95)):>10} "
            f"{fmt(pct(r.after_cold, 50)):>9} {pct(r.after_write, 50) / pct(r.after_cold, 50):>9.1f}× "
            f"{len(r.after_write):>5}   {fmt(pct(r.recall, 50)) if r.recall else '-':>10} "
            f"{fmt(pct(r.recall, 95)) if r.recall else '-':>10} {f'{r.recall_hits}/{len(r.recall)}':>9}"
        )
    for r in results:
        if r.two_stage is not None and r.two_stage[1]:
            equal, two, asked = r.two_stage
            print(
                f"  {r.rows:>6,} rows: the note ranked in two stages (past {recall_module.SHORTLIST_FROM:,} candidates, "
                f"shortlist {recall_module.SHORTLIST} or 1/{getattr(recall_module, 'SHORTLIST_SHARE', 1)} of them); "
                f"equal to the exact note (same ids, same order) for {equal}/{two} questions"
            )
        elif r.two_stage is not None:
            print(f"  {r.rows:>6,} rows: the note ranked every candidate exactly")
    hows = {}
    for r in results:
        for how, n in r.write_how.items():
            hows[how] = hows.get(how, 0) + n
    print(
        "  the write: a human's line in the open room, RoomWentQuiet, drain — landed by "
        + ", ".join(f"{how} ×{n}" for how, n in hows.items())
        + f"; notes: non-empty recall notes of {len(QUESTIONS)} questions cycled"
    )

    print()
    print("cost per row (linear growth shows as a flat column)")
    head = (
        f"{'rows':>7} {'seed+insert':>11} {'build p50':>10} {'per row':>9} {'read':>10} {'per row':>9} "
        f"{'load':>10} {'per row':>9} {'after-write':>11} {'per row':>9}"
    )
    print(head)
    print("-" * len(head))
    for r in results:
        build = pct(r.parts[BUILD], 50) if BUILD in r.parts else float("nan")
        read = pct(r.parts[READ], 50) if READ in r.parts else float("nan")
        prep = pct(r.parts[PREPARE], 50) if PREPARE in r.parts else float("nan")
        after = pct(r.after_write, 50) if r.after_write else float("nan")
        print(
            f"{r.rows:>7,} {fmt(r.seed_seconds):>11} {fmt(build):>10} {fmt(build / r.rows):>9} "
            f"{fmt(read):>10} {fmt(read / r.rows):>9} {fmt(prep):>10} {fmt(prep / r.rows):>9} "
            f"{fmt(after):>11} {fmt(after / r.rows):>9}"
        )
    print(
        "  read: store.memories.rows_said, what the actor reads at a load; load: RowIndex.load of it "
        "(decode, prepare the table; each row made a MemoryRow only when read)"
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
    first_load_lines(results, args)

    for r in results:
        if r.rows not in args.parts_for:
            continue
        cold50 = pct(r.cold, 50)
        print()
        print(f"parts of a cold open at {r.rows:,} rows (cold p50 {fmt(cold50)}, block {r.block_chars} chars)")
        print(f"  {'part':<40} {'p50':>9} {'p99':>9} {'of cold p50':>12}")
        in_path = (  # the state read is on the path only after a write that could change it
            "embedder.embed([topic])",
            BUILD,
        )
        for name, samples in r.parts.items():
            share = f"{pct(samples, 50) / cold50:>11.0%}" if name in in_path else f"{'(ref)':>12}"
            print(f"  {name:<40} {fmt(pct(samples, 50)):>9} {fmt(pct(samples, 99)):>9} {share}")
        rest = cold50 - sum(pct(r.parts[n], 50) for n in in_path if n in r.parts)
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
    parser.add_argument("--write-reps", type=int, default=20, help="opens right after a write (default 20)")
    parser.add_argument(
        "--write-reps-large", type=int, default=10, help="the same at 10,000 rows or more (default 10)"
    )
    parser.add_argument("--recall-reps", type=int, default=200, help="recall notes per size (default 200)")
    parser.add_argument(
        "--embedder",
        choices=("wordllama", "hashing"),
        default="wordllama",
        help="wordllama: the default configuration (default); hashing: HashingEmbedder(256), as before",
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
    parser.add_argument(
        "--url",
        metavar="postgresql://…/DB",
        help="run on this PostgreSQL server: a fresh database DB_block_<rows> per size, dropped at the end "
        "(the user needs CREATEDB); default: SQLite in a temp dir",
    )
    parser.add_argument("--json", metavar="FILE", help="also write the headline figures to FILE as JSON")
    parser.add_argument(
        "--first-load-only",
        action="store_true",
        help="only the fresh-process figures (first load, then the first quiet slice and burst); "
        "the workers-up runs and the in-process figures are skipped",
    )
    parser.add_argument("--first-load-child", metavar="DB", help=argparse.SUPPRESS)
    parser.add_argument("--first-load-reader-up", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.parts_for is None:
        args.parts_for = args.sizes
    if args.first_load_only and not args.first_load_runs:
        parser.error("--first-load-only needs --first-load-runs of at least 1")
    if args.url is not None and not args.url.startswith(POSTGRES_SCHEMES):
        parser.error(f"--url takes a postgresql://host/database URL, got {redacted(args.url)!r}")
    return args


def headline(results: list[SizeResult], args: argparse.Namespace, postgres: str | None) -> dict:
    """The figures ``storage_compare.py`` puts side by side, in seconds (``None``: not measured)."""

    def p(samples: list[float], q: float) -> float | None:
        return pct(samples, q) if samples else None

    return {
        "backend": "postgresql" if postgres else "sqlite",
        "server": postgres,
        "command": [Path(sys.executable).name, *shown_argv()],
        "sizes": [
            {
                "rows": r.rows,
                "visible": r.visible,
                "cold_reps": len(r.cold),
                "cold_p50": p(r.cold, 50),
                "cold_p95": p(r.cold, 95),
                "cold_p99": p(r.cold, 99),
                "floor_p50": p(r.floor, 50),
                "floor_warm_p50": p(r.floor_warm, 50),
                "first_load_fresh": float(np.median(r.first_fresh)) if r.first_fresh else None,
                "first_load_fresh_cpu": float(np.median(r.first_fresh_cpu)) if r.first_fresh_cpu else None,
                "first_load_reader_up": float(np.median([w for w, _ in r.first_up])) if r.first_up else None,
                "first_quiet_fresh": float(np.median(r.first_quiet)) if r.first_quiet else None,
                "first_burst_fresh": float(np.median(r.first_burst)) if r.first_burst else None,
                "first_load_inproc": r.first_inproc,
                "after_write_reps": len(r.after_write),
                "after_write_p50": p(r.after_write, 50),
                "after_write_p95": p(r.after_write, 95),
                "recall_reps": len(r.recall),
                "recall_p50": p(r.recall, 50),
                "recall_p95": p(r.recall, 95),
                "cached_p50": p(r.cached, 50),
                "seed_seconds": r.seed_seconds,
            }
            for r in results
        ],
    }


def run_size(place: Path | str, size: int, args: argparse.Namespace) -> SizeResult:
    """Seed ``size`` rows at ``place`` (an SQLite file or a PostgreSQL URL) and measure them."""
    result = SizeResult(rows=size)
    large = size >= 10_000
    start = time.perf_counter()
    trio.run(seed, place, size)
    result.seed_seconds = time.perf_counter() - start
    if args.first_load_runs:
        runs = first_load_fresh_process(place, args.first_load_runs)
        result.first_fresh, result.first_fresh_cpu = [r["seconds"] for r in runs], [r["cpu"] for r in runs]
        result.first_quiet, result.first_burst = [r["quiet"] for r in runs], [r["burst"] for r in runs]
        if not args.first_load_only:
            up = first_load_fresh_process(place, args.first_load_runs, reader_up=True)
            result.first_up = [(r["seconds"], r["cpu"]) for r in up]
            result.up_quiet, result.up_burst = [r["quiet"] for r in up], [r["burst"] for r in up]
    if args.first_load_only:
        print(f"  done: {size:,} rows", file=sys.stderr)
        return result
    trio.run(
        functools.partial(
            measure,
            place,
            result,
            cold_reps=args.reps_large if large else args.reps,
            write_reps=args.write_reps_large if large else args.write_reps,
            recall_reps=args.recall_reps,
            cached_calls=args.cached_calls,
            profile=args.profile,
        )
    )
    print(f"  done: {size:,} rows", file=sys.stderr)
    return result


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    EMBEDDER["kind"] = args.embedder
    if args.first_load_child:
        child = args.first_load_child
        place = child if child.startswith(POSTGRES_SCHEMES) else Path(child)
        found = trio.run(functools.partial(first_open, place, reader_up=args.first_load_reader_up))
        print(json.dumps(found))
        return
    results = []
    postgres = None
    if args.url:
        from pg_databases import fresh_database, server_version

        postgres = server_version(args.url)
        for size in args.sizes:
            with fresh_database(args.url, f"block_{size}") as url:
                results.append(run_size(url, size, args))
    else:
        with tempfile.TemporaryDirectory(prefix="pm-bench-") as tmp:
            for size in args.sizes:
                results.append(run_size(Path(tmp) / f"bench-{size}.db", size, args))
    if args.first_load_only:
        report_first_loads(results, args)
        return
    if args.json:  # first: a reader of the report that stops early (``| head``) loses no figure
        Path(args.json).write_text(json.dumps(headline(results, args, postgres), indent=1))
    report(results, args, postgres)


if __name__ == "__main__":
    main()
