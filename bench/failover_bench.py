"""How long a dead worker's personas go unowned: workers sharing one
PostgreSQL, one of them crashed, and the time until the survivors own all its personas again.
Also the time a clean leave takes to hand over. Prints figures; asserts nothing.

    PYTHONPATH=. .venv/bin/python bench/failover_bench.py                      # a throw-away server
    PYTHONPATH=. .venv/bin/python bench/failover_bench.py postgresql://…/empty_db --lease 10 --renew 3

With no URL it starts the suite's throw-away server (``tests/pg_server.py``). Each run starts
``--workers`` workers in this process (each a store of its own, so a round never queues
behind another worker's), waits until they own ``--personas`` personas as the spread says,
then cancels one worker's task group without releasing anything — what a SIGKILL leaves
behind — and polls every 10 ms until the survivors own every persona again. Then one survivor
leaves cleanly, timed the same way. The median of ``--runs`` runs is printed with the
settings. Expect a crash to take about ``lease`` (its leases and membership run out) plus up
to one ``renew`` (the survivors' next round), and a clean leave about one ``renew``.
"""
import argparse, contextlib, os, statistics, sys, time

import trio

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from persona_memory.cluster.spread import spread
from persona_memory.cluster.worker import open_worker
from persona_memory.settings import ClusterSettings
from persona_memory.storage.store import open_postgres_store


class Running:
    def __init__(self) -> None:
        self.workers, self.scopes, self.leave, self.gone = {}, {}, {}, {}


async def start(nursery, running, url, worker_id, cluster, personas) -> None:
    started = trio.Event()
    running.leave[worker_id], running.gone[worker_id] = trio.Event(), trio.Event()

    async def run() -> None:
        try:
            with trio.CancelScope() as scope:
                running.scopes[worker_id] = scope
                async with open_postgres_store(url) as store:
                    async with open_worker(store, worker_id, cluster, personas) as worker:
                        running.workers[worker_id] = worker
                        started.set()
                        await running.leave[worker_id].wait()
        finally:
            running.workers.pop(worker_id, None)
            running.gone[worker_id].set()

    nursery.start_soon(run)
    await started.wait()


async def until_spread(running, personas, timeout: float = 120.0) -> float:
    start = time.perf_counter()
    while True:
        expected = spread(personas, running.workers)
        if {w: tuple(sorted(x.owned())) for w, x in running.workers.items()} == expected:
            return time.perf_counter() - start
        if time.perf_counter() - start > timeout:
            raise SystemExit(f"not owned as the spread says after {timeout} s")
        await trio.sleep(0.01)


async def one_run(url: str, run: int, args, cluster) -> tuple[float, float, int]:
    personas = [f"run{run}-persona-{k}" for k in range(args.personas)]
    ids = [f"run{run}-worker-{k}" for k in range(args.workers)]
    running = Running()
    async with trio.open_nursery() as nursery:
        for worker_id in ids:
            await start(nursery, running, url, worker_id, cluster, personas)
        await until_spread(running, personas)
        victim = ids[1 % len(ids)]
        dead = len(running.workers[victim].owned())
        crashed = time.perf_counter()
        running.scopes[victim].cancel()
        await running.gone[victim].wait()
        await until_spread(running, personas)
        failover = time.perf_counter() - crashed
        leaver = ids[0]
        left = time.perf_counter()
        running.leave[leaver].set()
        await running.gone[leaver].wait()
        await until_spread(running, personas)
        handover = time.perf_counter() - left
        for worker_id in list(running.workers):
            running.leave[worker_id].set()
    return failover, handover, dead


async def main(url: str, args) -> None:
    cluster = ClusterSettings(lease_seconds=args.lease, renew_seconds=args.renew)
    print(f"settings: cluster.lease_seconds = {args.lease:g}, cluster.renew_seconds = {args.renew:g}; "
          f"{args.workers} workers, {args.personas} personas, {args.runs} runs")
    failovers, handovers = [], []
    for run in range(args.runs):
        failover, handover, dead = await one_run(url, run, args, cluster)
        failovers.append(failover)
        handovers.append(handover)
        print(f"run {run + 1}: crash → {dead} personas owned again after {failover:.2f} s; "
              f"clean leave handed over in {handover:.2f} s")
    print(f"median: failover after a crash {statistics.median(failovers):.2f} s "
          f"(lease + renew = {args.lease + args.renew:g} s); clean leave {statistics.median(handovers):.2f} s")


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("url", nargs="?", help="an empty PostgreSQL database (default: a throw-away server)")
parser.add_argument("--lease", type=float, default=3.0, help="cluster.lease_seconds (default 3)")
parser.add_argument("--renew", type=float, default=1.0, help="cluster.renew_seconds (default 1)")
parser.add_argument("--workers", type=int, default=3)
parser.add_argument("--personas", type=int, default=60)
parser.add_argument("--runs", type=int, default=5)
args = parser.parse_args()
with contextlib.ExitStack() as stack:
    url = args.url
    if not url:
        import pg_server
        url = stack.enter_context(pg_server.throwaway_server())
    trio.run(main, url, args)
