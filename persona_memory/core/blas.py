"""One BLAS thread for the read path's products, without changing numpy for the host program.

Above a few thousand rows OpenBLAS splits a matrix-vector product over every core; on a busy
machine the second thread is late, and the product waits for it far longer than one thread
takes to do the whole product alone.

Rules:
- Products over at least ``THREADED_FROM`` rows run inside ``one_thread()``: each BLAS library
  threadpoolctl finds is set to one thread for the product's duration and set back after, so
  the host program's own numpy keeps its threads outside that window.
- The libraries are looked up once; entering and leaving the window calls their own get and
  set functions directly (threadpoolctl's ``limit()`` looks every library up again, a
  noticeable share of a recall note's cost).
- Smaller products skip the window: OpenBLAS hardly threads them, and the calls cost more than
  they save there.
"""

from __future__ import annotations

import contextlib
from typing import ContextManager, Iterator

from threadpoolctl import ThreadpoolController

THREADED_FROM = 4096

_libraries: list[object] | None = None


def one_thread(rows: int) -> ContextManager[object]:
    """A context that keeps a product over ``rows`` rows on one BLAS thread."""
    if rows < THREADED_FROM:
        return contextlib.nullcontext()
    return _one_thread()


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    global _libraries
    if _libraries is None:
        _libraries = list(ThreadpoolController().select(user_api="blas").lib_controllers)
    changed = []
    for library in _libraries:
        threads = library.get_num_threads()  # type: ignore[attr-defined]
        if threads != 1:
            library.set_num_threads(1)  # type: ignore[attr-defined]
            changed.append((library, threads))
    try:
        yield
    finally:
        for library, threads in changed:
            library.set_num_threads(threads)  # type: ignore[attr-defined]
