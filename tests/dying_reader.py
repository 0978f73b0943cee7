"""Jobs for ``test_offline_processes.py`` that kill the worker process running them.

Module-level functions, so a worker process can unpickle them (``tests/`` is on the path the
workers are spawned with).
"""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

from persona_memory.minds.offline import extract_memories

MARKER_ENV = "PERSONA_MEMORY_TEST_DYING_READER"


def extract_or_die(request: Any, **options: Any) -> dict[str, Any]:
    """``extract_memories``, except that in a worker process the worker dies while the file
    the environment variable ``MARKER_ENV`` names exists."""
    marker = os.environ.get(MARKER_ENV)
    if marker and Path(marker).exists() and multiprocessing.parent_process() is not None:
        os._exit(3)
    return extract_memories(request, **options)


def die_once(marker: str, value: Any) -> Any:
    """Die the first time (leaving ``marker``), answer ``value`` from then on."""
    path = Path(marker)
    if not path.exists():
        path.touch()
        os._exit(3)
    return value


def die() -> None:
    os._exit(3)


def refuse(why: str) -> None:
    raise LookupError(why)


def pid() -> int:
    return os.getpid()


def nap(seconds: float, value: Any) -> Any:
    import time

    time.sleep(seconds)
    return value
