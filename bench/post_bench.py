"""Posting alone: ``store.transcript.post`` from 350 rooms, 26 lines each, one after another or all
at once (each room's lines in order). Prints lines/s (wall) and CPU µs per line.

    PYTHONPATH=. .venv/bin/python bench/post_bench.py concurrent
    PYTHONPATH=. .venv/bin/python bench/post_bench.py sequential
    PYTHONPATH=. .venv/bin/python bench/post_bench.py concurrent postgresql://…/empty_db
"""
import sys, time, tempfile, trio
from datetime import datetime, timezone
from pathlib import Path
from persona_memory.storage.store import open_postgres_store, open_store
from persona_memory.rooms import Presence
AT = datetime(2026, 8, 18, 12, 0, tzinfo=timezone.utc)
mode = sys.argv[1] if len(sys.argv) > 1 else "concurrent"
if mode not in ("concurrent", "sequential"):
    sys.exit("usage: post_bench.py [concurrent|sequential] [postgresql://… an empty database]")
url = sys.argv[2] if len(sys.argv) > 2 else None
async def main():
    with tempfile.TemporaryDirectory() as tmp:
        async with (open_postgres_store(url) if url else open_store(str(Path(tmp) / "m.db"))) as store:
            p = Presence(frozenset({42}), ("warren",))
            rooms, per = 350, 26
            async def talk(r):
                for k in range(per):
                    await store.transcript.post(f"room-{r}", "u:42", f"hello there number {k} from room {r}", AT, p)
            t = time.perf_counter(); c = time.process_time()
            if mode == "concurrent":
                async with trio.open_nursery() as n:
                    for r in range(rooms): n.start_soon(talk, r)
            else:
                for r in range(rooms): await talk(r)
            wall = time.perf_counter() - t; cpu = time.process_time() - c
            print(f"{mode}: {rooms*per} lines, {rooms*per/wall:,.0f} lines/s wall, {1e6*cpu/(rooms*per):.0f} us CPU/line")
trio.run(main)
