"""One worker's lease round, decided (``cluster.rounds``): acquire its share, renew what it
keeps, release what the spread gives someone else. Pure."""

from __future__ import annotations

from datetime import datetime, timezone

from persona_memory.cluster.rounds import plan_round
from persona_memory.cluster.spread import spread
from persona_memory.storage.leases import Lease

UNTIL = datetime(2026, 11, 3, 8, 0, tzinfo=timezone.utc)
PERSONAS = [f"character-{k}" for k in range(40)]


def held(owner: str, personas: list[str]) -> dict[str, Lease]:
    return {p: Lease(p, owner, 3, UNTIL) for p in personas}


def test_a_worker_alone_acquires_everything() -> None:
    plan = plan_round("north", [], PERSONAS, {})
    assert plan.acquire == tuple(sorted(PERSONAS)) and plan.renew == plan.release == ()


def test_a_worker_holding_exactly_its_share_only_renews() -> None:
    mine = list(spread(PERSONAS, ["north", "south"])["north"])
    plan = plan_round("north", ["north", "south"], PERSONAS, held("north", mine))
    assert plan.acquire == () and plan.release == ()
    assert [l.persona for l in plan.renew] == sorted(mine)


def test_when_a_worker_joins_the_old_one_releases_exactly_the_newcomers_share() -> None:
    everything = held("north", PERSONAS)
    plan = plan_round("north", ["north", "east"], PERSONAS, everything)
    newcomers = set(spread(PERSONAS, ["north", "east"])["east"])

    assert newcomers and {l.persona for l in plan.release} == newcomers
    assert {l.persona for l in plan.renew} == set(PERSONAS) - newcomers
    assert plan.acquire == ()


def test_when_a_worker_dies_the_survivor_acquires_its_share_and_keeps_its_own() -> None:
    mine = list(spread(PERSONAS, ["north", "south"])["north"])
    plan = plan_round("north", ["north"], PERSONAS, held("north", mine))

    assert set(plan.acquire) == set(PERSONAS) - set(mine)
    assert [l.persona for l in plan.renew] == sorted(mine) and plan.release == ()


def test_a_persona_no_longer_considered_is_released() -> None:
    plan = plan_round("north", ["north"], PERSONAS[1:], held("north", PERSONAS[:2]))
    assert [l.persona for l in plan.release] == [PERSONAS[0]]
    assert [l.persona for l in plan.renew] == [PERSONAS[1]]


def test_the_worker_counts_itself_live_even_if_the_listing_missed_it() -> None:
    assert plan_round("north", ["south"], PERSONAS, {}) == plan_round("north", ["north", "south"], PERSONAS, {})
