"""The offline reader in worker processes (``mind.offline_processes``): the same rows as on a
thread, the workers started only when first wanted, a worker that dies is replaced, a slice
whose worker keeps dying is parked, and the processes end with the memory — even while they
are still starting."""

from __future__ import annotations

import functools
import os
import pickle
import signal
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest
import trio

import persona_memory as pm
from persona_memory.compose import make_mind
from persona_memory.embedding import WordLlamaEmbedder
from persona_memory.errors import ConfigError, ReaderProcessDied
from persona_memory.minds.offline import OfflineMind, extract_memories
from persona_memory.minds.offline import mind as offline_mind
from persona_memory.minds.offline import processes as processes_module
from persona_memory.minds.offline.processes import ReaderProcesses
from persona_memory.minds.port import ExtractionRequest, Line, Person
from persona_memory.storage.file_names import FileNames
from persona_memory.write import pipeline as pipeline_module
from persona_memory.write.offloaded import HeldNames, checked_and_embedded
from persona_memory.write.quantized import quantize_rows
from persona_memory.write.validation import SliceFacts, check_candidates

import dying_reader
from conftest import settings_for

DAN, CARA = 42, 17
DM = dict(room_id="dm", personas=("warren",), humans={DAN}, private=True, names={DAN: "Dan"})
GROUP = dict(room_id="g", personas=("warren", "nolan"), humans={DAN, CARA}, names={DAN: "Dan", CARA: "Cara"})
PRIVATE_LINES = (
    ("u:42", "I'm starting a new job at a bakery in Leeds on Monday. Ask me how it goes!"),
    ("warren", "I'll send you my notes on sourdough before then."),
    ("u:42", "My brother Tom keeps two parrots called Pip and Jet."),
    ("u:42", "I hate driving in the rain."),
)
GROUP_LINES = (
    ("u:17", "We moved to Porto in March, my partner and I."),
    ("u:42", "I ran my first half marathon last Sunday in 1:52."),
    ("nolan", "Congratulations to both of you!"),
)


async def _write_and_read(memory: pm.Memory) -> list[tuple]:
    for opened, lines in ((DM, PRIVATE_LINES), (GROUP, GROUP_LINES)):
        await memory.send(pm.RoomOpened(**opened))
        for speaker, text in lines:
            await memory.post_line(opened["room_id"], speaker, text)
        await memory.send(pm.RoomWentQuiet(room_id=opened["room_id"]))
    await memory.drain()
    return await _rows(memory)


def _mind_in(processes: int, tmp_path: Path) -> OfflineMind:
    """The mind ``make_mind`` makes for the test settings, its workers taking every job (a
    lone slice too): what the tests here watch."""
    settings = settings_for(tmp_path)
    return OfflineMind(
        pronouns=settings.mind.pronouns,
        importance_min=settings.write.importance_min,
        processes=ReaderProcesses(processes, alone=True),
    )


async def _up(processes: ReaderProcesses) -> None:
    processes.start()
    while not processes.ready:
        await trio.sleep(0.01)


async def _rows(memory: pm.Memory) -> list[tuple]:
    rows = [*await memory.memories_about(DAN), *await memory.memories_about(CARA)]
    return sorted(
        (r.persona, r.subject, r.kind, r.text, r.importance, str(r.valid_from), tuple(r.evidence),
         r.embedder, r.embedding, r.embedding_scale)
        for r in rows
    )


async def test_the_reader_in_a_process_writes_the_rows_the_thread_writes(open_test_memory, tmp_path):
    async with open_test_memory({"storage.path": str(tmp_path / "thread.db")}) as memory:
        on_thread = await _write_and_read(memory)
    mind = _mind_in(1, tmp_path)
    async with open_test_memory({"storage.path": str(tmp_path / "process.db")}, mind=mind) as memory:
        await _up(mind.processes)
        in_process = await _write_and_read(memory)
        assert mind.processes.restarts == 0
    assert len(on_thread) >= 4
    assert in_process == on_thread


