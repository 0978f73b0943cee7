"""Persona actors and their supervisor, on trio: restarts, the writer lane, shutdown, retirement.

The write path here is a fake (``write_path=`` of ``open_memory``) that records when it was
called and can fail, block or sleep on command. Where a test asserts exact virtual times, the
part being timed touches no database (see ``conftest``), so the clock only moves by sleeps.
Tests that would hang if the code under test deadlocked run inside ``deadlock_guard()``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from contextlib import AsyncExitStack
from typing import Sequence

import attrs
import numpy as np
import pytest
import trio
import trio.testing
from conftest import DIM, NOW
from rowfactory import make_row

import persona_memory as pm
from persona_memory import (
    MemoryClosed,
    RoomArchived,
    RoomOpened,
    PersonaFailed,
    RoomWentQuiet,
)
from persona_memory.actors.envelopes import Closing, Delivered, FlushRequested
from persona_memory.actors.lane import QuietJob, TouchJob, WriteLane, run_writer
from persona_memory.actors.persona import ActorContext, PersonaActor
from persona_memory.core.block import BlockRules
from persona_memory.embedding import HashingEmbedder
from persona_memory.errors import ProviderUnreachable, StorageError
from persona_memory.messages import MemberJoined, MemberLeft
from persona_memory.rooms import RoomState
from persona_memory.storage.store import open_store

SLOW_TOPIC = "the slow topic"
BAD_TOPIC = "the topic that breaks the embedder"
DOWN_TOPIC = "a topic asked while the embedding provider is down"


def private(room_id: str, persona: str = "warren", human: int = 42, **changes: object) -> RoomOpened:
    return RoomOpened(room_id=room_id, personas=(persona,), humans={human}, private=True, **changes)


def deadlock_guard() -> trio.CancelScope:
    """Turn a hang into a failure (generous: these tests finish in milliseconds)."""
    return trio.fail_after(20)


def world_row(text: str, persona: str = "warren"):
    return make_row(id=None, persona=persona, subject="world", kind="event", text=text, created=NOW)


@attrs.define
class Call:
    persona: str
    room_id: str
    archiving: bool
    at: float


class FakeWritePath:
    """A write path that records every attempt and does what the test says.

    ``failures[room_id]``: how many more attempts on that room raise. ``gates[room_id]``: an
    event the call waits on. ``sleep``: virtual seconds each call takes. ``done`` holds the
    calls that returned.
    """

    def __init__(self, *, sleep: float = 0.0) -> None:
        self.sleep = sleep
        self.failures: Counter[str] = Counter()
        self.always_fail = False
        self.error: Exception = RuntimeError("the model is down")
        self.gates: dict[str, trio.Event] = {}
        self.attempts: list[Call] = []
        self.done: list[Call] = []
        self.active: Counter[str] = Counter()
        self.most_at_once: Counter[str] = Counter()
        self.entered: dict[str, trio.Event] = defaultdict(trio.Event)

    async def __call__(self, persona: str, room: RoomState, *, archiving: bool, block: str = "", **context: object) -> None:
        call = Call(persona, room.room_id, archiving, trio.current_time())
        self.attempts.append(call)
        self.active[persona] += 1
        self.most_at_once[persona] = max(self.most_at_once[persona], self.active[persona])
        self.entered[f"{persona}@{room.room_id}"].set()
        try:
            if self.always_fail:
                raise self.error
            if self.failures[room.room_id] > 0:
                self.failures[room.room_id] -= 1
                raise RuntimeError(f"the model timed out on {room.room_id}")
            if room.room_id in self.gates:
                await self.gates[room.room_id].wait()
            if self.sleep:
                await trio.sleep(self.sleep)
            for _ in range(3):
                await trio.lowlevel.checkpoint()
            self.done.append(call)
        finally:
            self.active[persona] -= 1

    def rooms_done(self, persona: str = "warren") -> list[str]:
        return [c.room_id for c in self.done if c.persona == persona]


class GatedEmbedder:
    """The hashing embedder, except that ``SLOW_TOPIC`` waits for ``gate``, ``BAD_TOPIC`` hits a
    bug, and ``DOWN_TOPIC`` finds the provider down."""

    def __init__(self) -> None:
        self._inner = HashingEmbedder(DIM)
        self.gate = trio.Event()
        self.entered = trio.Event()

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dim(self) -> int:
        return self._inner.dim

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if SLOW_TOPIC in texts:
            self.entered.set()
            await self.gate.wait()
        if BAD_TOPIC in texts:
            raise RuntimeError("the embedder has a bug")
        if DOWN_TOPIC in texts:
            raise ProviderUnreachable("the embedding endpoint answered 503 five times")
        return await self._inner.embed(texts)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def settle(memory, *room_ids: str, persona: str = "warren") -> None:
    """Wait until each room's block is built and every queued write landed."""
    for room_id in room_ids:
        await memory.block(persona, room_id)
    await memory.drain()


# ---- restarts on the virtual clock -----------------------------------------------------------


