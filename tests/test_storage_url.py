"""``storage.url``: which store a config names, how it sits beside ``storage.path``, and the
errors a person gets for a URL we cannot use, and a memory kept where the URL says."""

from __future__ import annotations

from pathlib import Path

import pytest

import persona_memory as pm
from persona_memory import ConfigError, load_settings
from persona_memory.cli import main
from persona_memory.embedding import HashingEmbedder
from persona_memory.storage.location import BadLocation, PostgresServer, SqliteFile, parse_location, redacted

from conftest import DIM

# ---- reading one URL ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("", None),
        ("   ", None),
        ("memory.db", SqliteFile("memory.db")),
        ("data/pm/memory.db", SqliteFile("data/pm/memory.db")),
        ("/var/lib/pm/memory.db", SqliteFile("/var/lib/pm/memory.db")),
        ("C:\\pm\\memory.db", SqliteFile("C:\\pm\\memory.db")),
        ("sqlite:memory.db", SqliteFile("memory.db")),
        ("sqlite:/var/lib/pm/memory.db", SqliteFile("/var/lib/pm/memory.db")),
        ("sqlite:///var/lib/pm/memory.db", SqliteFile("/var/lib/pm/memory.db")),
        ("sqlite:my%20notes.db", SqliteFile("my notes.db")),
        ("postgresql://pm@db.internal:5432/persona_memory", PostgresServer("postgresql://pm@db.internal:5432/persona_memory")),
        ("postgres://db.internal/pm?sslmode=require", PostgresServer("postgres://db.internal/pm?sslmode=require")),
        ("postgresql://pm@%2Frun%2Fpostgresql/pm", PostgresServer("postgresql://pm@%2Frun%2Fpostgresql/pm")),
    ],
)
def test_a_url_names_an_sqlite_file_or_a_postgresql_database(url: str, expected: object) -> None:
    assert parse_location(url) == expected


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("mysql://db.internal/pm", "mysql:// URL; storage.url takes postgresql://"),
        ("sqlite:", "names no file"),
        ("sqlite:///", "names no file"),
        ("sqlite://fileserver/pm.db", "names a host ('fileserver')"),
        ("postgresql://db.internal", "names no database"),
        ("postgresql://db.internal:fivefour/pm", "not a valid PostgreSQL URL"),
        ("postgresql://db.internal/pm?sslmod=require", "not a URL libpq accepts"),
    ],
)
def test_a_url_we_cannot_use_is_refused_saying_what_to_write(url: str, says: str) -> None:
    with pytest.raises(BadLocation) as caught:
        parse_location(url)
    assert says in str(caught.value)


def test_a_password_in_the_url_is_never_repeated() -> None:
    secret = "hunter2-not-for-logs"
    for url in (
        f"postgresql://pm:{secret}@db.internal/",
        f"postgresql://pm:{secret}@db.internal/pm?sslmod=require",
        f"mysql://pm:{secret}@db.internal/pm",
    ):
        with pytest.raises(BadLocation) as caught:
            parse_location(url)
        assert secret not in str(caught.value) and "***" in str(caught.value)
    server = parse_location(f"postgresql://pm:{secret}@db.internal/pm")
    assert isinstance(server, PostgresServer) and server.database == "pm"
    assert secret not in repr(server)
    assert redacted(f"postgresql://pm:{secret}@db.internal/pm") == "postgresql://pm:***@db.internal/pm"


# ---- in the settings ---------------------------------------------------------------------------


def _config(tmp_path: Path, storage: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f"[storage]\n{storage}\n")
    return path


def test_by_default_the_store_is_the_sqlite_file_at_storage_path() -> None:
    storage = load_settings(None).storage
    assert (storage.url, storage.path, storage.backend) == ("", "persona-memory.db", "sqlite")


def test_an_sqlite_url_becomes_the_file_in_storage_path(tmp_path: Path) -> None:
    storage = load_settings(_config(tmp_path, 'url = "sqlite:///srv/pm/memory.db"')).storage
    assert (storage.url, storage.path, storage.backend) == ("", "/srv/pm/memory.db", "sqlite")


def test_a_later_storage_path_replaces_an_earlier_url(tmp_path: Path) -> None:
    config = _config(tmp_path, 'url = "sqlite:from-the-file.db"')
    assert load_settings(config, {"storage.path": "from-db-flag.db"}).storage.path == "from-db-flag.db"
    assert load_settings(config, {"storage.url": "from-override.db"}).storage.path == "from-override.db"


