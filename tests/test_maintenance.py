"""The operator's commands: ``persona-memory doctor`` and ``persona-memory backup``."""

from __future__ import annotations

from datetime import timedelta

import pytest
import trio

import persona_memory as pm
from persona_memory.cli import main
from persona_memory.embedding import HashingEmbedder
from persona_memory.storage.maintenance import backup, doctor

from conftest import DIM, NOW, settings_for

DAN = 42


async def test_a_live_store_can_be_checked_and_backed_up_while_it_is_written(tmp_path) -> None:
    settings = settings_for(tmp_path)
    async with pm.open_memory(settings, embedder=HashingEmbedder(DIM)) as memory:
        await memory.send(pm.RoomOpened(room_id="dm", personas=("warren",), humans=frozenset({DAN}), private=True))
        await memory.post_line("dm", "u:42", "I repair vintage radios for a living.")
        await memory.send(pm.RoomWentQuiet(room_id="dm"))
        await memory.drain()
        size = await trio.to_thread.run_sync(backup, settings.storage.path, str(tmp_path / "copy.db"))
        assert size > 0
        await memory.post_line("dm", "u:42", "I also teach a soldering class on Saturdays.")
        live = await trio.to_thread.run_sync(doctor, settings.storage.path)
        assert live.integrity == ("ok",) and live.behind == (("warren", "dm"),)  # not written yet
        await memory.send(pm.RoomWentQuiet(room_id="dm"))
        await memory.drain()
        after = await trio.to_thread.run_sync(doctor, settings.storage.path)
        assert after.behind == () and after.healthy
    copy = settings_for(tmp_path, {"storage.path": str(tmp_path / "copy.db")})
    async with pm.open_memory(copy, embedder=HashingEmbedder(DIM)) as restored:
        texts = [row.text for row in await restored.memories_about(DAN)]
        assert any("radios" in text for text in texts) and not any("soldering" in text for text in texts)


async def test_doctor_names_parked_slices_and_their_personas(tmp_path, capsys) -> None:
    settings = settings_for(tmp_path)
    async with pm.open_memory(settings, embedder=HashingEmbedder(DIM)) as memory:
        await memory.send(pm.RoomOpened(room_id="dm", personas=("warren",), humans=frozenset({DAN}), private=True))
        await memory._store.write(lambda conn: conn.execute(
            "INSERT INTO parked_slices VALUES ('warren', 'dm', 'ProviderRefused: 401 from the model', 5, ?)",
            ((NOW + timedelta(hours=1)).isoformat(),),
        ))
    checkup = doctor(settings.storage.path)
    assert not checkup.healthy and checkup.escalated == ("warren",)
    assert main(["doctor", "--db", settings.storage.path]) == 1
    out = capsys.readouterr().out
    assert 'warren in "dm": 5 attempts' in out and "ProviderRefused: 401 from the model" in out
    assert "escalated personas: warren" in out and out.rstrip().endswith("verdict: needs attention")


def test_doctor_and_backup_refuse_what_they_cannot_use(tmp_path, capsys) -> None:
    assert main(["doctor", "--db", str(tmp_path / "none.db")]) == 2
    assert f"there is no SQLite store file at {tmp_path / 'none.db'}" in capsys.readouterr().err
    foreign = tmp_path / "notes.db"
    foreign.write_bytes(b"plain text, not a database" * 40)
    assert main(["doctor", "--db", str(foreign)]) == 2
    assert "not a readable SQLite database" in capsys.readouterr().err
    assert foreign.read_bytes().startswith(b"plain text")


def test_doctor_given_a_postgresql_url_says_it_reads_sqlite_files_and_what_to_use_instead(
    tmp_path, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where a URL taken for a file name would be looked for
    url = "postgresql://pm:s3cret-pass@db.internal:5432/persona_memory"
    assert main(["doctor", "--db", url]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "persona-memory: doctor reads an SQLite store file, and --db names a PostgreSQL database "
        "(postgresql://pm:***@db.internal:5432/persona_memory), which it does not read. For PostgreSQL, "
        "a running `persona-memory serve` reports escalated personas at /readyz"
    )
    assert "pass --db FILE" in err and "no store" not in err and "s3cret-pass" not in err
    assert main(["backup", "--db", "postgres://db.internal/pm", "copy.db"]) == 2
    err = capsys.readouterr().err
    assert "backup reads an SQLite store file, and --db names a PostgreSQL database (postgres://db.internal/pm)" in err
    assert "pg_dump" in err
    assert list(tmp_path.iterdir()) == []  # nothing written, no file made of the URL


async def test_a_backup_never_overwrites(tmp_path) -> None:
    settings = settings_for(tmp_path)
    async with pm.open_memory(settings, embedder=HashingEmbedder(DIM)):
        pass
    taken = tmp_path / "last-good.db"
    taken.write_bytes(b"yesterday's backup")
    with pytest.raises(pm.InvalidInput, match="exists already; a backup never overwrites"):
        backup(settings.storage.path, str(taken))
    assert taken.read_bytes() == b"yesterday's backup"
    with pytest.raises(pm.InvalidInput, match="does not exist; create it"):
        backup(settings.storage.path, str(tmp_path / "no-such-folder" / "b.db"))