async def test_a_failing_write_is_retried_after_capped_backoff_and_nothing_queued_is_lost(
    open_test_memory, autojump_clock
) -> None:
    writes = FakeWritePath()
    writes.failures["r1"] = 2
    async with open_test_memory(write_path=writes) as memory:
        for room_id in ("r1", "r2", "r3"):
            await memory.send(private(room_id))
        await settle(memory, "r1", "r2", "r3")

        t0 = trio.current_time()
        for room_id in ("r1", "r2", "r3"):
            await memory.send(RoomWentQuiet(room_id=room_id))
        await memory.drain()

        assert [c.room_id for c in writes.attempts] == ["r1", "r1", "r1", "r2", "r3"]
        assert [c.at - t0 for c in writes.attempts] == pytest.approx([0.0, 0.5, 1.5, 1.5, 1.5])
        assert writes.rooms_done() == ["r1", "r2", "r3"]
        assert memory.supervisor.restarts == 2

        # A writer that then ran longer than healthy_after (60 s) starts over at 0.5 s,
        # where a third consecutive crash would have waited 2 s.
        await trio.sleep(61)
        writes.failures["r2"] = 1
        t1 = trio.current_time()
        await memory.send(RoomWentQuiet(room_id="r2"))
        await memory.drain()
        assert [c.at - t1 for c in writes.attempts[5:]] == pytest.approx([0.0, 0.5])
        assert writes.rooms_done() == ["r1", "r2", "r3", "r2"]


async def test_backoff_keeps_doubling_without_a_healthy_run(open_test_memory, autojump_clock) -> None:
    writes = FakeWritePath()
    writes.failures["r1"] = 4
    async with open_test_memory({"supervisor.backoff_max_seconds": 3.0}, write_path=writes) as memory:
        await memory.send(private("r1"))
        await settle(memory, "r1")
        t0 = trio.current_time()
        await memory.send(RoomWentQuiet(room_id="r1"))
        await memory.drain()
    assert [c.at - t0 for c in writes.attempts] == pytest.approx([0.0, 0.5, 1.5, 3.5, 6.5])
    assert writes.rooms_done() == ["r1"]


async def test_a_job_that_keeps_crashing_the_writer_is_parked_and_the_persona_goes_on(
    open_test_memory, autojump_clock
) -> None:
    writes = FakeWritePath()
    writes.failures["r1"] = 1000  # a poison job: this room's write always raises
    async with open_test_memory(write_path=writes) as memory:
        await memory.send(private("r1"))
        await memory.send(RoomOpened(room_id="r2", personas=("warren",), humans={17}, private=True))
        await settle(memory, "r1")
        t0 = trio.current_time()
        await memory.send(RoomWentQuiet(room_id="r1"))
        await memory.send(RoomWentQuiet(room_id="r2"))
        await memory.drain()
        parked = await memory._store.read(
            lambda conn: conn.execute("SELECT persona, room_id, error FROM parked_slices").fetchall()
        )
        assert memory.supervisor.parked_jobs == 1
        # the persona went on with its next job; the memory is still open
        await memory.send(RoomWentQuiet(room_id="r2"))
        await memory.drain()
    # max_restarts = 5 crashes are retried (0.5, 1, 2, 4, 8 s apart); the sixth parks the job.
    r1 = [c.at - t0 for c in writes.attempts if c.room_id == "r1"]
    assert r1 == pytest.approx([0.0, 0.5, 1.5, 3.5, 7.5, 15.5])
    assert [tuple(p) for p in parked] == [("warren", "r1", "RuntimeError: the model timed out on r1")]
    assert [c.room_id for c in writes.done] == ["r2", "r2"]


async def test_a_writer_whose_storage_is_broken_escalates_its_persona_alone(
    open_test_memory, autojump_clock
) -> None:
    writes = FakeWritePath()
    writes.error = StorageError("disk I/O error")
    async with open_test_memory(write_path=writes) as memory:
        await memory.send(private("r1"))
        await memory.send(private("n1", persona="nolan", human=17))
        await settle(memory, "r1")
        writes.always_fail = True
        await memory.send(RoomWentQuiet(room_id="r1"))
        while "warren" not in memory.supervisor.failed:
            await trio.sleep(1)
        assert len(writes.attempts) == 6  # 5 restarts, then the persona is stopped
        with pytest.raises(PersonaFailed, match="warren's writer crashed 6 times within 60 s"):
            await memory.block("warren", "r1")
        ready = await memory.readiness()
        assert not ready.ready and ready.escalated == ("warren",)
        writes.always_fail = False
        assert await memory.block("nolan", "n1") == ""
        await memory.send(RoomWentQuiet(room_id="n1"))  # a room of warren's goes on without it
        await memory.send(RoomWentQuiet(room_id="r1"))
        await memory.drain()
    assert writes.rooms_done("nolan") == ["n1"] and writes.rooms_done("warren") == []


# ---- the writer lane never stalls the mailbox ------------------------------------------------


