"""``RestartPolicy``: capped exponential backoff, reset after a healthy run, Erlang escalation.

Pure: crash times are plain numbers, so every expectation is exact.
"""

from __future__ import annotations

import pytest

from persona_memory.errors import WriterCrashedTooOften
from persona_memory.restart import RestartPolicy


def policy(**changes: float) -> RestartPolicy:
    values = dict(initial=0.5, cap=4.0, healthy_after=60.0, max_restarts=100, period=60.0)
    values.update(changes)
    return RestartPolicy(**values)  # type: ignore[arg-type]


def crash_at(p: RestartPolicy, *times: float, ran_for: float = 0.1) -> list[float]:
    return [p.after_crash(crashed_at=t, ran_for=ran_for) for t in times]


def test_backoff_doubles_from_initial_and_caps_at_max() -> None:
    assert crash_at(policy(), 0, 1, 2, 3, 4, 5, 6) == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0, 4.0]


def test_a_cap_below_initial_wins() -> None:
    assert crash_at(policy(initial=3.0, cap=2.0), 0, 1) == [2.0, 2.0]


def test_a_healthy_run_resets_the_backoff() -> None:
    p = policy()
    assert crash_at(p, 0, 1, 2) == [0.5, 1.0, 2.0]
    assert p.after_crash(crashed_at=100, ran_for=60.0) == 0.5
    assert p.after_crash(crashed_at=101, ran_for=0.1) == 1.0


def test_a_run_just_short_of_healthy_does_not_reset() -> None:
    p = policy()
    crash_at(p, 0, 1)
    assert p.after_crash(crashed_at=100, ran_for=59.9) == 2.0


def test_more_than_max_restarts_within_the_period_escalates() -> None:
    p = policy(max_restarts=3, period=10.0)
    crash_at(p, 0, 1, 2)
    with pytest.raises(WriterCrashedTooOften, match="warren's writer crashed 4 times within 10 s"):
        p.after_crash(crashed_at=3, ran_for=0.1, who="warren's writer")


def test_exactly_max_restarts_is_still_allowed() -> None:
    assert crash_at(policy(max_restarts=3, period=10.0), 0, 1, 2) == [0.5, 1.0, 2.0]


def test_max_restarts_zero_escalates_on_the_first_crash() -> None:
    with pytest.raises(WriterCrashedTooOften):
        policy(max_restarts=0).after_crash(crashed_at=0, ran_for=0.1)


def test_old_crashes_fall_out_of_the_window() -> None:
    p = policy(max_restarts=3, period=10.0)
    crash_at(p, 0, 1, 2)
    # 12 - 10 = 2: the crashes at 0, 1 and 2 are a full period old and no longer count.
    p.after_crash(crashed_at=12, ran_for=0.1)
    crash_at(p, 13, 14)
    with pytest.raises(WriterCrashedTooOften):
        p.after_crash(crashed_at=15, ran_for=0.1)


def test_a_crash_a_full_period_later_counts_alone() -> None:
    p = policy(max_restarts=1, period=10.0)
    p.after_crash(crashed_at=0, ran_for=0.1)
    p.after_crash(crashed_at=10, ran_for=0.1)
    with pytest.raises(WriterCrashedTooOften):
        p.after_crash(crashed_at=10.5, ran_for=0.1)


def test_crashes_too_far_apart_to_escalate_keep_waiting_the_cap_forever() -> None:
    # A provider that times out after 29 s each time: never healthy, never 6 crashes in 60 s.
    policy = RestartPolicy(initial=0.5, cap=30.0, healthy_after=60.0, max_restarts=5, period=60.0)
    delays = [policy.after_crash(crashed_at=k * 59.0, ran_for=29.0) for k in range(1100)]
    assert delays[:7] == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0]
    assert set(delays[7:]) == {30.0}
