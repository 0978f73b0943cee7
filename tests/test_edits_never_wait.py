"""A human's edit never waits on a model: delete, undo, clear-all and the switches take effect
at once whatever the persona's writer is doing, and a write whose model call was under way
stores, when it is released, nothing the human took back meanwhile.

The minds here are fakes: one whose extraction waits on a gate the test may never open (a
model that does not answer), one whose extraction raises (a writer that keeps crashing). Time
is virtual: ``patient_clock`` jumps to the next deadline only once every task has been blocked
for a second of real time, so a database call in a thread never makes it jump, while an edit
stuck behind the model lets it jump to the edit's one-second deadline and fail the test.
"""

from __future__ import annotations

import pytest
import trio
import trio.testing

import persona_memory as pm
from persona_memory.minds.fake import FakeMind

DAN, CARA = 42, 17
DM = dict(room_id="dm", personas=("warren",), humans={DAN}, private=True)
AT_ONCE = 1.0  # virtual seconds a human's edit may take
FLAT = "u:42 owns a flat in Xuhui."
FLAT_AGAIN = "u:42 owns a flat in Xuhui now."
FLAT_SOLD = "u:42 owns a flat in Xuhui no longer."


@pytest.fixture
def patient_clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=1.0)


class ScriptedMind(FakeMind):
    """Answers each extraction with the next text of ``texts`` as one fact about Dan citing
    Dan's lines; the extraction numbered ``hang_at`` (from 0) waits for ``gate`` first, and
    every extraction from ``raise_from`` on raises. Routing updates the first neighbour."""

    def __init__(self, *texts: str, hang_at: int | None = None, raise_from: int | None = None) -> None:
        super().__init__(extract=self._answer, route=lambda _request: {"event": "UPDATE", "old_id": "0"})
        self.texts = list(texts)
        self.hang_at = hang_at
        self.raise_from = raise_from
        self.gate = trio.Event()
        self.hanging = trio.Event()

    async def _answer(self, request):
        n = len(self.extractions) - 1
        if self.raise_from is not None and n >= self.raise_from:
            raise RuntimeError("the model's client hit a bug")
        if n == self.hang_at:
            self.hanging.set()
            await self.gate.wait()
        dans = [line.id for line in request.lines if line.speaker == f"u:{DAN}"]
        return {"memories": [{"subject": f"u:{DAN}", "kind": "fact", "text": self.texts[n],
                              "importance": 6, "evidence": dans}]}


async def said(memory, text: str, room_id: str = "dm", speaker: str = f"u:{DAN}") -> None:
    await memory.post_line(room_id, speaker, text)


async def written(memory, text: str) -> None:
    """Dan says ``text`` in the private chat and the room goes quiet; the write lands."""
    await said(memory, text)
    await memory.send(pm.RoomWentQuiet(room_id="dm"))
    await memory.drain()


async def hung(memory, mind: ScriptedMind, text: str) -> None:
    """Dan says ``text``, the room goes quiet, and the write waits on the model."""
    await said(memory, text)
    await memory.send(pm.RoomWentQuiet(room_id="dm"))
    await mind.hanging.wait()


def texts(rows) -> dict[str, bool]:
    """Each row's text, and whether it is open."""
    return {r.text: r.valid_to is None for r in rows}


