"""The write path's storage units on SQLite, replayed alone: CPU µs per unit and per line.

Run it::

    PYTHONPATH=. .venv/bin/python bench/store_units_bench.py                 # write_bench's chat
    PYTHONPATH=. .venv/bin/python bench/store_units_bench.py --repeat 9      # best of 9 replays
    PYTHONPATH=. .venv/bin/python bench/store_units_bench.py --personas 20 --profile out.prof

``write_bench``'s whole app prints the SQLite threads' CPU per line, but beside the event loop,
the embedder's threads and other benchmarks on the machine that figure moves by ±15 %. This
one takes the storage units out of the app and times them alone, so a change to a query, the
schema or the connection shows its gain in a steadier number.

First it records (untimed): ``write_bench``'s scenario (same options, same seed) runs through the
real ``open_memory``; at the start of each evening's drain the file is copied (SQLite's backup),
and during the drain every unit the write path runs on a connection is recorded — the
pipeline's calls inside it (``read_backlog``, ``names_among`` + ``written_since``, ``_post``,
``store.memories.rows``) with their arguments and a digest of what each returned, in the order the
worker threads ran them. Other units of the drain (the actors' reads, recall stamps) are not.

Then it replays, ``--repeat`` times: each evening's copy is restored and opened as the store
opens its files (``store._connect``: the same pragmas), one writer and one read connection, and
each recorded unit runs on this thread — a write inside ``connection.transaction``, as
``SqliteConnection.write`` runs it — timed with ``time.thread_time()``. It prints, best of the
replays, the CPU µs per unit, per slice and per transcript line, by kind of unit; it checks that
every call returned what it returned in the app (the same code ran both: that proves the replay
faithful), and prints the rows+state digest of the app's file and of the replayed one — both
``write_bench --digest``'s ``789c8b0b…`` with the defaults. (Row ids depend on the order the
lanes posted in, which varies from run to run, so the calls' results are not compared across
runs; the digest leaves ids out.)
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import hashlib
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))

import persona_memory as pm  # noqa: E402
from persona_memory.clock import ManualClock  # noqa: E402
from persona_memory.compose import make_embedder, make_mind  # noqa: E402
from persona_memory.storage import memories as memories_module  # noqa: E402
from persona_memory.storage import store as store_module  # noqa: E402
from persona_memory.storage import writes as writes_module  # noqa: E402
from persona_memory.storage.connection import transaction  # noqa: E402
from persona_memory.write import pipeline as pipeline_module  # noqa: E402

import write_bench  # noqa: E402

RECORDED = (
    (pipeline_module, "read_backlog"),
    (pipeline_module, "names_among"),
    (writes_module, "written_since"),
    (pipeline_module, "_post"),
    (memories_module, "persona_rows"),
)
"""The functions whose outermost calls inside a unit are recorded (module, name)."""


def digest(value: object) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()


class Recorder:
    """Records the pipeline's calls inside each unit the store runs, in the order they ran."""

    def __init__(self) -> None:
        self.units: list[tuple[str, list[tuple[object, str, tuple, dict, str]]]] = []
        self.others: collections.Counter = collections.Counter()  # units not recorded, by function
        self.recording = False
        self.local = threading.local()
        self.originals = {(m, n): getattr(m, n) for m, n in RECORDED}

    def patch(self) -> None:
        for (module, name), original in self.originals.items():
            setattr(module, name, self._recording(module, name, original))

    def unpatch(self) -> None:
        for (module, name), original in self.originals.items():
            setattr(module, name, original)

    def _recording(self, module, name, original):
        local = self.local

        def recording(conn, *args, **kwargs):
            calls = getattr(local, "calls", None)
            outermost = calls is not None and not local.depth
            local.depth = getattr(local, "depth", 0) + 1
            try:
                result = original(conn, *args, **kwargs)
            finally:
                local.depth -= 1
            if outermost:
                calls.append((module, name, args, kwargs, digest(result)))
            return result

        return recording

    def wrap(self, kind: str, run):
        """``store.read`` or ``store.write``, recording what each unit calls."""
        local, units = self.local, self.units

        async def wrapped(fn):
            def unit(conn):
                calls: list = []
                local.calls, local.depth = calls, 0
                try:
                    return fn(conn)
                finally:
                    local.calls = None
                    if calls:
                        units.append((kind, calls))
                    elif self.recording:
                        self.others[f"{kind} {getattr(fn, '__qualname__', fn)}"] += 1

            return await run(unit)

        return wrapped