async def test_a_blocked_writer_does_not_stall_the_mailbox(open_test_memory) -> None:
    writes = FakeWritePath()
    writes.gates["r1"] = trio.Event()
    with deadlock_guard():
        async with open_test_memory(write_path=writes) as memory:
            await memory._store.memories.insert([world_row("Nolan's Odyssey opened 2026-07-17.")])
            await memory.send(private("r1"))
            await settle(memory, "r1")
            await memory.send(RoomWentQuiet(room_id="r1"))
            await writes.entered["warren@r1"].wait()

            await memory.send(private("r2", human=17))
            text = await memory.block("warren", "r2")

            assert "Nolan's Odyssey opened 2026-07-17." in text
            assert writes.active["warren"] == 1 and writes.done == []
            writes.gates["r1"].set()
    assert writes.rooms_done() == ["r1"]


# ---- concurrency: one writer per persona, personas side by side ------------------------------


async def test_two_personas_write_at_the_same_time(open_test_memory) -> None:
    writes = FakeWritePath()
    writes.gates["group"] = trio.Event()
    with deadlock_guard():
        async with open_test_memory(write_path=writes) as memory:
            await memory.send(RoomOpened(room_id="group", personas=("warren", "nolan"), humans={42, 17}))
            await memory.send(RoomWentQuiet(room_id="group"))
            await writes.entered["warren@group"].wait()
            await writes.entered["nolan@group"].wait()
            assert writes.active == Counter({"warren": 1, "nolan": 1})
            writes.gates["group"].set()
            await memory.drain()
    assert sorted(c.persona for c in writes.done) == ["nolan", "warren"]


async def test_one_personas_writes_run_one_at_a_time_in_order(open_test_memory) -> None:
    writes = FakeWritePath()
    writes.gates["r1"] = trio.Event()
    with deadlock_guard():
        async with open_test_memory(write_path=writes) as memory:
            for room_id in ("r1", "r2", "r3"):
                await memory.send(private(room_id))
            await settle(memory, "r1", "r2", "r3")
            for room_id in ("r1", "r2", "r3"):
                await memory.send(RoomWentQuiet(room_id=room_id))
            await trio.testing.wait_all_tasks_blocked()
            assert [c.room_id for c in writes.attempts] == ["r1"]
            writes.gates["r1"].set()
            await memory.drain()
    assert writes.rooms_done() == ["r1", "r2", "r3"]
    assert writes.most_at_once["warren"] == 1


async def test_archiving_queues_a_last_write_marked_archiving(open_test_memory) -> None:
    writes = FakeWritePath()
    async with open_test_memory(write_path=writes) as memory:
        await memory.send(private("r1"))
        await memory.send(RoomOpened(room_id="game", personas=("warren",), humans={42}, kit="chess"))
        await memory.send(RoomOpened(room_id="secret", personas=("warren",), humans={42}, incognito=True))
        for room_id in ("r1", "game", "secret"):
            await memory.send(RoomArchived(room_id=room_id))
        await memory.drain()
    # The kit room's write path runs (lines said before the kit was mounted are still to be
    # read; the kit's own lines are skipped line by line); the incognito room keeps no lines.
    assert [(c.room_id, c.archiving) for c in writes.done] == [("r1", True), ("game", True)]


# ---- drain and shutdown ----------------------------------------------------------------------


async def test_drain_waits_for_queued_writes(open_test_memory, autojump_clock) -> None:
    writes = FakeWritePath(sleep=5.0)
    async with open_test_memory(write_path=writes) as memory:
        await memory.send(private("r1"))
        await memory.send(private("r2"))
        await settle(memory, "r1", "r2")
        await memory.send(RoomWentQuiet(room_id="r1"))
        await memory.send(RoomWentQuiet(room_id="r2"))
        assert writes.done == []
        await memory.drain()
        assert writes.rooms_done() == ["r1", "r2"]


async def test_drain_flushes_only_the_actors_with_work(open_test_memory, autojump_clock, monkeypatch) -> None:
    """With a thousand idle actors, a drain waits for the one that has a write queued, and
    sends the others nothing."""
    # A thousand first opens each read the store on its thread. A clock that jumps the moment
    # every task waits would jump to the retirement check on every such read, and that
    # check's pass over a thousand actors holds the interpreter lock the reads need: the
    # test would crawl. Jump only once the loop has been idle a little while.
    autojump_clock.autojump_threshold = 0.02
    flushes: Counter[str] = Counter()
    handle = PersonaActor._handle

    async def counting(self: PersonaActor, envelope) -> None:
        if isinstance(envelope, FlushRequested):
            flushes[self.persona] += 1
        await handle(self, envelope)

    monkeypatch.setattr(PersonaActor, "_handle", counting)
    writes = FakeWritePath(sleep=5.0)
    personas = [f"p{i:04d}" for i in range(1000)]
    async with open_test_memory(write_path=writes) as memory:
        for i, persona in enumerate(personas):
            await memory.send(private(f"r{i}", persona=persona))
        for i, persona in enumerate(personas):
            assert await memory.block(persona, f"r{i}") == ""
        await memory.drain()
        flushes.clear()

        await memory.send(RoomWentQuiet(room_id="r7"))
        await memory.drain()

        assert writes.rooms_done("p0007") == ["r7"]
        assert flushes == {"p0007": 1}
        await memory.drain()
        assert flushes == {"p0007": 1}


