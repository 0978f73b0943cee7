"""Who should own which persona (``cluster.spread``): every worker computes the same answer,
the personas come out even, and a worker joining or leaving moves only its share. Pure."""

from __future__ import annotations

import pytest

from persona_memory.cluster.spread import moved, owner_of, spread, weight
from persona_memory.errors import InvalidInput

PERSONAS = [f"persona-{k}" for k in range(3000)]
FIVE = ["worker-1", "worker-2", "worker-3", "worker-4", "worker-5"]


def test_the_answer_does_not_depend_on_the_order_or_repetition_of_workers() -> None:
    assert spread(PERSONAS, FIVE) == spread(reversed(PERSONAS), [*reversed(FIVE), FIVE[0]])
    assert owner_of("iris", FIVE) == owner_of("iris", sorted(FIVE, key=len))


def test_the_weight_is_the_same_in_every_process() -> None:
    """BLAKE2b, not Python's salted ``hash()``: the expected number is the hash itself."""
    import hashlib

    expected = int.from_bytes(hashlib.blake2b(b"4:iris|worker-1", digest_size=8).digest(), "big")
    assert weight("iris", "worker-1") == expected
    assert weight("iris", "worker-1") != weight("worker-1", "iris")


def test_each_worker_gets_about_an_even_share() -> None:
    shares = spread(PERSONAS, FIVE)
    assert sorted(shares) == FIVE
    assert sum(len(mine) for mine in shares.values()) == len(PERSONAS)
    even = len(PERSONAS) / len(FIVE)
    assert all(0.85 * even < len(mine) < 1.15 * even for mine in shares.values()), {
        w: len(m) for w, m in shares.items()
    }


def test_a_worker_joining_takes_about_its_share_and_nothing_else_moves() -> None:
    before = spread(PERSONAS, FIVE)
    after = spread(PERSONAS, [*FIVE, "worker-6"])
    changed = moved(before, after)
    assert changed == set(after["worker-6"])  # every persona that moved went to the newcomer
    assert 0.8 / 6 < len(changed) / len(PERSONAS) < 1.2 / 6


def test_a_worker_leaving_moves_only_its_own_personas_spread_over_the_rest() -> None:
    before = spread(PERSONAS, FIVE)
    after = spread(PERSONAS, FIVE[1:])
    changed = moved(before, after)
    assert changed == set(before["worker-1"])
    took = {w: len(set(after[w]) & changed) for w in FIVE[1:]}
    even = len(changed) / 4
    assert all(0.6 * even < n < 1.4 * even for n in took.values()), took


def test_a_worker_with_nothing_to_own_is_still_listed() -> None:
    assert spread([], ["worker-1", "worker-2"]) == {"worker-1": (), "worker-2": ()}
    assert spread(["iris"], ["worker-1"]) == {"worker-1": ("iris",)}


def test_moved_counts_a_persona_that_appears_or_disappears() -> None:
    assert moved({"w1": ["iris"]}, {"w1": ["iris", "otto"]}) == {"otto"}
    assert moved({"w1": ["iris"], "w2": ["otto"]}, {"w1": ["otto"], "w2": ["iris"]}) == {"iris", "otto"}


@pytest.mark.parametrize("workers", [[], "worker-1", [""], [3]])
def test_no_worker_or_a_bad_worker_id_is_refused(workers: object) -> None:
    with pytest.raises(InvalidInput):
        owner_of("iris", workers)  # type: ignore[arg-type]


@pytest.mark.parametrize("persona", ["", None])
def test_a_bad_persona_is_refused(persona: object) -> None:
    with pytest.raises(InvalidInput, match="persona"):
        spread([persona], FIVE)  # type: ignore[list-item]
