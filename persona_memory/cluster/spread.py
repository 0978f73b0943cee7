"""Who should own which persona: personas spread evenly over the live workers. Pure.

Rendezvous hashing (highest random weight): each (persona, worker) pair gets a weight from a
hash of both names, and a persona's owner is the live worker of highest weight. Every worker
computes the same answer from the same list of live workers, with no coordination and no
state, and the answer is what the leases are then acquired to match (``storage/leases.py``
decides who *does* own a persona; this only says who *should*).

Rules:
- Deterministic and stable across processes, hosts and Python runs: the weight is the first
  8 bytes of BLAKE2b over the two names (never ``hash()``, which is salted per process).
- Even: each worker's weight for a persona is an independent uniform draw, so each of N
  workers is the top for about 1/N of the personas.
- Minimal movement: when a worker leaves, only the personas it owned move (each to its
  second-highest worker, so they too spread evenly); when a worker joins, only the personas
  it now tops move — about 1/(N+1) of them — all to it. No other persona changes owner.
- Ties of weight (a 64-bit collision) go to the worker id that sorts first.
- Input is checked: worker ids and personas are non-empty ``str``; no worker is an error
  (``InvalidInput``) — the caller must know there is nobody to own anything.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

from ..errors import InvalidInput


def weight(persona: str, worker: str) -> int:
    """The pair's weight: a 64-bit number, the same in every process."""
    key = f"{len(persona)}:{persona}|{worker}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big")


def owner_of(persona: str, workers: Iterable[str]) -> str:
    """The worker that should own ``persona`` among the live ``workers``.

    Raises:
        InvalidInput: no worker, or a name that is not a non-empty str.
    """
    _check_name("persona", persona)
    live = _checked_workers(workers)
    return min(live, key=lambda worker: (-weight(persona, worker), worker))


def spread(personas: Iterable[str], workers: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """``{worker: the personas it should own, sorted}`` — every live worker listed, even one
    that gets nothing.

    Raises:
        InvalidInput: no worker, or a name that is not a non-empty str.
    """
    live = _checked_workers(workers)
    owned: dict[str, list[str]] = {worker: [] for worker in sorted(live)}
    for persona in set(personas):
        owned[owner_of(persona, live)].append(persona)
    return {worker: tuple(sorted(mine)) for worker, mine in owned.items()}


def moved(before: Mapping[str, Iterable[str]], after: Mapping[str, Iterable[str]]) -> set[str]:
    """The personas whose worker differs between two ``spread`` results (a persona present in
    only one of them counts as moved)."""
    def owners(spread_: Mapping[str, Iterable[str]]) -> dict[str, str]:
        return {persona: worker for worker, mine in spread_.items() for persona in mine}

    was, now = owners(before), owners(after)
    return {persona for persona in was.keys() | now.keys() if was.get(persona) != now.get(persona)}


def _checked_workers(workers: Iterable[str]) -> frozenset[str]:
    if isinstance(workers, str):
        raise InvalidInput(f"workers must be a collection of worker ids, not one str ({workers!r})")
    live = frozenset(workers)
    if not live:
        raise InvalidInput("no live worker to own the personas: start at least one worker")
    for worker in live:
        _check_name("worker id", worker)
    return live


def _check_name(what: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"a {what} must be a non-empty str, got {value!r}")
