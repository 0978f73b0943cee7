"""The slice's check and the embedding of what passed it, as one job for a worker process.

Between the mind's answer and routing, the write path's work is pure: check the candidates
(``validation.check_candidates``), then embed the texts of those kept. When the offline
reader's worker processes take the check (``WritePipeline(offload=…)``) and the embedder has
a ``portable`` twin (the bundled WordLlama's), the embedding goes with it: one hop to the
worker instead of a hop there and another to a thread, and the embedding's CPU off the event
loop's process.

Rules:
- The answer is the one the loop's own steps give: the same check, and the rows
  ``embedder.embed`` gives for the same texts (the twin runs ``embed_sync``).
- No candidate kept, nothing embedded: ``matrix`` is ``None``, as the loop embeds nothing then.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .validation import Candidate, Dropped, SliceFacts, check_candidates

Embedding = Callable[[Sequence[str]], np.ndarray]


def checked_and_embedded(
    answer: Any, facts: SliceFacts, embedding: Embedding | None
) -> tuple[list[Candidate], list[Dropped], np.ndarray | None]:
    """``check_candidates(answer, facts)`` and, with ``embedding``, the kept candidates'
    texts embedded by it (``None`` without it, or with nothing kept)."""
    kept, dropped = check_candidates(answer, facts)
    matrix = embedding([c.text for c in kept]) if embedding is not None and kept else None
    return kept, dropped, matrix
