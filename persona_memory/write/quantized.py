"""A slice's candidate vectors quantised in one pass: ``embedding.quantize`` over a matrix.

Rules:
- Row for row the same bytes and scale as ``embedding.quantize`` gives one vector (the same
  float64 arithmetic, done for the whole matrix at once): ``scale = max|v| / 127``,
  ``q = round(v / scale)`` clipped to ``[-127, 127]``; a zero row gives zero bytes and scale 0.
- A matrix with NaN or infinity is refused as ``quantize`` refuses such a vector.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInput

_QMAX = 127


def quantize_rows(matrix: ArrayLike) -> list[tuple[bytes, float]]:
    """``[embedding.quantize(row) for row in matrix]``, in one numpy pass."""
    m = np.asarray(matrix, dtype=np.float64)
    if m.ndim != 2:
        raise InvalidInput(f"quantize_rows() takes a 2-d matrix, got shape {m.shape}")
    if not np.all(np.isfinite(m)):
        raise InvalidInput("quantize() got a vector with NaN or infinity")
    if m.shape[1] == 0:
        return [(b"", 0.0) for _ in range(m.shape[0])]
    peaks = np.max(np.abs(m), axis=1)
    scales = peaks / _QMAX
    safe = np.where(peaks == 0.0, 1.0, scales)
    q = np.clip(np.rint(m / safe[:, None]), -_QMAX, _QMAX).astype(np.int8)
    return [
        (bytes(m.shape[1]), 0.0) if peak == 0.0 else (row.tobytes(), float(scale))
        for row, peak, scale in zip(q, peaks.tolist(), scales.tolist())
    ]
