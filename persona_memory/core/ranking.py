"""Ranking (design §3, step 2): recency + importance + relevance, then diversity.

Rules:
- recency    = decay ** days since ``last_recalled`` (else ``created``); decay 0.98 per day.
- importance = importance / 10.
- relevance  = the hybrid of two signals of the room topic (0 with no topic), fused in one
  way (``hybrid``) for the block and the recall note alike:
  ``(1 - lexical_share) · max(cosine, 0) + lexical_share · lexical``, where ``cosine`` is
  between the row's vector and the topic's (0 with no vector, or a vector from another
  embedder: two models' vectors are never compared) and ``lexical`` is the row's BM25 score
  (``lexical.LexicalIndex``) over the candidates, divided by the most that query could score
  (each of its terms found by the candidates, at its idf times ``k1 + 1``). Both lie in
  [0, 1], so the hybrid is an absolute score a threshold can be set on (``recall.min_score``).
- Each term is min-max normalised over the candidates (a term equal for all candidates
  normalises to 0: it cannot tell them apart), then weighted and summed. Equal weights are
  Generative Agents' α = 1; the defaults were chosen on LoCoMo's dev split
  (``defaults.toml`` says how), and a room with a topic has its own weights.
- Ties keep the candidates' given order (a stable sort).
- Diversity (Kindroid's rule): walking down the ranking, at most ``per_kind_first`` items of a
  kind come first; the rest follow in rank order.
"""

from __future__ import annotations

from datetime import datetime
from typing import Sequence

import attrs
import numpy as np

from ..rows import MemoryRow
from . import lexical


EQUAL_WITHIN = 1e-6
"""Terms closer than this are equal: far below what an int8-quantised vector can tell apart."""


@attrs.frozen
class Weights:
    recency: float = 1.0
    importance: float = 1.0
    relevance: float = 1.0
    decay_per_day: float = 0.98
    lexical_share: float = 0.6


@attrs.frozen
class Topic:
    """A query to rank against: the room topic (or a human's message for the recall note).

    ``vector`` is its unit vector, ``embedder`` the name of the embedder that made it, and
    ``terms`` its BM25 terms (``lexical.terms``).
    """

    vector: np.ndarray = attrs.field(eq=False)
    embedder: str
    terms: tuple[str, ...] = ()

    @classmethod
    def of(cls, text: str, vector: np.ndarray, embedder: str) -> Topic:
        return cls(vector=vector, embedder=embedder, terms=tuple(lexical.terms(text)))


def recency(rows: Sequence[MemoryRow], now: datetime, decay_per_day: float) -> np.ndarray:
    """``decay ** days`` since each row was last recalled (or created); future times count 0."""
    stamps = np.fromiter(
        ((r.last_recalled or r.created).timestamp() for r in rows), dtype=np.float64, count=len(rows)
    )
    return decay(stamps, now, decay_per_day)


def decay(stamps: np.ndarray, now: datetime, decay_per_day: float) -> np.ndarray:
    """``decay ** days`` from each POSIX time in ``stamps`` to ``now``; future times count 0."""
    days = (now.timestamp() - stamps) / 86400.0
    return decay_per_day ** np.maximum(days, 0.0)


def relevance(
    rows: Sequence[MemoryRow], vectors: Sequence[np.ndarray | None], topic: Topic | None
) -> np.ndarray:
    """Cosine of each row's unit vector to the topic; 0 where it cannot be compared."""
    out = np.zeros(len(rows), dtype=np.float64)
    if topic is None:
        return out
    same = [
        i for i, (r, v) in enumerate(zip(rows, vectors)) if v is not None and r.embedder == topic.embedder
    ]
    if same:
        matrix = np.stack([vectors[i] for i in same])
        out[same] = matrix @ topic.vector
    return out


def hybrid(cosine: np.ndarray, lexical_scores: np.ndarray, lexical_share: float) -> np.ndarray:
    """The fused relevance: ``(1 - share) · max(cosine, 0) + share · lexical`` (both in [0, 1])."""
    return (1.0 - lexical_share) * np.maximum(cosine, 0.0) + lexical_share * lexical_scores


def normalise(values: np.ndarray) -> np.ndarray:
    """Min-max to [0, 1]; values that differ by no more than ``EQUAL_WITHIN`` become 0.

    A float32 cosine of two texts that share no word is 0 give or take ~1e-8, depending on the
    order the products were summed in; without the tolerance that noise, stretched to [0, 1],
    would hand one row a full relevance term.
    """
    if values.size == 0:
        return values
    lo, hi = float(values.min()), float(values.max())
    if hi - lo <= EQUAL_WITHIN:
        return np.zeros_like(values)
    return (values - lo) / (hi - lo)


def scores(
    rows: Sequence[MemoryRow],
    vectors: Sequence[np.ndarray | None],
    *,
    now: datetime,
    topic: Topic | None,
    weights: Weights,
) -> np.ndarray:
    """The score of each row: the weighted sum of its three normalised terms, the rows
    themselves being the candidates."""
    importance = np.fromiter((r.importance / 10.0 for r in rows), dtype=np.float64, count=len(rows))
    fused = np.zeros(len(rows))
    if topic is not None:
        words = lexical.LexicalIndex.from_texts(r.text for r in rows)
        every = np.arange(len(rows), dtype=np.int64)
        fused = hybrid(relevance(rows, vectors, topic), words.relevance(topic.terms, every), weights.lexical_share)
    return combine(recency(rows, now, weights.decay_per_day), importance, fused, weights)


def combine(
    recency_terms: np.ndarray, importance_terms: np.ndarray, relevance_terms: np.ndarray, weights: Weights
) -> np.ndarray:
    """The weighted sum of the three terms, each min-max normalised over the candidates."""
    return weighted(normalise(recency_terms), normalise(importance_terms), normalise(relevance_terms), weights)


def weighted(
    recency_normal: np.ndarray, importance_normal: np.ndarray, relevance_normal: np.ndarray, weights: Weights
) -> np.ndarray:
    """``combine`` of terms already normalised."""
    return (
        weights.recency * recency_normal
        + weights.importance * importance_normal
        + weights.relevance * relevance_normal
    )


def rank(rows: Sequence[MemoryRow], row_scores: np.ndarray, per_kind_first: int) -> list[int]:
    """Indexes of ``rows`` best first, with the diversity pass applied."""
    order = np.argsort(-row_scores, kind="stable").tolist()
    return diversify(order, [r.kind for r in rows], per_kind_first)


def diversify(order: Sequence[int], kinds: Sequence[str], per_kind_first: int) -> list[int]:
    """``order`` (best first) with at most ``per_kind_first`` items of a kind before the rest.

    ``kinds[i]`` is the kind of item ``i``.
    """
    first: list[int] = []
    rest: list[int] = []
    seen: dict[str, int] = {}
    for i in order:
        kind = kinds[i]
        if seen.get(kind, 0) < per_kind_first:
            seen[kind] = seen.get(kind, 0) + 1
            first.append(i)
        else:
            rest.append(i)
    return first + rest
