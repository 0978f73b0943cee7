"""Products of a matrix's rows with a few vectors, each row's numbers the same wherever it lies.

Routing keeps a merged matrix's closed rows in place instead of copying the open ones out, and
reads ties and its cosine bar off the products: that is only sound if an open row's product has
the very bits it would have in the compacted matrix. A plain ``matrix @ queries.T`` does not
promise that. OpenBLAS picks its kernel for the machine at run time, computes the last rows of
a matrix (the rows past its last full block of a few dozen) with a kernel of their own, and
above a dozen or so vectors may sum a row's products in an order that depends on where the row
sits in its block. Moving a row then moves its last bit.

Rules:
- The rows past the last whole multiple of ``ROW_BLOCK`` are copied into a zero-padded block of
  ``ROW_BLOCK`` rows, so every row is computed by the kernel's full blocks. ``ROW_BLOCK`` is a
  multiple of every row block the kernels use (4, 6, 8, 12, 16, 24, 32, 48).
- The vectors go at most ``VECTORS_AT_ONCE`` at a time, where every row's sum runs in one order.
- One BLAS thread (``blas.one_thread``), as for every product over many rows.

``tests/test_write_routing.py`` checks the promise on the machine that runs the tests.
"""

from __future__ import annotations

import numpy as np

from .blas import one_thread

ROW_BLOCK = 96
VECTORS_AT_ONCE = 12


def row_products(matrix: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """``matrix @ queries.T`` (rows × vectors, float32), each row's numbers independent of the
    rows around it (see the module rules)."""
    rows = matrix.shape[0]
    whole = rows - rows % ROW_BLOCK
    tail = None
    if whole < rows:
        tail = np.zeros((ROW_BLOCK, matrix.shape[1]), dtype=matrix.dtype)
        tail[: rows - whole] = matrix[whole:]
    parts = []
    with one_thread(rows):
        for start in range(0, max(len(queries), 1), VECTORS_AT_ONCE):
            group = queries[start : start + VECTORS_AT_ONCE].T
            part = matrix[:whole] @ group
            if tail is not None:
                part = np.concatenate([part, (tail @ group)[: rows - whole]])
            parts.append(part)
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
