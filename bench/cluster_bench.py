"""Throughput of 1, 2 and 4 cluster workers on one PostgreSQL.

Run it (it starts a throw-away PostgreSQL server itself, as the test suite does)::

    PYTHONPATH=. .venv/bin/python bench/cluster_bench.py                      # 1, 2, 4 workers
    PYTHONPATH=. .venv/bin/python bench/cluster_bench.py --workers 1 2 --personas 24 --lines 12
    PYTHONPATH=. .venv/bin/python bench/cluster_bench.py --url postgresql://…/empty_db   # one run, your server

Each run starts N ``persona-memory serve --worker`` processes (``tests/cluster_procs.py``: the
offline mind, the hashing embedder, lease 2 s) on a fresh database, waits until every persona
is owned, then drives a load through the runtime API over HTTP, every call to a worker picked
round-robin (so with N workers about (N-1)/N of the block calls are forwarded to the owner):
``--personas`` private rooms (one persona, one human each), ``--evenings`` evenings, each
evening every room opens, gets ``--lines`` lines, its block is asked for, and it goes quiet —
all rooms at once, each room's calls in order. The clock runs from the first open to the moment
every cursor has reached its room's end (every line read by the write path).

It prints, per worker count: calls made (events, lines, blocks), wall time, calls/s and lines/s
end to end, wall time per call, and the workers' CPU per call (user+system of the worker
processes from /proc, over every call), PostgreSQL's CPU per call (every ``postgres``
process), and from that the calls per second one server core would carry — on this 2-core VM more workers mostly share the same
two cores, so calls/s says how much the coordination costs, not how far it scales on more
machines. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path
import tempfile

import psycopg
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import pg_server  # noqa: E402
from cluster_procs import TOKEN, start_worker, stop_all  # noqa: E402

from persona_memory import RoomOpened, RoomWentQuiet  # noqa: E402
from persona_memory.client import AsyncRuntimeClient  # noqa: E402

SAYINGS = [
    "I joined a rowing club on the river this month.",
    "My brother is opening a bike repair shop downtown.",
    "I am learning to cook proper ramen from scratch.",
    "We adopted two kittens from the shelter on Saturday.",
    "I switched to the night shift at the hospital.",
    "I have been reading a lot about old lighthouses.",
]


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _postgres_cpu_seconds() -> float:
    """User+system CPU of every ``postgres`` process on the machine (the bench's server is the
    only one a clean machine has; with another server running, this over-counts)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        if text[text.index("(") + 1 : text.rindex(")")] == "postgres":
            fields = text.rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _behind(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(
            "SELECT count(*) FROM (SELECT room_id, max(id) AS last FROM transcript_lines GROUP BY room_id) r "
            "LEFT JOIN cursors c ON c.room_id = r.room_id WHERE c.last_line_id IS NULL OR c.last_line_id < r.last"
        ).fetchone()[0]


def _owned(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        return conn.execute(
            "SELECT count(*) FROM persona_leases WHERE owner IS NOT NULL AND expires_at > now()"
        ).fetchone()[0]


async def run_once(url: str, n_workers: int, args: argparse.Namespace, tmp: Path) -> dict[str, float]:
    workers = [start_worker(url, f"b{n_workers}-{k}", tmp) for k in range(n_workers)]
    clients = [AsyncRuntimeClient(w.url, TOKEN) for w in workers]
    rooms = [RoomOpened(room_id=f"desk-{k}", personas=(f"host-{k}",), humans=frozenset({900 + k}), private=True)
             for k in range(args.personas)]
    calls = {"events": 0, "lines": 0, "blocks": 0}
    turn = [0]

    def client() -> AsyncRuntimeClient:
        turn[0] += 1
        return clients[turn[0] % len(clients)]

    try:
        for room in rooms:  # the personas become known through their rooms
            await client().send(room)
        while _owned(url) < args.personas:
            await trio.sleep(0.1)
        cpu0 = sum(_cpu_seconds(w.process.pid) for w in workers)
        server0 = _postgres_cpu_seconds()
        started = time.perf_counter()
        for evening in range(args.evenings):
            async def room_evening(room: RoomOpened) -> None:
                rng = random.Random(f"{room.room_id}-{evening}")
                await client().send(room)
                for _ in range(args.lines):
                    await client().post_line(room.room_id, f"u:{min(room.humans)}", rng.choice(SAYINGS))
                await client().built_block(room.personas[0], room.room_id)
                await client().send(RoomWentQuiet(room_id=room.room_id))
                calls["events"] += 2
                calls["lines"] += args.lines
                calls["blocks"] += 1

            async with trio.open_nursery() as nursery:
                for room in rooms:
                    nursery.start_soon(room_evening, room)
        while _behind(url):
            await trio.sleep(0.05)
        wall = time.perf_counter() - started
        cpu = sum(_cpu_seconds(w.process.pid) for w in workers) - cpu0
        server = _postgres_cpu_seconds() - server0
    finally:
        for c in clients:
            await c.aclose()
        stop_all(workers)
    total = sum(calls.values())
    return {"workers": n_workers, **calls, "wall": wall, "calls_s": total / wall, "lines_s": calls["lines"] / wall,
            "ms_call": 1000 * wall / total, "cpu_ms_call": 1000 * cpu / total, "server_ms_call": 1000 * server / total}


def _fresh(server_url: str, name: str) -> str:
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    return pg_server.with_database(server_url, name)


async def main(args: argparse.Namespace) -> None:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.url:
            results.append(await run_once(args.url, args.workers[0], args, Path(tmp)))
        else:
            with pg_server.throwaway_server() as server:
                for n in args.workers:
                    results.append(await run_once(_fresh(server, f"cluster_bench_{n}"), n, args, Path(tmp)))
    print(f"\n{args.personas} private rooms × {args.evenings} evenings × {args.lines} lines, offline mind, "
          f"hashing embedder, lease 2 s; {os.cpu_count()} cores")
    print(f"{'workers':>7} {'events':>7} {'lines':>6} {'blocks':>6} {'wall s':>7} {'calls/s':>8} {'lines/s':>8} "
          f"{'ms/call':>8} {'CPU ms/call':>11} {'server ms/call':>14}")
    for r in results:
        print(f"{r['workers']:>7} {r['events']:>7} {r['lines']:>6} {r['blocks']:>6} {r['wall']:>7.2f} "
              f"{r['calls_s']:>8.0f} {r['lines_s']:>8.0f} {r['ms_call']:>8.2f} {r['cpu_ms_call']:>11.2f} "
              f"{r['server_ms_call']:>14.2f}")
    if results:
        per_call = max(r["server_ms_call"] for r in results)
        print(f"one server core at {per_call:.2f} ms of PostgreSQL CPU per call: about {1000 / per_call:,.0f} calls/s "
              "(events, lines and blocks in this mix) before the server is the bound")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--personas", type=int, default=24)
    parser.add_argument("--evenings", type=int, default=2)
    parser.add_argument("--lines", type=int, default=12)
    parser.add_argument("--url", help="an empty PostgreSQL database (one run, with the first --workers count)")
    trio.run(main, parser.parse_args())
