"""Settings: embedded defaults, a file over them, overrides last; every mistake named."""

from __future__ import annotations

from pathlib import Path

import pytest

from persona_memory import ConfigError, load_settings
from persona_memory.settings import default_values

ROOT = Path(__file__).resolve().parent.parent


def test_the_projects_config_toml_is_the_embedded_defaults():
    assert (ROOT / "config.toml").read_text() == (ROOT / "persona_memory" / "defaults.toml").read_text()
    assert load_settings(ROOT / "config.toml") == load_settings(None)


def test_defaults_are_the_designs_starting_points():
    s = load_settings(None)
    assert (s.block.char_limit, s.block.per_human, s.block.per_kind_first) == (1200, 10, 2)
    assert s.ranking.recency_decay_per_day == 0.98
    assert (s.write.importance_min, s.write.daily_cap_per_human, s.write.neighbours, s.write.neighbour_min_cosine) == (3, 12, 5, 0.6)
    assert s.scope.v1_proven is True
    assert (s.mind.kind, s.embedder.kind) == ("offline", "wordllama")


def test_a_file_sets_a_subset_and_overrides_come_last(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[block]\nchar_limit = 800\n[storage]\npath = "a.db"\n')
    s = load_settings(path, {"storage.path": "b.db", "ranking.recency_weight": 1})
    assert (s.block.char_limit, s.block.per_human, s.storage.path) == (800, 10, "b.db")
    assert s.ranking.recency_weight == 1.0 and isinstance(s.ranking.recency_weight, float)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[blok]\nchar_limit = 1\n", "unknown section [blok]"),
        ("[block]\nchar_limt = 1\n", "unknown setting 'block.char_limt'"),
        ("[block]\nchar_limit = 'big'\n", "block.char_limit must be int"),
        ("[block]\nchar_limit = 5\n", "block.char_limit must be between 100 and 20000"),
        ("[scope]\nv1_proven = 1\n", "scope.v1_proven must be bool"),
        ("[mind]\nkind = 'gpt'\n", "mind.kind must be 'offline' or 'http'"),
        ("[mind]\nkind = 'http'\n", "set mind.base_url"),
        ("[ranking\n", "is not valid TOML"),
    ],
)
def test_a_bad_file_is_refused_with_the_key_named(tmp_path, text, message):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert message in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_a_missing_file_and_a_bad_override_are_named(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="overrides: unknown setting 'storage.pth'"):
        load_settings(None, {"storage.pth": "x.db"})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[block]\nchar_limt = 900\n", "unknown setting 'block.char_limt'; did you mean 'block.char_limit'?"),
        ("[mind]\nmodle = 'x'\n", "unknown setting 'mind.modle'; did you mean 'mind.model'?"),
        ("[web]\nprot = 9000\n", "unknown setting 'web.prot'; did you mean 'web.port' or 'web.host'?"),
        # The right key under the wrong heading is named first.
        ("[storage]\nport = 9000\n", "unknown setting 'storage.port'; did you mean 'web.port', "),
        ("[blok]\nchar_limit = 900\n", "unknown section [blok]; did you mean [block]?"),
        # Nothing near: the section's own keys, not every key there is.
        ("[recall]\nzzz = 1\n", "unknown setting 'recall.zzz'; [recall] has limit, char_limit, min_score"),
    ],
)
def test_an_unknown_key_is_answered_with_the_nearest_valid_ones(tmp_path, text, message):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    said = str(caught.value)
    assert said.startswith(f"{path}: {message}")
    assert len(said) < len(str(path)) + 120 and "exam.temperature" not in said


def test_an_unknown_override_is_answered_with_the_nearest_valid_keys():
    with pytest.raises(ConfigError) as caught:
        load_settings(None, {"supervisor.max_restart": 3})
    assert str(caught.value) == "overrides: unknown setting 'supervisor.max_restart'; did you mean 'supervisor.max_restarts'?"
    with pytest.raises(ConfigError) as caught:
        load_settings(None, {"nowhere": 3})
    assert str(caught.value).startswith("overrides: unknown setting 'nowhere'; the sections are storage, block, ")
    assert str(caught.value).endswith("a key is written section.key")


def test_every_default_is_checked_by_its_own_rule():
    # Loading the defaults through the same checks as a user's file keeps them honest.
    values = default_values()
    assert load_settings(None, {f"{s}.{k}": v for s in values for k, v in values[s].items()}) == load_settings(None)
