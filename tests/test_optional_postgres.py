"""psycopg is the ``postgres`` extra: an SQLite user never imports it, and a PostgreSQL URL
without it is refused naming the extra to install.

Each test runs a script in a new Python process, as an installed user would, since this
suite's own process has psycopg loaded already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# As if the extra were not installed: ``import psycopg`` raises ModuleNotFoundError.
WITHOUT_PSYCOPG = "import sys\nsys.modules['psycopg'] = None\n"

# The modules that exist only to talk to PostgreSQL; everything else must import without it.
POSTGRES_ONLY = {
    "persona_memory.storage.postgres_connection",
    "persona_memory.storage.postgres_session",
    "persona_memory.storage.postgres_schema",
}


def run_script(source: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    (cwd / "script.py").write_text(textwrap.dedent(source))
    return subprocess.run(
        [sys.executable, "script.py"], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


SQLITE_MEMORY = """
    import trio
    import persona_memory as pm
    from persona_memory.cli import main
    from persona_memory.embedding import HashingEmbedder

    settings = pm.load_settings(None, {"storage.path": "notes.db", "embedder.kind": "hashing", "embedder.dim": 64})

    async def keep_a_note():
        async with pm.open_memory(settings, embedder=HashingEmbedder(64)) as memory:
            await memory.set_memory_note(42, "Please call me Sam.")
        async with pm.open_memory(settings, embedder=HashingEmbedder(64)) as memory:
            return (await memory.user_controls(42)).memory_note

    note = trio.run(keep_a_note)
    doctor = main(["doctor", "--db", "notes.db"])
    print(json.dumps({"note": note, "doctor": doctor, "psycopg_loaded": sys.modules.get("psycopg") is not None}))
"""


def test_an_sqlite_memory_works_without_psycopg(tmp_path: Path) -> None:
    done = run_script(WITHOUT_PSYCOPG + "import json\n" + textwrap.dedent(SQLITE_MEMORY), tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"note": "Please call me Sam.", "doctor": 0, "psycopg_loaded": False}


def test_an_sqlite_memory_never_imports_psycopg_even_where_it_is_installed(tmp_path: Path) -> None:
    done = run_script("import json, sys\n" + textwrap.dedent(SQLITE_MEMORY), tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"note": "Please call me Sam.", "doctor": 0, "psycopg_loaded": False}


def test_every_module_but_the_postgresql_ones_imports_without_psycopg(tmp_path: Path) -> None:
    done = run_script(
        WITHOUT_PSYCOPG
        + textwrap.dedent(f"""
            import importlib, pkgutil
            import persona_memory
            skipped = {sorted(POSTGRES_ONLY)!r}
            names = [m.name for m in pkgutil.walk_packages(persona_memory.__path__, "persona_memory.")]
            for name in names:
                if name not in skipped:
                    importlib.import_module(name)
            print(len(names))
        """),
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) > 50  # the walk found the package's modules


def test_a_postgresql_url_without_psycopg_names_the_extra_to_install(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[storage]\nurl = "postgresql://pm:s3cret-pass@db.internal/pm"\n')
    done = run_script(
        WITHOUT_PSYCOPG
        + textwrap.dedent("""
            import trio
            from persona_memory import ConfigError, load_settings
            from persona_memory.cli import main
            from persona_memory.storage.store import open_postgres_store

            try:
                load_settings("config.toml")
            except ConfigError as exc:
                print("settings:", exc)

            async def open_directly():
                async with open_postgres_store("postgresql://db.internal/pm"):
                    pass

            try:
                trio.run(open_directly)
            except ConfigError as exc:
                print("store:", exc)
            print("serve exit:", main(["serve", "--config", "config.toml"]))
        """),
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    settings_error = next(line for line in lines if line.startswith("settings:"))
    assert settings_error == (
        "settings: config.toml: storage.url: 'postgresql://pm:***@db.internal/pm' names a PostgreSQL "
        "database, and psycopg, the PostgreSQL driver, is not installed: pip install "
        "'persona-memory[postgres]' (or leave storage.url empty to keep the memory in the SQLite "
        "file at storage.path)"
    )
    store_error = next(line for line in lines if line.startswith("store:"))
    assert "psycopg, the PostgreSQL driver, is not installed: pip install 'persona-memory[postgres]'" in store_error
    assert "serve exit: 2" in lines
    assert "pip install 'persona-memory[postgres]'" in done.stderr  # what the command printed
    assert "s3cret-pass" not in done.stdout + done.stderr
