"""The write path and the block on SQLite beside PostgreSQL: one table, both backends.

Run it::

    PYTHONPATH=. .venv/bin/python bench/storage_compare.py               # about 3 minutes here
    PYTHONPATH=. .venv/bin/python bench/storage_compare.py --runs 1      # one pair: half the time
    PYTHONPATH=. .venv/bin/python bench/storage_compare.py --personas 100 --sizes 1000 10000 50000
    PYTHONPATH=. .venv/bin/python bench/storage_compare.py --url postgresql://…/any_db   # a server of yours

It starts a throw-away PostgreSQL server itself (``tests/pg_server.py``'s guard process: a
fresh ``initdb`` in a temporary directory, a Unix socket, no TCP port; stopped and deleted at
the end, however this script ends) unless ``--url`` names one. Then it runs the two existing
benches as subprocesses, each on SQLite and then on PostgreSQL, the pair ``--runs`` times
(default 2; alternating, so both backends see the same load), reads the figures each writes with
``--json``, and prints one side-by-side table and the command lines it ran. Every
PostgreSQL run gets a fresh database beside the server's (``bench/pg_databases.py``), dropped
afterwards.

- ``write_bench.py`` with ``--personas`` personas (default 50: 175 rooms, about 4,600 lines an
  evening) over ``--rounds`` evenings (default 2), posting one room after another
  (``--posting concurrent``: every room at once, as a runtime with many live rooms). *lines/s end to end* is lines over post +
  write path; *write path only* is lines over the time from the first ``RoomWentQuiet`` to
  ``drain()``; *CPU per line* is this Python process's CPU (``time.process_time``, every
  thread) over those two phases, per transcript line. On PostgreSQL the server's own CPU is
  not in it: *server CPU per line* is the CPU the server's processes used over the whole
  bench process (setup and block opens included, so an upper bound), read from ``/proc``
  (a server on this machine only; ``-`` otherwise).
- ``block_bench.py --sizes`` (default 1,000 and 10,000 rows of one persona): *cold open* is
  ``send(RoomOpened)`` → ``block()`` on a new room with the row index loaded (p50 and p95);
  *open after a write* is the same right after the persona's own write (the row index takes
  the write in, the state is read again); *recall* is ``memory.recall`` in the open room
  (p50); *first load* is a fresh process's first ``RoomOpened`` → ``block()`` (every row read
  and decoded). See ``block_bench.py`` for the details of each.

The last column is PostgreSQL's figure over SQLite's (for lines/s above 1 is faster, for times
below 1 is faster). The throw-away server runs with ``fsync``, ``synchronous_commit`` and
``full_page_writes`` off, and SQLite with ``synchronous = NORMAL`` in WAL mode: neither waits
for the disk on commit, so the figures compare the round trips and the work, not the disks. The
server shares this machine's cores with the bench; a server elsewhere adds network round trips
and takes its CPU off the bench's machine. Nothing here is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(ROOT / "tests"))

import pg_server  # noqa: E402  (tests/pg_server.py: the throw-away server and its guard)
from pg_databases import fresh_database, server_version  # noqa: E402

from persona_memory.storage.location import redacted  # noqa: E402


# ---- the server ------------------------------------------------------------------------------


@contextlib.contextmanager
def server(url: str | None) -> Iterator[str]:
    """``url`` as given, or the URL of a throw-away server started for this run."""
    if url:
        yield url
        return
    with pg_server.throwaway_server() as started:
        yield started


def server_cpu_reader(url: str) -> Callable[[], float | None]:
    """A function returning the CPU seconds the server's processes have used so far: the
    postmaster's own and its reaped children's, plus every live child's — or ``None`` when the
    server is not on this machine (its processes are not in ``/proc``)."""
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True) as conn:
            backend = int(conn.execute("SELECT pg_backend_pid()").fetchone()[0])
        postmaster = _stat(backend)[1]  # read while the backend lives: its parent
    except (OSError, ValueError, IndexError):
        return lambda: None
    ticks = os.sysconf("SC_CLK_TCK")

    def cpu() -> float | None:
        try:
            own = _stat(postmaster)[2]
        except OSError:
            return None
        total = sum(own[11:15])  # utime, stime, cutime, cstime
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                with contextlib.suppress(OSError, ValueError, IndexError):
                    _, parent, fields = _stat(int(pid))
                    if parent == postmaster:
                        total += fields[11] + fields[12]
        return total / ticks

    return cpu


def _stat(pid: int) -> tuple[int, int, list[int]]:
    """``(pid, parent pid, the numeric fields after the command)`` of ``/proc/PID/stat``."""
    text = Path(f"/proc/{pid}/stat").read_text()
    rest = text[text.rindex(")") + 2 :].split()  # the command may hold spaces and parentheses
    fields = [0] + [int(x) if x.lstrip("-").isdigit() else 0 for x in rest[1:]]  # rest[0] is the state
    return pid, fields[1], fields


# ---- running the benches ---------------------------------------------------------------------


def run_bench(argv: list[str], commands: list[str]) -> dict:
    """Run one bench as a subprocess with ``--json``; return what it wrote. Its report goes to
    a file nobody reads (the table below takes the figures from the JSON)."""
    with tempfile.TemporaryDirectory(prefix="pm-compare-") as tmp:
        out = Path(tmp) / "figures.json"
        commands.append(" ".join(["python", *map(shown, argv)]))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        done = subprocess.run(
            [sys.executable, *argv, "--json", str(out)], cwd=ROOT, env=env, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr.strip()[-2000:]}")
        return json.loads(out.read_text())


def shown(arg: str) -> str:
    """An argument as printed: a bench's path from the repository root, a URL without its password."""
    if arg.startswith(str(BENCH)):
        return Path(arg).relative_to(ROOT).as_posix()
    return redacted(arg) if arg.startswith(("postgresql://", "postgres://")) else arg