async def test_delete_undo_switches_and_clear_all_take_effect_while_the_model_hangs(
    open_test_memory, patient_clock
) -> None:
    mind = ScriptedMind(FLAT, "u:42 keeps bees on the roof.", hang_at=2)
    async with open_test_memory(mind=mind) as memory:
        await memory.send(pm.RoomOpened(**DM))
        await written(memory, "I own a flat in Xuhui.")
        await written(memory, "I keep bees on the roof.")
        flat, bees = await memory.memories_about(DAN)
        bees_notice, _ = await memory.notices(DAN)
        await memory.send(pm.RoomOpened(**DM))
        assert FLAT in await memory.block("warren", "dm")
        await hung(memory, mind, "I might sell the flat.")  # the model never answers

        with trio.fail_after(AT_ONCE):
            await memory.delete_memory(DAN, flat.id)
        assert FLAT not in await memory.block("warren", "dm")
        assert [r.id for r in await memory.memories_about(DAN)] == [bees.id]

        with trio.fail_after(AT_ONCE):
            await memory.set_memory_note(DAN, "Call me Dan.")
        assert "Call me Dan." in await memory.block("warren", "dm")
        with trio.fail_after(AT_ONCE):
            await memory.set_muted(DAN, "warren", True)
        muted = await memory.block("warren", "dm")
        assert "bees" not in muted and "Call me Dan." not in muted
        with trio.fail_after(AT_ONCE):
            await memory.set_muted(DAN, "warren", False)
            await memory.set_memory_on(DAN, False)
        assert "bees" not in await memory.block("warren", "dm")
        with trio.fail_after(AT_ONCE):
            await memory.set_memory_on(DAN, True)
        assert "bees" in await memory.block("warren", "dm")

        with trio.fail_after(AT_ONCE):
            assert await memory.undo(DAN, bees_notice.id) == [bees.id]
        assert "bees" not in await memory.block("warren", "dm")
        await memory._store.memories.insert([pm.MemoryRow(
            persona="warren", subject=f"u:{DAN}", witnessed={DAN}, kind="fact",
            text="u:42 rows on the river.", importance=5, created=memory._clock.now())])
        with trio.fail_after(AT_ONCE):
            assert await memory.clear_memories(DAN) == 1
        assert await memory.memories_about(DAN) == []
        assert not mind.gate.is_set() and len(mind.extractions) == 3  # still hanging


async def test_edits_do_not_wait_for_a_writer_that_keeps_crashing(open_test_memory, patient_clock) -> None:
    mind = ScriptedMind(FLAT, raise_from=1)
    async with open_test_memory(mind=mind) as memory:
        await memory.send(pm.RoomOpened(**DM))
        await written(memory, "I own a flat in Xuhui.")
        [flat] = await memory.memories_about(DAN)
        await memory.send(pm.RoomOpened(**DM))
        await said(memory, "I might sell the flat.")
        await memory.send(pm.RoomWentQuiet(room_id="dm"))
        while len(mind.extractions) < 2:  # the writer has crashed on it once
            await trio.sleep(0.01)
        with trio.fail_after(AT_ONCE):
            await memory.delete_memory(DAN, flat.id)
            await memory.set_memory_on(DAN, False)
        assert await memory.memories_about(DAN) == []
        assert FLAT not in await memory.block("warren", "dm")
        assert memory.supervisor.restarts >= 1


@pytest.mark.parametrize("how", ["delete", "undo"])
async def test_the_released_write_does_not_bring_back_a_deleted_row(open_test_memory, patient_clock, how) -> None:
    # FLAT, then FLAT_AGAIN replacing it; the hung write would replace FLAT_AGAIN in turn.
    mind = ScriptedMind(FLAT, FLAT_AGAIN, FLAT_SOLD, hang_at=2)
    async with open_test_memory(mind=mind) as memory:
        await memory.send(pm.RoomOpened(**DM))
        await written(memory, "I own a flat in Xuhui.")
        await written(memory, "I still own that flat in Xuhui.")
        assert texts(await memory.memories_about(DAN)) == {FLAT: False, FLAT_AGAIN: True}
        again = next(r for r in await memory.memories_about(DAN) if r.text == FLAT_AGAIN)
        await hung(memory, mind, "I am selling the flat in Xuhui.")
        with trio.fail_after(AT_ONCE):
            if how == "delete":
                await memory.delete_memory(DAN, again.id)
            else:
                notice = next(n for n in await memory.notices(DAN) if again.id in n.memory_ids)
                await memory.undo(DAN, notice.id)
        mind.gate.set()
        await memory.drain()
        rows = texts(await memory.memories_about(DAN))
        await memory.send(pm.RoomOpened(**DM))
        block = await memory.block("warren", "dm")
    assert len(mind.routings) == 3 - 1  # the hung write was routed as an update of FLAT_AGAIN
    # The replacement of the deleted row is not stored; FLAT stays as the edit left it:
    # closed after a delete, reopened by the undo of the notice that closed it.
    assert rows == {FLAT: how == "undo"}
    assert FLAT_SOLD not in block and FLAT_AGAIN not in block
    assert (FLAT in block) == (how == "undo")


