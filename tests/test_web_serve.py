"""Serving for real: Hypercorn's trio worker in the supervisor's process, readiness, shutdown,
and ``persona-memory serve`` stopping on Ctrl-C with its writes drained."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from functools import partial

import httpx
import pytest
import trio

import persona_memory as pm
from persona_memory.embedding import HashingEmbedder
from persona_memory.errors import ConfigError
from persona_memory.web import serve_web
from web_helpers import BEARER, DAN, SECRET_ENV, SECRETS, SITE_SETTINGS


async def test_serve_web_reports_its_port_serves_and_stops_listening_when_cancelled(make_settings, clock):
    settings = make_settings({**SITE_SETTINGS, "web.port": 0})
    async with pm.open_memory(settings, clock=clock, embedder=HashingEmbedder(64)) as memory:
        async with trio.open_nursery() as nursery:
            port = await nursery.start(partial(serve_web, memory, settings, secrets=SECRETS, clock=clock))
            assert isinstance(port, int) and port > 0
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                page = await client.get("/login")
                assert page.status_code == 200 and "You are signed out" in page.text
                assert "server" not in page.headers
                link = await client.post(f"/api/users/{DAN}/login-link", headers=BEARER)
                assert link.status_code == 201
            nursery.cancel_scope.cancel()
        with pytest.raises(OSError):
            await trio.open_tcp_stream("127.0.0.1", port)
        await memory.post_line("r1", "u:42", "Still open after the web app stopped.")


async def test_a_request_in_flight_finishes_when_shutdown_starts(make_settings, clock):
    settings = make_settings({**SITE_SETTINGS, "web.port": 0})
    async with pm.open_memory(settings, clock=clock, embedder=HashingEmbedder(64)) as memory:
        entered, release = trio.Event(), trio.Event()
        real = memory.memories_about

        async def slow_memories_about(user_id):
            entered.set()
            await release.wait()
            return await real(user_id)

        memory.memories_about = slow_memories_about  # type: ignore[method-assign]
        answers = []
        async with trio.open_nursery() as outer:
            async with trio.open_nursery() as server:
                port = await server.start(partial(serve_web, memory, settings, secrets=SECRETS, clock=clock))

                async def ask():
                    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
                        answers.append(await client.get(f"/api/users/{DAN}/memories", headers=BEARER))

                outer.start_soon(ask)
                await entered.wait()
                server.cancel_scope.cancel()
                outer.start_soon(_release_soon, release)
        (answer,) = answers
        assert answer.status_code == 200 and answer.json() == {"memories": []}


async def _release_soon(release: trio.Event) -> None:
    await trio.sleep(0.05)
    release.set()


async def test_serve_web_refuses_to_start_without_its_secrets(make_settings, clock, monkeypatch):
    monkeypatch.delenv("PERSONA_MEMORY_WEB_SECRET", raising=False)
    settings = make_settings({"web.port": 0})
    async with pm.open_memory(settings, clock=clock, embedder=HashingEmbedder(64)) as memory:
        async with trio.open_nursery() as nursery:
            with pytest.raises(ConfigError, match="PERSONA_MEMORY_WEB_SECRET"):
                await nursery.start(serve_web, memory, settings)


def test_the_serve_command_stops_on_ctrl_c_after_draining(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('[embedder]\nkind = "hashing"\ndim = 64\n[web]\nport = 0\n', encoding="utf-8")
    env = {**os.environ, **SECRET_ENV}
    proc = subprocess.Popen(
        [sys.executable, "-m", "persona_memory.cli", "serve", "--config", str(config), "--db", str(tmp_path / "m.db")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        first = proc.stdout.readline()
        assert first.startswith("persona-memory: serving http://127.0.0.1:"), first + proc.stderr.read()
        port = int(first.split(":")[3].split(" ")[0])
        got = httpx.get(f"http://127.0.0.1:{port}/api/users/42/controls", headers=BEARER)
        assert got.status_code == 200 and got.json()["memory_on"] is True
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "SIGINT: stopping the web app, then draining writes" in out and "stopped" in out
    assert "Traceback" not in err


def test_the_serve_command_names_a_missing_secret(tmp_path, monkeypatch, capsys):
    from persona_memory.cli import main

    monkeypatch.delenv("PERSONA_MEMORY_API_TOKEN", raising=False)
    monkeypatch.setenv("PERSONA_MEMORY_WEB_SECRET", SECRETS.signing_key)
    assert main(["serve", "--db", str(tmp_path / "m.db"), "--port", "0"]) == 2
    assert "PERSONA_MEMORY_API_TOKEN is not set" in capsys.readouterr().err
    assert not (tmp_path / "m.db").exists()


def test_serve_on_a_busy_port_or_a_bad_host_says_what_to_change_in_one_line(tmp_path, monkeypatch, capsys):
    import socket

    from persona_memory.cli import main

    for name, value in SECRET_ENV.items():
        monkeypatch.setenv(name, value)
    config = tmp_path / "config.toml"
    config.write_text('[embedder]\nkind = "hashing"\ndim = 64\n', encoding="utf-8")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--config", str(config), "--db", str(tmp_path / "m.db"), "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        f"persona-memory: cannot listen on 127.0.0.1:{port}: the port is taken by another program; "
        "set web.port (or --port) to a free port, or --port 0 for any free one"
    ]
    assert main(["serve", "--config", str(config), "--db", str(tmp_path / "m.db"),
                 "--host", "no-such-host.invalid", "--port", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the host 'no-such-host.invalid' is not an address here" in err[0]
    assert "set web.host (or --host)" in err[0]


def test_serve_as_a_worker_on_a_sqlite_file_or_advertised_without_worker_says_what_to_fix(tmp_path, monkeypatch, capsys):
    from persona_memory.cli import main

    for name, value in SECRET_ENV.items():
        monkeypatch.setenv(name, value)
    assert main(["serve", "--worker", "w1", "--db", str(tmp_path / "m.db"), "--port", "0"]) == 2
    assert "a cluster worker needs storage.url = 'postgresql://…'" in capsys.readouterr().err
    assert not (tmp_path / "m.db").exists()
    with pytest.raises(SystemExit):
        main(["serve", "--advertise", "http://10.0.0.2:8711", "--db", str(tmp_path / "m.db")])
    assert "--advertise needs --worker" in capsys.readouterr().err
