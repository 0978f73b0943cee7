"""Building a block (design §3): filter → rank → take → render. Pure: no I/O, no clock reads.

The caller (a persona's actor) brings the persona's rows, their vectors, the humans' controls,
the room and the time; it gets back the text and the ids of the rows it loaded, to touch.

Rules beyond the steps' own modules:
- Rows are grouped by whom they concern: each present human (ascending id), then the world.
- Scores are normalised over all visible candidates; the diversity pass runs within a group.
- A line is rendered only when ``take`` needs its length, and not at all when its text alone
  (plus ``- ""``, the least a line adds) cannot fit: a store far larger than the block costs
  ranking, not rendering.
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
from .audience import Audience, Visible, visible_memories
from .render import Section, render_block, render_line
from .selection import take


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
    visible = visible_memories(persona, audience, rows, controls, v1_proven=rules.v1_proven)
    items = [v.row for v in visible]
    scores = ranking.scores(
        items, [vectors.get(r.id) for r in items], now=now, topic=topic, weights=rules.weights
    )

    group_keys: list[int | None] = sorted(audience.present) + [None]
    members: dict[int | None, list[int]] = {key: [] for key in group_keys}
    for index, row in enumerate(items):
        members[row.about_user].append(index)
    groups = []
    for key in group_keys:
        idx = members[key]
        order = ranking.rank([items[i] for i in idx], scores[idx], rules.per_kind_first)
        groups.append([idx[o] for o in order])

    lines: dict[int, str] = {}

    def line_length(i: int) -> int:
        line = lines.get(i)
        if line is None:
            line = lines[i] = render_line(visible[i], replaced.get(items[i].id))
        return len(line)

    overall = {i: pos for pos, i in enumerate(np.argsort(-scores, kind="stable").tolist())}
    taken = take(
        groups,
        [r.kind for r in items],
        line_length,
        per_group=rules.per_human,
        char_limit=rules.char_limit,
        rank_of=overall.__getitem__,
        at_least=lambda i: len(items[i].text) + 4,
        riders_per_group=rules.riders_per_human,
    )

    personal_ok = not audience.incognito and (audience.private or not rules.v1_proven)
    sections = []
    for key, chosen in zip(group_keys, taken.per_group):
        note = ""
        if key is not None and personal_ok:
            person = controls.get(key)
            if person is not None and not person.hides_from(persona):
                note = person.memory_note
        sections.append(Section(key, tuple(lines[i] for i in chosen), note))

    text = render_block(persona, sections, used=taken.used, limit=rules.char_limit, names=names)
    loaded = tuple(items[i].id for chosen in taken.per_group for i in chosen if items[i].id is not None)
    return Block(text=text, loaded_ids=loaded, used=taken.used, limit=rules.char_limit)
