"""An actor's in-memory copy of its persona's rows, kept fresh by the store's version number.

Rules:
- The copy holds the persona's open rows, the closed rows they replaced (for arcs), and each
  row's unit vector, decoded once.
- Every change to a persona's rows in the database bumps ``persona_versions`` (touches
  excepted); a copy whose version differs is reloaded before use. So rows written by anyone —
  the write path, the demo, a human's delete — show at the next build.
- Touches are the actor's own: it applies them to the copy after they commit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Iterable, Mapping

import attrs
import numpy as np

from ..embedding.vectors import dequantize, unit_rows
from ..rows import MemoryRow


class RowIndex:
    """One persona's rows as the read path needs them."""

    def __init__(self) -> None:
        self.version: int | None = None
        self.open_rows: dict[int, MemoryRow] = {}
        self.replaced: dict[int, MemoryRow] = {}
        self.vectors: dict[int, np.ndarray] = {}

    def load(self, version: int, rows: Iterable[MemoryRow]) -> None:
        """Replace the copy with ``rows`` read at ``version``."""
        self.version = version
        self.open_rows = {}
        self.replaced = {}
        self.vectors = {}
        for row in rows:
            assert row.id is not None
            if row.valid_to is None:
                self.open_rows[row.id] = row
                if row.embedding is not None and row.embedding_scale is not None:
                    vector = dequantize(row.embedding, row.embedding_scale)
                    self.vectors[row.id] = unit_rows(vector[None, :])[0]
            elif row.closed_by is not None:
                self.replaced[row.closed_by] = row

    def apply_touches(self, stamps: Mapping[int, tuple[datetime, int]]) -> None:
        """Reflect committed touches: ``{row id: (last_recalled, times loaded)}``."""
        for row_id, (when, count) in stamps.items():
            row = self.open_rows.get(row_id)
            if row is not None and (row.last_recalled is None or row.last_recalled < when):
                self.open_rows[row_id] = attrs.evolve(
                    row, last_recalled=when, recall_count=row.recall_count + count
                )
