"""Memory quality on LoCoMo: play conversations through the real write path, then ask.

    .venv/bin/python bench/locomo.py ../shared/data/locomo-dev.json [--sweep]

Each session of a conversation is played twice, as two private chats: speaker A as a persona
with speaker B as the human, and the other way round. Every turn is posted to the transcript,
the room goes quiet at the session's end (the wall clock set to the session's date), and the
persona actors run the write path (the configured mind; offline by default). Then, for every
question of categories 1–4 with evidence, the block of each persona that remembers a speaker
of the evidence turns is built with the question as the room topic (read as a room reads its
opener: without the two speakers' names) — the same pure code the actors run, without
touching recall stamps — and the question counts as covered when a row in the block cites one
of its evidence turns. The last line is ``block-recall: NN.N%``.

Before it: ``answer-recall`` (categories 1, 3, 4: the block's text holds at least half of the
answer's content words, as ``content_words`` defines them), beside the same measure for a
baseline — the same characters of the human's own raw turns ranked by BM25 against the
same words of the question — and ``note-recall`` (the block or the recall note built from the
question cites an evidence turn). ``--sweep`` prints both recalls for a grid of the topic rules.

Then the loss breakdown, over the *answerable* questions: those of categories 1, 3 and 4 whose
evidence turns, as posted, hold the answer by the same ``content_words`` rule. For each, the
rows written from its evidence turns (every open row of the persona's that cites one, in the
block or not, their texts taken together) and the block are asked the same question:
*extraction loss* — no row written from the evidence turns holds the answer; *ranking loss* —
such a row holds it, the block does not; *both hold* — the block holds it (a few through rows
written from other turns; the count is printed). Each is a count and a share of the answerable
questions. Then ``answer-recall / BM25``, the ratio of the two answer-recalls.

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
from persona_memory.compose import recall_rules as make_recall_rules
from persona_memory.core import lexical, ranking
from persona_memory.core.audience import Audience
from persona_memory.core.block import build_from_table, score
from persona_memory.core.query import searched_text
from persona_memory.core.recall import RecallRules, recall_note

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
    turn_texts: dict[str, str] = attrs.field(factory=dict)  # each turn as posted
    own_turns: dict[str, list[str]] = attrs.field(factory=dict)
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
            c.turn_texts[turn["dia_id"]] = turn_text(turn)
            c.own_turns.setdefault(turn["speaker"], []).append(turn_text(turn))
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


ANSWER_STOP_WORDS = frozenset(
    """
    the and but for nor yet not any all some that this these those there then than with from
    into onto upon about after before over under between through during without within
    his her hers him she they them their theirs its our ours you your yours who whom whose
    what which when where why how was were are been being has have had does did doing can
    could would should will shall may might must also just very too only more most
    """.split()
)
"""Answer-recall's stop list: articles, pronouns, prepositions, auxiliaries and conjunctions
(words of one or two letters never count). A content word is a lower-cased ``[a-z0-9]+`` run
of more than two letters that is not in this list."""

ANSWER_CATEGORIES = (1, 3, 4)


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", str(text).lower()) if len(w) > 2 and w not in ANSWER_STOP_WORDS}


def holds_answer(text: str, answer: object) -> bool | None:
    """Whether ``text`` holds at least half of the answer's content words (``None``: the
    answer has none, so the question is not counted)."""
    wanted = content_words(str(answer))
    if not wanted:
        return None
    return 2 * len(wanted & content_words(text)) >= len(wanted)


@attrs.frozen
class Question:
    category: int
    wanted: frozenset[str]
    speakers: frozenset[str]
    answer: object
    topic: ranking.Topic
    raw_answered: bool | None  # the raw-turn baseline, for answer-recall questions
    answerable: bool = False  # an answer-recall question whose evidence turns hold the answer


LOSSES = ("extraction", "ranking", "held")
"""Where an answerable question's answer went: no row written from its evidence turns holds
it (*extraction*), such a row holds it but the block does not (*ranking*), the block holds
it (*held*)."""


@attrs.frozen
class Outcome:
    category: int
    covered: bool
    at5: bool
    at10: bool
    answered: bool | None  # None: not an answer-recall question
    raw_answered: bool | None
    noted: bool
    loss: str | None = None  # one of LOSSES, for answerable questions
    held_elsewhere: bool = False  # the block holds the answer, no evidence row does


def raw_turns_block(turns: list[str], question: str, char_limit: int) -> str:
    """The baseline: a human's own turns, ranked by BM25 against the question, taken best
    first while they fit ``char_limit`` (each turn plus its newline)."""
    words = lexical.LexicalIndex.from_texts(turns)
    scores = words.scores(lexical.terms(question), np.arange(len(turns), dtype=np.int64))
    taken, used = [], 0
    for i in np.argsort(-scores, kind="stable").tolist():
        if scores[i] <= 0:
            break
        if used + len(turns[i]) + 1 <= char_limit:
            taken.append(turns[i])
            used += len(turns[i]) + 1
    return "\n".join(taken)


async def questions_of(embedder, conv: Conversation, qa: list[dict], char_limit: int) -> list[Question]:
    """The questions of categories 1-4 with evidence, each with its topic and its baseline.

    A question is searched by as a room of the two speakers reads its opener
    (``RoomState.searched``): without the speakers' names. The baseline gets the same words."""
    out = []
    asked = [q for q in qa if q.get("category") in CATEGORIES]
    searched = [searched_text(q["question"], conv.speakers, ()) for q in asked]
    vectors = await embedder.embed(searched) if asked else []
    for q, text, vector in zip(asked, searched, vectors):
        wanted = evidence_ids(q.get("evidence", []))
        speakers = frozenset(conv.turn_speaker[t] for t in wanted if t in conv.turn_speaker)
        if not speakers:
            continue
        answer = q.get("answer", q.get("adversarial_answer", ""))
        raw = None
        answerable = False
        if q["category"] in ANSWER_CATEGORIES:
            held = [holds_answer(raw_turns_block(conv.own_turns.get(s, []), text, char_limit), answer)
                    for s in sorted(speakers)]
            raw = None if held[0] is None else any(held)
            said = "\n".join(conv.turn_texts[t] for t in sorted(wanted) if t in conv.turn_texts)
            answerable = bool(holds_answer(said, answer))
        out.append(Question(q["category"], frozenset(wanted), speakers, answer,
                            ranking.Topic.of(text, vector, embedder.name), raw, answerable))
    return out