async def record(args: argparse.Namespace, tmp: Path) -> tuple[list[tuple[Path, list, int]], str]:
    """Run the scenario; per evening, the file as the drain began, the units and the lines."""
    rng = __import__("random").Random(args.seed)
    rooms = write_bench.make_rooms(args.personas, args.privates, rng)
    settings = pm.load_settings(None, overrides={"storage.path": str(tmp / "app.db")})
    embedder = await trio.to_thread.run_sync(make_embedder, settings)
    clock = ManualClock(write_bench.START)
    recorder = Recorder()
    evenings = []
    async with pm.open_memory(settings, clock=clock, embedder=embedder, mind=make_mind(settings)) as memory:
        store = memory._store
        store.read, store.write = recorder.wrap("read", store.read), recorder.wrap("write", store.write)
        for round_no in range(args.rounds):
            lines = write_bench.script(rooms, rng, args.lines_private, args.lines_group, round_no)
            await write_bench.open_rooms(memory, rooms)
            at = clock.now()
            for room in rooms:
                for k, (speaker, text) in enumerate(lines[room.room_id]):
                    await memory.post_line(room.room_id, speaker, text, at + timedelta(seconds=20 * k))
            snapshot = tmp / f"evening-{round_no + 1}.db"

            def backup(conn, snapshot=snapshot):
                target = sqlite3.connect(snapshot)
                try:
                    conn.backup(target)
                finally:
                    target.close()

            await store.read(backup)
            recorder.units.clear()
            recorder.patch()
            recorder.recording = True
            try:
                for room in rooms:
                    await memory.send(pm.RoomWentQuiet(room_id=room.room_id))
                await memory.drain()
            finally:
                recorder.recording = False
                recorder.unpatch()
            evenings.append((snapshot, list(recorder.units), sum(len(v) for v in lines.values())))
            for room in rooms:
                await memory.send(pm.RoomArchived(room_id=room.room_id))
            await memory.drain()
            clock.advance(days=7)
        rows = await store.read(write_bench.digest_rows)
    return evenings, rows["rows+state"], recorder.others


