"""Lexical relevance (BM25) and the hybrid it forms with the dense cosine, checked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from persona_memory.core import lexical, ranking
from persona_memory.core.lexical import LexicalIndex, stem, terms

EVERY = np.arange(3, dtype=np.int64)


def test_terms_drop_ids_function_words_and_single_letters_and_meet_in_one_stem() -> None:
    assert terms("u:42 was hiking with her dogs in a park.") == ["hik", "dog", "park"]
    assert terms("Hiked, hikes, HIKING and hike") == ["hik", "hik", "hik", "hik"]
    assert [stem(w) for w in ("parties", "party", "classes", "running", "falling", "speeds", "2024")] == [
        "parti", "parti", "class", "run", "fall", "speed", "2024",
    ]


def test_an_irregular_verb_meets_its_base_form() -> None:
    assert terms("She ran the relay and bought new spikes") == terms("she runs the relay and buys new spikes")


def test_a_british_spelling_and_a_chat_shortening_meet_the_word() -> None:
    assert terms("my fave colour") == terms("my favorite color") == terms("my favourite colours")
    assert terms("the theatre near the centre") == terms("the theater near the center")
    assert terms("we went, she has gone, they go") == ["go", "go", "go"]
    assert terms("the children wrote letters") == terms("a child writes a letter")


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


def test_what_a_term_adds_is_remembered_per_candidates_and_gives_the_same_bits() -> None:
    texts = ["the ferry to the island", "ferry ferry tickets", "a quiet island walk", "tickets for the ferry", "rain"]
    index = lexical.LexicalIndex.from_texts(texts)
    among = np.array([0, 1, 3, 4])
    counted = index.over(among)
    query = lexical.terms("ferry tickets to the island, island")
    first = index.candidate_relevance(query, counted)
    assert set(counted.weighed) == {"ferri", "ticket", "island"}
    again = index.candidate_relevance(query[::-1], counted)  # the same terms, now remembered
    fresh = index.relevance(query, among)  # a new count over the same candidates
    assert np.array_equal(first, fresh[among])
    assert again == pytest.approx(first, rel=1e-15)
    # By hand: BM25 over the four candidates; "island" is in one of them, text 2 is not counted.
    lengths = np.array([2.0, 3.0, 2.0, 1.0])  # terms of texts 0, 1, 3, 4 (stop words out)
    average = lengths.mean()
    norm = 1.2 * (1 - 0.75 + 0.75 * lengths / average)
    idf = {t: np.log(1 + (4 - df + 0.5) / (df + 0.5)) for t, df in {"ferri": 3, "ticket": 2, "island": 1}.items()}
    counts = {"ferri": [1, 2, 1, 0], "ticket": [0, 1, 1, 0], "island": [1, 0, 0, 0]}
    expected = sum(idf[t] * np.array(c) * 2.2 / (np.array(c) + norm) for t, c in counts.items())
    assert first == pytest.approx(expected / sum(v * 2.2 for v in idf.values()), rel=1e-12)


def same_index(a: LexicalIndex, b: LexicalIndex) -> bool:
    return (
        a.lengths.dtype == b.lengths.dtype
        and a.lengths.tolist() == b.lengths.tolist()
        and set(a.postings) == set(b.postings)
        and all(
            [x.tolist() for x in a.postings[t]] == [y.tolist() for y in b.postings[t]]
            and [x.dtype for x in a.postings[t]] == [y.dtype for y in b.postings[t]]
            for t in b.postings
        )
    )


PIECES = (
    "u:", "u:42", "U:7", "menu:7", "12:30", ":", "a", "I", "Running", "ran", "the", "parties", "İstanbul",
    "\u212a", "café", "ß", "Σ", "\u0664", "u:\u06642", "u:4\u066422", "x9", "2024", " ", "\n", "\t", "—", "\x01", "é",
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.tuples(st.sampled_from(PIECES), st.booleans()), max_size=14), max_size=8))
def test_the_index_built_at_once_equals_each_text_cut_by_terms(texts) -> None:
    """``from_texts`` cuts every text at once, through bytes; it must count exactly the terms
    ``terms`` finds in each text — ids (``u:42``, ``menu:7``), times, letters other than
    ASCII that lower-case to ASCII (the Kelvin sign) or not, digits of other scripts after an
    id, and the byte the joined texts are split on inside a text."""
    joined = ["".join(piece + (" " if space else "") for piece, space in text) for text in texts]
    assert same_index(LexicalIndex.from_texts(joined), LexicalIndex.from_texts_one_by_one(joined))


def test_an_extended_index_counts_as_one_built_from_all_texts() -> None:
    first, more = ["the ferry to the island", "ferry tickets"], ["island walk at 12:30", "a ferry"]
    grown = LexicalIndex.from_texts(first).extended(LexicalIndex.from_texts(more))
    assert same_index(grown, LexicalIndex.from_texts_one_by_one(first + more))
    assert grown.postings["ferri"][0].tolist() == [0, 1, 3] and "walk" in grown.postings
