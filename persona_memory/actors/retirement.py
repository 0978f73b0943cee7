"""Retirement: which actors may stop because nothing needs them.

An actor is retired when its persona is in no open room, it is idle (``Running.idle``: every
envelope handled, every job performed) and it has been so for ``actors.idle_retire_seconds``.
Its actor finishes on its own: nothing is queued. The next message for the persona spawns a
fresh one.
"""

from __future__ import annotations

from typing import Callable, Mapping

import trio

from .outbox import Running


def to_retire(actors: Mapping[str, Running], in_a_room: frozenset[str], now: float, idle_after: float) -> list[str]:
    """The personas whose actors may be retired at ``now`` (trio time)."""
    return [
        persona
        for persona, running in actors.items()
        if persona not in in_a_room and running.idle and now - running.actor.last_active >= idle_after
    ]


async def run_retirement(retire_idle: Callable[[], object], idle_after: float) -> None:
    """Call ``retire_idle`` four times per idle period, forever."""
    while True:
        await trio.sleep(idle_after / 4)
        retire_idle()
