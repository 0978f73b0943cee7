"""Building a block (design §3): filter → rank → take → render. Pure: no I/O, no clock reads.

The caller (a persona's actor) brings the persona's rows, their vectors, the humans' controls,
the room and the time; it gets back the text and the ids of the rows it loaded, to touch.

Rules beyond the steps' own modules:
- Rows are grouped by whom they concern: each present human (ascending id), then the world.
- Scores are normalised over all visible candidates; the diversity pass runs within a group.
- The work that depends on a row alone (whom it concerns, its rendered line, its vector, where
  recency counts from) is done once per load in a ``RowTable``; a build does only the work
  that depends on the room: which keys are admitted, the scores, the take, the render.
- A present human's note rides when that human's personal rows may load in this room (memory
  on, persona not muted, and — under the proven scope — a private chat).
"""

from __future__ import annotations

from datetime import datetime
from typing import Iterable, Mapping

import attrs
import numpy as np

from ..rows import MemoryRow, UserControls
from . import ranking
from .audience import Audience, admitted
from .render import Section, render_block
from .selection import take
from .table import EMPTY, RowTable


@attrs.frozen
class BlockRules:
    """The tunable numbers of the read path (``[block]``, ``[ranking]``, ``[scope]``)."""

    char_limit: int = 1200
    per_human: int = 10
    per_kind_first: int = 2
    riders_per_human: int = 3
    weights: ranking.Weights = ranking.Weights()
    v1_proven: bool = True


@attrs.frozen
class Block:
    """A rendered block, the rows it loaded (to touch) and its meter."""

    text: str
    loaded_ids: tuple[int, ...]
    used: int
    limit: int


def build_block(
    persona: str,
    audience: Audience,
    rows: Iterable[MemoryRow],
    *,
    vectors: Mapping[int, np.ndarray],
    replaced: Mapping[int, MemoryRow],
    controls: Mapping[int, UserControls],
    topic: ranking.Topic | None,
    names: Mapping[int, str],
    now: datetime,
    rules: BlockRules,
) -> Block:
    """Build the block ``persona`` sees in a room with this ``audience``.

    Args:
        rows: the persona's rows (closed ones are ignored).
        vectors: unit vectors by row id (rows without one have relevance 0).
        replaced: for a row id, the closed row it replaced (its arc may be shown).
        controls: the present humans' switches and notes.
        topic: the room topic's vector, or ``None``.
        names: display names for the people labels.
        now: the wall-clock time recency is measured at.
    """
    table = RowTable.from_rows(rows, vectors, replaced)
    return build_from_table(
        persona, audience, table, controls=controls, topic=topic, names=names, now=now, rules=rules
    )


def build_from_table(
    persona: str,
    audience: Audience,
    table: RowTable,
    *,
    controls: Mapping[int, UserControls],
    topic: ranking.Topic | None,
    names: Mapping[int, str],
    now: datetime,
    rules: BlockRules,
) -> Block:
    """``build_block`` over rows already prepared as a ``RowTable`` (what the actors call)."""
    let = admitted(persona, audience, controls, v1_proven=rules.v1_proven)
    group_keys: list[int | None] = sorted(audience.present) + [None]
    admitted_keys = [k for k in group_keys if (let.world if k is None else k in let.humans)]
    parts = [table.about(k) for k in admitted_keys]
    idx = np.sort(np.concatenate(parts)) if parts else EMPTY

    w = rules.weights
    relevance = table.relevance(topic)[idx]
    scores = np.zeros(len(table))
    scores[idx] = ranking.combine(
        ranking.decay(table.stamps[idx], now, w.decay_per_day), table.importance[idx], relevance, w
    )

    groups = []
    for key in group_keys:
        if key not in admitted_keys:
            groups.append([])
            continue
        members = table.about(key)
        order = members[np.argsort(-scores[members], kind="stable")].tolist()
        groups.append(ranking.diversify(order, table.kinds, rules.per_kind_first))

    rank = np.zeros(len(table), dtype=np.int64)
    rank[idx[np.argsort(-scores[idx], kind="stable")]] = np.arange(idx.size)
    taken = take(
        groups,
        table.kinds,
        table.lengths.__getitem__,
        per_group=rules.per_human,
        char_limit=rules.char_limit,
        rank_of=rank.__getitem__,
        riders_per_group=rules.riders_per_human,
        shortest=int(table.length_array[idx].min()) if idx.size else 0,
    )

    sections = []
    for key, chosen in zip(group_keys, taken.per_group):
        person = controls.get(key) if key is not None and key in let.humans else None
        note = person.memory_note if person is not None else ""
        sections.append(Section(key, tuple(table.lines[p] for p in chosen), note))

    text = render_block(persona, sections, used=taken.used, limit=rules.char_limit, names=names)
    loaded = tuple(table.ids[p] for chosen in taken.per_group for p in chosen)
    return Block(text=text, loaded_ids=loaded, used=taken.used, limit=rules.char_limit)
