"""Vector arithmetic for stored embeddings: int8 quantisation, normalisation, cosine.

Pure numpy, no I/O. Vectors are stored as int8 bytes plus one float scale per vector
(a quarter of the float32 size); ``dequantize(*quantize(v))`` is within half a
quantisation step of ``v`` in every component, so cosines barely move (> 0.99).

Search works on unit rows: normalise once with ``unit_rows``, then ``cosine_to`` is a
single matrix-vector product.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from persona_memory.errors import InvalidInput

_QMAX = 127


def quantize(vec: ArrayLike) -> tuple[bytes, float]:
    """Store a 1-d float vector as int8 bytes plus the scale to undo it.

    ``scale = max|v| / 127`` and ``q = round(v / scale)`` clipped to ``[-127, 127]``.

    Args:
        vec: A 1-d vector of finite floats.

    Returns:
        ``(blob, scale)``: ``len(vec)`` bytes and a float. A zero vector gives zero
        bytes and scale ``0.0``.

    Raises:
        InvalidInput: ``vec`` is not 1-d or holds NaN or infinity.
    """
    v = np.asarray(vec, dtype=np.float64)
    if v.ndim != 1:
        raise InvalidInput(f"quantize() takes a 1-d vector, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise InvalidInput("quantize() got a vector with NaN or infinity")
    peak = float(np.max(np.abs(v))) if v.size else 0.0
    if peak == 0.0:
        return bytes(v.size), 0.0
    scale = peak / _QMAX
    q = np.clip(np.rint(v / scale), -_QMAX, _QMAX).astype(np.int8)
    return q.tobytes(), scale


def dequantize(blob: bytes, scale: float) -> np.ndarray:
    """Undo ``quantize``.

    Args:
        blob: The int8 bytes from ``quantize``.
        scale: The scale from ``quantize``.

    Returns:
        A 1-d ``float32`` vector of ``len(blob)`` components.
    """
    return np.frombuffer(blob, dtype=np.int8).astype(np.float32) * np.float32(scale)


def unit_rows(matrix: ArrayLike) -> np.ndarray:
    """L2-normalise each row; all-zero rows stay zero.

    Args:
        matrix: A 2-d array, one vector per row.

    Returns:
        A new ``float32`` array of the same shape.

    Raises:
        InvalidInput: ``matrix`` is not 2-d.
    """
    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim != 2:
        raise InvalidInput(f"unit_rows() takes a 2-d array, got shape {m.shape}")
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return np.divide(m, norms, out=np.zeros_like(m), where=norms > 0)


def cosine_to(matrix_unit: ArrayLike, query_unit: ArrayLike) -> np.ndarray:
    """Cosine of every unit row against one unit query.

    Both sides must already be normalised (``unit_rows``); zero vectors score 0.

    Args:
        matrix_unit: ``(n, dim)`` unit rows.
        query_unit: ``(dim,)`` unit vector.

    Returns:
        ``float32`` array of ``n`` cosines in ``[-1, 1]``.

    Raises:
        InvalidInput: The shapes do not fit together.
    """
    m = np.asarray(matrix_unit, dtype=np.float32)
    q = np.asarray(query_unit, dtype=np.float32)
    if m.ndim != 2 or q.ndim != 1 or m.shape[1] != q.shape[0]:
        raise InvalidInput(
            f"cosine_to() takes (n, dim) rows and a (dim,) query, got {m.shape} and {q.shape}"
        )
    return np.clip(m @ q, -1.0, 1.0)
