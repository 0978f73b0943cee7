"""One BLAS thread for the read path's products, without changing numpy for the host program.

Above a few thousand rows OpenBLAS splits a matrix-vector product over every core; on a busy
machine the second thread is late and the build stalls by milliseconds (measured: a relevance
product at 10,000 rows took 5.1 ms free and 0.54 ms on one thread, with the cores loaded).

Rules:
- Products over at least ``THREADED_FROM`` rows run inside ``one_thread()``: threadpoolctl
  limits the BLAS pool to one thread for the product's duration and restores it after, so the
  host program's own numpy keeps its threads outside that window.
- Smaller products skip the limit: entering it costs about 40 µs, more than it saves there.
"""

from __future__ import annotations

import contextlib
from typing import ContextManager

from threadpoolctl import ThreadpoolController

THREADED_FROM = 4096

_controller: ThreadpoolController | None = None


def one_thread(rows: int) -> ContextManager[object]:
    """A context that keeps a product over ``rows`` rows on one BLAS thread."""
    global _controller
    if rows < THREADED_FROM:
        return contextlib.nullcontext()
    if _controller is None:
        _controller = ThreadpoolController()
    return _controller.limit(limits=1, user_api="blas")
