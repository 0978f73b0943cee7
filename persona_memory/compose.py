"""The composition root: the one place that turns settings into adapters."""

from __future__ import annotations

from .core.block import BlockRules
from .core.ranking import Weights
from .embedding import Embedder, HashingEmbedder, WordLlamaEmbedder
from .settings import Settings


def make_embedder(settings: Settings) -> Embedder:
    """The embedder ``[embedder]`` names: the bundled WordLlama, or feature hashing."""
    match settings.embedder.kind:
        case "wordllama":
            return WordLlamaEmbedder.load(dim=settings.embedder.dim)
        case "hashing":
            return HashingEmbedder(dim=settings.embedder.dim)
        case other:
            raise AssertionError(f"settings let through embedder kind {other!r}")


def block_rules(settings: Settings) -> BlockRules:
    """The read path's numbers from ``[block]``, ``[ranking]`` and ``[scope]``."""
    r = settings.ranking
    return BlockRules(
        char_limit=settings.block.char_limit,
        per_human=settings.block.per_human,
        per_kind_first=settings.block.per_kind_first,
        weights=Weights(
            recency=r.recency_weight,
            importance=r.importance_weight,
            relevance=r.relevance_weight,
            decay_per_day=r.recency_decay_per_day,
        ),
        v1_proven=settings.scope.v1_proven,
    )
