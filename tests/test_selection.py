"""Taking lines (design §3 step 3) with ``selection.take``, on plain indexes.

Items are numbered; each test says each item's kind and its line length. Groups arrive ranked
best first; ``rank_of`` orders items across groups (here: by index, lower is better).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from persona_memory.core.selection import ALWAYS_RIDE, take


def run(groups, kinds, lengths, *, per_group=10, char_limit=1200, rank_of=None, riders=None):
    return take(
        groups,
        kinds,
        lengths.__getitem__,
        per_group=per_group,
        char_limit=char_limit,
        rank_of=rank_of or (lambda i: i),
        riders_per_group=riders,
    )


def test_lines_are_taken_best_first_and_kept_in_rank_order():
    taken = run([[2, 0, 1]], ["fact"] * 3, [10, 10, 10])
    assert taken.per_group == ((2, 0, 1),)
    assert taken.used == 33


def test_per_group_limits_the_lines_of_each_group():
    groups = [[0, 1, 2, 3], [4, 5, 6]]
    taken = run(groups, ["fact"] * 7, [5] * 7, per_group=2)
    assert taken.per_group == ((0, 1), (4, 5))


def test_open_loops_and_promises_ride_even_ranked_last_with_one_line_per_group():
    kinds = ["fact", "fact", "preference", "open_loop", "promise"]
    taken = run([[0, 1, 2, 3, 4]], kinds, [10] * 5, per_group=1)
    assert taken.per_group == ((3, 4),)
    assert taken.used == 22


def test_only_the_best_riders_per_group_ride_first_the_rest_compete():
    kinds = ["open_loop"] * 5 + ["fact"]
    taken = run([[0, 1, 2, 3, 4, 5]], kinds, [10] * 6, per_group=1, riders=3)
    assert taken.per_group == ((0, 1, 2),)  # three rode; the cap of one line was already met
    taken = run([[5, 0, 1, 2, 3, 4]], kinds, [10] * 6, per_group=5, riders=2, rank_of=lambda i: (i == 5, i))
    assert taken.per_group == ((5, 0, 1, 2, 3),)  # 0 and 1 rode; 5, 2 and 3 won places on rank


def test_riders_count_toward_per_group():
    kinds = ["fact", "open_loop", "fact", "fact"]
    taken = run([[0, 1, 2, 3]], kinds, [10] * 4, per_group=2)
    assert taken.per_group == ((0, 1),)


def test_riders_go_first_across_groups_in_overall_rank():
    kinds = ["fact", "fact", "promise", "open_loop"]
    lengths = [30, 30, 30, 30]
    taken = run([[0, 2], [1, 3]], kinds, lengths, char_limit=62, rank_of=lambda i: -i)
    assert taken.per_group == ((2,), (3,))


def test_the_char_limit_is_never_exceeded_and_a_smaller_line_may_follow_a_big_one():
    kinds = ["fact"] * 4
    lengths = [50, 200, 30, 10]
    taken = run([[0, 1, 2, 3]], kinds, lengths, char_limit=90)
    assert taken.per_group == ((0, 2),)
    assert taken.used == 51 + 31


def test_riders_are_capped_too():
    taken = run([[0, 1]], ["promise", "open_loop"], [100, 100], char_limit=150)
    assert taken.per_group == ((0,),)
    assert taken.used == 101


def test_groups_take_turns_so_an_earlier_group_cannot_starve_a_later_one():
    groups = [[0, 1, 2, 3], [4, 5], [6]]
    taken = run(groups, ["fact"] * 7, [40] * 7, char_limit=41 * 4)
    assert taken.per_group == ((0, 1), (4,), (6,))


def test_nothing_fits_nothing_is_taken():
    taken = run([[0], [1]], ["fact", "promise"], [500, 500], char_limit=100)
    assert taken.per_group == ((), ())
    assert taken.used == 0


KIND = st.sampled_from(["fact", "preference", "event", "promise", "open_loop", "relationship"])


@st.composite
def selections(draw):
    n = draw(st.integers(0, 40))
    kinds = draw(st.lists(KIND, min_size=n, max_size=n))
    lengths = draw(st.lists(st.integers(1, 250), min_size=n, max_size=n))
    n_groups = draw(st.integers(1, 5))
    owner = draw(st.lists(st.integers(0, n_groups - 1), min_size=n, max_size=n))
    groups = [[i for i in draw(st.permutations(range(n))) if owner[i] == g] for g in range(n_groups)]
    return groups, kinds, lengths, draw(st.integers(1, 12)), draw(st.integers(0, 1500))


@given(selections())
def test_any_selection_respects_the_cap_the_groups_and_the_per_group_limit(case):
    groups, kinds, lengths, per_group, char_limit = case
    taken = run(groups, kinds, lengths, per_group=per_group, char_limit=char_limit)
    assert taken.used == sum(lengths[i] + 1 for chosen in taken.per_group for i in chosen)
    assert taken.used <= char_limit
    for group, chosen in zip(groups, taken.per_group):
        assert list(chosen) == [i for i in group if i in chosen]
        riders_taken = [i for i in chosen if kinds[i] in ALWAYS_RIDE]
        assert len(chosen) <= max(per_group, len(riders_taken))
    all_riders = [i for g in groups for i in g if kinds[i] in ALWAYS_RIDE]
    if sum(lengths[i] + 1 for i in all_riders) <= char_limit:
        assert {i for c in taken.per_group for i in c} >= set(all_riders)


@given(selections(), st.data())
def test_a_lower_bound_on_line_length_never_changes_what_is_taken(case, data):
    groups, kinds, lengths, per_group, char_limit = case
    slack = data.draw(st.lists(st.integers(0, 50), min_size=len(lengths), max_size=len(lengths)))
    asked: list[int] = []

    def line_length(i: int) -> int:
        asked.append(i)
        return lengths[i]

    plain = run(groups, kinds, lengths, per_group=per_group, char_limit=char_limit)
    bounded = take(
        groups,
        kinds,
        line_length,
        per_group=per_group,
        char_limit=char_limit,
        rank_of=lambda i: i,
        at_least=lambda i: max(0, lengths[i] - slack[i]),
    )
    assert bounded == plain
    assert all(lengths[i] - slack[i] < char_limit for i in asked)


def test_a_lower_bound_spares_asking_for_lines_that_cannot_fit():
    asked: list[int] = []
    lengths = [100, 500, 500, 20]

    def line_length(i: int) -> int:
        asked.append(i)
        return lengths[i]

    taken = take(
        [[0, 1, 2, 3]],
        ["fact"] * 4,
        line_length,
        per_group=10,
        char_limit=150,
        rank_of=lambda i: i,
        at_least=lengths.__getitem__,
    )
    assert taken.per_group == ((0, 3),)
    assert sorted(asked) == [0, 3]


@given(selections(), st.integers(0, 60))
def test_with_nothing_riding_the_groups_turns_take_what_the_full_walk_takes(case, shortest):
    """No riders and no lower bound (a room with a topic) take a shorter way; it chooses the
    same lines as the walk that checks riders and bounds (forced here by a bound of 0)."""
    groups, kinds, lengths, per_group, char_limit = case
    shortest = min([shortest, *lengths]) if lengths else 0  # no line is shorter than this
    common = dict(per_group=per_group, char_limit=char_limit, rank_of=lambda i: i, riders_per_group=0, shortest=shortest)
    short_way = take(groups, kinds, lengths.__getitem__, **common)
    full_walk = take(groups, kinds, lengths.__getitem__, at_least=lambda i: 0, **common)
    assert short_way == full_walk