async def test_leaving_open_memory_lets_queued_writes_finish(open_test_memory, autojump_clock) -> None:
    writes = FakeWritePath(sleep=1.0)
    async with open_test_memory(write_path=writes) as memory:
        for room_id in ("r1", "r2", "r3"):
            await memory.send(private(room_id))
        await memory.send(RoomOpened(room_id="group", personas=("nolan",), humans={42, 17}))
        await settle(memory, "r1", "r2", "r3")
        for room_id in ("r1", "r2", "r3", "group"):
            await memory.send(RoomWentQuiet(room_id=room_id))
        assert writes.done == []
    assert writes.rooms_done("warren") == ["r1", "r2", "r3"]
    assert writes.rooms_done("nolan") == ["group"]


@pytest.mark.parametrize("deadline", [10.0, 3.0])
async def test_a_stuck_writer_is_cut_off_at_the_shutdown_deadline(
    open_test_memory, autojump_clock, deadline: float
) -> None:
    writes = FakeWritePath()
    writes.gates["r1"] = trio.Event()
    overrides = {"supervisor.shutdown_deadline_seconds": deadline}
    async with open_test_memory(overrides, write_path=writes) as memory:
        await memory.send(private("r1"))
        await settle(memory, "r1")
        await memory.send(RoomWentQuiet(room_id="r1"))
        await writes.entered["warren@r1"].wait()
        leaving = trio.current_time()
    assert trio.current_time() - leaving == pytest.approx(deadline)
    assert writes.done == []


async def test_a_block_caller_waiting_at_close_is_told_the_memory_closed(
    open_test_memory, autojump_clock
) -> None:
    embedder = GatedEmbedder()
    outcome: list[BaseException | str] = []

    async def ask(memory) -> None:
        with trio.fail_after(3600):
            try:
                outcome.append(await memory.block("warren", "r1"))
            except Exception as exc:
                outcome.append(exc)

    async with trio.open_nursery() as outer:
        async with open_test_memory(embedder=embedder) as memory:
            await memory.send(private("r1", topic=SLOW_TOPIC))
            await embedder.entered.wait()
            outer.start_soon(ask, memory)
            await trio.testing.wait_all_tasks_blocked()
    assert len(outcome) == 1 and isinstance(outcome[0], MemoryClosed)


async def test_a_drain_caller_waiting_at_close_is_told_the_memory_closed(
    open_test_memory, autojump_clock
) -> None:
    writes = FakeWritePath()
    writes.gates["r1"] = trio.Event()
    outcome: list[BaseException | str] = []

    async def wait_for_drain(memory) -> None:
        with trio.fail_after(3600):
            try:
                await memory.drain()
                outcome.append("drained")
            except Exception as exc:
                outcome.append(exc)

    async with trio.open_nursery() as outer:
        async with open_test_memory(write_path=writes) as memory:
            await memory.send(private("r1"))
            await settle(memory, "r1")
            await memory.send(RoomWentQuiet(room_id="r1"))
            await writes.entered["warren@r1"].wait()
            outer.start_soon(wait_for_drain, memory)
            await trio.testing.wait_all_tasks_blocked()
    assert len(outcome) == 1 and isinstance(outcome[0], MemoryClosed)


async def test_touches_that_found_the_lane_full_still_land_before_close(open_test_memory) -> None:
    """A build whose touch found the writer's queue full used to keep the stamps in memory
    until the next ``drain()``; closing the memory without one lost them."""
    writes = FakeWritePath()
    writes.gates["r1"] = trio.Event()
    with deadlock_guard():
        async with open_test_memory({"actors.write_queue_size": 1}, write_path=writes) as memory:
            await memory.send(private("r1"))
            await settle(memory, "r1")
            await memory.send(RoomWentQuiet(room_id="r1"))
            await writes.entered["warren@r1"].wait()
            await memory.send(RoomWentQuiet(room_id="r1"))  # takes the queue's only slot
            [row] = await memory._store.memories.insert([world_row("The Fed held rates in September.")])
            await memory.send(private("r2", human=17))
            assert "The Fed held rates in September." in await memory.block("warren", "r2")
            writes.gates["r1"].set()
        async with open_test_memory() as memory:
            [touched] = [r for r in (await memory._store.memories.rows("warren"))[1] if r.id == row.id]
    assert (touched.last_recalled, touched.recall_count) == (NOW, 1)
    assert writes.rooms_done() == ["r1", "r1"]


# ---- idle retirement on the virtual clock ----------------------------------------------------


