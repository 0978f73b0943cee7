"""The read path's products run on one BLAS thread, and the host program's numpy keeps its own."""

from __future__ import annotations

from threadpoolctl import ThreadpoolController

from persona_memory.core.blas import THREADED_FROM, one_thread


def blas_threads() -> set[int]:
    return {pool["num_threads"] for pool in ThreadpoolController().info() if pool["user_api"] == "blas"}


def test_a_large_product_runs_on_one_thread_and_the_pool_is_restored_after() -> None:
    before = blas_threads()
    with one_thread(THREADED_FROM):
        assert blas_threads() == {1}
    assert blas_threads() == before


def test_a_small_product_leaves_the_pool_alone() -> None:
    before = blas_threads()
    with one_thread(THREADED_FROM - 1):
        assert blas_threads() == before