class Fetched:
    """A cursor's rows fetched whole, with its ``rowcount`` and ``lastrowid`` (``Statements``)."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self.rows = cursor.fetchall()
        self.rowcount, self.lastrowid, self.description = cursor.rowcount, cursor.lastrowid, cursor.description
        self._next = 0

    def __iter__(self):
        return iter(self.rows[self._next:])

    def fetchone(self):
        self._next += 1
        return self.rows[self._next - 1] if self._next <= len(self.rows) else None

    def fetchall(self):
        rows, self._next = self.rows[self._next:], len(self.rows)
        return rows


class Statements:
    """A connection that times each statement to its last row (``--statements``), by SQL text."""

    def __init__(self, conn: sqlite3.Connection, cpu: collections.Counter, count: collections.Counter) -> None:
        self._conn, self._cpu, self._count = conn, cpu, count

    def execute(self, sql, params=()):
        return self._timed(self._conn.execute, sql, params)

    def executemany(self, sql, params):
        return self._timed(self._conn.executemany, sql, params)

    def _timed(self, run, sql, params):
        t0 = time.thread_time()
        try:
            return Fetched(run(sql, params))
        finally:
            self._cpu[sql] += time.thread_time() - t0
            self._count[sql] += 1

    def __getattr__(self, name):
        return getattr(self._conn, name)


def label(calls) -> str:
    return " + ".join(name for _, name, *_ in calls)


def replay(evenings, tmp: Path, statements: tuple[collections.Counter, collections.Counter] | None = None) -> tuple[collections.Counter, collections.Counter, list[str], str]:
    """One replay of every evening: CPU seconds and units by label, the calls' digests and the
    rows+state digest of the file at the end (``write_bench.digest_rows``)."""
    cpu: collections.Counter = collections.Counter()
    count: collections.Counter = collections.Counter()
    digests: list[str] = []
    for snapshot, units, _ in evenings:
        work = tmp / "replay.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{work}{suffix}").unlink(missing_ok=True)
        shutil.copyfile(snapshot, work)
        writer = store_module._connect(str(work), 5000, migrate=True)()
        reader = store_module._connect(str(work), 5000, migrate=False)()
        if statements is not None:
            writer, reader = Statements(writer, *statements), Statements(reader, *statements)
        try:
            for kind, calls in units:
                results: list = []

                def run(conn, calls=calls, results=results):
                    for module, name, args, kwargs, _ in calls:
                        results.append(getattr(module, name)(conn, *args, **kwargs))

                t0 = time.thread_time()
                if kind == "write":
                    transaction(writer, run)
                else:
                    run(reader)
                    if reader.in_transaction:
                        reader.execute("ROLLBACK")
                spent = time.thread_time() - t0
                cpu[label(calls)] += spent
                count[label(calls)] += 1
                for (module, name, _, _, recorded), result in zip(calls, results):
                    got = digest(result)
                    if got != recorded:
                        raise AssertionError(f"{name} returned something else than in the app")
                    digests.append(got)
            rows = write_bench.digest_rows(getattr(reader, "_conn", reader))["rows+state"]
        finally:
            writer.close()
            reader.close()
    return cpu, count, digests, rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--personas", type=int, default=100)
    parser.add_argument("--privates", type=int, default=3)
    parser.add_argument("--lines-private", type=int, default=24)
    parser.add_argument("--lines-group", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--repeat", type=int, default=5, help="replays; the best of them is printed")
    parser.add_argument("--profile", metavar="FILE", help="cProfile one more replay into FILE")
    parser.add_argument("--busy", action="store_true",
                        help="replay beside a thread that runs Python all along (the event loop's part in the "
                             "app): each statement's hand-off of the GIL then costs what it costs there")
    parser.add_argument("--statements", action="store_true",
                        help="one more replay timing each statement (to its last row), by SQL text")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        evenings, rows_digest, others = trio.run(record, args, tmp)
        lines = sum(n for _, _, n in evenings)
        if args.busy:
            stop = threading.Event()

            def spin() -> None:
                n = 0
                while not stop.is_set():
                    n = (n + 1) % 1000

            threading.Thread(target=spin, daemon=True).start()
        best: dict[str, float] = {}
        best_total = float("inf")
        count: collections.Counter = collections.Counter()
        digests: list[str] = []
        replayed = ""
        for _ in range(args.repeat):
            cpu, count, digests, replayed = replay(evenings, tmp)
            for key, seconds in cpu.items():
                best[key] = min(best.get(key, float("inf")), seconds)
            best_total = min(best_total, sum(cpu.values()))
        if args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            replay(evenings, tmp)
            profiler.disable()
            profiler.dump_stats(args.profile)
        by_sql: tuple[collections.Counter, collections.Counter] = (collections.Counter(), collections.Counter())
        if args.statements:
            replay(evenings, tmp, by_sql)
        if args.busy:
            stop.set()
    slices = count["_post"]
    print(f"store units bench: {args.personas} personas, {args.rounds} evening(s), {lines} lines, "
          f"{slices} slices; SQLite {sqlite3.sqlite_version}; CPU (thread_time), best of {args.repeat}"
          + ("; beside a busy Python thread" if args.busy else ""))
    print(f"{'unit':<34} {'units':>6} {'µs/unit':>9} {'µs/slice':>9} {'µs/line':>8}")
    for key in sorted(best, key=lambda k: -best[k]):
        print(f"{key:<34} {count[key]:>6} {1e6 * best[key] / count[key]:>9.1f} "
              f"{1e6 * best[key] / max(1, slices):>9.1f} {1e6 * best[key] / lines:>8.2f}")
    print(f"{'total (best replay)':<34} {sum(count.values()):>6} {'':>9} "
          f"{1e6 * best_total / max(1, slices):>9.1f} {1e6 * best_total / lines:>8.2f}")
    if args.statements:
        print(f"statements (one replay, each to its last row): {'calls':>6} {'µs/call':>8} {'µs/line':>8}")
        for sql, seconds in by_sql[0].most_common(25):
            print(f"  {1e6 * seconds / lines:6.2f} µs/line {by_sql[1][sql]:>6} {1e6 * seconds / by_sql[1][sql]:8.1f}  "
                  f"{' '.join(sql.split())[:110]}")
    print("not replayed, the drain's other units through store.read/write: " + (", ".join(
        f"{name} {n}" for name, n in others.most_common()) or "none"))
    print(f"every call returned what it returned in the app: {len(digests)} calls checked")
    print(f"rows+state digest: the app's file {rows_digest}, the replay's {replayed}")


if __name__ == "__main__":
    main()
