"""What the write path writes, read row by row as a person reads it: the share of rows that pass
every check, the failures per check, and rows to judge.

    PYTHONPATH=. .venv/bin/python bench/quality.py ../shared/data/locomo-dev.json [--rows 200] [--seed 9] [--show 20]
    PYTHONPATH=. .venv/bin/python bench/quality.py ../shared/data/locomo-dev.json --shingles .

The conversations are played through the real write path exactly as ``bench/locomo.py`` plays
them (each session twice, as two private chats, the configured mind; offline by default). Then
every row written about the humans is read alone, months later, with no chat around it, by the
checks of ``row_checks.py`` (its docstring says each one's rule): *subject* (the row begins with
whom it is about and names that ``u:`` id), *dangling reference* (a pronoun or demonstrative
with nothing in the row to point at), *first person*, *second person*, *says frame* ("u:42
says…"), *length / one sentence* (at most 200 characters, at least 4 words, one sentence) and
*chat English* ("dont", "gonna").

It prints the failures of each check over every row and over a sample (``--rows``, drawn with a
fixed ``--seed``), with up to three failing rows per check and the reason each failed, then
``--show`` sampled rows marked with the checks they failed, the share of every row that passes
all the checks, and last ``standalone: NN.N%``: the share of the sample that does. The checks are
written apart from the mind's own rules on purpose: a bench that asked the mind's code whether the
mind's rows are good would learn nothing. They guess grammar without a tagger, so they miss some
rows and wrong a few — read the rows it prints.

``--shingles ROOT`` prints instead every run of 7 words shared by a ``.py`` or ``.md`` file under
ROOT and a turn of the dev file (lower-cased words ``[a-z0-9']+``): our tests and docstrings are
written in our own words, and the count must be 0.

LoCoMo (Maharana et al., ACL 2024) is CC BY-NC 4.0: it is read for evaluation only.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import attrs
import trio

import persona_memory as pm
from persona_memory.compose import make_embedder

sys.path.insert(0, str(Path(__file__).resolve().parent))
from locomo import play  # noqa: E402  (the same playing as the recall bench)
from row_checks import (  # noqa: E402,F401  (the checks, importable from here too)
    CHECKS,
    chat_english,
    dangling_reference,
    first_person,
    has_subject,
    length_problem,
    one_sentence,
    problems,
    says_frame,
    second_person,
    subject_problem,
)


@attrs.frozen
class Verdict:
    """A row's failed checks, each with its reason (``row_checks.problems``)."""

    failures: tuple[tuple[str, str], ...]

    @property
    def standalone(self) -> bool:
        return not self.failures

    def failed(self, check: str) -> bool:
        return any(name == check for name, _ in self.failures)


def verdict(text: str, about: str | None = None) -> Verdict:
    return Verdict(tuple(problems(text, about).items()))


async def written_rows(path: str, config: str | None, conversations: int | None) -> list[pm.MemoryRow]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if conversations:
        data = data[:conversations]
    with tempfile.TemporaryDirectory() as tmp:
        overrides = {"storage.path": str(Path(tmp) / "quality.db"), "supervisor.shutdown_deadline_seconds": 600.0}
        settings = pm.load_settings(config, overrides)
        clock = pm.ManualClock(datetime(2023, 1, 1, tzinfo=timezone.utc))
        rows: list[pm.MemoryRow] = []
        async with pm.open_memory(settings, clock=clock, embedder=make_embedder(settings)) as memory:
            for i, sample in enumerate(data):
                conv, _, _ = await play(memory, clock, sample, i)
                for uid in sorted(conv.uids.values()):
                    rows += await memory.memories_about(uid)
    return sorted(rows, key=lambda r: (r.persona, r.id or 0))


