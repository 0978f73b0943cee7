"""Build ``MemoryRow`` values for tests: ``make_row(**overrides)``.

Defaults describe one ordinary memory of Warren's about Dan (``u:42``), told one-to-one, made a
day before ``NOW``. Any field of ``MemoryRow`` can be overridden by keyword, and the defaults
follow the overrides where it matters:

- ``id`` counts up from 1 across the test run, so rows are always distinguishable.
- ``witnessed`` defaults to the human the row concerns (``{42}`` for ``u:42`` or for a ``self``
  row with counterpart ``u:42``), and to nobody for a ``world`` row.
- A ``self`` row gets counterpart ``u:42`` and kind ``promise`` unless told otherwise.
- ``vector=`` (a 1-d float array) stores that vector as the row's int8 embedding under the name
  ``EMBEDDER`` (or ``embedder=``). The ranking itself reads vectors from the mapping the caller
  passes, not from the row: the row only says which embedder made its vector.
"""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from persona_memory.embedding import quantize
from persona_memory.ids import parse_user_ref
from persona_memory.rows import MemoryRow

NOW = datetime(2026, 8, 18, 12, 0, tzinfo=timezone.utc)
EMBEDDER = "test-embedder-3"

_ids = itertools.count(1)


def make_row(**overrides: Any) -> MemoryRow:
    """A valid ``MemoryRow`` with sensible defaults; keywords override any field."""
    fields: dict[str, Any] = {
        "persona": "warren",
        "subject": "u:42",
        "kind": "fact",
        "text": "Dan owns a flat in Xuhui, bought Jul 2026.",
        "importance": 5,
        "created": NOW - timedelta(days=1),
    }
    vector = overrides.pop("vector", None)
    fields.update(overrides)
    fields.setdefault("id", next(_ids))
    if fields["subject"] == "self":
        fields.setdefault("counterpart", "u:42")
        if "kind" not in overrides:
            fields["kind"] = "promise"
    if "witnessed" not in fields:
        whom = fields.get("counterpart") if fields["subject"] == "self" else fields["subject"]
        about = parse_user_ref(whom)
        fields["witnessed"] = frozenset() if about is None else frozenset({about})
    if vector is not None:
        blob, scale = quantize(np.asarray(vector, dtype=np.float64))
        fields.setdefault("embedding", blob)
        fields.setdefault("embedding_scale", scale)
        fields.setdefault("embedder", EMBEDDER)
    return MemoryRow(**fields)
