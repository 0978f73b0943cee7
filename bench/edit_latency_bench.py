"""How long a human's edit takes while the persona's model does not answer, on the wall clock.

    PYTHONPATH=. .venv/bin/python bench/edit_latency_bench.py [--runs 20]

A memory on a temporary SQLite file, the hashing embedder, and a scripted mind: its first
extraction writes one row about Dan, every later one waits for a gate that never opens (a model
that hangs) — or, with ``--raising``, raises (a writer that keeps crashing and restarting).
Each run writes the row, posts a line and lets the room go quiet (the hung write is now under
way), then times, one after another, ``delete_memory``, ``set_memory_on`` (off, then on),
``set_muted`` (on, then off), ``set_memory_note`` and ``clear_memories`` — each from the call
to its return — and prints each edit's median and worst time over the runs. The edits are the
human's; the model is the persona's: none of them should wait for it.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import trio

import persona_memory as pm
from persona_memory.minds.fake import FakeMind

DAN = 42
ROOM = dict(room_id="dm", personas=("warren",), humans=frozenset({DAN}), private=True)


class HangingMind(FakeMind):
    """One fact about Dan at the first extraction; every later one hangs (or raises)."""

    def __init__(self, raising: bool) -> None:
        super().__init__(extract=self._answer, route=lambda _request: {"event": "ADD"})
        self.raising = raising
        self.hanging = trio.Event()

    async def _answer(self, request):
        if len(self.extractions) > 1:
            if self.raising:
                raise RuntimeError("the model's client hit a bug")
            self.hanging.set()
            await trio.sleep_forever()
        dans = [line.id for line in request.lines if line.speaker == f"u:{DAN}"]
        return {"memories": [{"subject": f"u:{DAN}", "kind": "fact", "text": "u:42 keeps bees on a roof in Leith.",
                              "importance": 6, "evidence": dans}]}


async def one_run(folder: Path, raising: bool) -> dict[str, float]:
    settings = pm.load_settings(None, {
        "storage.path": str(folder / "m.db"), "embedder.kind": "hashing", "embedder.dim": 64,
        "mind.offline_processes": 0,
    })
    mind = HangingMind(raising)
    timings: dict[str, float] = {}
    async with pm.open_memory(settings, mind=mind) as memory:
        await memory.send(pm.RoomOpened(**ROOM))
        await memory.post_line("dm", f"u:{DAN}", "I keep bees on a roof in Leith.")
        await memory.send(pm.RoomWentQuiet(room_id="dm"))
        await memory.drain()
        (row,) = await memory.memories_about(DAN)
        await memory.post_line("dm", f"u:{DAN}", "The hives came through the winter.")
        await memory.send(pm.RoomWentQuiet(room_id="dm"))
        if not raising:
            await mind.hanging.wait()
        else:
            await trio.sleep(0.05)  # the writer is failing and backing off now
        edits = {
            "delete_memory": lambda: memory.delete_memory(DAN, row.id),
            "set_memory_on(off)": lambda: memory.set_memory_on(DAN, False),
            "set_memory_on(on)": lambda: memory.set_memory_on(DAN, True),
            "set_muted(on)": lambda: memory.set_muted(DAN, "warren", True),
            "set_muted(off)": lambda: memory.set_muted(DAN, "warren", False),
            "set_memory_note": lambda: memory.set_memory_note(DAN, "Call me Dan."),
            "clear_memories": lambda: memory.clear_memories(DAN),
        }
        for name, edit in edits.items():
            started = time.perf_counter()
            await edit()
            timings[name] = time.perf_counter() - started
    return timings


async def main(runs: int, raising: bool) -> None:
    seen: dict[str, list[float]] = {}
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            with trio.move_on_after(60) as scope:
                timings = await one_run(Path(folder), raising)
            if scope.cancelled_caught:
                raise SystemExit("a run took over 60 s: an edit waited on the model")
        for name, seconds in timings.items():
            seen.setdefault(name, []).append(seconds)
    mind = "a mind that raises" if raising else "a mind that never answers"
    print(f"human edits while the persona's write is under way, {mind}; {runs} runs")
    for name, values in seen.items():
        print(f"  {name:20s} median {statistics.median(values) * 1000:7.1f} ms   worst {max(values) * 1000:7.1f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--raising", action="store_true", help="the mind raises instead of hanging")
    args = parser.parse_args()
    trio.run(main, args.runs, args.raising)
