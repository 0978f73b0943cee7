"""The suite's throw-away PostgreSQL: found, started unprivileged, and gone however pytest ends.

The first tests need no server (they look at paths and URLs); the rest use the session's
server through ``postgres_url``, and one starts a server of its own in a child process that
it then kills with SIGKILL, to see the guard clean up after it.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import psycopg
import pytest

import pg_server

HERE = Path(__file__).resolve().parent


def _host(url: str) -> str:
    """The URL's host as written (``urlsplit().hostname`` folds case, a path's included)."""
    return unquote(urlsplit(url).netloc.rsplit("@", 1)[-1].rsplit(":", 1)[0])


# ---- finding the binaries, spelling the URL (no server) ---------------------------------------


def _fake_server_bin(root: Path, version: str) -> Path:
    bin_dir = root / version / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("initdb", "postgres"):
        (bin_dir / name).write_text("#!/bin/sh\n")
        (bin_dir / name).chmod(0o755)
    return bin_dir


def test_without_binaries_on_path_the_newest_debian_version_is_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    _fake_server_bin(tmp_path, "9.6")
    newest = _fake_server_bin(tmp_path, "16")
    _fake_server_bin(tmp_path, "15")
    (tmp_path / "17" / "bin").mkdir(parents=True)  # a client-only install has no server

    assert pg_server.find_binaries(tmp_path) == newest


def test_no_binaries_anywhere_says_what_to_install_or_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))

    with pytest.raises(pg_server.Unavailable) as caught:
        pg_server.find_binaries(tmp_path)

    message = str(caught.value)
    assert "postgresql package" in message
    assert pg_server.URL_ENV in message


def test_a_socket_url_keeps_the_directory_whole_and_another_database_replaces_only_the_name() -> None:
    url = pg_server.socket_url(Path("/tmp/pm pg/socket"), "first")
    assert _host(pg_server.socket_url(Path("/tmp/Mixed Case/socket"), "x")) == "/tmp/Mixed Case/socket"
    assert _host(url) == "/tmp/pm pg/socket"
    assert urlsplit(url).port == pg_server.PORT

    other = pg_server.with_database(url, "second")
    assert other == url.removesuffix("first") + "second"
    remote = pg_server.with_database("postgresql://ana@db.internal:6543/main?sslmode=require", "pm_test_7")
    assert remote == "postgresql://ana@db.internal:6543/pm_test_7?sslmode=require"


# ---- the session's server -----------------------------------------------------------------------


def test_each_test_gets_a_fresh_empty_database_and_earlier_ones_are_dropped(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        name = conn.execute("SELECT current_database()").fetchone()[0]
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()[0]
        ours = [
            n for (n,) in conn.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE %s", (f"pm_test_{os.getpid()}_%",)
            )
        ]

    assert name == urlsplit(postgres_url).path.lstrip("/")
    assert tables == 0
    assert ours == [name]  # the databases of this session's earlier tests were dropped


def test_the_throwaway_server_runs_unprivileged_on_a_socket_only(postgres_server_url: str) -> None:
    if os.environ.get(pg_server.URL_ENV):
        pytest.skip(f"{pg_server.URL_ENV} names the user's own server; this checks the throw-away one")
    with psycopg.connect(postgres_server_url, autocommit=True) as conn:
        listen = conn.execute("SHOW listen_addresses").fetchone()[0]
        data_dir = conn.execute("SHOW data_directory").fetchone()[0]
    assert listen == ""
    owner = os.stat(data_dir).st_uid
    assert owner != 0 or os.geteuid() != 0
    assert stat.S_IMODE(os.stat(data_dir).st_mode) == 0o700


# ---- cleanup when the owner dies ----------------------------------------------------------------

OWNER = """
import sys, time
sys.path.insert(0, {here!r})
import pg_server
with pg_server.throwaway_server() as url:
    print(url, flush=True)
    time.sleep(120)
"""


def _server_alive(url: str) -> bool:
    try:
        with psycopg.connect(url, connect_timeout=2):
            return True
    except psycopg.OperationalError:
        return False


def test_a_killed_owner_leaves_no_server_and_no_directory_behind() -> None:
    """SIGKILL runs no teardown: the guard sees its pipe close and stops the server itself."""
    try:
        pg_server.find_binaries()
    except pg_server.Unavailable as exc:
        if os.environ.get("PERSONA_MEMORY_TEST_POSTGRES_REQUIRED") == "1":
            raise
        pytest.skip(f"PostgreSQL leg skipped: {exc}")
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER.format(here=str(HERE))], stdout=subprocess.PIPE, text=True
    )
    try:
        url = owner.stdout.readline().strip()
        assert url.startswith("postgresql://"), "the child could not start its server"
        socket_dir = Path(_host(url))
        assert _server_alive(url)
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait()

        deadline = time.monotonic() + pg_server.STOP_TIMEOUT + 10
        while socket_dir.parent.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not socket_dir.parent.exists()
        assert not _server_alive(url)
    finally:
        if owner.poll() is None:
            owner.kill()
            owner.wait()
