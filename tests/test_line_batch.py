"""Group commit of transcript lines: what posters see, with the transaction held open by hand.

The batcher is driven with a stand-in for the writer whose "transaction" lasts until the test
lets it go, so which lines share a transaction is decided by the test, not by timing; and on
a real store, lines posted from many rooms at once keep each room's order.
"""

from __future__ import annotations

from datetime import datetime, timezone

import trio
import trio.testing

from persona_memory.errors import StorageError
from persona_memory.rooms import Presence, RoomState
from persona_memory.storage.line_batch import LineBatcher

AT = datetime(2026, 8, 18, 12, 0, tzinfo=timezone.utc)


def line(room: str, text: str):
    return (room, "u:42", text, AT.isoformat(), "[42]", '["warren"]', None)


class HeldWriter:
    """A writer whose transactions finish when ``release()`` is called; records each batch.
    Like the real writer, a unit it has begun runs to its end even if its caller is cancelled."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.gate = trio.Event()
        self.next_id = 0
        self.fail_next: Exception | None = None

    def release(self) -> None:
        self.gate.set()
        self.gate = trio.Event()

    async def write(self, fn):
        texts: list[str] = []

        class Conn:  # just enough of sqlite3.Connection for insert_lines
            def execute(conn_self, sql, params):
                outer = self

                class Cursor:
                    def fetchone(self):
                        return None  # no room is incognito

                    def fetchall(self):
                        return []  # no room is incognito

                    @property
                    def lastrowid(self):
                        outer.next_id += 1
                        return outer.next_id

                if sql.startswith("INSERT"):
                    texts.append(params[2])
                return Cursor()

        # Like SqliteConnection.run: cancellable until the unit is submitted, not after.
        await trio.lowlevel.checkpoint_if_cancelled()
        with trio.CancelScope(shield=True):
            await self.gate.wait()
        self.batches.append(texts)
        if self.fail_next is not None:
            error, self.fail_next = self.fail_next, None
            raise error
        return fn(Conn())


async def test_lines_posted_while_a_transaction_is_in_flight_share_the_next_one() -> None:
    writer = HeldWriter()
    batcher = LineBatcher(writer.write)
    ids: dict[str, int] = {}

    async def post(text: str) -> None:
        ids[text] = await batcher.post(line("r1", text))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(post, "first")
        await trio.testing.wait_all_tasks_blocked()
        for text in ("second", "third", "fourth"):
            nursery.start_soon(post, text)
            await trio.testing.wait_all_tasks_blocked()
        writer.release()  # the first transaction commits; the three queued go in one more
        await trio.testing.wait_all_tasks_blocked()
        writer.release()
    assert writer.batches == [["first"], ["second", "third", "fourth"]]
    assert ids == {"first": 1, "second": 2, "third": 3, "fourth": 4}
    assert batcher.batches == 2


async def test_a_poster_cancelled_before_its_line_was_taken_writes_nothing() -> None:
    writer = HeldWriter()
    batcher = LineBatcher(writer.write)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(batcher.post, line("r1", "kept"))
        await trio.testing.wait_all_tasks_blocked()
        with trio.CancelScope() as scope:
            scope.cancel()
            await batcher.post(line("r1", "withdrawn"))
        assert scope.cancelled_caught
        writer.release()
    assert writer.batches == [["kept"]]


async def test_a_poster_cancelled_while_its_line_is_written_still_gets_its_id() -> None:
    writer = HeldWriter()
    batcher = LineBatcher(writer.write)
    got: list[int] = []

    async def post_then_notice_the_cancel(scope: trio.CancelScope) -> None:
        with scope:
            got.append(await batcher.post(line("r1", "in flight")))
            await trio.lowlevel.checkpoint()  # the cancellation surfaces here, after the id
            got.append(-1)  # pragma: no cover

    scope = trio.CancelScope()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(post_then_notice_the_cancel, scope)
        await trio.testing.wait_all_tasks_blocked()
        scope.cancel()  # the line's transaction is already under way
        await trio.testing.wait_all_tasks_blocked()
        writer.release()
    assert got == [1]
    assert writer.batches == [["in flight"]]


async def test_a_failed_transaction_fails_its_lines_and_the_next_batch_still_runs() -> None:
    writer = HeldWriter()
    batcher = LineBatcher(writer.write)
    outcomes: dict[str, object] = {}

    async def post(text: str) -> None:
        try:
            outcomes[text] = await batcher.post(line("r1", text))
        except StorageError as exc:
            outcomes[text] = str(exc)

    writer.fail_next = StorageError("disk full")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(post, "a")
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(post, "b")
        await trio.testing.wait_all_tasks_blocked()
        writer.release()  # "a" fails; "b" was queued meanwhile and leads the next batch
        await trio.testing.wait_all_tasks_blocked()
        writer.release()
    assert outcomes == {"a": "disk full", "b": 1}


async def test_rooms_posting_at_once_keep_their_own_order_on_a_real_store(open_some_store) -> None:
    async with open_some_store() as store:
        await store.rooms.save(RoomState("secret", personas=("warren",), present=frozenset({42}), private=True, incognito=True, kit=None, topic=None), AT)
        presence = Presence(frozenset({42}), ("warren",))
        returned: dict[str, list[int]] = {}

        async def talk(room: str) -> None:
            returned[room] = [
                await store.transcript.post(room, "u:42", f"{room} line {k}", AT, presence) for k in range(15)
            ]

        async with trio.open_nursery() as nursery:
            for n in range(12):
                nursery.start_soon(talk, f"room-{n}")
            nursery.start_soon(talk, "secret")
        for n in range(12):
            room = f"room-{n}"
            stored = await store.transcript.lines(room)
            assert [l.text for l in stored] == [f"{room} line {k}" for k in range(15)]
            assert [l.id for l in stored] == returned[room]
            assert returned[room] == sorted(returned[room])
        assert returned["secret"] == [0] * 15 and await store.transcript.lines("secret") == []
        assert store.transcript.batches < 12 * 15 + 15  # lines shared transactions


async def test_a_queued_poster_cancelled_while_its_batch_is_written_still_gets_its_id() -> None:
    writer = HeldWriter()
    batcher = LineBatcher(writer.write)
    got: dict[str, int] = {}
    scope = trio.CancelScope()

    async def post(text: str, cancel_scope: trio.CancelScope | None = None) -> None:
        with cancel_scope or trio.CancelScope():
            got[text] = await batcher.post(line("r1", text))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(post, "alone")
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(post, "queued first")
        await trio.testing.wait_all_tasks_blocked()  # trio starts tasks in no set order
        nursery.start_soon(post, "queued second", scope)
        await trio.testing.wait_all_tasks_blocked()
        writer.release()  # "alone" commits; the two queued lines are now one transaction
        await trio.testing.wait_all_tasks_blocked()
        scope.cancel()
        await trio.testing.wait_all_tasks_blocked()
        writer.release()
    assert writer.batches == [["alone"], ["queued first", "queued second"]]
    assert got == {"alone": 1, "queued first": 2, "queued second": 3}
