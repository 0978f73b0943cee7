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
- A group's reach (``PRUNE_FACTOR``): the take looks down a group no further than twice the
  lines it could show, its best of each kind and its riders. A line further down is no filler
  for the last few characters, however short.
"""

from __future__ import annotations

import math
from datetime import datetime
from itertools import chain
from typing import Iterable, Mapping

import attrs
import numpy as np

from ..rows import MemoryRow, UserControls
from . import ranking
from .audience import Admitted, Audience, admitted
from .render import Section, render_block
from .selection import take
from .table import EMPTY, Among, RowTable


@attrs.frozen
class Shape:
    """How ranked lines become a block: the caps, the diversity pass, the riders, the weights."""

    per_human: int
    per_kind_first: int  # 0: no diversity pass
    riders_per_human: int
    weights: ranking.Weights


@attrs.frozen
class BlockRules:
    """The tunable numbers of the read path (``[block]``, ``[ranking]``, ``[scope]``).

    A room without a topic is shaped by the design's numbers (``per_human``,
    ``per_kind_first``, ``riders_per_human``, ``weights``); a room with one by the
    ``topic_*`` numbers, where relevance leads (see ``defaults.toml`` for how they were chosen).
    """

    char_limit: int = 1200
    per_human: int = 10
    per_kind_first: int = 2
    riders_per_human: int = 3
    weights: ranking.Weights = ranking.Weights()
    topic_per_human: int = 100
    topic_per_kind_first: int = 0
    topic_riders_per_human: int = 0
    topic_weights: ranking.Weights = ranking.Weights(recency=0.05, importance=0.1)
    v1_proven: bool = True

    def shape(self, topic: ranking.Topic | None) -> Shape:
        if topic is None:
            return Shape(self.per_human, self.per_kind_first, self.riders_per_human, self.weights)
        return Shape(
            self.topic_per_human, self.topic_per_kind_first, self.topic_riders_per_human, self.topic_weights
        )


@attrs.frozen
class Block:
    """A rendered block, the rows it loaded (to touch) and its meter."""

    text: str
    loaded_ids: tuple[int, ...]
    used: int
    limit: int


@attrs.frozen(eq=False)
class Candidates:
    """What a room may show of a table: the audience rule's decision applied to the rows.

    ``groups`` are the block's groups in order (each present human ascending, then the world,
    ``None``); ``admitted`` those the rule lets in; ``rows`` the admitted rows (``RowTable.among``:
    their positions ascending, the group of each as its index in ``admitted``, …).
    """

    let: Admitted
    groups: tuple[int | None, ...]
    admitted: tuple[int | None, ...]
    rows: Among

    @property
    def positions(self) -> np.ndarray:
        return self.rows.positions


def candidates(
    persona: str, audience: Audience, table: RowTable, controls: Mapping[int, UserControls], *, v1_proven: bool
) -> Candidates:
    """The rows of ``table`` this audience may see — the one place the block and the recall
    note apply the audience rule (``core.audience.admitted``) to a persona's rows."""
    let = admitted(persona, audience, controls, v1_proven=v1_proven)
    groups: tuple[int | None, ...] = (*sorted(audience.present), None)
    keys = tuple(k for k in groups if let.admits(k))
    return Candidates(let, groups, keys, table.among(keys))


def relevance_at(
    table: RowTable,
    positions: np.ndarray,
    topic: ranking.Topic | None,
    lexical_share: float,
    among: Among | None = None,
) -> np.ndarray:
    """The hybrid relevance (``ranking.hybrid``) of the rows at ``positions`` (the
    candidates, which BM25 counts over; ``among``: the same rows as ``RowTable.among`` gave
    them, if known) to ``topic``, one value per position; 0 without a topic."""
    if topic is None or not positions.size:
        return np.zeros(positions.size)
    if among is None:
        cosine = table.cosine_at(topic, positions)
        words = table.lexical.relevance(topic.terms, positions)[positions]
    else:  # the same bits, by the plans remembered for these candidates
        cosine = table.candidate_cosine(topic, among)
        words = table.lexical.candidate_relevance(topic.terms, among.counted)
    return ranking.hybrid(cosine, words, lexical_share)


def relevance(
    table: RowTable, positions: np.ndarray, topic: ranking.Topic | None, lexical_share: float
) -> np.ndarray:
    """``relevance_at`` spread over the whole table: 0 outside ``positions``."""
    fused = np.zeros(len(table))
    fused[positions] = relevance_at(table, positions, topic, lexical_share)
    return fused


