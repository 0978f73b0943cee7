"""Blocks and recall notes over seeded rows, to show that a change to the read path changes
none of them (byte for byte, for exact search).

Run it on the commit before a change and on the change, then compare::

    PYTHONPATH=. .venv/bin/python bench/read_identity.py write before.json   # on the old commit
    PYTHONPATH=. .venv/bin/python bench/read_identity.py write after.json    # on the new one
    PYTHONPATH=. .venv/bin/python bench/read_identity.py compare before.json after.json

Cases: ``seed_rows`` at 60, 1,000 and 10,000 rows embedded by the bundled WordLlama; 40 rooms
each (one to five of the eight humans present, a private chat for some single ones, memory
off for some, notes for some, seven topics and no topic, the proven scope on and off), each
with its block and the recall note of one of ``block_bench``'s questions (half of them with
the block's rows left out); and 10 rooms on the table after ``extended`` appends 30 rows and
closes three. The notes are the exact ones (``shortlist=None``) when the installed
``recall_note`` takes that argument. It prints how many cases differ; nothing here is timed.
"""

from __future__ import annotations

import inspect
import json
import random
import sys
from pathlib import Path

import attrs

from block_bench import NAMES, NOW, PERSONA, QUESTIONS, TOPIC, bench_embedder, settings_for
from seed_rows import make_rows

from persona_memory.actors.row_index import RowIndex, decode_unit_rows
from persona_memory.compose import block_rules
from persona_memory.core import ranking
from persona_memory.core.audience import Audience
from persona_memory.core.block import build_from_table
from persona_memory.core.recall import RecallRules, recall_note
from persona_memory.rows import UserControls

TOPICS = (None, TOPIC, "tea and coffee", "the cat Miso", "board games on Friday evening", "wedding savings", "zzz qqq")
EXACT = {"shortlist": None} if "shortlist" in inspect.signature(recall_note).parameters else {}


def cases() -> dict[str, list]:
    embedder = bench_embedder()
    rules = block_rules(settings_for(Path("unused.db")))

    def topic(text: str) -> ranking.Topic:
        return ranking.Topic.of(text, embedder.embed_sync([text])[0], embedder.name)

    out: dict[str, list] = {}
    for size in (60, 1000, 10000):
        rows = [attrs.evolve(r, id=i + 1) for i, r in enumerate(make_rows(size, now=NOW, embedder=embedder))]
        index = RowIndex()
        index.load(1, rows)
        table = index.table
        rng = random.Random(size)
        for trial in range(40):
            present = frozenset(rng.sample(range(1, 9), rng.randint(1, 5)))
            private = len(present) == 1 and rng.random() < 0.7
            controls = {
                u: UserControls(user_id=u, memory_on=rng.random() > 0.15, memory_note=f"note {u}" if rng.random() < 0.5 else "")
                for u in present
            }
            audience = Audience(present=present, private=private)
            text = TOPICS[trial % len(TOPICS)]
            for proven in (False, True):
                room = attrs.evolve(rules, v1_proven=proven)
                block = build_from_table(
                    PERSONA, audience, table, controls=controls, topic=None if text is None else topic(text),
                    names=NAMES, now=NOW, rules=room,
                )
                out[f"{size}/{trial}/{proven}/block"] = [block.text, list(block.loaded_ids)]
                note = recall_note(
                    PERSONA, audience, table, controls=controls, query=topic(QUESTIONS[trial % len(QUESTIONS)]),
                    shown=block.loaded_ids if trial % 2 else (), rules=room, recall=RecallRules(), **EXACT,
                )
                out[f"{size}/{trial}/{proven}/note"] = [note.text, list(note.ids)]
        more = [attrs.evolve(r, id=size + 100 + i) for i, r in enumerate(make_rows(30, now=NOW, embedder=embedder, seed=99))]
        grown = table.extended(more, dict(zip((r.id for r in more), decode_unit_rows(more, 256))), {}, [1, 2, 3])
        for trial in range(10):
            audience = Audience(present=frozenset(rng.sample(range(1, 9), 4)))
            room = attrs.evolve(rules, v1_proven=False)
            block = build_from_table(PERSONA, audience, grown, controls={}, topic=topic(TOPIC), names=NAMES, now=NOW, rules=room)
            out[f"{size}/extended{trial}/block"] = [block.text, list(block.loaded_ids)]
            note = recall_note(
                PERSONA, audience, grown, controls={}, query=topic(QUESTIONS[trial]), shown=(), rules=room,
                recall=RecallRules(), **EXACT,
            )
            out[f"{size}/extended{trial}/note"] = [note.text, list(note.ids)]
    return out


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "write":
        found = cases()
        Path(argv[1]).write_text(json.dumps(found))
        print(f"{len(found)} cases, {sum(1 for text, _ in found.values() if text)} non-empty, written to {argv[1]}")
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        before, after = (json.loads(Path(p).read_text()) for p in argv[1:])
        differ = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        print(f"{len(differ)} of {len(before)} cases differ" + (f": {', '.join(differ[:10])}" if differ else ""))
        return 1 if differ else 0
    print("usage: read_identity.py write FILE | compare BEFORE AFTER", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
