"""Memory quality on LoCoMo: play conversations through the real write path, then ask.

    .venv/bin/python bench/locomo.py ../shared/data/locomo-dev.json [--sweep]

Each session of a conversation is played twice, as two private chats: speaker A as a persona
with speaker B as the human, and the other way round. Every turn is posted to the transcript,
the room goes quiet at the session's end (the wall clock set to the session's date), and the
persona actors run the write path (the configured mind; offline by default). Then, for every
question of categories 1–4 with evidence, the block of each persona that remembers a speaker
of the evidence turns is built with the question as the room topic — the same pure code the
actors run, without touching recall stamps — and the question counts as covered when a row in
the block cites one of its evidence turns. The last line is ``block-recall: NN.N%``.

LoCoMo (Maharana et al., ACL 2024) is CC BY-NC 4.0: it is read for evaluation only.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import attrs
import numpy as np
import trio

import persona_memory as pm
from persona_memory.actors.row_index import RowIndex
from persona_memory.compose import block_rules, make_embedder
from persona_memory.core import ranking
from persona_memory.core.audience import Audience
from persona_memory.core.block import build_block

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def session_time(text: str) -> datetime:
    """``1:56 pm on 8 May, 2023`` → an aware UTC datetime."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def evidence_ids(raw: list) -> set[str]:
    """LoCoMo evidence, with its malformed entries split (``D8:6; D9:17``) rather than fatal."""
    out = set()
    for item in raw:
        out.update(p for p in re.split(r"[;,\s]+", str(item)) if re.fullmatch(r"D\d+:\d+", p))
    return out


def turn_text(turn: dict) -> str:
    text = turn["text"]
    if turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
    return text


@attrs.define
class Conversation:
    key: str
    speakers: tuple[str, str]
    slugs: dict[str, str]
    uids: dict[str, int]
    line_to_turn: dict[int, str] = attrs.field(factory=dict)
    turn_speaker: dict[str, str] = attrs.field(factory=dict)
    sessions: int = 0
    last_time: datetime | None = None


async def play(memory: pm.Memory, clock: pm.ManualClock, sample: dict, index: int) -> tuple[Conversation, int, float]:
    conv = sample["conversation"]
    a, b = conv["speaker_a"], conv["speaker_b"]
    c = Conversation(
        key=sample.get("sample_id", f"conv-{index}"),
        speakers=(a, b),
        slugs={a: f"{re.sub('[^a-z]', '', a.lower())}-{index}-a", b: f"{re.sub('[^a-z]', '', b.lower())}-{index}-b"},
        uids={a: 1000 * (index + 1) + 1, b: 1000 * (index + 1) + 2},
    )
    numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
    lines = 0
    writing = 0.0
    for n in numbers:
        when = session_time(conv[f"session_{n}_date_time"])
        clock.set(when)
        rooms = {}
        for persona, human in ((a, b), (b, a)):
            room_id = f"{c.key}-s{n}-{c.slugs[persona]}"
            rooms[persona] = room_id
            await memory.send(pm.RoomOpened(
                room_id=room_id, personas=(c.slugs[persona],), humans={c.uids[human]},
                private=True, names={c.uids[human]: human},
            ))
        for turn in conv[f"session_{n}"]:
            c.turn_speaker[turn["dia_id"]] = turn["speaker"]
            for persona, room_id in rooms.items():
                speaker = c.slugs[persona] if turn["speaker"] == persona else f"u:{c.uids[turn['speaker']]}"
                line_id = await memory.post_line(room_id, speaker, turn_text(turn), at=when)
                c.line_to_turn[line_id] = turn["dia_id"]
                lines += 1
        started = time.perf_counter()
        for room_id in rooms.values():
            await memory.send(pm.RoomWentQuiet(room_id=room_id))
        await memory.drain()
        writing += time.perf_counter() - started
        for room_id in rooms.values():
            await memory.send(pm.RoomArchived(room_id=room_id))
        c.sessions += 1
        c.last_time = when
    return c, lines, writing


@attrs.frozen
class Outcome:
    category: int
    covered: bool
    at5: bool
    at10: bool


