"""The ``[cluster]`` settings: a lease and a renewal period, checked with errors that say what
to set."""

from __future__ import annotations

import pytest

from persona_memory import ConfigError, load_settings


def test_the_defaults_renew_three_times_per_lease() -> None:
    cluster = load_settings(None).cluster
    assert (cluster.lease_seconds, cluster.renew_seconds) == (10.0, 3.0)


def test_a_file_sets_short_times_for_a_test_cluster(tmp_path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[cluster]\nlease_seconds = 0.6\nrenew_seconds = 0.2\n")
    cluster = load_settings(path).cluster
    assert (cluster.lease_seconds, cluster.renew_seconds) == (0.6, 0.2)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"cluster.lease_seconds": 0}, "cluster.lease_seconds must be more than 0 and at most 3600"),
        ({"cluster.lease_seconds": 7200}, "cluster.lease_seconds must be more than 0 and at most 3600"),
        ({"cluster.renew_seconds": -1}, "cluster.renew_seconds must be greater than 0"),
        ({"cluster.renew_seconds": "often"}, "cluster.renew_seconds must be"),
        ({"cluster.renew_seconds": 6}, "cluster.renew_seconds (6) must be at most half of cluster.lease_seconds (10)"),
        ({"cluster.lease_seconds": 4, "cluster.renew_seconds": 3}, "at most half of cluster.lease_seconds (4)"),
        ({"cluster.lease": 4}, "unknown setting 'cluster.lease'"),
    ],
)
def test_a_bad_cluster_setting_says_what_to_set(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(None, overrides)
    assert message in str(caught.value)