@pytest.mark.parametrize("names_ahead", [256, 0], ids=["names held with the backlog", "names read from the file"])
async def test_a_slice_is_read_checked_and_embedded_in_one_job_that_still_knows_every_name(
    open_test_memory, tmp_path, monkeypatch, names_ahead
):
    """With the workers up, each slice is one job: the reading, the names its candidates may
    mention (every name, brought with the backlog while there are few; else read from the
    SQLite file by the worker), the check and the embedding. A human named in another room is
    still known to the check there: a row that names her is refused in the one job as on the
    thread."""
    monkeypatch.setattr(pipeline_module, "NAMES_AHEAD", names_ahead)
    lines = (("u:42", "I went climbing with Cara on Saturday and she led every route."),
             ("u:42", "I'm training for a sea kayak trip along the coast in June."))

    async def write(memory: pm.Memory) -> list[tuple]:
        await memory.send(pm.RoomOpened(**GROUP))  # Cara's name becomes known here
        await memory.send(pm.RoomArchived(room_id="g"))
        await memory.send(pm.RoomOpened(**DM))
        for speaker, text in lines:
            await memory.post_line("dm", speaker, text)
        await memory.send(pm.RoomWentQuiet(room_id="dm"))
        await memory.drain()
        return await _rows(memory)

    async with open_test_memory({"storage.path": str(tmp_path / "thread.db")}) as memory:
        on_thread = await write(memory)
    mind = _mind_in(1, tmp_path)
    jobs: list[str] = []
    real_run = mind.processes.run

    async def counted(fn, *args, **kwargs):
        jobs.append(fn.__name__)
        return await real_run(fn, *args, **kwargs)

    mind.processes.run = counted
    async with open_test_memory({"storage.path": str(tmp_path / "process.db")}, mind=mind) as memory:
        await _up(mind.processes)
        in_one_job = await write(memory)
    assert jobs == ["read_checked_and_embedded"]
    assert in_one_job == on_thread
    texts = [row[3] for row in in_one_job]
    assert any("kayak" in text for text in texts)
    assert not any("Cara" in text for text in texts)


def test_names_held_or_read_from_the_file_are_the_stores_names_in_its_order(tmp_path) -> None:
    """``HeldNames`` and ``FileNames`` answer ``store.names.among``: the same users, in the
    order of its first-word index, whatever the words' case."""
    path = tmp_path / "names.db"

    async def seed() -> dict[int, str]:
        async with pm.open_memory(settings_for(tmp_path, {"storage.path": str(path)})) as memory:
            await memory.send(pm.RoomOpened(
                room_id="g", personas=("warren",), humans={5, 9, 12, 30},
                names={5: "Sam Ortiz", 9: "ana Lima", 12: "Sam Berg", 30: "Theo"},
            ))
            await memory.drain()
            return await memory._store.names.among(["SAM", "Ana", "nobody"])

    from_store = trio.run(seed)
    entries = ((5, "Sam Ortiz", "sam"), (9, "ana Lima", "ana"), (12, "Sam Berg", "sam"), (30, "Theo", "theo"))
    held = HeldNames(entries)(["SAM", "Ana", "nobody"])
    from_file = FileNames(str(path))(["SAM", "Ana", "nobody"])
    assert list(from_store.items()) == [(9, "ana Lima"), (5, "Sam Ortiz"), (12, "Sam Berg")]
    assert list(held.items()) == list(from_store.items()) == list(from_file.items())


def test_requests_and_answers_are_plain_data_that_pickle() -> None:
    at = datetime(2026, 8, 10, 9, 0, tzinfo=timezone.utc)
    request = ExtractionRequest(
        persona="warren",
        lines=(Line(7, "u:42", "I adopted a grey cat called Moth last week.", at),),
        present=(Person(42, "Dan"),),
        block="- u:42 lives in Leeds.",
        today=at.date(),
        private=True,
        personas=("warren",),
        topic="pets",
        kit_earlier="quiz",
    )
    assert pickle.loads(pickle.dumps(request)) == request
    answer = extract_memories(request, pronouns={"warren": "he"})
    assert answer["memories"]
    assert pickle.loads(pickle.dumps(answer)) == answer


