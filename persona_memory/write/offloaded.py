"""The slice's check and the embedding of what passed it, as one job for a worker process.

Between the mind's answer and routing, the write path's work is pure: check the candidates
(``validation.check_candidates``), then embed the texts of those kept. When the offline
reader's worker processes take the check (``WritePipeline(offload=…)``) and the embedder has
a ``portable`` twin (the bundled WordLlama's), the embedding goes with it: one hop to the
worker instead of a hop there and another to a thread, and the embedding's CPU off the event
loop's process.

Rules:
- The answer is the one the loop's own steps give: the same check, the rows
  ``embedder.embed`` gives for the same texts (the twin runs ``embed_sync``), and those rows
  quantised for storage as the loop would (``quantize_rows``).
- No candidate kept, nothing embedded: ``Embedded`` is ``None``, as the loop embeds nothing then.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from .quantized import quantize_rows
from .validation import Candidate, Dropped, SliceFacts, check_candidates

Embedding = Callable[[Sequence[str]], np.ndarray]


@attrs.frozen(eq=False)
class Embedded:
    """The kept candidates' unit rows, in order, and each row quantised for storage."""

    matrix: np.ndarray
    quantized: list[tuple[bytes, float]]


def checked_and_embedded(
    answer: Any, facts: SliceFacts, embedding: Embedding | None
) -> tuple[list[Candidate], list[Dropped], Embedded | None]:
    """``check_candidates(answer, facts)`` and, with ``embedding``, the kept candidates'
    texts embedded by it (``None`` without it, or with nothing kept)."""
    kept, dropped = check_candidates(answer, facts)
    if embedding is None or not kept:
        return kept, dropped, None
    matrix = embedding([c.text for c in kept])
    return kept, dropped, Embedded(matrix, quantize_rows(matrix))