def scores_at(
    table: RowTable,
    positions: np.ndarray,
    *,
    topic: ranking.Topic | None,
    now: datetime,
    weights: ranking.Weights,
    among: Among | None = None,
) -> np.ndarray:
    """The rank score (``ranking.combine``) of each row at ``positions`` (the candidates),
    one value per position; ``among``: those rows as ``RowTable.among`` gave them, if known."""
    if not positions.size:
        return np.zeros(0)
    if among is None:
        return ranking.combine(
            ranking.decay(table.stamps[positions], now, weights.decay_per_day),
            table.importance[positions],
            relevance_at(table, positions, topic, weights.lexical_share),
            weights,
        )
    return ranking.weighted(
        ranking.normalise(ranking.decay(table.stamps[positions], now, weights.decay_per_day)),
        among.importance,
        ranking.normalise(relevance_at(table, positions, topic, weights.lexical_share, among)),
        weights,
    )


def score(
    table: RowTable, positions: np.ndarray, *, topic: ranking.Topic | None, now: datetime, weights: ranking.Weights
) -> np.ndarray:
    """The rank score of every row in ``positions`` (0 elsewhere)."""
    scores = np.zeros(len(table))
    scores[positions] = scores_at(table, positions, topic=topic, now=now, weights=weights)
    return scores


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


def group_order(labels: np.ndarray, scores: np.ndarray, weights: ranking.Weights) -> np.ndarray:
    """The candidates' order for the take: by group (``labels`` ascending), best ``scores``
    first within a group, ties in the candidates' order — what ``np.lexsort((-scores,
    labels))`` gives, as one stable sort of one key.

    The key is ``label · span - score``: ``span``, a power of two above the most a score can be
    (the sum of the weights: each term is normalised to [0, 1]), so a group's keys never reach
    the next group's and ``label · span`` is exact. Two scores of a group that differ by less
    than the key's rounding (``span · groups · 2**-52``: below ``1e-13`` for four weights' worth
    and a hundred groups) count as a tie and keep the candidates' order — far below what the
    scores' own terms can tell apart (``ranking.EQUAL_WITHIN``). One sort instead of ``lexsort``'s
    two passes: half the sorting, on every cold open.
    """
    return np.argsort(group_keys(labels, scores, weights), kind="stable")


def group_keys(labels: np.ndarray, scores: np.ndarray, weights: ranking.Weights) -> np.ndarray:
    """The key ``group_order`` sorts by: ``label · span - score`` (see there)."""
    ceiling = weights.recency + weights.importance + weights.relevance
    span = 2.0 ** math.ceil(math.log2(ceiling + 1.0))
    return labels * span - scores


def top_of_group(
    members: np.ndarray,
    keys: np.ndarray,
    kind_codes: np.ndarray,
    rides: np.ndarray,
    *,
    keep: int,
    per_kind: int,
    riders: int,
) -> np.ndarray:
    """The first of one group's candidates in ``group_order``'s order — every one that
    ``best_of_group`` can keep — without sorting the rest.

    ``members``: the group's candidates, ascending; ``keys``, ``kind_codes``, ``rides``: each
    one's ``group_keys`` key, kind code and whether it rides. Taken: the ``keep`` best and every
    one tied with the last of them (``np.partition`` finds that key), the same for the
    ``per_kind`` best of each kind and the ``riders`` best that ride; they are then sorted, stably,
    as the whole group would be. Everything left out has a larger key than all that is taken
    of its kind (or of the riders, or overall), so it comes after them in the full order, and
    ``best_of_group`` over the result keeps what it keeps over the whole group.
    """
    if members.size <= keep:
        return members[np.argsort(keys, kind="stable")]
    taken = keys <= np.partition(keys, keep - 1)[keep - 1]
    for wanted, among in ((per_kind, None), (riders, rides)):
        if not wanted:
            continue
        sets = [among] if among is not None else [kind_codes == code for code in np.unique(kind_codes)]
        for inside in sets:
            some = keys[inside]
            if some.size > wanted:
                inside = inside & (keys <= np.partition(some, wanted - 1)[wanted - 1])
            taken |= inside
    chosen = np.flatnonzero(taken)
    return members[chosen[np.argsort(keys[chosen], kind="stable")]]


PRUNE_FACTOR = 2
"""A group's reach: before the diversity and take passes a group keeps twice the lines it
could show (its cap, or what the budget holds of its shortest line, whichever is less), plus
the best of each kind and its riders, which may rank lower. The take looks no further: when
the budget left is too small for the lines within reach, it stays unused rather than go to a
line from far down the ranking — one that short is filler, not what the room is about — and
the build's Python work grows with what the block shows, not with what the store holds. A
line longer than the whole budget is left out before that count — it can never be taken, so
it must not push out a shorter line that can (a block is empty only when no line fits at all)."""