async def test_the_extraction_check_in_a_process_gives_the_check_on_this_side() -> None:
    facts = SliceFacts(
        persona="warren",
        line_speakers={7: "u:42", 8: "warren"},
        writable=frozenset({42}),
        names={42: "Dan"},
        known_names={42: "Dan", 17: "Cara"},
        line_texts={7: "I adopted a grey cat called Moth; Cara helped.", 8: "Lovely!"},
    )
    answer = {"memories": [
        {"subject": "u:42", "kind": "event", "text": "Dan adopted a grey cat called Moth.", "importance": 6,
         "evidence": [7]},
        {"subject": "u:42", "kind": "event", "text": "u:42 adopted a cat with Cara.", "importance": 6,
         "evidence": [7]},
        {"subject": "u:17", "kind": "fact", "text": "u:17 helped.", "importance": 4, "evidence": [7]},
        "not an object",
    ]}
    kept, dropped = check_candidates(answer, facts)
    assert kept and dropped
    processes = ReaderProcesses(1)
    try:
        remote_kept, remote_dropped = await processes.run(check_candidates, answer, facts)
    finally:
        await processes.aclose()
    assert remote_kept == kept
    assert [(d.reason, d.raw) for d in remote_dropped] == [(d.reason, d.raw) for d in dropped]


async def test_the_check_in_a_process_embeds_what_it_kept_as_the_embedder_does() -> None:
    """The slice's check and the bundled embedder's rows for what it kept, in one job: the
    same rows ``embed`` gives on this side, and no embedding when nothing was kept."""
    facts = SliceFacts(
        persona="warren", line_speakers={3: "u:42"}, writable=frozenset({42}), names={42: "Dan"},
        line_texts={3: "I bought a narrowboat and I'm restoring its engine myself."},
    )
    answer = {"memories": [
        {"subject": "u:42", "kind": "event", "text": "u:42 bought a narrowboat.", "importance": 6, "evidence": [3]},
        {"subject": "u:42", "kind": "fact", "text": "u:42 is restoring the narrowboat's engine themselves.",
         "importance": 5, "evidence": [3]},
    ]}
    embedder = WordLlamaEmbedder.load()
    kept, _ = check_candidates(answer, facts)
    here = await embedder.embed([c.text for c in kept])
    processes = ReaderProcesses(1, warm=(functools.partial(embedder.portable, []),))
    try:
        remote_kept, _, embedded = await processes.run(checked_and_embedded, answer, facts, embedder.portable)
        nothing = await processes.run(checked_and_embedded, {"memories": []}, facts, embedder.portable)
    finally:
        await processes.aclose()
    assert len(remote_kept) == 2 and remote_kept == kept
    assert embedded.matrix.dtype == np.float32 and np.array_equal(embedded.matrix, here)
    assert embedded.quantized == quantize_rows(here)
    assert nothing == ([], [], None)


async def test_a_killed_worker_is_replaced_and_the_slice_still_written(open_test_memory, tmp_path):
    async with open_test_memory({"storage.path": str(tmp_path / "thread.db")}) as memory:
        expected = await _write_and_read(memory)
    mind = _mind_in(1, tmp_path)
    processes = mind.processes
    assert processes is not None and processes.processes == 1
    async with open_test_memory({"storage.path": str(tmp_path / "killed.db")}, mind=mind) as memory:
        await _up(processes)
        (first,) = processes.pids()
        os.kill(first, signal.SIGKILL)
        assert await _write_and_read(memory) == expected
        assert processes.restarts == 1
        assert processes.pids() != (first,)


