"""Many rows inserted in one transaction: their ids, their order, and — on PostgreSQL — one
round trip for all of them (``Dialect.insert_ids``), not one per row.

Done one row at a time, a batch of transcript lines from N rooms would cost 2N statements (an
incognito check and an ``INSERT`` per line) and a plan of N rows N ``INSERT``s, each a round
trip to the server — which on PostgreSQL, unlike SQLite in process, is what concurrent posting
waits on. The counts here are of calls made on the connection, not of time.
"""

from __future__ import annotations

from datetime import datetime, timezone

from persona_memory.rooms import RoomState
from persona_memory.storage.line_batch import insert_lines
from persona_memory.storage.queries import insert_memories_on
from persona_memory.storage.store import open_postgres_store

from rowfactory import make_row

AT = datetime(2026, 10, 4, 9, 15, tzinfo=timezone.utc)


def line(room: str, text: str):
    return (room, "u:7", text, AT.isoformat(), "[7]", '["otto"]', None)


def secret_room(room_id: str) -> RoomState:
    return RoomState(room_id, personas=("otto",), present=frozenset({7}), private=True, incognito=True, kit=None, topic=None)


class Counting:
    """A connection that counts the statements sent through it (``executemany`` is one)."""

    def __init__(self, conn) -> None:
        self.conn = conn
        self.dialect = conn.dialect
        self.calls = 0

    def execute(self, *args, **kwargs):
        self.calls += 1
        return self.conn.execute(*args, **kwargs)

    def executemany(self, *args, **kwargs):
        self.calls += 1
        return self.conn.executemany(*args, **kwargs)


def batch_from_rooms(rooms: int, per_room: int) -> list:
    """Lines from ``rooms`` rooms, interleaved, plus two from the incognito room ``hush``."""
    out = [line(f"den-{r}", f"den-{r} says hello number {k}") for k in range(per_room) for r in range(rooms)]
    return out[:5] + [line("hush", "a line nobody keeps")] + out[5:] + [line("hush", "nor this one")]


async def test_a_batch_of_lines_keeps_its_order_and_its_incognito_lines_out(open_some_store) -> None:
    lines = batch_from_rooms(rooms=30, per_room=3)
    async with open_some_store() as store:
        await store.rooms.save(secret_room("hush"), AT)
        ids = await store.write(lambda conn: insert_lines(conn, lines))
        kept = [i for i in ids if i]
        assert [i for i, l in zip(ids, lines) if l[0] == "hush"] == [0, 0]
        assert kept == sorted(kept) and len(set(kept)) == len(lines) - 2
        for r in range(30):
            stored = await store.transcript.lines(f"den-{r}")
            assert [l.text for l in stored] == [f"den-{r} says hello number {k}" for k in range(3)]
            assert [l.id for l in stored] == [i for i, l in zip(ids, lines) if l[0] == f"den-{r}"]
        assert await store.transcript.lines("hush") == []


async def test_a_batch_of_lines_costs_postgresql_as_many_round_trips_as_one_line(postgres_url) -> None:
    async with open_postgres_store(postgres_url) as store:
        await store.rooms.save(secret_room("hush"), AT)

        async def statements(lines) -> int:
            def insert(conn) -> int:
                counting = Counting(conn)
                insert_lines(counting, lines)
                return counting.calls

            return await store.write(insert)

        one = await statements([line("den-0", "just one line")])
        many = await statements(batch_from_rooms(rooms=40, per_room=2))
        assert (one, many) == (2, 2)  # the incognito lookup and the insert
        assert len(await store.transcript.lines("den-39")) == 2


async def test_rows_inserted_together_get_ids_in_their_order(open_some_store) -> None:
    rows = [make_row(id=None, text=f"Otto keeps bees in hive number {n}.") for n in range(25)]
    async with open_some_store() as store:
        inserted = await store.memories.insert(rows)
        ids = [r.id for r in inserted]
        assert ids == sorted(ids) and len(set(ids)) == 25
        assert [r.text for r in inserted] == [r.text for r in rows]
        _, stored = await store.memories.rows("warren")
        assert {r.id: r.text for r in stored} == {r.id: r.text for r in inserted}


async def test_rows_with_and_without_given_ids_go_in_together(open_some_store) -> None:
    rows = [make_row(id=None, text="Otto sings in a choir."), make_row(id=9001, text="Otto lost his keys."),
            make_row(id=None, text="Otto learns Welsh.")]
    async with open_some_store() as store:
        inserted = await store.memories.insert(rows)
        assert inserted[1].id == 9001 and None not in [r.id for r in inserted]
        _, stored = await store.memories.rows("warren")
        assert sorted(r.text for r in stored) == sorted(r.text for r in rows)


async def test_a_plan_of_many_rows_costs_postgresql_one_insert(postgres_url) -> None:
    rows = [make_row(id=None, text=f"Otto planted {n} tulips.") for n in range(12)]
    async with open_postgres_store(postgres_url) as store:

        def insert(conn) -> int:
            counting = Counting(conn)
            insert_memories_on(counting, rows)
            return counting.calls

        assert await store.write(insert) == 1
        _, stored = await store.memories.rows("warren")
        assert len(stored) == 12
