"""Lexical relevance (BM25) and the hybrid it forms with the dense cosine, checked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from persona_memory.core import lexical, ranking
from persona_memory.core.lexical import LexicalIndex, stem, terms

EVERY = np.arange(3, dtype=np.int64)


def test_terms_drop_ids_function_words_and_single_letters_and_meet_in_one_stem() -> None:
    assert terms("u:42 was hiking with her dogs in a park.") == ["hik", "dog", "park"]
    assert terms("Hiked, hikes, HIKING and hike") == ["hik", "hik", "hik", "hik"]
    assert [stem(w) for w in ("parties", "party", "classes", "running", "falling", "speeds", "2024")] == [
        "parti", "parti", "class", "run", "fall", "speed", "2024",
    ]


def test_bm25_by_hand() -> None:
    index = LexicalIndex.from_texts(["cat sat", "cat cat dog", "bird"])
    # N = 3, df(cat) = 2, average length 2: idf = ln(1 + 1.5 / 2.5) = ln 1.6.
    idf = math.log(1.6)
    first = idf * 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 2 / 2))
    second = idf * 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 3 / 2))
    assert index.scores(["cat"], EVERY) == pytest.approx([first, second, 0.0])
    # Relevance divides by the query's ceiling: each found term's idf times k1 + 1.
    assert index.relevance(["cat"], EVERY) == pytest.approx([first / (idf * 2.2), second / (idf * 2.2), 0.0])
    # Repeats count once; a term nobody holds adds nothing, not even to the ceiling.
    assert index.relevance(["cat", "cat", "zebra"], EVERY) == pytest.approx(index.relevance(["cat"], EVERY))
    assert index.scores([], EVERY).tolist() == [0.0, 0.0, 0.0]


def test_only_the_candidates_count_toward_the_statistics() -> None:
    index = LexicalIndex.from_texts(["cat sat", "cat cat dog", "bird"])
    among = np.array([0, 2], dtype=np.int64)
    # N = 2, df(cat) = 1, average length (2 + 1) / 2 = 1.5: idf = ln(1 + 1.5 / 1.5) = ln 2.
    expected = math.log(2) * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 2 / 1.5))
    assert index.scores(["cat"], among) == pytest.approx([expected, 0.0, 0.0])
    # A row the room may not show changes nothing about how the others score.
    alone = LexicalIndex.from_texts(["cat sat", "bird"])
    assert index.scores(["cat"], among)[[0, 2]] == pytest.approx(alone.scores(["cat"], np.arange(2)))


def test_the_hybrid_is_a_convex_mix_of_the_clipped_cosine_and_the_lexical_relevance() -> None:
    got = ranking.hybrid(np.array([0.8, -0.2, 0.0]), np.array([0.5, 1.0, 0.0]), 0.25)
    assert got == pytest.approx([0.75 * 0.8 + 0.25 * 0.5, 0.25 * 1.0, 0.0])
    assert ranking.hybrid(np.array([0.8]), np.array([0.5]), 0.0) == pytest.approx([0.8])
    assert ranking.hybrid(np.array([0.8]), np.array([0.5]), 1.0) == pytest.approx([0.5])


def test_a_topic_carries_its_terms() -> None:
    topic = ranking.Topic.of("Any word on the interviews?", np.zeros(3), "e")
    assert topic.terms == tuple(lexical.terms("Any word on the interviews?")) == ("word", "interview")
