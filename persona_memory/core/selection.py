"""Taking (design §3, step 3): which ranked lines fit in the block.

Rules:
- Lines come in groups: one per present human, and the world. Each group arrives ranked.
- Open loops and promises always ride: up to ``riders_per_group`` of them per group are taken
  first, best-ranked first, across groups; any further ones compete with the other lines.
- Then the groups take turns, one line each, best-ranked first, so the budget is shared fairly
  and no human is starved by an earlier one; a group stops at ``per_group`` lines (the lines
  that rode count toward it).
- The memory lines never exceed ``char_limit`` characters (each line plus its newline),
  whatever the store holds: a line that does not fit is passed over and smaller ones of the
  same group may follow (the block hands each group over within its reach, ``core.block``).
"""

from __future__ import annotations

from typing import Callable, Sequence

import attrs

ALWAYS_RIDE = frozenset({"open_loop", "promise"})


@attrs.frozen
class Taken:
    """The chosen item indexes per group (in rank order) and the characters they use."""

    per_group: tuple[tuple[int, ...], ...]
    used: int


def take(
    groups: Sequence[Sequence[int]],
    kinds: Sequence[str],
    line_length: Callable[[int], int],
    *,
    per_group: int,
    char_limit: int,
    rank_of: Callable[[int], float],
    at_least: Callable[[int], int] | None = None,
    riders_per_group: int | None = None,
    shortest: int = 0,
) -> Taken:
    """Choose lines.

    Args:
        groups: item indexes per group, each ranked best first.
        kinds: the kind of each item, by index.
        line_length: the rendered length of an item's line (without its newline).
        per_group: how many lines one group may have.
        char_limit: the budget for all memory lines together.
        rank_of: a key ordering items across groups (lower is better) for the riders.
        at_least: optionally, a cheap lower bound of ``line_length``: an item whose bound
            already does not fit is passed over without asking ``line_length``. It never
            changes what is taken, only how many lines are rendered to find out.
        riders_per_group: how many open loops and promises ride first per group (``None``:
            all of them).
        shortest: no line is shorter than this; once the budget left cannot hold such a line
            the search stops. Like ``at_least`` it changes only how soon the answer is found.

    Returns:
        The chosen indexes per group, in each group's rank order, and the characters used.
    """
    chosen: list[dict[int, int]] = [{} for _ in groups]
    used = 0
    full = char_limit - shortest  # once this much is used, no further line fits

    def fits(item: int) -> int:
        """The cost of ``item``'s line (with its newline) if it fits, else 0."""
        if at_least is not None and used + at_least(item) + 1 > char_limit:
            return 0
        cost = line_length(item) + 1
        return cost if used + cost <= char_limit else 0

    riders = sorted(
        ((g, i) for g, group in enumerate(groups) for i in group if kinds[i] in ALWAYS_RIDE),
        key=lambda gi: rank_of(gi[1]),
    ) if riders_per_group != 0 else []
    if not riders and at_least is None:
        return _take_in_turns(groups, line_length, per_group, char_limit, full)
    rode = [0] * len(groups)
    rider_items: set[int] = set()
    for g, item in riders:
        if used >= full:
            break
        if riders_per_group is not None and rode[g] >= riders_per_group:
            continue
        rode[g] += 1
        rider_items.add(item)
        cost = fits(item)
        if cost:
            chosen[g][item] = groups[g].index(item)
            used += cost

    cursors = [0] * len(groups)
    active = [g for g in range(len(groups)) if groups[g]]
    while active and used < full:
        for g in list(active):
            group, mine, cursor = groups[g], chosen[g], cursors[g]
            while cursor < len(group) and len(mine) < per_group and used < full:
                item = group[cursor]
                cursor += 1
                if item in mine or item in rider_items:
                    continue
                cost = fits(item)
                if cost:
                    mine[item] = cursor - 1
                    used += cost
                    break
            cursors[g] = cursor
            if cursor >= len(group) or len(mine) >= per_group:
                active.remove(g)
    return Taken(
        per_group=tuple(tuple(sorted(mine, key=mine.__getitem__)) for mine in chosen),
        used=used,
    )


def _take_in_turns(
    groups: Sequence[Sequence[int]], line_length: Callable[[int], int], per_group: int, char_limit: int, full: int
) -> Taken:
    """``take`` when nothing rides and there is no lower bound to consult: the groups' turns
    alone, the same choice in fewer steps (a room with a topic takes this way)."""
    chosen: list[dict[int, None]] = [{} for _ in groups]
    cursors = [0] * len(groups)
    active = [g for g in range(len(groups)) if groups[g]]
    used = 0
    while active and used < full:
        still = []
        for g in active:
            group, mine, cursor = groups[g], chosen[g], cursors[g]
            end = len(group)
            while cursor < end and len(mine) < per_group and used < full:
                item = group[cursor]
                cursor += 1
                if item in mine:
                    continue
                cost = line_length(item) + 1
                if used + cost <= char_limit:
                    mine[item] = None
                    used += cost
                    break
            cursors[g] = cursor
            if cursor < end and len(mine) < per_group:
                still.append(g)
        active = still
    return Taken(per_group=tuple(tuple(mine) for mine in chosen), used=used)