async def test_a_job_that_kills_its_worker_is_sent_again_once_then_fails(tmp_path):
    processes = ReaderProcesses(1)
    try:
        await _up(processes)
        assert await processes.run(dying_reader.die_once, str(tmp_path / "died"), "answer") == "answer"
        assert processes.restarts == 1
        with pytest.raises(ReaderProcessDied, match="died running this job, 2 time"):
            await processes.run(dying_reader.die)
        assert processes.restarts == 3
        with pytest.raises(LookupError, match="no such thing"):  # an error comes back as itself
            await processes.run(dying_reader.refuse, "no such thing")
        assert await processes.run(dying_reader.pid) in processes.pids()  # and the pool still works
    finally:
        await processes.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        await processes.run(dying_reader.pid)


async def test_jobs_in_flight_on_a_worker_that_dies_are_all_sent_again(tmp_path):
    processes = ReaderProcesses(1)
    answers: dict[int, object] = {}

    async def one(k: int) -> None:
        if k == 3:
            answers[k] = await processes.run(dying_reader.die_once, str(tmp_path / "died"), "survived")
        else:
            answers[k] = await processes.run(dying_reader.pid)

    try:
        await _up(processes)
        (first,) = processes.pids()
        async with trio.open_nursery() as nursery:
            for k in range(8):  # more than DEPTH: some wait for room, some are in the pipe
                nursery.start_soon(one, k)
        assert processes.restarts == 1
        (second,) = processes.pids()
        assert answers.pop(3) == "survived"
        assert set(answers.values()) <= {first, second} and len(answers) == 7
    finally:
        await processes.aclose()


async def test_closing_the_pool_under_a_job_fails_the_job_and_starts_no_worker():
    processes = ReaderProcesses(1)
    await _up(processes)
    (pid,) = processes.pids()
    failed: list[BaseException] = []

    async def job() -> None:
        try:
            await processes.run(dying_reader.nap, 0.3, "late")
        except RuntimeError as exc:
            failed.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(job)
        await trio.sleep(0.1)
        await processes.aclose()
    assert len(failed) == 1 and "closed" in str(failed[0])
    assert processes.restarts == 0 and processes.pids() == (pid,)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_closing_while_the_workers_start_ends_them_without_waiting_for_their_imports():
    processes = ReaderProcesses(2)
    processes.start()
    workers = [w.process for w in processes._all]
    await processes.aclose()
    # Still importing when the pool closed: terminated, not waited for.
    assert [p.exitcode for p in workers] == [-signal.SIGTERM, -signal.SIGTERM]
    for pid in [p.pid for p in workers]:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


async def test_a_memory_left_while_its_workers_start_still_lands_its_queued_write(open_test_memory, tmp_path):
    mind = _mind_in(2, tmp_path)
    async with open_test_memory(mind=mind) as memory:
        mind.processes.start()
        pids = mind.processes.pids()
        assert len(pids) == 2
        await memory.send(pm.RoomOpened(**DM))
        for speaker, text in PRIVATE_LINES:
            await memory.post_line("dm", speaker, text)
        await memory.send(pm.RoomWentQuiet(room_id="dm"))  # left with the write queued
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    async with open_test_memory() as memory:
        texts = [row.text for row in await memory.memories_about(DAN)]
    assert any("bakery" in text for text in texts), texts


async def test_an_idle_worker_that_is_up_leaves_by_itself_when_the_pool_closes(monkeypatch):
    monkeypatch.setattr(processes_module, "GRACE", 60.0)  # however slow the machine, no kill
    processes = ReaderProcesses(1)
    await _up(processes)
    assert await processes.run(dying_reader.nap, 0.0, "done") == "done"
    (worker,) = [w.process for w in processes._all]
    await processes.aclose()
    assert worker.exitcode == 0  # its loop saw the job pipe end; nothing was killed


