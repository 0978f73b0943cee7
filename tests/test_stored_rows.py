"""A persona's rows read for an actor's load (``store.memories.rows_said``), decoded column by
column: the same table, the same blocks and the same rows as decoding each row whole."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from typing import AsyncIterator

import attrs
import numpy as np
import pytest

from persona_memory.actors.row_index import RowIndex
from persona_memory.core.audience import Audience
from persona_memory.core.block import BlockRules, build_from_table
from persona_memory.core.ranking import Topic
from persona_memory.embedding import HashingEmbedder, quantize
from persona_memory.rooms import RoomState
from persona_memory.rows import KINDS, MemoryRow
from persona_memory.storage.store import Store
from persona_memory.storage.stored_rows import LazyRows, StoredRows

NOW = datetime(2026, 8, 18, 12, 0, tzinfo=timezone.utc)
EMBEDDER = HashingEmbedder(64)
WORDS = "ferry island tickets bakery nights oboe Kyoto 12:30 u:7 café Ünal menu:4 garden moved Porto".split()


@pytest.fixture
async def store(open_some_store) -> AsyncIterator[Store]:
    async with open_some_store() as opened:
        yield opened


def some_rows(count: int, lines: list[int]) -> list[MemoryRow]:
    """Rows of every kind about three humans, themselves and the world, witnessed alone or
    not, some without a vector, recalled or not, created at times with and without micro-
    seconds and in another offset, citing transcript lines."""
    rng = random.Random(count)
    out = []
    for i in range(count):
        subject = rng.choice(["u:1", "u:2", "u:3", "self", "world"])
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 9))) + rng.choice(["", " <b>", "\u2028x"])
        offset = timezone(timedelta(hours=rng.choice([0, 0, 8])))
        created = datetime(2026, 8, 1, 9, 0, tzinfo=offset) + timedelta(minutes=i, microseconds=rng.choice([0, 250]))
        fields = dict(
            persona="warren",
            subject=subject,
            counterpart=rng.choice(["u:1", "u:2"]) if subject == "self" else None,
            kind=rng.choice([k for k in KINDS if (k in ("promise", "open_loop")) == (subject == "self")] or list(KINDS)),
            text=text,
            importance=rng.randint(1, 10),
            witnessed=rng.choice([{1}, {2}, {1, 2}, {3}, set()]),
            created=created,
            valid_from=rng.choice([None, "2026-07", "2026-07-01"]),
            last_recalled=created + timedelta(hours=3) if rng.random() < 0.3 else None,
            evidence=rng.sample(lines, rng.randint(0, 2)),
        )
        if rng.random() < 0.8:
            blob, scale = quantize(EMBEDDER.embed_sync([text])[0])
            fields.update(embedding=blob, embedding_scale=scale, embedder=EMBEDDER.name)
        out.append(MemoryRow(**fields))
    return out


async def seeded(store: Store) -> tuple[int, StoredRows, dict[int, str]]:
    await store.rooms.save(RoomState("dm", personas=("warren",), present=frozenset({1}), private=True, incognito=False, kit=None, topic=None), NOW)
    lines = [await store.transcript.post("dm", "u:1", f"line {n} about the ferry to the island", NOW) for n in range(6)]
    rows = await store.memories.insert(some_rows(120, lines))
    await store.write(  # close a few, each replaced by a later row: their arcs show
        lambda c: [
            c.execute("UPDATE persona_memory SET valid_to = '2026-08', closed_by = ? WHERE id = ?", (new.id, old.id))
            for old, new in zip(rows[:30:3], rows[90::3])
        ]
    )
    return await store.memories.rows_said("warren")


async def test_a_load_of_stored_rows_builds_the_table_and_blocks_of_the_rows_decoded_whole(store: Store) -> None:
    version, stored, said = await seeded(store)
    assert isinstance(stored, StoredRows)
    _, whole = await store.memories.rows("warren")
    by_columns, by_rows = RowIndex(), RowIndex()
    by_columns.load(version, stored, said)
    by_rows.load(version, whole, said)
    a, b = by_columns.table, by_rows.table
    assert isinstance(by_columns.open_rows, LazyRows)
    for column in ("ids", "kinds", "lines", "lengths"):
        assert tuple(getattr(a, column)) == tuple(getattr(b, column))
    for column in ("length_array", "importance", "stamps", "kind_codes", "rides"):
        assert getattr(a, column).tolist() == getattr(b, column).tolist()
    assert {k: v.tolist() for k, v in a.by_about.items()} == {k: v.tolist() for k, v in b.by_about.items()}
    assert a.spaces.keys() == b.spaces.keys() and a.slices == b.slices
    for name, (positions, matrix) in a.spaces.items():
        assert positions.tolist() == b.spaces[name][0].tolist() and np.array_equal(matrix, b.spaces[name][1])
    assert a.lexical.lengths.tolist() == b.lexical.lengths.tolist()
    assert {t: [x.tolist() for x in p] for t, p in a.lexical.postings.items()} == {
        t: [x.tolist() for x in p] for t, p in b.lexical.postings.items()
    }
    assert any("was: " in line for line in a.lines) and any("confidence" in line for line in a.lines)
    for present, topic in (({1, 2}, None), ({1}, "the ferry to the island"), ({3, 2}, "bakery nights")):
        audience = Audience(present=frozenset(present), private=len(present) == 1)
        query = None if topic is None else Topic.of(topic, EMBEDDER.embed_sync([topic])[0], EMBEDDER.name)
        rules = attrs.evolve(BlockRules(), v1_proven=False)
        blocks = [
            build_from_table("warren", audience, t, controls={}, topic=query, names={1: "Dan"}, now=NOW, rules=rules)
            for t in (a, b)
        ]
        assert blocks[0] == blocks[1] and blocks[0].loaded_ids
    assert dict(by_columns.open_rows) == dict(by_rows.open_rows) and by_columns.replaced == by_rows.replaced


async def test_stored_rows_read_as_the_rows_themselves_and_decode_only_what_is_read(store: Store) -> None:
    _, stored, _ = await seeded(store)
    _, whole = await store.memories.rows("warren")
    index = RowIndex()
    index.load(1, stored, {})
    lazy = index.open_rows
    first = next(iter(lazy))
    assert sum(type(v) is MemoryRow for v in lazy._items.values()) == 0  # nothing decoded by the load
    assert lazy[first] == next(r for r in whole if r.id == first)
    copy = lazy.copy()
    del lazy[first]
    assert first in copy and first not in lazy and len(copy) == len(lazy) + 1
    assert list(stored) == whole and stored[-2:] == whole[-2:] and len(stored) == len(whole)
