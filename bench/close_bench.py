"""How long closing the memory takes, and how long entering and leaving it stalls an asyncio
loop. Prints figures; asserts nothing.

    PYTHONPATH=. .venv/bin/python bench/close_bench.py            # 5 runs of each
    PYTHONPATH=. .venv/bin/python bench/close_bench.py --runs 9

Every run opens a memory on the default settings (the bundled WordLlama embedder, the offline
reader in its worker processes) on a fresh file in a temporary directory:

- close right after open: ``open_memory`` entered, then left at once — the reader's workers
  are not started (they start when slices first overlap);
- close after one write: a private room opened, one line posted, the room gone quiet and the
  write drained, then left;
- close after one write, workers up: the same once the workers were started and every one has
  said it is up (they end by themselves when their job pipes close, rather than being
  terminated while importing);
- asyncio enter / exit stall: an asyncio loop runs a heartbeat (``asyncio.sleep(0.001)`` in a
  loop) while a task enters ``open_memory_in_asyncio`` (``open_memory_in_thread`` where the
  package has no asyncio form), does the same write through it, and leaves; the figure is the
  longest gap between two beats during the enter and during the exit, and the wall time of
  each.

The asyncio figures are taken once more first, on a cold process (the package imported, the
embedder's table not yet loaded), as a program's first open is. Each figure is the median and
the maximum over the runs. The machine is shared: compare runs
made at the same time.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
from pathlib import Path

import trio

import persona_memory as pm
from persona_memory.compose import make_mind

DAN = 42
OPENED = dict(room_id="r1", personas=("warren",), humans=frozenset({DAN}), private=True, names={DAN: "Dan"})
LINE = "I repair old bicycles in a shed behind the bakery on weekends."


def settings_in(folder: str) -> pm.Settings:
    return pm.load_settings(None, {"storage.path": str(Path(folder) / "m.db")})


async def close_after(write: bool, workers_up: bool = False) -> float:
    """Seconds spent leaving ``open_memory`` (after one drained write, if ``write``; once the
    reader's workers are up, if ``workers_up``)."""
    with tempfile.TemporaryDirectory() as folder:
        settings = settings_in(folder)
        mind = make_mind(settings)  # what open_memory makes; kept here to see its workers
        opened = pm.open_memory(settings, mind=mind)
        memory = await opened.__aenter__()
        try:
            if workers_up:
                mind.processes.start()
            with trio.fail_after(60):
                while workers_up and not mind.processes.ready:
                    await trio.sleep(0.02)
            if write:
                await memory.send(pm.RoomOpened(**OPENED))
                await memory.post_line("r1", "u:42", LINE)
                await memory.send(pm.RoomWentQuiet(room_id="r1"))
                await memory.drain()
        except BaseException as error:
            await opened.__aexit__(type(error), error, error.__traceback__)
            raise
        start = time.perf_counter()
        await opened.__aexit__(None, None, None)
        return time.perf_counter() - start


def asyncio_opener():
    """The package's asyncio form, or the thread bridge where it has none."""
    form = getattr(pm, "open_memory_in_asyncio", None)
    if form is not None:
        return form, "open_memory_in_asyncio"

    @contextlib.asynccontextmanager
    async def via_thread(settings):
        with pm.open_memory_in_thread(settings) as memory:
            yield memory.asyncio

    return via_thread, "open_memory_in_thread (no asyncio form)"


async def asyncio_stalls(opener) -> dict[str, float]:
    """The longest heartbeat gap (and the wall time) of entering and of leaving."""
    gaps: list[float] = []
    last = time.perf_counter()

    async def heartbeat() -> None:
        nonlocal last
        while True:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    def longest_since(mark: int) -> float:
        return max([*gaps[mark:], time.perf_counter() - last])

    beating = asyncio.create_task(heartbeat())
    await asyncio.sleep(0.01)
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        opened = opener(settings_in(folder))
        mark, start = len(gaps), time.perf_counter()
        memory = await opened.__aenter__()
        figures["enter stall"], figures["enter wall"] = longest_since(mark), time.perf_counter() - start
        await memory.send(pm.RoomOpened(**OPENED))
        await memory.post_line("r1", "u:42", LINE)
        await memory.send(pm.RoomWentQuiet(room_id="r1"))
        await memory.drain()
        mark, start = len(gaps), time.perf_counter()
        await opened.__aexit__(None, None, None)
        figures["exit stall"], figures["exit wall"] = longest_since(mark), time.perf_counter() - start
    beating.cancel()
    return figures


def report(name: str, values: list[float]) -> None:
    print(f"{name:<34} median {statistics.median(values):6.3f} s   max {max(values):6.3f} s   "
          f"({', '.join(f'{v:.3f}' for v in values)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    opener, name = asyncio_opener()
    print(f"asyncio: {name}")
    cold = asyncio.run(asyncio_stalls(opener))
    print("cold process, first open: " + ", ".join(f"{key} {value:.3f} s" for key, value in cold.items()))
    report("close right after open", [trio.run(close_after, False) for _ in range(runs)])
    report("close after one write", [trio.run(close_after, True) for _ in range(runs)])
    report("close after one write, workers up", [trio.run(close_after, True, True) for _ in range(runs)])
    stalls = [asyncio.run(asyncio_stalls(opener)) for _ in range(runs)]
    for key in ("enter stall", "enter wall", "exit stall", "exit wall"):
        report(f"asyncio {key}", [s[key] for s in stalls])


if __name__ == "__main__":  # the offline reader's workers import this module again
    main()
