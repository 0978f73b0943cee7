"""``write.quantized.quantize_rows``: a slice's vectors quantised at once, row for row what
``embedding.quantize`` stores."""

from __future__ import annotations

import numpy as np
import pytest

from persona_memory.embedding import quantize
from persona_memory.errors import InvalidInput
from persona_memory.write.quantized import quantize_rows


def test_each_row_is_stored_as_quantize_stores_it() -> None:
    rng = np.random.default_rng(4)
    matrix = rng.normal(size=(9, 32)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix[3] = 0.0  # a text without tokens embeds as a zero row
    matrix[5, :] = 0.0
    matrix[5, 7] = -0.25  # one component: the peak is negative
    assert quantize_rows(matrix) == [quantize(row) for row in matrix]


def test_a_zero_row_keeps_zero_bytes_and_scale() -> None:
    assert quantize_rows(np.zeros((2, 4), np.float32)) == [(bytes(4), 0.0), (bytes(4), 0.0)]


def test_no_rows_gives_nothing() -> None:
    assert quantize_rows(np.zeros((0, 256), np.float32)) == []


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_vector_that_is_not_finite_is_refused(bad: float) -> None:
    matrix = np.ones((2, 3), np.float32)
    matrix[1, 2] = bad
    with pytest.raises(InvalidInput, match="NaN or infinity"):
        quantize_rows(matrix)


def test_a_single_vector_is_refused_with_what_to_pass() -> None:
    with pytest.raises(InvalidInput, match="2-d matrix"):
        quantize_rows(np.ones(3, np.float32))