async def test_an_idle_actor_is_retired_and_a_later_message_respawns_it(open_test_memory, mock_clock) -> None:
    # Time moves only when the test says: an autojump clock would leap while a thread call
    # (a drain's room record) is in flight and retire the actor mid-drain.
    async with open_test_memory({"actors.idle_retire_seconds": 100.0}) as memory:
        await memory.send(private("r1"))
        await settle(memory, "r1")
        # Straight to the supervisor: the facade would also mark the room archived.
        await memory.supervisor.router.send(RoomArchived(room_id="r1"))
        await memory.drain()
        await trio.testing.wait_all_tasks_blocked()
        assert memory.supervisor.live_personas == {"warren"}

        mock_clock.jump(99)
        await trio.testing.wait_all_tasks_blocked()
        assert memory.supervisor.live_personas == {"warren"}
        # The idle check runs every idle_retire_seconds / 4.
        mock_clock.jump(27)
        await trio.testing.wait_all_tasks_blocked()
        assert memory.supervisor.live_personas == frozenset()

        await memory._store.memories.insert([world_row("The Fed held rates in September.")])
        await memory.send(private("r2", human=17))
        assert memory.supervisor.live_personas == {"warren"}
        assert "The Fed held rates in September." in await memory.block("warren", "r2")


async def test_an_actor_with_an_open_room_is_never_retired(open_test_memory, autojump_clock) -> None:
    async with open_test_memory({"actors.idle_retire_seconds": 10.0}) as memory:
        await memory.send(private("r1"))
        await settle(memory, "r1")
        before = await memory.block("warren", "r1")
        await trio.sleep(1000)
        assert memory.supervisor.live_personas == {"warren"}
        assert await memory.block("warren", "r1") is before


async def test_an_actor_with_a_write_in_flight_is_not_retired(open_test_memory, autojump_clock) -> None:
    writes = FakeWritePath()
    writes.gates["r1"] = trio.Event()
    async with open_test_memory({"actors.idle_retire_seconds": 10.0}, write_path=writes) as memory:
        await memory.send(private("r1"))
        await settle(memory, "r1")
        await memory.send(RoomArchived(room_id="r1"))
        await writes.entered["warren@r1"].wait()
        await trio.sleep(1000)
        assert memory.supervisor.live_personas == {"warren"}
        writes.gates["r1"].set()
        await memory.drain()
        await trio.sleep(20)
        assert memory.supervisor.live_personas == frozenset()
    assert writes.rooms_done() == ["r1"]


class RetireBeforeEveryStep(trio.abc.Instrument):
    """An adversarial schedule: the retirement check runs right before every task step."""

    def __init__(self, supervisor) -> None:
        self.supervisor = supervisor

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self.supervisor.retire_idle()


async def test_retirement_never_races_an_event_just_handed_to_an_actor(
    open_test_memory, autojump_clock
) -> None:
    """An event handed to a parked actor is work, even before the actor wakes to look at it.

    Retiring the actor in that instant lost track of the archive write it was about to queue:
    ``drain()`` returned before the write landed, and a new actor for the same persona wrote
    beside the old one.
    """
    writes = FakeWritePath()
    writes.gates["r1"] = trio.Event()
    async with open_test_memory({"actors.idle_retire_seconds": 10.0}, write_path=writes) as memory:
        await memory.send(private("r1"))
        await settle(memory, "r1")
        await trio.sleep(100)

        instrument = RetireBeforeEveryStep(memory.supervisor)
        trio.lowlevel.add_instrument(instrument)
        try:
            await memory.send(RoomArchived(room_id="r1"))
            drained = trio.Event()

            async def drain() -> None:
                await memory.drain()
                drained.set()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(drain)
                await trio.testing.wait_all_tasks_blocked()
                assert not drained.is_set()
                assert memory.supervisor.live_personas == {"warren"}

                await memory.send(private("r2"))
                await memory.send(RoomWentQuiet(room_id="r2"))
                await writes.entered["warren@r1"].wait()  # past the room records' flush
                await trio.testing.wait_all_tasks_blocked()
                assert writes.most_at_once["warren"] == 1
                writes.gates["r1"].set()
            await memory.drain()
        finally:
            trio.lowlevel.remove_instrument(instrument)
    assert [(c.room_id, c.archiving) for c in writes.done] == [("r1", True), ("r2", False)]
    assert writes.most_at_once["warren"] == 1


# ---- races around delivery -------------------------------------------------------------------


async def test_a_sender_cancelled_while_the_mailbox_is_full_leaves_no_half_delivered_event(
    open_test_memory,
) -> None:
    """Cancelling ``send`` must not leave the registry ahead of the actors.

    A room recorded as open whose ``RoomOpened`` never reached the actor would leave
    ``block()`` for it waiting forever.
    """
    embedder = GatedEmbedder()
    with deadlock_guard():
        async with open_test_memory({"actors.mailbox_size": 1}, embedder=embedder) as memory:
            await memory.send(private("r1", topic=SLOW_TOPIC))
            await embedder.entered.wait()
            await memory.send(private("r2"))  # fills warren's mailbox

            scope = trio.CancelScope()

            async def send_r3() -> None:
                with scope:
                    await memory.supervisor.router.send(private("r3"))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(send_r3)
                await trio.testing.wait_all_tasks_blocked()
                scope.cancel()
                embedder.gate.set()
            assert await memory.block("warren", "r3") == ""
            assert await memory.block("warren", "r1") == ""