def best_of_group(
    order: np.ndarray,
    ranked: np.ndarray,
    kind_codes: np.ndarray,
    rides: np.ndarray,
    *,
    keep: int,
    per_kind: int,
    riders: int,
) -> np.ndarray:
    """A group's rows, best first (``order``: table positions, ranked by a stable sort of
    their scores ``ranked``, so ties keep table order), pruned to what can matter.

    Kept: the ``keep`` best (and any tied with the last of them); the ``per_kind`` best of
    each kind (the diversity pass may pull them forward); the ``riders`` best of the rows
    that ride (``rides``).
    """
    size = order.size
    if size <= keep:
        return order
    best, last = keep, ranked[keep - 1]
    if ranked[keep] == last:  # ties with the last kept row stay too (sorted best first)
        best = int(np.searchsorted(-ranked, -last, side="right"))
    if not per_kind and not riders:
        return order[:best]
    kept = np.zeros(order.size, dtype=bool)
    kept[:best] = True
    if per_kind:
        codes = kind_codes[order]
        for code in np.unique(codes):
            kept[np.flatnonzero(codes == code)[:per_kind]] = True
    if riders:
        kept[np.flatnonzero(rides[order])[:riders]] = True
    return order[kept]


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
    shape = rules.shape(topic)
    seen = candidates(persona, audience, table, controls, v1_proven=rules.v1_proven)
    idx = seen.positions
    candidate_scores = scores_at(table, idx, topic=topic, now=now, weights=shape.weights, among=seen.rows)
    # Each group's candidates, best first, ties in table order, as one stable sort by group
    # and score gives (``group_order``) — but only as many as can reach the block: each
    # group is partitioned (``top_of_group``) and only what it keeps is sorted.
    keys = group_keys(seen.rows.labels, candidate_scores, shape.weights)
    grouped = seen.rows.grouped
    segment = dict(zip(seen.admitted, seen.rows.segments))

    private = audience.private  # the lines go bare of their confidence tags (``render``)
    shortest = seen.rows.shortest_line(private)
    fit = rules.char_limit // (shortest + 1) if idx.size else 0
    keep = max(1, PRUNE_FACTOR * min(shape.per_human, fit))
    never_fit = seen.rows.longest_line(private) >= rules.char_limit  # some line is longer than the whole budget
    best: list[np.ndarray] = []
    for key in seen.groups:
        if key not in segment:
            best.append(EMPTY)
            continue
        start, end = segment[key]
        members = grouped[start:end]
        if never_fit:  # it can never be taken: it must not take a place the pruning keeps
            members = members[table.shown_length_array(private)[idx[members]] < rules.char_limit]
        where = idx[members]
        chosen = top_of_group(
            members, keys[members], table.kind_codes[where], table.rides[where],
            keep=keep, per_kind=shape.per_kind_first, riders=shape.riders_per_human,
        )
        best.append(best_of_group(
            idx[chosen], candidate_scores[chosen], table.kind_codes, table.rides,
            keep=keep, per_kind=shape.per_kind_first, riders=shape.riders_per_human,
        ))
    groups = [
        ranking.diversify(b.tolist(), table.kinds, shape.per_kind_first) if shape.per_kind_first else b.tolist()
        for b in best
    ]
    rank: dict[int, int] = {}  # across groups, for the riders' order
    if shape.riders_per_human:
        scores = np.zeros(len(table))
        scores[idx] = candidate_scores
        pooled = np.concatenate(best)
        across = pooled[np.lexsort((pooled, -scores[pooled]))].tolist()
        rank = dict(zip(across, range(len(across))))
    taken = take(
        groups,
        table.kinds,
        table.shown_lengths(private).__getitem__,
        per_group=shape.per_human,
        char_limit=rules.char_limit,
        rank_of=rank.__getitem__,
        riders_per_group=shape.riders_per_human,
        shortest=shortest,
    )

    sections = []
    lines, humans = table.shown_lines(private), seen.let.humans
    for key, chosen in zip(seen.groups, taken.per_group):
        person = controls.get(key) if key is not None and key in humans else None
        note = person.memory_note if person is not None else ""
        sections.append(Section(key, tuple(map(lines, chosen)), note))

    text = render_block(persona, sections, used=taken.used, limit=rules.char_limit, names=names)
    loaded = tuple(map(table.ids.__getitem__, chain.from_iterable(taken.per_group)))
    return Block(text=text, loaded_ids=loaded, used=taken.used, limit=rules.char_limit)
