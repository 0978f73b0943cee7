"""The metrics' own rules: closed label sets, errors counted by class, reports counted once."""

from __future__ import annotations

import pytest

from persona_memory.errors import ProviderUnreachable
from persona_memory.metrics import Metrics, TimedMind, drop_reason

from test_web_runtime import sample


@pytest.mark.parametrize(
    ("reason", "label"),
    [
        ("secret: a PIN or code with its value", "secret"),
        ("order or authority claim: 'from now on'", "order"),
        ("names another user: 'Cara' in u:17", "names_another_user"),
        ("importance 2 is below the bar of 3", "importance"),
        ("text is more than one sentence", "text"),
        ("no evidence line was said by u:42: what others say about a person is not a memory about them", "not_said_by_subject"),
        ("routing refused: UPDATE names neighbour '7', but only 2 were offered", "routing_refused"),
        ("role-play: 'Let's play a game'", "role_play"),
        ("evidence not said by or to u:17: the row takes mov from line 1, u:42's", "not_said_to_subject"),
        ("evidence 9 is not a line of this slice", "evidence"),
        ("something nobody wrote a label for", "other"),
    ],
)
def test_a_drop_is_counted_under_a_closed_label(reason: str, label: str) -> None:
    assert drop_reason(reason) == label


class Failing:
    async def extract(self, request):
        raise ProviderUnreachable("the model timed out three times")

    async def route(self, request):
        return {"event": "ADD"}

    async def aclose(self) -> None:
        return None


async def test_a_failed_model_call_is_timed_and_counted_by_its_error_class() -> None:
    metrics = Metrics()
    mind = TimedMind(Failing(), metrics)
    with pytest.raises(ProviderUnreachable):
        await mind.extract(object())
    assert await mind.route(object()) == {"event": "ADD"}
    text = metrics.render().decode()
    assert sample(text, "persona_memory_provider_errors_total", call="extract", error="ProviderUnreachable") == 1
    assert sample(text, "persona_memory_provider_call_seconds_count", call="extract") == 1
    assert sample(text, "persona_memory_provider_call_seconds_count", call="route") == 1
    assert sample(text, "persona_memory_provider_errors_total", call="route", error="ProviderUnreachable") == 0
    assert "the model timed out" not in text


def test_a_latency_histogram_renders_cumulative_buckets_its_count_and_its_sum() -> None:
    metrics = Metrics()
    for seconds in (0.0005, 0.003, 100.0):  # on a bound, between bounds, past every bound
        metrics.block_build.observe(seconds)
    metrics.provider_seconds.labels("embed").observe(0.02)
    text = metrics.render().decode()
    name = "persona_memory_block_build_seconds"
    assert sample(text, f"{name}_bucket", le="0.0005") == 1  # a bucket holds what is <= its bound
    assert sample(text, f"{name}_bucket", le="0.001") == 1
    assert sample(text, f"{name}_bucket", le="0.005") == 2
    assert sample(text, f"{name}_bucket", le="30.0") == 2
    assert sample(text, f"{name}_bucket", le="+Inf") == 3
    assert sample(text, f"{name}_count") == 3
    assert sample(text, f"{name}_sum") == pytest.approx(100.0035)
    assert sample(text, "persona_memory_provider_call_seconds_count", call="embed") == 1
    assert sample(text, "persona_memory_provider_call_seconds_bucket", call="embed", le="0.025") == 1
    assert "persona_memory_recall_seconds_count 0.0" in text.splitlines()  # there from the start
    assert "# TYPE persona_memory_recall_seconds histogram" in text