async def test_a_sender_blocked_on_an_actor_that_was_stopped_hears_why(
    open_test_memory, autojump_clock
) -> None:
    embedder = GatedEmbedder()
    writes = FakeWritePath()
    writes.always_fail = True
    writes.error = StorageError("disk I/O error")  # broken storage escalates
    outcome: list[BaseException] = []

    async def send_r4(memory) -> None:
        try:
            await memory.supervisor.router.send(private("r4"))
        except Exception as exc:
            outcome.append(exc)

    async with trio.open_nursery() as outer:
        overrides = {"actors.mailbox_size": 1}
        async with open_test_memory(overrides, embedder=embedder, write_path=writes) as memory:
            await memory.send(private("r1"))
            await settle(memory, "r1")
            await memory.supervisor.router.send(RoomWentQuiet(room_id="r1"))  # the writer starts failing
            await memory.supervisor.router.send(private("r2", topic=SLOW_TOPIC))  # the actor sticks
            await embedder.entered.wait()
            await memory.supervisor.router.send(private("r3"))  # the mailbox is full
            outer.start_soon(send_r4, memory)
            while not outcome:
                await trio.sleep(1)
    assert len(outcome) == 1 and isinstance(outcome[0], PersonaFailed)


async def test_a_build_that_fails_raises_from_block_and_the_actor_lives_on(open_test_memory) -> None:
    embedder = GatedEmbedder()
    with deadlock_guard():
        async with open_test_memory(embedder=embedder) as memory:
            await memory._store.memories.insert([world_row("Nolan's Odyssey opened 2026-07-17.")])
            await memory.send(private("r1", topic=BAD_TOPIC))
            for _ in range(2):
                with pytest.raises(RuntimeError, match="the embedder has a bug"):
                    await memory.block("warren", "r1")
            await memory.send(private("r2"))
            assert "Odyssey" in await memory.block("warren", "r2")
            await memory.send(private("r1", topic="films"))
            assert "Odyssey" in await memory.block("warren", "r1")


# ---- one owner: no persona delays another, no edit races a build ---------------------------


async def test_a_persona_that_cannot_take_an_event_never_delays_another_personas_rooms(
    open_test_memory,
) -> None:
    embedder = GatedEmbedder()
    with deadlock_guard():
        async with open_test_memory({"actors.mailbox_size": 1}, embedder=embedder) as memory:
            await memory.send(private("r1", topic=SLOW_TOPIC))  # Warren's build waits
            await embedder.entered.wait()
            async with trio.open_nursery() as nursery:
                nursery.start_soon(memory.send, private("r2"))  # fills Warren's mailbox
                nursery.start_soon(memory.send, private("r3"))  # waits for Warren
                await trio.testing.wait_all_tasks_blocked()
                with trio.fail_after(5):
                    await memory.send(private("n1", persona="nolan", human=17))
                    assert await memory.block("nolan", "n1") == ""
                    await memory.send(pm.RoomArchived(room_id="n1"))
                embedder.gate.set()
            assert await memory.block("warren", "r3") == ""


async def test_a_delete_racing_a_leave_never_brings_back_the_departed_humans_lines(
    open_test_memory,
) -> None:
    group = RoomOpened(room_id="g", personas=("warren",), humans={42, 17})
    with deadlock_guard():
        async with open_test_memory({"scope.v1_proven": False}) as memory:
            for round_ in range(6):
                rows = await memory._store.memories.insert([
                    make_row(id=None, subject="u:42", text=f"u:42 keeps bees, hive {round_}.", created=NOW),
                    make_row(id=None, subject="u:42", text=f"u:42 rows a boat, season {round_}.", created=NOW),
                    make_row(id=None, subject="u:17", text=f"u:17 plays the oboe, piece {round_}.", created=NOW),
                ])
                await memory.send(group)
                assert f"hive {round_}" in await memory.block("warren", "g")
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(memory.delete_memory, 42, rows[0].id)
                    nursery.start_soon(memory.send, MemberLeft(room_id="g", user_id=17))
                block = await memory.block("warren", "g")
                assert f"piece {round_}" not in block  # u:17 left
                assert f"hive {round_}" not in block  # deleted
                assert f"season {round_}" in block
                await memory.send(pm.RoomArchived(room_id="g"))


# ---- the actor alone: deliveries out of order ------------------------------------------------