def ask(memory_indexes: dict[str, RowIndex], conv: Conversation, questions: list[Question],
        rules, recall_rules: RecallRules) -> list[Outcome]:
    """Build each question's block (and recall note) with the question as the topic."""
    out = []
    for q in questions:
        covered = at5 = at10 = noted = False
        held = []
        written = []  # per speaker: do the rows written from the evidence turns hold the answer
        for about in sorted(q.speakers):
            persona_speaker = next(s for s in conv.speakers if s != about)
            index = memory_indexes[persona_speaker]
            uid = conv.uids[about]
            audience = Audience(present=frozenset({uid}), private=True)
            persona = conv.slugs[persona_speaker]
            block = build_from_table(
                persona, audience, index.table, controls={}, topic=q.topic,
                names={uid: about}, now=conv.last_time, rules=rules,
            )
            note = recall_note(persona, audience, index.table, controls={}, query=q.topic,
                               shown=block.loaded_ids, rules=rules, recall=recall_rules)
            cites = lambda row_id: any(conv.line_to_turn.get(l) in q.wanted for l in index.open_rows[row_id].evidence)
            in_block = any(cites(i) for i in block.loaded_ids)
            covered |= in_block
            noted |= in_block or any(cites(i) for i in note.ids)
            if q.category in ANSWER_CATEGORIES:
                held.append(holds_answer(block.text, q.answer))
            if q.answerable:
                from_evidence = [r.text for r_id, r in sorted(index.open_rows.items()) if cites(r_id)]
                written.append(bool(holds_answer("\n".join(from_evidence), q.answer)))
            table = index.table
            if len(table):
                every = np.arange(len(table), dtype=np.int64)
                scores = score(table, every, topic=q.topic, now=conv.last_time, weights=rules.topic_weights)
                order = np.lexsort((every, -scores))
                at5 |= any(cites(table.ids[i]) for i in order[:5])
                at10 |= any(cites(table.ids[i]) for i in order[:10])
        answered = None if not held or held[0] is None else any(held)
        loss = loss_of(bool(answered), any(written)) if q.answerable else None
        out.append(Outcome(q.category, covered, at5, at10, answered, q.raw_answered, noted,
                           loss, bool(answered) and not any(written)))
    return out


def pct(flags: list[bool]) -> float:
    return 100.0 * sum(flags) / max(1, len(flags))


def summary(outcomes: list[Outcome]) -> dict[str, float]:
    scored = [o for o in outcomes if o.answered is not None]
    return {
        "block": pct([o.covered for o in outcomes]),
        "answer": pct([bool(o.answered) for o in scored]),
        "raw": pct([bool(o.raw_answered) for o in scored]),
        "note": pct([o.noted for o in outcomes]),
        "answered_n": len(scored),
    }


def loss_of(block_holds: bool, evidence_rows_hold: bool) -> str:
    """Where an answerable question's answer went (``LOSSES``)."""
    if block_holds:
        return "held"
    return "ranking" if evidence_rows_hold else "extraction"


