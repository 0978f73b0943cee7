"""How long reading a persona's rows back from our own file takes, without checking each
field again.

Run it::

    .venv/bin/python bench/row_read_bench.py              # 10,000 rows, best of 7
    .venv/bin/python bench/row_read_bench.py --rows 50000 --repeat 5

It seeds one persona with ``--rows`` rows (``seed_rows``) in a fresh SQLite file in a temporary
directory, then times, best of ``--repeat``, in CPU seconds of this process
(``time.process_time``: the work is single-threaded, and the figure holds on a busy machine):

- ``MemoryRow.from_rows`` over a cursor of the rows (the fetch and the construction), or, where
  it is missing (on an older checkout), ``from_row`` per row;
- ``store.memories.rows`` (the fetch and the construction, on a read connection);
- ``store.memories.rows_said``: the same and, in the same transaction, the text of each row's
  transcript line (each seeded row cites one line of its own), which the read path searches.

For reference it also times building the same rows through the validating constructor. No
timing here is asserted anywhere.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import attrs
import trio

from persona_memory import MemoryRow
from persona_memory.storage.store import open_store

from seed_rows import PERSONA, make_rows

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)


def best(fn, repeat: int) -> float:
    """The fastest of ``repeat`` runs of ``fn()``, in CPU seconds."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


async def main(count: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="pm-rows-") as tmp:
        path = str(Path(tmp) / "rows.db")
        async with open_store(path) as store:
            await store.write(lambda c: c.executemany(
                "INSERT INTO transcript_lines (id, room_id, speaker, text, at) VALUES (?, 'r', 'u:1', ?, ?)",
                ((i + 1, f"I said something about topic number {i} today.", NOW.isoformat()) for i in range(count)),
            ))
            seeded = make_rows(count, now=NOW, dim=256)
            await store.memories.insert([attrs.evolve(r, evidence=(i + 1,)) for i, r in enumerate(seeded)])

            conn = sqlite3.connect(path)
            conn.row_factory = sqlite3.Row
            fetched = conn.execute("SELECT * FROM persona_memory WHERE persona = ?", (PERSONA,)).fetchall()
            rows = [MemoryRow.from_row(r) for r in fetched]
            fields = [attrs.asdict(r, recurse=False) for r in rows]
            query = ("SELECT * FROM persona_memory WHERE persona = ?", (PERSONA,))

            if hasattr(MemoryRow, "from_rows"):
                read = lambda: MemoryRow.from_rows(conn.execute(*query))  # noqa: E731
            else:
                read = lambda: [MemoryRow.from_row(r) for r in conn.execute(*query)]  # noqa: E731
            construct = best(read, repeat)
            conn.close()
            validated = best(lambda: [MemoryRow(**f) for f in fields], repeat)
            timings, said_timings = [], []
            for _ in range(repeat):
                start = time.process_time()
                await store.memories.rows(PERSONA)
                timings.append(time.process_time() - start)
                start = time.process_time()
                await store.memories.rows_said(PERSONA)
                said_timings.append(time.process_time() - start)

    n = len(fetched)
    print(f"rows: {n:,} (one persona, 256-d int8 vectors)")
    print(f"  fetch + MemoryRow.from_rows       {construct * 1e3:8.2f} ms   {construct / n * 1e6:6.2f} µs/row")
    print(f"  MemoryRow(**fields) x {n:,}       {validated * 1e3:8.2f} ms   {validated / n * 1e6:6.2f} µs/row  (validating, for reference)")
    print(f"  store.memories.rows                {min(timings) * 1e3:8.2f} ms")
    print(f"  store.memories.rows_said           {min(said_timings) * 1e3:8.2f} ms   (with each row's line text)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    trio.run(main, args.rows, args.repeat)
