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