def test_a_url_and_a_path_together_in_one_file_are_refused_naming_both(tmp_path: Path) -> None:
    config = _config(tmp_path, 'url = "sqlite:one.db"\npath = "two.db"')
    with pytest.raises(ConfigError, match="set storage.url or storage.path, not both") as caught:
        load_settings(config)
    assert str(config) in str(caught.value)
    assert load_settings(_config(tmp_path, 'url = ""\npath = "two.db"')).storage.path == "two.db"


def test_a_bad_url_is_a_config_error_naming_the_setting_and_its_file(tmp_path: Path) -> None:
    config = _config(tmp_path, 'url = "redis://cache.internal/0"')
    with pytest.raises(ConfigError) as caught:
        load_settings(config)
    message = str(caught.value)
    assert message.startswith(f"{config}: storage.url:") and "redis://" in message
    with pytest.raises(ConfigError, match="overrides: storage.url: .*names no file"):
        load_settings(None, {"storage.url": "sqlite:"})
    with pytest.raises(ConfigError, match="storage.url must be str"):
        load_settings(None, {"storage.url": 5432})


def test_a_postgresql_url_is_kept_and_shown_without_its_password(tmp_path: Path) -> None:
    config = _config(tmp_path, 'url = "postgresql://pm:s3cret-pass@db.internal/pm"')
    storage = load_settings(config).storage
    assert storage.backend == "postgresql"
    assert storage.url == "postgresql://pm:s3cret-pass@db.internal/pm"
    assert storage.place == "postgresql://pm:***@db.internal/pm"


def test_doctor_and_backup_say_they_read_files_when_the_store_is_postgresql(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, 'url = "postgresql://pm:s3cret-pass@db.internal/pm"')
    assert main(["doctor", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert "reads an SQLite store file" in err and "pg_dump" in err and "s3cret-pass" not in err
    assert main(["backup", "--config", str(config), str(tmp_path / "copy.db")]) == 2
    assert not (tmp_path / "copy.db").exists()


def test_db_on_the_command_line_takes_a_postgresql_url_as_storage_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--db", "postgresql://pm:s3cret-pass@db.internal"]) == 2
    err = capsys.readouterr().err
    assert "storage.url: 'postgresql://pm:***@db.internal' names no database" in err
    assert list(tmp_path.iterdir()) == []  # read as a URL, not as an SQLite file to create


async def test_a_private_chat_through_open_memory_on_a_postgresql_url_is_remembered_there(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where the default storage.path would land
    settings = load_settings(
        _config(tmp_path, f'url = "{postgres_url}"'), {"embedder.kind": "hashing", "embedder.dim": DIM}
    )
    dm = pm.RoomOpened(room_id="dm-7", personas=("wren",), humans={7}, private=True, names={7: "Tomas"})
    async with pm.open_memory(settings, embedder=HashingEmbedder(DIM)) as memory:
        await memory.send(dm)
        assert await memory.block("wren", "dm-7") == ""
        said = [
            await memory.post_line("dm-7", "u:7", "I love baking sourdough on Sunday mornings."),
            await memory.post_line("wren", "dm-7", "That sounds lovely. What flour do you use?"),
            await memory.post_line("dm-7", "u:7", "I'm running a half marathon in October. Ask me how it went!"),
        ]
        await memory.send(pm.RoomWentQuiet(room_id="dm-7"))
        await memory.drain()
        rows = await memory.memories_about(7)
        assert rows and all(set(r.evidence) <= set(said) and r.room_id == "dm-7" for r in rows)
        (notice,) = await memory.notices(7)
        assert sorted(notice.memory_ids) == sorted(r.id for r in rows)
    assert not (tmp_path / "persona-memory.db").exists()
    async with pm.open_memory(settings, embedder=HashingEmbedder(DIM)) as memory:  # a new process
        await memory.send(dm)
        block = await memory.block("wren", "dm-7")
        assert "sourdough" in block and "half marathon" in block
        assert await memory.memories_about(7) == rows
        assert await memory.undo(7, notice.id) == list(notice.memory_ids)
        assert await memory.memories_about(7) == []


async def test_a_memory_opened_on_an_sqlite_url_keeps_its_rows_in_that_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where the default storage.path would land
    target = tmp_path / "chosen by url.db"
    settings = load_settings(
        _config(tmp_path, f'url = "sqlite:{target}"'),
        {"embedder.kind": "hashing", "embedder.dim": DIM},
    )
    async with pm.open_memory(settings, embedder=HashingEmbedder(DIM)) as memory:
        await memory.set_memory_note(42, "Call me by my middle name.")
    assert target.exists() and not (tmp_path / "persona-memory.db").exists()
    assert main(["doctor", "--config", str(tmp_path / "config.toml")]) == 0
    assert str(target) in capsys.readouterr().out