async def test_a_slice_whose_worker_keeps_dying_is_parked_and_written_later(
    open_test_memory, tmp_path, clock, monkeypatch
):
    async with open_test_memory({"storage.path": str(tmp_path / "thread.db")}) as memory:
        await memory.send(pm.RoomOpened(**DM))
        for speaker, text in PRIVATE_LINES:
            await memory.post_line("dm", speaker, text)
        await memory.send(pm.RoomWentQuiet(room_id="dm"))
        await memory.drain()
        expected = await _rows(memory)
    marker = tmp_path / "poison"
    marker.touch()
    monkeypatch.setenv(dying_reader.MARKER_ENV, str(marker))
    monkeypatch.setattr(offline_mind, "extract_memories", dying_reader.extract_or_die)
    overrides = {"storage.path": str(tmp_path / "parked.db"), "write.park_backoff_initial_seconds": 60.0}
    mind = _mind_in(1, tmp_path)
    async with open_test_memory(overrides, mind=mind) as memory:
        await _up(mind.processes)
        await memory.send(pm.RoomOpened(**DM))
        for speaker, text in PRIVATE_LINES:
            await memory.post_line("dm", speaker, text)
        await memory.send(pm.RoomWentQuiet(room_id="dm"))
        await memory.drain()
        assert await _rows(memory) == []  # nothing of the slice was written
        retry_at = await memory.sweep()  # parked, with the provider's backoff
        assert retry_at is not None and (retry_at - clock.now()).total_seconds() == 60.0
        marker.unlink()
        clock.advance(seconds=61)
        assert await memory.sweep() is None
        await memory.drain()
        assert await _rows(memory) == expected


async def test_the_workers_end_with_the_memory(open_test_memory, tmp_path):
    mind = _mind_in(2, tmp_path)
    async with open_test_memory(mind=mind) as memory:
        await memory.send(pm.RoomOpened(**DM))
        await memory.post_line("dm", "u:42", "I keep bees on my roof in Hackney.")
        await memory.send(pm.RoomWentQuiet(room_id="dm"))
        await memory.drain()
        await _up(mind.processes)
        pids = mind.processes.pids()
        assert len(pids) == 2
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


async def test_a_lone_job_is_done_on_this_side_and_concurrent_ones_go_to_the_workers(tmp_path):
    processes = ReaderProcesses(1)
    try:
        with processes.chosen() as to_workers:
            assert not to_workers  # alone, and not started: a lone job does not start them
        assert not processes.started and processes.pids() == ()
        await _up(processes)
        with processes.chosen() as to_workers:
            assert not to_workers  # alone: quicker here
            with processes.chosen() as second:
                assert second
        assert processes.callers == 0
    finally:
        await processes.aclose()


def test_make_mind_gives_the_offline_mind_its_processes(tmp_path) -> None:
    assert make_mind(settings_for(tmp_path)).processes is None
    mind = make_mind(settings_for(tmp_path, {"mind.offline_processes": 2}))
    try:
        assert mind.processes is not None and mind.processes.processes == 2
    finally:
        trio.run(mind.aclose)


@pytest.mark.parametrize("value", [-1, 65, "2", True, 1.5])
def test_a_bad_process_count_is_refused_with_the_key(tmp_path: Path, value) -> None:
    with pytest.raises(ConfigError, match=r"mind\.offline_processes"):
        settings_for(tmp_path, {"mind.offline_processes": value})


def test_the_default_reads_in_two_worker_processes() -> None:
    assert pm.load_settings(None).mind.offline_processes == 2


QUIET_ROOMS = (("dm-warren", "warren", DAN), ("dm-nolan", "nolan", CARA), ("dm-mara", "mara", DAN))
QUIET_LINES = {
    DAN: ("I signed up for a pottery class that meets on Thursday evenings.",
          "My landlord finally fixed the boiler after three weeks."),
    CARA: ("I'm driving to Galway next weekend to see my grandmother.",
           "I switched from coffee to green tea and I sleep much better."),
}


