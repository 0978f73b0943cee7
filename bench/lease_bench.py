"""What the leases cost: posting plans with and without the epoch check,
and acquiring and renewing leases, on PostgreSQL. Prints figures; asserts nothing.

    PYTHONPATH=. .venv/bin/python bench/lease_bench.py                       # a throw-away server
    PYTHONPATH=. .venv/bin/python bench/lease_bench.py postgresql://…/empty_db

With no URL it starts the suite's throw-away server (``tests/pg_server.py``). The plans are
posted one after another by one store: ``--plans`` (default 400) plans of one row and one
notice each, over 20 personas, first with no epoch, then each carrying its persona's epoch
(the same work plus the ``FOR SHARE`` check), then again with none, so a drift of the noisy
machine shows up as a difference between the two runs without one. Then ``acquire`` for 200
personas, one ``renew`` round over them (each a transaction of one statement), and the same
round as one ``renew_many``.
"""
import argparse, contextlib, os, sys, time
from datetime import datetime, timezone

import trio

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from persona_memory.rows import MemoryRow
from persona_memory.storage import leases, writes
from persona_memory.storage.store import open_postgres_store
from persona_memory.plans import NoticeDraft, WritePlan

AT = datetime(2026, 10, 14, 9, 15, tzinfo=timezone.utc)
PERSONAS = [f"bench-{k}" for k in range(20)]


def the_plan(persona: str, step: int, room: str) -> WritePlan:
    row = MemoryRow(persona=persona, subject="u:7", kind="fact", text=f"Fact number {step} about the gardener.",
                    importance=5, witnessed={7}, created=AT)
    return WritePlan(persona=persona, room_id=room, cursor_from=step, cursor_to=step + 1, inserts=(row,),
                     notices=(NoticeDraft(7, "noted", (0,)),))


async def post_all(store, n: int, room: str, epochs: dict | None) -> float:
    start = time.perf_counter()
    for k in range(n):
        persona = PERSONAS[k % len(PERSONAS)]
        plan = the_plan(persona, k // len(PERSONAS), room)
        epoch = epochs[persona] if epochs else None
        await store.write(lambda c: writes.post_plan(c, plan, AT, epoch=epoch))
    return time.perf_counter() - start


async def main(url: str, n: int) -> None:
    async with open_postgres_store(url) as store:
        epochs = {}
        for persona in PERSONAS:
            lease = await store.write(lambda c: leases.acquire(c, persona, "bench-worker", 600))
            epochs[persona] = lease.epoch
        runs = [("no epoch", None, "room-1"), ("epoch", epochs, "room-2"), ("no epoch again", None, "room-3")]
        for name, given, room in runs:
            wall = await post_all(store, n, room, given)
            print(f"post_plan, {name:>14}: {n} plans in {wall:.2f} s, {n / wall:,.0f} plans/s, {1e6 * wall / n:,.0f} us/plan")
        names = [f"many-{k}" for k in range(200)]
        start = time.perf_counter()
        held = [await store.write(lambda c: leases.acquire(c, p, "bench-worker", 600)) for p in names]
        acquired = time.perf_counter() - start
        start = time.perf_counter()
        for lease in held:
            await store.write(lambda c: leases.renew(c, lease, 600))
        renewed = time.perf_counter() - start
        start = time.perf_counter()
        _, lost = await store.write(lambda c: leases.renew_many(c, held, 600))
        round_ = time.perf_counter() - start
        print(f"acquire: {1e6 * acquired / len(names):,.0f} us each; renew: {1e6 * renewed / len(names):,.0f} us each; "
              f"renew_many of {len(held)}: {1e3 * round_:.1f} ms ({len(lost)} lost)")


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("url", nargs="?", help="an empty PostgreSQL database (default: a throw-away server)")
parser.add_argument("--plans", type=int, default=400)
args = parser.parse_args()
with contextlib.ExitStack() as stack:
    url = args.url
    if not url:
        import pg_server
        url = stack.enter_context(pg_server.throwaway_server())
    trio.run(main, url, args.plans)