def losses(outcomes: list[Outcome]) -> list[str]:
    """The loss breakdown's lines: for the answerable questions, how many lost their answer
    before the block (no row written from the evidence turns holds it), at the block, or not."""
    answerable = [o for o in outcomes if o.loss is not None]
    n = len(answerable)
    count = lambda loss: sum(o.loss == loss for o in answerable)
    share = lambda k: f"{k} ({100.0 * k / max(1, n):.1f}%)"
    elsewhere = sum(o.held_elsewhere for o in answerable)
    return [
        f"answerable questions (categories 1, 3, 4 whose evidence turns hold the answer): {n}",
        f"  extraction loss: {share(count('extraction'))} — no row written from the evidence turns holds the answer",
        f"  ranking loss: {share(count('ranking'))} — a row written from them holds it, the block does not",
        f"  both hold: {share(count('held'))} — the block holds it ({elsewhere} of them with no evidence row holding it)",
    ]


def report(outcomes: list[Outcome]) -> None:
    by_cat = collections.defaultdict(list)
    for o in outcomes:
        by_cat[o.category].append(o)
    for cat, name in CATEGORIES.items():
        items = by_cat.get(cat, [])
        if items:
            print(f"  category {cat} ({name}): {pct([o.covered for o in items]):5.1f}% of {len(items)}")


def sweep(indexes, questions, rules, recall_rules) -> None:
    """Block-recall and answer-recall over the same written memories, for the topic rules."""
    print("sweep (rooms with a topic; the rows already written):")
    print("  diversity  per_human  riders  recency  importance  lexical  block-recall  answer-recall")
    grid = [
        (div, cap, riders, rec, imp, lex)
        for div in (2, 0)
        for cap in (10, 100)
        for riders in (3, 0)
        for rec in (0.1, 0.0)
        for imp in (0.25, 0.0)
        for lex in (0.0, 0.25, 0.5, 0.6, 0.75)
    ]
    for div, cap, riders, rec, imp, lex in grid:
        swept = attrs.evolve(
            rules, topic_per_kind_first=div, topic_per_human=cap, topic_riders_per_human=riders,
            topic_weights=attrs.evolve(rules.topic_weights, recency=rec, importance=imp, lexical_share=lex),
        )
        got = []
        for (conv, qs), idx in zip(questions, indexes):
            got += ask(idx, conv, qs, swept, recall_rules)
        s = summary(got)
        print(f"  {div:<10d} {cap:<10d} {riders:<7d} {rec:<8g} {imp:<11g} {lex:<8g} "
              f"{s['block']:5.1f}%        {s['answer']:5.1f}%")


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
            recall_rules = make_recall_rules(settings)
            indexes, questions = [], []
            for conv, qa in convs:
                per_speaker = {}
                for speaker in conv.speakers:
                    index = RowIndex()
                    index.load(*await memory._store.memories.rows_said(conv.slugs[speaker]))
                    per_speaker[speaker] = index
                indexes.append(per_speaker)
                questions.append((conv, await questions_of(embedder, conv, qa, rules.char_limit)))
        outcomes = []
        for (conv, qs), idx in zip(questions, indexes):
            outcomes += ask(idx, conv, qs, rules, recall_rules)
        w = rules.topic_weights
        print(f"LoCoMo: {len(convs)} conversations, {sessions // 2} sessions (each played both ways), "
              f"{len(outcomes)} questions of categories 1-4 with evidence")
        print(f"mind: {settings.mind.kind}; embedder: {embedder.name}; with a topic: weights recency "
              f"{w.recency:g}, importance {w.importance:g}, relevance {w.relevance:g} "
              f"(lexical share {w.lexical_share:g}); diversity {rules.topic_per_kind_first}, "
              f"per human {rules.topic_per_human}, riders {rules.topic_riders_per_human}")
        print(f"memories written: {rows_written} ({rows_written / max(1, sessions):.1f} per session per persona)")
        print(f"write path: {total_lines} transcript lines in {total_write:.1f} s of quiet-room writes "
              f"= {total_lines / max(total_write, 1e-9):.0f} lines/s")
        print(f"R@5: {pct([o.at5 for o in outcomes]):.1f}%  R@10: {pct([o.at10 for o in outcomes]):.1f}%")
        if args.sweep:
            sweep(indexes, questions, rules, recall_rules)
        s = summary(outcomes)
        report(outcomes)
        print(f"raw-turn BM25 answer-recall: {s['raw']:.1f}% (the human's own turns, same "
              f"{rules.char_limit} characters, {s['answered_n']} questions of categories 1, 3, 4)")
        print(f"answer-recall: {s['answer']:.1f}%")
        print(f"note-recall: {s['note']:.1f}%")
        for line in losses(outcomes):
            print(line)
        print(f"answer-recall / BM25: {s['answer'] / s['raw']:.2f}" if s["raw"] else "answer-recall / BM25: -")
        print(f"block-recall: {s['block']:.1f}%")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", help="a LoCoMo-format JSON file")
    parser.add_argument("--config", help="settings over the defaults (e.g. a real mind)")
    parser.add_argument("--conversations", type=int, help="play only the first N conversations")
    parser.add_argument("--sweep", action="store_true", help="also print block-recall for several recency weights")
    trio.run(main_async, parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
