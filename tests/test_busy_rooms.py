"""The busy-room harness (``harness.py``) over random room histories drawn by hypothesis.

Each example opens a fresh memory (SQLite file, ``HashingEmbedder(64)``, ``ManualClock``, a
recording write path) on trio's virtual clock and runs a history of steps through it; the
harness checks the audience rule, the char cap, the block cache, and that every quiet or
archived room reaches the write path exactly once — also when the writer keeps crashing.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Awaitable, Callable

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, event, given, settings, target
from hypothesis import strategies as st

from harness import (
    AddRows,
    Archive,
    BusyRooms,
    CloseRow,
    Join,
    Leave,
    ModelRow,
    OpenRoom,
    Quiet,
    RoomView,
    RowSpec,
    Rules,
    SetMemoryOn,
    SetMuted,
    SetNote,
    Shape,
    Step,
    WorldView,
    check_block,
    open_busy_memory,
    run_busy_rooms,
    run_steps,
)

SHAPE = Shape.make(n_rooms=4, n_personas=3, n_humans=5)

_slots = st.integers(0, SHAPE.n_rooms - 1)
_picks = st.integers(0, 9)
_persona_ix = st.integers(0, len(SHAPE.personas) - 1)
_human_ix = st.integers(0, len(SHAPE.humans) - 1)
_rarely = st.sampled_from((False, False, False, True))

open_room = st.builds(
    OpenRoom,
    slot=_slots,
    personas=st.lists(_persona_ix, min_size=1, max_size=3).map(tuple),
    humans=st.lists(_human_ix, max_size=4).map(tuple),
    private=st.booleans(),
    incognito=_rarely,
    kit=_rarely,
    topic=st.booleans(),
    named=st.booleans(),
)
quiet = st.builds(Quiet, slot=_slots, drain=st.booleans())
room_ops = st.one_of(
    open_room,
    quiet,
    st.builds(Join, slot=_slots, pick=_picks),
    open_room,
    st.builds(Leave, slot=_slots, pick=_picks),
    quiet,
    st.builds(Archive, slot=_slots),
)

row_specs = st.builds(
    RowSpec,
    persona=_persona_ix,
    subject=st.sampled_from(("user", "self", "world")),
    user=_human_ix,
    witnessed=st.lists(_human_ix, max_size=3).map(tuple),
    kind=st.integers(0, 5),
    importance=st.integers(1, 10),
    length=st.integers(0, 100),
    evil=_rarely,
    embed=st.booleans(),
    alone=st.booleans(),
)

world_ops = st.one_of(
    st.builds(AddRows, rows=st.lists(row_specs, min_size=1, max_size=6).map(tuple)),
    st.builds(CloseRow, pick=st.integers(0, 100), replace=st.booleans()),
    st.builds(SetMemoryOn, human=_human_ix, on=st.booleans()),
    st.builds(SetMuted, human=_human_ix, persona=_persona_ix, muted=st.booleans()),
    st.builds(SetNote, human=_human_ix, length=st.sampled_from((0, 20, 120))),
)

steps = st.builds(
    Step,
    room_ops=st.lists(room_ops, min_size=1, max_size=6).map(tuple),
    world_ops=st.lists(world_ops, max_size=3).map(tuple),
    advance_hours=st.integers(0, 48),
)


@st.composite
def histories(draw: st.DrawFn) -> list[Step]:
    """A day: rows already in the store, then steps of room events and world changes."""
    seed = draw(st.lists(row_specs, min_size=6, max_size=30))
    return [Step(world_ops=(AddRows(tuple(seed)),))] + draw(st.lists(steps, min_size=3, max_size=12))


def run_virtual(main: Callable[[], Awaitable[None]]) -> None:
    """Run ``main`` in a fresh trio run on a virtual clock that jumps once all tasks have waited
    a millisecond.

    Not at once: a task waiting for a database thread counts as waiting, so a clock that jumps
    the moment every task waits leaps from timer to timer — the retirement check, the sweep —
    for as long as a database call takes, and that loop holds the interpreter lock the call
    needs. The slower the call, the more leaps; a day could run for years of virtual time and
    minutes of real time. Waiting a millisecond first lets the thread finish.
    """
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0.001))


@pytest.mark.parametrize("v1_proven", [True, False], ids=["proven-scope", "groups-open"])
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    history=histories(),
    char_limit=st.sampled_from((300, 1200)),
    per_human=st.sampled_from((3, 10)),
    fail_every=st.sampled_from((0, 2, 3)),
)
def test_busy_rooms_keep_every_invariant(
    tmp_path_factory: pytest.TempPathFactory,
    v1_proven: bool,
    history: list[Step],
    char_limit: int,
    per_human: int,
    fail_every: int,
) -> None:
    path = tmp_path_factory.mktemp("busy") / "memory.db"

    async def main() -> None:
        async with open_busy_memory(
            path, v1_proven=v1_proven, char_limit=char_limit, per_human=per_human,
            fail_every=fail_every, write_delay=0.01,
        ) as busy:
            driver = BusyRooms(busy, SHAPE)
            for step in history:
                await driver.run_step(step)
            await driver.quiet_everything()
        driver.check_writes_after_close()
        stats = driver.stats
        target(float(stats.memory_lines_checked), label="memory lines checked")
        target(float(stats.injected_failures), label="injected failures")
        event(f"injected failures: {min(stats.injected_failures, 3)}")
        event(f"memory lines checked: {min(stats.memory_lines_checked // 10 * 10, 50)}+")
        event(f"blocks checked: {min(stats.blocks_checked // 5 * 5, 20)}+")

    run_virtual(main)


@pytest.mark.parametrize("v1_proven", [True, False], ids=["proven-scope", "groups-open"])
async def test_a_random_busy_day_keeps_every_invariant(
    autojump_clock: trio.testing.MockClock, tmp_path: Path, v1_proven: bool
) -> None:
    autojump_clock.autojump_threshold = 0.001  # as in ``run_virtual``: let a database call finish
    async with open_busy_memory(
        tmp_path / "memory.db",
        v1_proven=v1_proven,
        char_limit=300,
        per_human=3,
        fail_every=4,
        write_delay=0.01,
    ) as busy:
        stats = await run_busy_rooms(
            busy, random.Random(2026), n_rooms=6, n_personas=4, n_humans=8, steps=40
        )
    assert stats.blocks_checked > 40
    assert stats.memory_lines_checked > 0
    assert stats.write_calls > 0
    assert stats.injected_failures > 0
    assert stats.writer_restarts == stats.injected_failures


async def test_a_writer_that_fails_every_first_attempt_still_writes_each_quiet_once(
    autojump_clock: trio.testing.MockClock, tmp_path: Path
) -> None:
    autojump_clock.autojump_threshold = 0.001  # as in ``run_virtual``: let a database call finish
    opens = tuple(OpenRoom(slot, personas=(0, 1), humans=(slot, slot + 1)) for slot in range(4))
    quiets = tuple(Quiet(slot) for _ in range(5) for slot in range(4))
    history = [Step(room_ops=opens), Step(room_ops=quiets), Step(room_ops=(Archive(0), Archive(3)))]
    async with open_busy_memory(tmp_path / "memory.db", fail_every=1, write_delay=0.01) as busy:
        stats = await run_steps(busy, SHAPE, history)
        recorded = list(busy.recorder.calls)
    assert stats.write_calls == 2 * (4 * 5 + 2)
    assert stats.injected_failures == stats.write_calls
    assert stats.writer_restarts == stats.injected_failures
    persona0_r0 = [(c.room_id, c.archiving) for c in recorded if (c.persona, c.room_id) == ("persona0", "r0")]
    assert persona0_r0 == [("r0", False)] * 5 + [("r0", True)]


# ---- the oracle itself can fail -----------------------------------------------------------

DAN = ModelRow(1, "warren", "u:42", 42, frozenset({42}), "fact", "Dan [#1] owns a flat.", "[#1]")
CARA = ModelRow(2, "warren", "u:17", 17, frozenset({17}), "fact", "Cara [#2] sings.", "[#2]")
DAN_LINE = '- "Dan [#1] owns a flat."'  # a private chat's line: bare of its confidence tag
CARA_LINE = '- "Cara [#2] sings." · confidence'
RULES = Rules(char_limit=300, per_human=10, v1_proven=False)
PRIVATE_WITH_DAN = RoomView("r", frozenset({42}), private=True, incognito=False)


def _world(*rows: ModelRow, off: frozenset[int] = frozenset()) -> WorldView:
    return WorldView(rows, off, frozenset(), {})


def _block(*body: str, used: int) -> str:
    head = [f'<persona_memory persona="warren" chars="{used}/300">', "What warren remembers."]
    return "\n".join([*head, *body, "", "tail", "</persona_memory>"])


DAN_BLOCK = _block("", "About u:42:", DAN_LINE, used=len(DAN_LINE) + 1)


def test_the_oracle_accepts_a_block_that_keeps_the_rule() -> None:
    assert check_block(DAN_BLOCK, "warren", PRIVATE_WITH_DAN, _world(DAN, CARA), RULES) == []


def test_the_oracle_flags_a_row_about_an_absent_human() -> None:
    used = len(DAN_LINE) + len(CARA_LINE) + 2
    text = _block("", "About u:42:", DAN_LINE, "", "About u:17:", CARA_LINE, used=used)
    group_with_dan = RoomView("r", frozenset({42}), private=False, incognito=False)
    problems = check_block(text, "warren", group_with_dan, _world(DAN, CARA), RULES)
    assert any("absent" in p for p in problems)


def test_the_oracle_flags_a_human_whose_memory_is_off() -> None:
    problems = check_block(DAN_BLOCK, "warren", PRIVATE_WITH_DAN, _world(DAN, off=frozenset({42})), RULES)
    assert any("memory is off" in p for p in problems)


def test_the_oracle_flags_a_confidence_tag_in_a_private_chat() -> None:
    line = DAN_LINE + " · confidence"
    text = _block("", "About u:42:", line, used=len(line) + 1)
    problems = check_block(text, "warren", PRIVATE_WITH_DAN, _world(DAN), RULES)
    assert any("tags" in p for p in problems)


def test_the_oracle_flags_a_lying_meter() -> None:
    text = _block("", "About u:42:", DAN_LINE, used=3)
    problems = check_block(text, "warren", PRIVATE_WITH_DAN, _world(DAN), RULES)
    assert any("meter" in p for p in problems)


def test_the_oracle_wants_nothing_in_an_incognito_room() -> None:
    incognito = RoomView("r", frozenset({42}), private=True, incognito=True)
    problems = check_block(DAN_BLOCK, "warren", incognito, _world(DAN), RULES)
    assert any("incognito" in p for p in problems)
    assert any("should be empty" in p for p in problems)
