"""One worker's lease round, decided: what to acquire, renew and release. Pure.

Every ``cluster.renew_seconds`` a worker (``worker.py``) looks at the live workers, the
personas to consider and the leases it holds, and this module says what to do about it; the
worker then does it on the database. Kept apart so the decision is tested without a server.

Rules:
- The share is ``spread.owner_of`` over the live workers, this worker always counted among
  them (it has just heartbeated; a listing that misses it is one round stale).
- Acquire: the personas of the share this worker does not hold. Acquiring one that another
  worker still holds simply fails until that worker lets go (or its lease runs out), so the
  handover takes a round or two and never leaves two owners.
- Release: the leases held for personas that the spread gives to another live worker, or that
  are no longer considered at all. Renew: every other lease held.
- Every list is sorted by persona, so each round touches the lease rows in one order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from ..storage.leases import Lease
from .spread import owner_of


@attrs.frozen
class RoundPlan:
    acquire: tuple[str, ...]
    renew: tuple[Lease, ...]
    release: tuple[Lease, ...]


def plan_round(me: str, live: Iterable[str], personas: Iterable[str], held: Mapping[str, Lease]) -> RoundPlan:
    """What worker ``me`` does this round, holding ``held`` (persona → lease)."""
    workers = {*live, me}
    considered = set(personas)
    share = {p for p in considered if owner_of(p, workers) == me}
    keep = sorted(p for p in held if p in share)
    return RoundPlan(
        acquire=tuple(sorted(share - held.keys())),
        renew=tuple(held[p] for p in keep),
        release=tuple(held[p] for p in sorted(held.keys() - share)),
    )
