"""Ranking (design §3 step 2) against numbers worked out by hand, and the diversity pass.

The worked example: four rows of Warren's about Dan, measured at NOW, topic vector
t = (0.8, 0.6, 0). Every expected number below was computed on paper from the formula:

    row  age (days, from last_recalled else created)  importance  unit vector
    A    10 (created 10 days ago)                      8           (1, 0, 0)
    B     2 (created 30 days ago, recalled 2 ago)      3           (0.6, 0.8, 0)
    C     0 (created now)                              5           (0, 1, 0)
    D    20 (created 20 days ago)                     10           (0, 0, 1)

    recency    0.98**days:  A 0.8170728069  B 0.9604  C 1  D 0.6676079718
      min-max (lo D, hi C): A 0.4496643193  B 0.8808635688  C 1  D 0
    importance /10:         A 0.8  B 0.3  C 0.5  D 1.0
      min-max (lo B, hi D): A 5/7  B 0  C 2/7  D 1
    relevance cos(v, t):    A 0.8  B 0.96  C 0.6  D 0
      min-max (lo D, hi B): A 5/6  B 1  C 0.625  D 0
    equal weights, summed:  A 1.9972833670  B 1.8808635688  C 1.9107142857  D 1
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from rowfactory import EMBEDDER, NOW, make_row

from persona_memory.core import ranking
from persona_memory.core.ranking import Topic, Weights

T = np.array([0.8, 0.6, 0.0])
TOPIC = Topic(vector=T, embedder=EMBEDDER)
VA, VB, VC, VD = (np.array(v) for v in ([1.0, 0, 0], [0.6, 0.8, 0], [0, 1.0, 0], [0, 0, 1.0]))


def day(n: float):
    return NOW - timedelta(days=n)


A = make_row(text="A", importance=8, created=day(10), vector=VA)
B = make_row(text="B", importance=3, created=day(30), last_recalled=day(2), vector=VB)
C = make_row(text="C", importance=5, created=NOW, vector=VC)
D = make_row(text="D", importance=10, created=day(20), vector=VD)
ROWS = [A, B, C, D]
VECTORS = [VA, VB, VC, VD]


def test_the_raw_terms_match_the_hand_computed_ones():
    assert ranking.recency(ROWS, NOW, 0.98) == pytest.approx(
        [0.8170728069, 0.9604, 1.0, 0.6676079718], abs=1e-9
    )
    assert ranking.relevance(ROWS, VECTORS, TOPIC) == pytest.approx([0.8, 0.96, 0.6, 0.0], abs=1e-12)


def test_the_score_is_the_equal_weight_sum_of_the_min_max_normalised_terms():
    expected = [
        0.4496643193 + 5 / 7 + 5 / 6,
        0.8808635688 + 0 + 1,
        1 + 2 / 7 + 0.625,
        0 + 1 + 0,
    ]
    assert expected == pytest.approx([1.9972833670, 1.8808635688, 1.9107142857, 1.0], abs=1e-9)
    got = ranking.scores(ROWS, VECTORS, now=NOW, topic=TOPIC, weights=Weights())
    assert got == pytest.approx(expected, abs=1e-9)
    assert ranking.rank(ROWS, got, per_kind_first=10) == [0, 2, 1, 3]  # A, C, B, D


def test_custom_weights_scale_each_normalised_term():
    weights = Weights(recency=2.0, importance=0.5, relevance=0.0)
    expected = [
        2 * 0.4496643193 + 0.5 * 5 / 7,
        2 * 0.8808635688 + 0,
        2 * 1 + 0.5 * 2 / 7,
        0 + 0.5 * 1,
    ]
    got = ranking.scores(ROWS, VECTORS, now=NOW, topic=TOPIC, weights=weights)
    assert got == pytest.approx(expected, abs=1e-9)
    assert ranking.rank(ROWS, got, per_kind_first=10) == [2, 1, 0, 3]  # C, B, A, D


def test_the_decay_per_day_is_configurable():
    rows = [make_row(created=day(1)), make_row(created=day(3))]
    assert ranking.recency(rows, NOW, 0.5) == pytest.approx([0.5, 0.125])


def test_last_recalled_takes_precedence_over_created():
    old_but_recalled = make_row(created=day(100), last_recalled=day(1))
    recent_never_recalled = make_row(created=day(5))
    assert ranking.recency([old_but_recalled, recent_never_recalled], NOW, 0.98) == pytest.approx(
        [0.98, 0.9039207968]
    )
    got = ranking.scores(
        [recent_never_recalled, old_but_recalled], [None, None], now=NOW, topic=None, weights=Weights()
    )
    assert got == pytest.approx([0.0, 1.0])


def test_a_time_in_the_future_counts_as_now():
    assert ranking.recency([make_row(created=NOW + timedelta(days=2))], NOW, 0.98) == pytest.approx([1.0])


def test_a_row_without_a_vector_or_with_another_embedders_vector_has_relevance_zero():
    same = make_row(vector=VB)
    missing = make_row()
    foreign = make_row(vector=T, embedder="some-other-model-3")
    got = ranking.relevance([same, missing, foreign], [VB, None, T], TOPIC)
    assert got == pytest.approx([0.96, 0.0, 0.0])


def test_without_a_topic_relevance_is_zero_and_only_recency_and_importance_count():
    assert ranking.relevance(ROWS, VECTORS, None) == pytest.approx([0, 0, 0, 0])
    got = ranking.scores(ROWS, VECTORS, now=NOW, topic=None, weights=Weights())
    assert got == pytest.approx(
        [0.4496643193 + 5 / 7, 0.8808635688 + 0, 1 + 2 / 7, 0 + 1], abs=1e-9
    )


def test_a_term_equal_for_every_candidate_normalises_to_zero():
    assert ranking.normalise(np.array([0.3, 0.3, 0.3])) == pytest.approx([0, 0, 0])
    assert ranking.normalise(np.array([2.0, 4.0, 3.0])) == pytest.approx([0, 1, 0.5])
    assert ranking.normalise(np.array([])).size == 0
    same_importance = [make_row(importance=6, created=day(d)) for d in (0, 1, 2)]
    got = ranking.scores(same_importance, [None] * 3, now=NOW, topic=None, weights=Weights())
    # recency 1, 0.98, 0.9604 → min-max 1, (0.98-0.9604)/(1-0.9604) = 0.4949494949, 0
    assert got == pytest.approx([1.0, 0.4949494949, 0.0], abs=1e-9)


def test_a_single_candidate_or_none_scores_without_error():
    assert ranking.scores([A], [VA], now=NOW, topic=TOPIC, weights=Weights()) == pytest.approx([0.0])
    assert ranking.scores([], [], now=NOW, topic=TOPIC, weights=Weights()).size == 0
    assert ranking.rank([], np.array([]), 2) == []


def test_ties_keep_the_given_order():
    rows = [make_row(created=day(1)) for _ in range(4)]
    assert ranking.rank(rows, np.array([0.5, 0.7, 0.5, 0.7]), 10) == [1, 3, 0, 2]


def kinds_ranked(kinds: list[str], per_kind_first: int) -> list[str]:
    """Rank rows whose scores fall in the order given; return the text of each, in the result."""
    rows = [make_row(kind=k, text=f"{k} #{i}") for i, k in enumerate(kinds)]
    scores = np.linspace(1.0, 0.0, len(rows))
    return [rows[i].text for i in ranking.rank(rows, scores, per_kind_first)]


def test_diversity_lets_at_most_two_of_a_kind_ahead_of_the_rest():
    kinds = ["fact", "fact", "fact", "fact", "event", "preference"]
    assert kinds_ranked(kinds, 2) == [
        "fact #0",
        "fact #1",
        "event #4",
        "preference #5",
        "fact #2",
        "fact #3",
    ]


def test_diversity_keeps_the_rest_in_rank_order_across_kinds():
    kinds = ["fact", "fact", "fact", "event", "event", "event", "fact", "preference"]
    assert kinds_ranked(kinds, 2) == [
        "fact #0",
        "fact #1",
        "event #3",
        "event #4",
        "preference #7",
        "fact #2",
        "event #5",
        "fact #6",
    ]


def test_per_kind_first_is_the_number_of_a_kind_allowed_ahead():
    kinds = ["fact", "fact", "fact", "event"]
    assert kinds_ranked(kinds, 1) == ["fact #0", "event #3", "fact #1", "fact #2"]
    assert kinds_ranked(kinds, 3) == ["fact #0", "fact #1", "fact #2", "event #3"]