def write_argv(args: argparse.Namespace, url: str | None) -> list[str]:
    argv = [str(BENCH / "write_bench.py"), "--personas", str(args.personas), "--rounds", str(args.rounds)]
    argv += ["--posting", args.posting] if args.posting != "sequential" else []
    return argv + (["--url", url] if url else [])


def block_argv(args: argparse.Namespace, url: str | None) -> list[str]:
    argv = [
        str(BENCH / "block_bench.py"), "--sizes", *map(str, args.sizes), "--reps", str(args.reps),
        "--reps-large", str(args.reps_large), "--write-reps", str(args.write_reps),
        "--write-reps-large", str(args.write_reps_large), "--recall-reps", str(args.recall_reps),
        "--cached-calls", "1000", "--first-load-runs", str(args.first_load_runs),
    ]
    return argv + (["--url", url] if url else [])


def measure(args: argparse.Namespace, url: str) -> tuple[dict[str, list], list[str]]:
    """Every run's figures per backend (``{"sqlite": [...], "postgresql": [...]}``, one
    ``(write, block, server_cpu)`` per run) and the command lines run."""
    commands: list[str] = []
    runs: dict[str, list] = {"sqlite": [], "postgresql": []}
    server_cpu = server_cpu_reader(url)
    for n in range(args.runs):
        print(f"run {n + 1}/{args.runs}: write path, SQLite", file=sys.stderr, flush=True)
        write = run_bench(write_argv(args, None), commands)
        print(f"run {n + 1}/{args.runs}: block, SQLite", file=sys.stderr)
        block = run_bench(block_argv(args, None), commands)
        runs["sqlite"].append((write, block, None))
        print(f"run {n + 1}/{args.runs}: write path, PostgreSQL", file=sys.stderr)
        with fresh_database(url, "write") as empty:
            before = server_cpu()
            write = run_bench(write_argv(args, empty), commands)
            after = server_cpu()
        cpu = None if before is None or after is None else (after - before) / write["lines"]
        print(f"run {n + 1}/{args.runs}: block, PostgreSQL", file=sys.stderr)
        block = run_bench(block_argv(args, url), commands)
        runs["postgresql"].append((write, block, cpu))
    return runs, commands


# ---- the table -------------------------------------------------------------------------------


def median(values: list) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.0f} µs"


def fmt_rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def rows_of_table(runs: dict[str, list], sizes: list[int]) -> list[tuple[str, str, str, str]]:
    """``(figure, SQLite, PostgreSQL, PostgreSQL ÷ SQLite)`` per line of the table, medians over runs."""

    def write(key: str) -> tuple[float | None, float | None]:
        return tuple(median([w[key] for w, _, _ in runs[b]]) for b in ("sqlite", "postgresql"))

    def block(size: int, key: str) -> tuple[float | None, float | None]:
        def of(b: str) -> float | None:
            return median([s[key] for _, blk, _ in runs[b] for s in blk["sizes"] if s["rows"] == size])

        return of("sqlite"), of("postgresql")

    def ratio(pair: tuple[float | None, float | None]) -> str:
        a, b = pair
        return "-" if not a or b is None else f"{b / a:.2f}×"

    out = []
    for label, key, shown in (
        ("write path: lines/s end to end (post + write)", "end_to_end_lines_per_second", fmt_rate),
        ("write path: lines/s, write path only", "write_path_lines_per_second", fmt_rate),
        ("write path: CPU per line, posting (bench process)", "post_cpu_per_line", fmt_time),
        ("write path: CPU per line, write path (bench process)", "write_cpu_per_line", fmt_time),
        ("write path: rows written", "rows", fmt_rate),
    ):
        pair = write(key)
        out.append((label, shown(pair[0]), shown(pair[1]), ratio(pair)))
    server = median([cpu for _, _, cpu in runs["postgresql"]])
    out.append(("write path: server CPU per line (whole run, upper bound)", "-", fmt_time(server), "-"))
    for size in sizes:
        for label, key in (
            ("cold open p50", "cold_p50"),
            ("cold open p95", "cold_p95"),
            ("open after a write p50", "after_write_p50"),
            ("open after a write p95", "after_write_p95"),
            ("recall p50", "recall_p50"),
            ("first load, fresh process", "first_load_fresh"),
        ):
            pair = block(size, key)
            if pair == (None, None):
                continue
            out.append((f"block, {size:,} rows: {label}", fmt_time(pair[0]), fmt_time(pair[1]), ratio(pair)))
    return out


