"""What someone installing the package sees: its version, its license, and rows that print cleanly."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import tomllib
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from persona_memory import MemoryRow
from persona_memory.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_version_prints_the_version_of_pyproject(capsys: pytest.CaptureFixture[str]) -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"persona-memory {declared}"


def test_the_package_is_apache_licensed() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    assert "Apache License" in (ROOT / "LICENSE").read_text()[:200]
    assert "Version 2.0" in (ROOT / "LICENSE").read_text()[:200]


def test_a_row_prints_its_vector_size_not_its_bytes() -> None:
    vector = np.arange(-128, 128, dtype=np.int8).tobytes()
    row = MemoryRow(
        persona="warren",
        subject="u:42",
        kind="fact",
        text="u:42 keeps bees on the roof of their building.",
        importance=4,
        created=datetime(2026, 11, 2, tzinfo=timezone.utc),
        embedding=vector,
        embedding_scale=0.01,
        embedder="test-embedder",
    )
    shown = repr(row)
    assert "embedding=<256 bytes>" in shown
    assert repr(vector) not in shown and "\\x" not in shown
    assert "keeps bees on the roof" in shown
    assert "embedding=None" in repr(MemoryRow(
        persona="warren", subject="u:42", kind="fact", text="u:42 keeps bees.", importance=4,
        created=datetime(2026, 11, 2, tzinfo=timezone.utc),
    ))


def test_the_readme_snippet_runs_as_written(tmp_path: Path) -> None:
    """Run as a user runs it: a script of its own, in a new process, on the shipped config —
    so the offline reader's spawned worker imports the script again, under its main guard."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index("```python\nimport trio\nimport persona_memory as pm")
    snippet = readme[start + len("```python\n") : readme.index("```\n", start + 10)]
    (tmp_path / "config.toml").write_text((ROOT / "config.toml").read_text())
    (tmp_path / "example.py").write_text(snippet)
    done = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(tmp_path / "memory.db") as db:
        texts = [t for (t,) in db.execute("SELECT text FROM persona_memory WHERE subject = 'u:42'")]
    assert any("job" in text for text in texts), texts


def test_the_package_says_it_is_typed() -> None:
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "py.typed" in package_data["persona_memory"]  # shipped in the wheel, beside the code
    assert (ROOT / "persona_memory" / "py.typed").is_file()


def _make_dry_run(target: str, venv: Path) -> str:
    done = subprocess.run(
        ["make", "--no-print-directory", "--dry-run", "--always-make", target, f"VENV={venv}"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_demo_installs_the_package_alone_and_make_test_adds_the_test_extras(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    demo = _make_dry_run("demo", venv)
    assert f"{venv}/bin/python -m pip install --quiet -e .\n" in demo
    assert "[test]" not in demo and "-m pytest" not in demo
    assert demo.rstrip().endswith(f"{venv}/bin/persona-memory demo --config config.toml")
    test = _make_dry_run("test", venv)
    assert f"{venv}/bin/python -m pip install --quiet -e '.[test]'" in test
    assert test.rstrip().endswith(f"{venv}/bin/python -m pytest")


def test_the_base_install_leaves_the_test_tools_and_the_postgresql_driver_to_extras() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = " ".join(project["dependencies"])
    for extra_only in ("psycopg", "pytest", "hypothesis", "playwright", "schemathesis", "mem0ai"):
        assert extra_only not in base
    extras = project["optional-dependencies"]
    assert extras["postgres"] == ["psycopg[binary]>=3.2"]
    assert "persona-memory[postgres]" in extras["test"]  # the suite runs its PostgreSQL leg
    assert any(d.startswith("mem0ai") for d in extras["peers"])