@pytest.fixture
async def lone_actor(tmp_path, clock):
    """A persona actor and its writer, run without a supervisor and fed envelopes by hand.

    The store holds a world row and a row about Cara (u:17); group rooms may show personal
    rows (``v1_proven`` off).
    """
    async with AsyncExitStack() as stack:
        store = await stack.enter_async_context(open_store(str(tmp_path / "m.db")))
        await store.memories.insert(
            [
                world_row("Nolan's Odyssey opened 2026-07-17."),
                make_row(id=None, subject="u:17", text="Cara plays the cello.", created=NOW),
            ]
        )
        rules = BlockRules(v1_proven=False)
        context = ActorContext(store=store, embedder=HashingEmbedder(DIM), clock=clock, rules=rules)
        send, receive = trio.open_memory_channel(16)
        lane = WriteLane(16, waker=send.clone())
        actor = PersonaActor("warren", context, lane)
        nursery = await stack.enter_async_context(trio.open_nursery())
        nursery.start_soon(run_writer, lane, actor.perform)
        nursery.start_soon(actor.run, receive)
        async with send:
            yield actor, send
            await send.send(Closing())


async def handled(mailbox) -> None:
    """Return once the actor handled everything sent before (its writer sets the flag)."""
    done = trio.Event()
    await mailbox.send(FlushRequested(done))
    await done.wait()


def room_state(generation: int, present: frozenset[int] = frozenset({42})) -> RoomState:
    return RoomState(
        room_id="r1", personas=("warren",), present=present, private=False, incognito=False,
        kit=None, topic=None, generation=generation,
    )


async def test_a_late_archive_of_an_older_generation_keeps_the_newer_block(lone_actor) -> None:
    actor, mailbox = lone_actor
    with deadlock_guard():
        await mailbox.send(Delivered(RoomOpened(room_id="r1", personas=("warren",), humans={42}), room_state(5)))
        await mailbox.send(Delivered(RoomArchived(room_id="r1"), attrs.evolve(room_state(3), archived=True)))
        await handled(mailbox)
        assert "Odyssey" in await actor.block("r1", 5)


async def test_a_stale_rebuild_is_skipped(lone_actor) -> None:
    actor, mailbox = lone_actor
    with deadlock_guard():
        joined = room_state(7, frozenset({42, 17}))
        await mailbox.send(Delivered(MemberJoined(room_id="r1", user_id=17), joined))
        await mailbox.send(Delivered(RoomOpened(room_id="r1", personas=("warren",), humans={42}), room_state(6)))
        await handled(mailbox)
        newest = await actor.block("r1", 7)
        assert await actor.block("r1", 6) is newest
        assert "Cara plays the cello." in newest



async def test_a_topic_that_cannot_be_embedded_still_gets_its_block(open_test_memory) -> None:
    async with open_test_memory(embedder=GatedEmbedder()) as memory:
        await memory._store.memories.insert([world_row("Nolan's Odyssey opened 2026-07-17.")])
        await memory.send(private("r1", topic=DOWN_TOPIC))
        assert "Odyssey" in await memory.block("warren", "r1")


async def test_the_lane_says_whether_a_rooms_write_is_still_to_come() -> None:
    """``writing`` counts the room writes queued or under way — not touches or flushes, and
    not a room write that could not be queued — until the writer is done with each (the
    actor keeps its writes out of the read path's table meanwhile, to take them in at once)."""
    lane = WriteLane(4)
    room = room_state(1)
    await lane.submit(TouchJob({}))
    assert not lane.writing
    await lane.submit(QuietJob(room))
    await lane.submit(QuietJob(room, archiving=True))
    assert lane.writing and lane.rooms_due == 2
    lane.close()
    with pytest.raises(trio.ClosedResourceError):
        await lane.submit(QuietJob(room))
    assert lane.rooms_due == 2
    performed: list[object] = []

    async def perform(job) -> None:
        performed.append((type(job).__name__, lane.rooms_due))

    await run_writer(lane, perform)
    assert performed == [("TouchJob", 2), ("QuietJob", 2), ("QuietJob", 1)]
    assert not lane.writing and lane.submitted == lane.performed == 3


# ---- the actor's own loop is supervised too ---------------------------------------------------


@pytest.fixture
def faulty_apply(monkeypatch):
    """Make Warren's actor raise when it applies a writer's report, ``left[0]`` times (an
    injected bug in the actor's own loop, not in its writer)."""
    left = [0]
    original = PersonaActor._apply

    def apply(self, report):
        if self.persona == "warren" and left[0] > 0:
            left[0] -= 1
            raise RuntimeError("a bug in applying the writer's report")
        return original(self, report)

    monkeypatch.setattr(PersonaActor, "_apply", apply)
    return left