def _children() -> set[int]:
    """This process's children that are still there — a zombie too (one that exited and was
    never waited for) — leaving out ``multiprocessing``'s resource tracker, which a process
    that has started one keeps for the rest of its life."""
    me, found = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:  # ended meanwhile
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me and b"resource_tracker" not in cmdline:
            found.add(int(entry))
    return found


async def _rooms_go_quiet_at_once(memory: pm.Memory) -> None:
    """Three personas' private rooms open, hear two lines each and go quiet together."""
    for room_id, persona, human in QUIET_ROOMS:
        names = {DAN: "Dan", CARA: "Cara"}
        await memory.send(pm.RoomOpened(
            room_id=room_id, personas=(persona,), humans={human}, private=True, names={human: names[human]}
        ))
        for text in QUIET_LINES[human]:
            await memory.post_line(room_id, f"u:{human}", text)
    for room_id, _, _ in QUIET_ROOMS:
        await memory.send(pm.RoomWentQuiet(room_id=room_id))


async def _written_on_a_thread(open_test_memory, tmp_path: Path) -> list[tuple]:
    async with open_test_memory({"storage.path": str(tmp_path / "thread.db")}) as memory:
        await _rooms_go_quiet_at_once(memory)
        await memory.drain()
        return await _rows(memory)


async def test_a_pool_starts_its_workers_only_when_a_job_would_go_to_them():
    processes = ReaderProcesses(2)
    try:
        assert not processes.started and not processes.ready and processes.pids() == ()
        with processes.chosen() as lone:
            assert not lone  # a lone job is done on this side and starts nothing
        assert processes.pids() == ()
        with processes.chosen() as first:
            with processes.chosen() as second:  # another caller under way: now they are wanted
                assert processes.started and len(processes.pids()) == 2
                assert not first and not second  # just started: done here until they are up
        await _up(processes)
        assert await processes.run(dying_reader.pid) in processes.pids()
    finally:
        await processes.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        processes.start()


async def test_rooms_that_go_quiet_right_after_open_write_every_row_by_default(open_test_memory, tmp_path):
    """The default configuration's workers, started when slices first overlap and read on
    this side while they warm up: rooms of three personas go quiet together the moment the
    memory opens; every row is written, as with no worker at all, and no worker outlives the
    memory."""
    expected = await _written_on_a_thread(open_test_memory, tmp_path)
    before = _children()
    default = pm.load_settings(None).mind.offline_processes
    assert default > 0
    overrides = {"storage.path": str(tmp_path / "default.db"), "mind.offline_processes": default}
    async with open_test_memory(overrides) as memory:
        await _rooms_go_quiet_at_once(memory)
        await memory.drain()
        written = await _rows(memory)
    assert {row[0] for row in expected} == {"warren", "nolan", "mara"}
    assert written == expected
    assert _children() <= before


async def test_closing_the_memory_while_its_workers_start_lands_the_writes_and_leaves_no_child(
    open_test_memory, tmp_path
):
    expected = await _written_on_a_thread(open_test_memory, tmp_path)
    before = _children()
    mind = make_mind(settings_for(tmp_path, {"mind.offline_processes": 2}))
    async with open_test_memory({"storage.path": str(tmp_path / "left.db")}, mind=mind) as memory:
        mind.processes.start()  # as overlapping slices would; their imports take a while
        pids = mind.processes.pids()
        assert len(pids) == 2 and set(pids) <= _children()
        await _rooms_go_quiet_at_once(memory)  # left at once, with the writes queued
    assert _children() <= before
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    async with open_test_memory({"storage.path": str(tmp_path / "left.db")}) as memory:
        assert await _rows(memory) == expected


async def test_a_memory_opened_and_closed_at_once_starts_no_process(open_test_memory, tmp_path):
    before = _children()
    mind = make_mind(settings_for(tmp_path, {"mind.offline_processes": 2}))
    async with open_test_memory(mind=mind) as memory:
        await memory.send(pm.RoomOpened(**DM))
        assert _children() <= before
    assert not mind.processes.started
    assert _children() <= before
