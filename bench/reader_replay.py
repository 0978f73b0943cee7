"""The offline reader's CPU per transcript line, on the write bench's own requests, and a digest
of every answer (a speed change must leave the digest as it was).

Run it::

    PYTHONPATH=. .venv/bin/python bench/reader_replay.py --record /tmp/reader.pickle   # once
    PYTHONPATH=. .venv/bin/python bench/reader_replay.py /tmp/reader.pickle            # replay
    PYTHONPATH=. .venv/bin/python bench/reader_replay.py /tmp/reader.pickle --expect DIGEST

``--record`` runs ``write_bench.py`` (its defaults, the reader on a thread) and keeps every
``extract_memories`` call the offline mind makes (the request and its keywords) and every
``(answer, SliceFacts)`` the write pipeline hands to ``check_candidates``, pickled to FILE with
the bench's count of transcript lines. Record on a base commit and replay on both: the
requests are the same whatever the reader's code (the bench's chat is seeded).

A replay runs the recorded calls outside trio, ``--repeat`` times (default 5), and prints the
best CPU time (``time.process_time``) per transcript line of the bench, for extraction and for
validation. Before each repetition every ``functools`` cache of the reader and the guards is
emptied and ``re``'s cache purged, so each repetition costs what one bench run costs a fresh
worker process (each slice's set of names is new to it, and so are its patterns). It prints
a sha256 over the extraction answers and the validation results (kept candidates, drop
reasons and the dropped raw items, in order); ``--expect`` exits with status 1 when that
digest differs.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import pickle
import re
import sys
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent))

import persona_memory.minds.offline.mind as mind_module  # noqa: E402
from persona_memory.minds.offline.extract import extract_memories  # noqa: E402
from persona_memory.write import pipeline as pipeline_module  # noqa: E402
from persona_memory.write.validation import check_candidates  # noqa: E402


def record(path: Path) -> None:
    """Run the write bench once, keeping the reader's calls (see the module docstring)."""
    import write_bench

    extractions: list[tuple[object, dict]] = []
    validations: list[tuple[object, object]] = []
    original_extract = mind_module.extract_memories
    original_check = pipeline_module.check_candidates

    def recorded_extract(request, **kwargs):
        extractions.append((request, kwargs))
        return original_extract(request, **kwargs)

    def recorded_check(answer, facts):
        validations.append((answer, facts))
        return original_check(answer, facts)

    mind_module.extract_memories = recorded_extract
    pipeline_module.check_candidates = recorded_check
    try:
        evenings, *_ = trio.run(write_bench.run, write_bench.parse_args(["--offline-processes", "0"]))
    finally:
        mind_module.extract_memories = original_extract
        pipeline_module.check_candidates = original_check
    lines = sum(e.lines for e in evenings)
    path.write_bytes(pickle.dumps(
        {"lines": lines, "extractions": extractions, "validations": validations}, pickle.HIGHEST_PROTOCOL
    ))
    print(f"recorded {len(extractions)} extractions and {len(validations)} validations "
          f"over {lines:,} transcript lines to {path}")


def forget_caches() -> None:
    """Empty every ``functools`` cache in the project's modules, and ``re``'s."""
    for name, module in list(sys.modules.items()):
        if not name.startswith("persona_memory"):
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and isinstance(value, functools._lru_cache_wrapper):
                clear()
    re.purge()


def replay(path: Path, repeat: int, expect: str | None) -> None:
    recorded = pickle.loads(path.read_bytes())
    lines, extractions, validations = recorded["lines"], recorded["extractions"], recorded["validations"]
    best_extract = best_check = float("inf")
    digest = None
    for _ in range(repeat):
        forget_caches()
        sha = hashlib.sha256()
        t0 = time.process_time()
        answers = [extract_memories(request, **kwargs) for request, kwargs in extractions]
        t1 = time.process_time()
        results = [check_candidates(answer, facts) for answer, facts in validations]
        t2 = time.process_time()
        best_extract, best_check = min(best_extract, t1 - t0), min(best_check, t2 - t1)
        for answer in answers:
            sha.update(repr(answer).encode())
        for kept, dropped in results:
            sha.update(repr(kept).encode())
            sha.update(repr([(d.reason, d.raw) for d in dropped]).encode())
        if digest is not None and sha.hexdigest() != digest:
            raise SystemExit("the answers changed between repetitions: the reader is not deterministic")
        digest = sha.hexdigest()
    print(f"{len(extractions)} extractions, {len(validations)} validations, {lines:,} transcript lines; "
          f"best of {repeat}, caches emptied before each")
    print(f"extraction  {1e6 * best_extract / lines:7.1f} µs CPU per line")
    print(f"validation  {1e6 * best_check / lines:7.1f} µs CPU per line")
    print(f"both        {1e6 * (best_extract + best_check) / lines:7.1f} µs CPU per line")
    print(f"digest of every answer: {digest}")
    if expect is not None:
        if digest != expect:
            print(f"DIFFERENT from the expected {expect}")
            raise SystemExit(1)
        print("same as expected")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("file", type=Path, nargs="?", help="a recording to replay")
    parser.add_argument("--record", type=Path, metavar="FILE", help="run the write bench and record to FILE")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--expect", metavar="DIGEST", help="exit 1 unless the answers' digest is this")
    args = parser.parse_args(argv)
    if args.record is not None:
        record(args.record)
    elif args.file is not None:
        replay(args.file, args.repeat, args.expect)
    else:
        parser.error("give a recording to replay, or --record FILE")


if __name__ == "__main__":
    main()