async def test_an_actor_that_crashes_restarts_with_an_empty_cache_and_others_never_notice(
    open_test_memory, autojump_clock, faulty_apply
) -> None:
    writes = FakeWritePath()
    async with open_test_memory(write_path=writes) as memory:
        await memory._store.memories.insert([world_row("Nolan's Odyssey opened 2026-07-17.")])
        await memory.send(private("r1"))
        await memory.send(private("n1", persona="nolan", human=17))
        await settle(memory, "r1")
        # a row the cached block of r1 (built at open) does not show: only a build afresh does
        await memory._store.memories.insert([world_row("The Fed held rates in September.", persona="warren")])
        faulty_apply[0] = 1
        await memory.send(RoomWentQuiet(room_id="r1"))  # its report crashes Warren's actor
        await memory.send(RoomWentQuiet(room_id="n1"))
        await memory.drain()
        while memory.supervisor.actor_restarts < 1:
            await trio.sleep(0.1)
        block = await memory.block("warren", "r1")
        assert memory.supervisor.actor_restarts == 1
        # the new actor built the open room's block afresh (so it reads the rows as they stand)
        assert "Odyssey" in block and "The Fed held rates" in block
        assert await memory.block("nolan", "n1") == ""
        await memory.send(RoomWentQuiet(room_id="r1"))
        await memory.drain()
    assert writes.rooms_done("warren") == ["r1", "r1"] and writes.rooms_done("nolan") == ["n1"]


async def test_an_actor_that_keeps_crashing_stops_its_persona_alone(
    open_test_memory, autojump_clock, faulty_apply
) -> None:
    writes = FakeWritePath()
    # A period long enough that the autojump clock, leaping while a thread call is in flight,
    # cannot spread the crashes out of it.
    async with open_test_memory({"supervisor.restart_period_seconds": 1e6}, write_path=writes) as memory:
        [row] = await memory._store.memories.insert(
            [make_row(id=None, subject="u:42", text="Dan keeps bees.", created=NOW)]
        )
        await memory.send(private("r1"))
        await memory.send(private("n1", persona="nolan", human=17))
        await settle(memory, "r1")
        faulty_apply[0] = 1000
        for crashes in range(6):  # each report crashes it again, past max_restarts = 5
            await memory.supervisor.router.queue_write("warren", memory.supervisor.rooms["r1"])
            while memory.supervisor.actor_restarts == crashes and "warren" not in memory.supervisor.failed:
                await trio.sleep(0.1)
        assert memory.supervisor.actor_restarts == 5 and "warren" in memory.supervisor.failed
        with pytest.raises(PersonaFailed, match="warren's actor crashed 6 times"):
            await memory.block("warren", "r1")
        with pytest.raises(PersonaFailed):
            await memory.recall("warren", "r1", "What does Dan keep?")
        assert (await memory.readiness()).escalated == ("warren",)
        # every other persona goes on: reads, writes, a shared room
        assert await memory.block("nolan", "n1") == ""
        await memory.send(RoomOpened(room_id="g", personas=("warren", "nolan"), humans={17, 42}))
        assert await memory.block("nolan", "g") == ""
        await memory.send(RoomWentQuiet(room_id="g"))
        await memory.drain()
        assert writes.rooms_done("nolan") == ["g"]
        # the human's page still reads its meter, and their delete of its row still runs
        assert await memory.private_block(42, "warren") == (len('- "Dan keeps bees."') + 1, 1200,
                                                             frozenset({row.id}))
        await memory.delete_memory(42, row.id)
        assert await memory.memories_about(42) == []


async def test_jobs_parked_one_after_another_stop_the_persona_alone(open_test_memory, autojump_clock) -> None:
    writes = FakeWritePath()
    async with open_test_memory({"supervisor.max_restarts": 1}, write_path=writes) as memory:
        await memory.send(private("r1"))
        await memory.send(private("n1", persona="nolan", human=17))
        await settle(memory, "r1")
        writes.failures["r1"] = 1000  # every write of r1 keeps crashing the writer: parked
        for _ in range(2):
            await memory.send(RoomWentQuiet(room_id="r1"))
            await memory.drain()
        assert memory.supervisor.parked_jobs == 2
        assert "warren" in memory.supervisor.failed
        with pytest.raises(PersonaFailed, match="2 jobs in a row parked"):
            await memory.block("warren", "r1")
        await memory.send(RoomWentQuiet(room_id="n1"))
        await memory.drain()
    assert writes.rooms_done("nolan") == ["n1"]


# ---- every queue is bounded: a full one holds its sender back, never drops -------------------


async def test_a_full_outbox_holds_the_sender_back_before_anything_is_recorded(open_test_memory) -> None:
    embedder = GatedEmbedder()
    with deadlock_guard():
        async with open_test_memory({"actors.mailbox_size": 1}, embedder=embedder) as memory:
            await memory.send(private("r1", topic=SLOW_TOPIC))  # Warren's build waits
            await embedder.entered.wait()
            await memory.send(private("r2"))  # in the mailbox
            async with trio.open_nursery() as nursery:
                nursery.start_soon(memory.send, private("r3"))  # in the outbox, now full
                await trio.testing.wait_all_tasks_blocked()
                nursery.start_soon(memory.send, private("r4"))
                await trio.testing.wait_all_tasks_blocked()
                assert "r3" in memory.supervisor.rooms
                assert "r4" not in memory.supervisor.rooms  # held back, nothing recorded
                await memory.send(private("n1", persona="nolan", human=17))  # others go on
                embedder.gate.set()
            for room_id in ("r1", "r2", "r3", "r4"):
                assert await memory.block("warren", room_id) == ""
