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

from ..core.table import RowTable
from ..embedding.vectors import unit_rows
from ..rows import MemoryRow


def decode_unit_rows(rows: list[MemoryRow], dim: int) -> np.ndarray:
    """The unit vectors of ``rows`` (each with a ``dim``-byte embedding), decoded in one batch.

    Row ``i`` equals ``unit_rows(dequantize(rows[i].embedding, rows[i].embedding_scale)[None])[0]``.
    """
    q = np.frombuffer(b"".join(r.embedding for r in rows), dtype=np.int8).reshape(len(rows), dim)  # type: ignore[misc]
    scales = np.array([r.embedding_scale for r in rows], dtype=np.float32)
    return unit_rows(q.astype(np.float32) * scales[:, None])


class RowIndex:
    """One persona's rows as the read path needs them."""

    def __init__(self) -> None:
        self.version: int | None = None
        self.open_rows: dict[int, MemoryRow] = {}
        self.replaced: dict[int, MemoryRow] = {}
        self.vectors: dict[int, np.ndarray] = {}
        self.table = RowTable.from_rows((), {}, {})

    def load(self, version: int, rows: Iterable[MemoryRow]) -> None:
        """Replace the copy with ``rows`` read at ``version``."""
        self.version = version
        self.open_rows = {}
        self.replaced = {}
        encoded: dict[int, list[MemoryRow]] = {}
        for row in rows:
            assert row.id is not None
            if row.valid_to is None:
                self.open_rows[row.id] = row
                if row.embedding is not None and row.embedding_scale is not None:
                    encoded.setdefault(len(row.embedding), []).append(row)
            elif row.closed_by is not None:
                self.replaced[row.closed_by] = row
        self.vectors = {}
        for dim, batch in encoded.items():
            self.vectors.update(zip((r.id for r in batch), decode_unit_rows(batch, dim)))
        self.table = RowTable.from_rows(self.open_rows.values(), self.vectors, self.replaced)

    def apply_touches(self, stamps: Mapping[int, tuple[datetime, int]]) -> None:
        """Reflect committed touches: ``{row id: (last_recalled, times loaded)}``."""
        changed = {}
        for row_id, (when, count) in stamps.items():
            row = self.open_rows.get(row_id)
            if row is not None and (row.last_recalled is None or row.last_recalled < when):
                self.open_rows[row_id] = attrs.evolve(
                    row, last_recalled=when, recall_count=row.recall_count + count
                )
                changed[row_id] = when
        if changed:
            self.table = self.table.touched(changed)