@pytest.mark.parametrize("switch", ["mute", "memory off"])
async def test_the_released_write_stores_nothing_of_a_human_who_switched_off(
    open_test_memory, patient_clock, switch
) -> None:
    mind = ScriptedMind("u:42 keeps bees on the roof.", hang_at=0)
    async with open_test_memory(mind=mind) as memory:
        await memory.send(pm.RoomOpened(**DM))
        await hung(memory, mind, "I keep bees on the roof.")
        with trio.fail_after(AT_ONCE):
            if switch == "mute":
                await memory.set_muted(DAN, "warren", True)
            else:
                await memory.set_memory_on(DAN, False)
        mind.gate.set()
        await memory.drain()
        assert await memory.memories_about(DAN) == []
        assert await memory.notices(DAN) == []
        # the slice is behind the cursor: switching back on does not send it to the model again
        await memory.set_muted(DAN, "warren", False)
        await memory.set_memory_on(DAN, True)
        await memory.send(pm.RoomWentQuiet(room_id="dm"))
        await memory.drain()
    assert len(mind.extractions) == 1


async def test_a_released_write_keeps_what_it_may_still_write_in_a_group(open_test_memory, patient_clock) -> None:
    """Cara muted Warren while his write was under way: the row about Dan, citing Dan's own line,
    is stored; the row citing a line Cara said is not, nor is the row about Cara."""
    gate, hanging = trio.Event(), trio.Event()

    async def extract(request):
        hanging.set()
        await gate.wait()
        line = {line.speaker: line.id for line in request.lines}
        return {"memories": [
            {"subject": "u:42", "kind": "fact", "text": "u:42 keeps bees on the roof.", "importance": 6,
             "evidence": [line["u:42"]]},
            {"subject": "u:42", "kind": "fact", "text": "u:42 is Cara's neighbour.", "importance": 6,
             "evidence": [line["u:17"]]},
            {"subject": "u:17", "kind": "fact", "text": "u:17 sings in a choir.", "importance": 6,
             "evidence": [line["u:17"]]},
        ]}

    async with open_test_memory({"scope.v1_proven": False}, mind=FakeMind(extract=extract)) as memory:
        await memory.send(pm.RoomOpened(room_id="g", personas=("warren",), humans={DAN, CARA}))
        await said(memory, "I keep bees on the roof.", "g", "u:42")
        await said(memory, "I sing in a choir, and Dan lives next door to me.", "g", "u:17")
        await memory.send(pm.RoomWentQuiet(room_id="g"))
        await hanging.wait()
        with trio.fail_after(AT_ONCE):
            await memory.set_muted(CARA, "warren", True)
        gate.set()
        await memory.drain()
        assert [r.text for r in await memory.memories_about(DAN)] == ["u:42 keeps bees on the roof."]
        assert await memory.memories_about(CARA) == []
        [notice] = await memory.notices(DAN)
        assert "neighbour" not in notice.text and await memory.notices(CARA) == []


async def test_only_the_actors_task_changes_its_row_index(open_test_memory, monkeypatch) -> None:
    """The writer routes against a snapshot the actor published; every change to the actor's
    row index — loads, applied writes, the table's settling, the snapshot itself — happens in
    the actor's own task."""
    from persona_memory.actors.row_index import RowIndex

    tasks: list[str] = []
    for name in ("load", "apply_posted", "settle", "routing", "adopt", "apply_touches"):
        original = getattr(RowIndex, name)

        def recording(self, *args, _original=original, **kwargs):
            tasks.append(trio.lowlevel.current_task().name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(RowIndex, name, recording)
    mind = ScriptedMind(FLAT, FLAT_AGAIN)
    async with open_test_memory(mind=mind) as memory:
        await memory.send(pm.RoomOpened(**DM))
        await memory.block("warren", "dm")
        await written(memory, "I own a flat in Xuhui.")
        await written(memory, "I still own that flat in Xuhui.")
        await memory.send(pm.RoomOpened(**DM))
        assert FLAT_AGAIN in await memory.block("warren", "dm")
    assert len(mind.routings) == 1  # the second write was routed against the first's row
    assert tasks and set(tasks) == {"actor:warren"}