def report(runs: dict[str, list], commands: list[str], args: argparse.Namespace, postgres: str, seconds: float) -> None:
    first_write = runs["sqlite"][0][0]
    print("persona-memory storage comparison: SQLite beside PostgreSQL (issue 11)")
    print(
        f"machine : {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, PostgreSQL {postgres} "
        f"({'the --url server' if args.url else 'a throw-away server on a Unix socket, fsync off'}); "
        f"load average {os.getloadavg()[0]:.2f} at the end; {seconds / 60:.1f} min"
    )
    print(
        f"write   : {args.personas} personas, {first_write['rooms']} rooms, {args.rounds} evening(s), "
        f"{first_write['lines']:,} lines, {args.posting} posting; offline mind, WordLlama"
    )
    print(f"block   : one persona, group room, sizes {', '.join(f'{s:,}' for s in args.sizes)} rows; WordLlama")
    print(f"runs    : {args.runs} (SQLite then PostgreSQL each time; the medians over runs)")
    print()
    table = rows_of_table(runs, args.sizes)
    width = max(len(r[0]) for r in table)
    head = f"{'figure':<{width}} {'SQLite':>10} {'PostgreSQL':>11} {'PG ÷ SQLite':>12}"
    print(head)
    print("-" * len(head))
    for label, lite, pg, ratio in table:
        print(f"{label:<{width}} {lite:>10} {pg:>11} {ratio:>12}")
    if args.runs > 1:
        print()
        print("each run (end-to-end lines/s; cold p50 at the first size), SQLite / PostgreSQL:")
        for n, (lite, pg) in enumerate(zip(runs["sqlite"], runs["postgresql"]), 1):
            print(
                f"  run {n}: {lite[0]['end_to_end_lines_per_second']:,.0f} / {pg[0]['end_to_end_lines_per_second']:,.0f} "
                f"lines/s; {fmt_time(lite[1]['sizes'][0]['cold_p50'])} / {fmt_time(pg[1]['sizes'][0]['cold_p50'])}"
            )
    print()
    print("commands, each run (from the repository root, PYTHONPATH=.; each also given --json FILE):")
    for command in dict.fromkeys(commands):
        print(f"  {command}")


# ---- main ------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--url", metavar="postgresql://…/DB",
                        help="use this server (fresh databases beside DB; the user needs CREATEDB) "
                             "instead of starting a throw-away one")
    parser.add_argument("--runs", type=int, default=2, help="SQLite/PostgreSQL pairs, alternating (default 2)")
    parser.add_argument("--personas", type=int, default=50, help="write bench personas (default 50)")
    parser.add_argument("--rounds", type=int, default=2, help="write bench evenings (default 2)")
    parser.add_argument("--posting", choices=("sequential", "concurrent"), default="sequential",
                        help="write bench: one room after another (default), or every room at once")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000], help="block bench rows (default 1000 10000)")
    parser.add_argument("--reps", type=int, default=200, help="cold opens below 10,000 rows (default 200)")
    parser.add_argument("--reps-large", type=int, default=50, help="cold opens at 10,000 rows or more (default 50)")
    parser.add_argument("--write-reps", type=int, default=20, help="opens after a write below 10,000 rows (default 20)")
    parser.add_argument("--write-reps-large", type=int, default=10, help="the same at 10,000 rows or more (default 10)")
    parser.add_argument("--recall-reps", type=int, default=200, help="recall notes per size (default 200)")
    parser.add_argument("--first-load-runs", type=int, default=1, help="fresh processes for the first load (default 1; 0 skips)")
    args = parser.parse_args(argv)
    if min(args.runs, args.personas, args.rounds, args.reps, args.reps_large, args.write_reps,
           args.write_reps_large, args.recall_reps) < 1 or args.first_load_runs < 0 or min(args.sizes) < 1:
        parser.error("--runs, --personas, --rounds, --sizes and every --*reps must be at least 1 (--first-load-runs 0 or more)")
    if args.url is not None and not args.url.startswith(("postgresql://", "postgres://")):
        parser.error("--url takes a postgresql://host/database URL")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    start = time.perf_counter()
    try:
        with server(args.url) as url:
            postgres = server_version(url)
            runs, commands = measure(args, url)
    except pg_server.Unavailable as exc:
        raise SystemExit(f"no PostgreSQL server to compare with: {exc}") from None
    report(runs, commands, args, postgres, time.perf_counter() - start)


if __name__ == "__main__":
    main()