async def ask(memory: pm.Memory, embedder, conv: Conversation, qa: list[dict], rules) -> list[Outcome]:
    indexes = {}
    for speaker in conv.speakers:
        persona = conv.slugs[speaker]
        version, rows = await memory._store.persona_rows(persona)
        index = RowIndex()
        index.load(version, rows)
        indexes[speaker] = index
    out = []
    for q in qa:
        if q.get("category") not in CATEGORIES:
            continue
        wanted = evidence_ids(q.get("evidence", []))
        speakers = {conv.turn_speaker[t] for t in wanted if t in conv.turn_speaker}
        if not speakers:
            continue
        topic_vector = (await embedder.embed([q["question"]]))[0]
        topic = ranking.Topic(vector=topic_vector, embedder=embedder.name)
        covered = at5 = at10 = False
        for about in speakers:
            persona_speaker = next(s for s in conv.speakers if s != about)
            index = indexes[persona_speaker]
            uid = conv.uids[about]
            block = build_block(
                conv.slugs[persona_speaker], Audience(present=frozenset({uid}), private=True),
                index.open_rows.values(), vectors=index.vectors, replaced=index.replaced,
                controls={}, topic=topic, names={uid: about}, now=conv.last_time, rules=rules,
            )
            cites = lambda row_id: any(conv.line_to_turn.get(l) in wanted for l in index.open_rows[row_id].evidence)
            covered |= any(cites(i) for i in block.loaded_ids)
            rows = list(index.open_rows.values())
            if rows:
                scores = ranking.scores(rows, [index.vectors.get(r.id) for r in rows], now=conv.last_time, topic=topic, weights=rules.weights)
                order = np.argsort(-scores, kind="stable")
                at5 |= any(cites(rows[i].id) for i in order[:5])
                at10 |= any(cites(rows[i].id) for i in order[:10])
        out.append(Outcome(q["category"], covered, at5, at10))
    return out


def report(outcomes: list[Outcome], label: str = "") -> float:
    by_cat = collections.defaultdict(list)
    for o in outcomes:
        by_cat[o.category].append(o)
    for cat, name in CATEGORIES.items():
        items = by_cat.get(cat, [])
        if items:
            pct = 100 * sum(o.covered for o in items) / len(items)
            print(f"  {label}category {cat} ({name}): {pct:5.1f}% of {len(items)}")
    total = 100 * sum(o.covered for o in outcomes) / max(1, len(outcomes))
    return total


async def main_async(args: argparse.Namespace) -> None:
    data = json.loads(Path(args.path).read_text(encoding="utf-8"))
    if args.conversations:
        data = data[: args.conversations]
    with tempfile.TemporaryDirectory() as tmp:
        overrides = {"storage.path": str(Path(tmp) / "locomo.db"), "supervisor.shutdown_deadline_seconds": 600.0}
        settings = pm.load_settings(args.config, overrides)
        embedder = make_embedder(settings)
        clock = pm.ManualClock(datetime(2023, 1, 1, tzinfo=timezone.utc))
        convs, total_lines, total_write = [], 0, 0.0
        async with pm.open_memory(settings, clock=clock, embedder=embedder) as memory:
            for i, sample in enumerate(data):
                conv, lines, writing = await play(memory, clock, sample, i)
                convs.append((conv, sample["qa"]))
                total_lines += lines
                total_write += writing
            rows_written = 0
            for conv, _ in convs:
                for uid in conv.uids.values():
                    rows_written += len(await memory.memories_about(uid))
            sessions = sum(conv.sessions * 2 for conv, _ in convs)
            rules = block_rules(settings)
            outcomes = []
            for conv, qa in convs:
                outcomes += await ask(memory, embedder, conv, qa, rules)
            print(f"LoCoMo: {len(convs)} conversations, {sessions // 2} sessions (each played both ways), "
                  f"{len(outcomes)} questions of categories 1-4 with evidence")
            print(f"mind: {settings.mind.kind}; embedder: {embedder.name}; weights: recency "
                  f"{rules.weights.recency:g}, importance {rules.weights.importance:g}, relevance {rules.weights.relevance:g}")
            print(f"memories written: {rows_written} ({rows_written / max(1, sessions):.1f} per session per persona)")
            print(f"write path: {total_lines} transcript lines in {total_write:.1f} s of quiet-room writes "
                  f"= {total_lines / max(total_write, 1e-9):.0f} lines/s")
            print(f"R@5: {100 * sum(o.at5 for o in outcomes) / max(1, len(outcomes)):.1f}%  "
                  f"R@10: {100 * sum(o.at10 for o in outcomes) / max(1, len(outcomes)):.1f}%")
            if args.sweep:
                print("sweep (relevance weight 1; block-recall over the same written memories):")
                print("  recency  importance  riders/human  block-recall")
                for w_rec in (1.0, 0.5, 0.25, 0.1, 0.0):
                    for w_imp in (1.0, 0.5, 0.25, 0.0):
                        for riders in (rules.riders_per_human, 0):
                            swept = attrs.evolve(
                                rules,
                                riders_per_human=riders,
                                weights=attrs.evolve(rules.weights, recency=w_rec, importance=w_imp),
                            )
                            got = []
                            for conv, qa in convs:
                                got += await ask(memory, embedder, conv, qa, swept)
                            pct = 100 * sum(o.covered for o in got) / max(1, len(got))
                            print(f"  {w_rec:<8g} {w_imp:<11g} {riders:<13d} {pct:5.1f}%")
            total = report(outcomes)
            print(f"block-recall: {total:.1f}%")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", help="a LoCoMo-format JSON file")
    parser.add_argument("--config", help="settings over the defaults (e.g. a real mind)")
    parser.add_argument("--conversations", type=int, help="play only the first N conversations")
    parser.add_argument("--sweep", action="store_true", help="also print block-recall for several recency weights")
    trio.run(main_async, parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