def shingles(dev_path: str, root: str, n: int = 7) -> int:
    """Print and count the runs of ``n`` words shared by our files and the dev file's turns."""
    words = lambda text: re.findall(r"[a-z0-9']+", text.lower().replace("\u2019", "'"))
    grams: set[tuple[str, ...]] = set()
    for sample in json.loads(Path(dev_path).read_text(encoding="utf-8")):
        for key, turns in sample["conversation"].items():
            if re.fullmatch(r"session_\d+", key):
                for turn in turns:
                    w = words(turn["text"])
                    grams.update(tuple(w[i : i + n]) for i in range(len(w) - n + 1))
    found = 0
    for file in sorted([*Path(root).rglob("*.py"), *Path(root).rglob("*.md")]):
        if {".venv", ".git", "node_modules"} & set(file.parts):
            continue
        w = words(file.read_text(encoding="utf-8", errors="replace"))
        for i in range(len(w) - n + 1):
            if tuple(w[i : i + n]) in grams:
                found += 1
                print(f"{file}: {' '.join(w[i : i + n])}")
    print(f"{n}-word runs shared with the dev file: {found}")
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", help="a LoCoMo-format JSON file")
    parser.add_argument("--config", help="settings over the defaults (e.g. a real mind)")
    parser.add_argument("--conversations", type=int, help="play only the first N conversations")
    parser.add_argument("--rows", type=int, default=200, help="how many written rows to check")
    parser.add_argument("--show", type=int, default=20, help="how many of them to print")
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--shingles", metavar="ROOT", help="check ROOT's files for 7-word runs of the dev file")
    args = parser.parse_args(argv)
    if args.shingles:
        sys.exit(1 if shingles(args.path, args.shingles) else 0)
    rows = [r for r in trio.run(written_rows, args.path, args.config, args.conversations) if r.subject.startswith("u:")]
    sample = random.Random(args.seed).sample(rows, min(args.rows, len(rows)))
    every = [verdict(r.text, r.subject) for r in rows]  # the sample moves when the rows do: this does not
    sampled = [verdict(r.text, r.subject) for r in sample]
    print(f"rows written about the humans: {len(rows)}; sample of {len(sample)} (seed {args.seed})")
    print(report(rows, every, sampled))
    for row, v in list(zip(sample, sampled))[: args.show]:
        print(f"  [{marks(v)}] {row.importance} {row.kind:<12} {row.text}")
    print(f"every row ({len(every)}): pass every check {pct(every):.1f}%")
    print(f"standalone: {pct(sampled):.1f}%")


def pct(verdicts: list[Verdict]) -> float:
    return 100.0 * sum(v.standalone for v in verdicts) / max(1, len(verdicts))


def marks(v: Verdict) -> str:
    """One letter per check, ``-`` where the row failed it: S, R (reference), 1 (first
    person), 2 (second person), F (frame), L (length), C (chat)."""
    return "".join("-" if v.failed(check) else letter for check, letter in zip(CHECKS, "SR12FLC"))


def report(rows: list[pm.MemoryRow], every: list[Verdict], sampled: list[Verdict]) -> str:
    """The failures per check over every row and over the sample, with up to three failing
    rows per check, spread over every row, and why each failed."""
    lines = [f"  {'check':<24}{'every row':>16}{'sample':>16}"]
    share = lambda n, of: f"{n} ({100.0 * n / max(1, of):.1f}%)"
    for check in CHECKS:
        n_every = sum(v.failed(check) for v in every)
        n_sample = sum(v.failed(check) for v in sampled)
        lines.append(f"  {check:<24}{share(n_every, len(every)):>16}{share(n_sample, len(sampled)):>16}")
    lines.append(f"  {'passes every check':<24}{share(sum(v.standalone for v in every), len(every)):>16}"
                 f"{share(sum(v.standalone for v in sampled), len(sampled)):>16}")
    for check in CHECKS:
        failing = [(row.text, dict(v.failures)[check]) for row, v in zip(rows, every) if v.failed(check)]
        if failing:
            lines.append(f"  {check}, e.g.:")
            lines += [f"    [{why}] {text}" for text, why in failing[:: max(1, len(failing) // 3)][:3]]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
