"""Shared fixtures: settings on a temporary database, a fixed wall clock, and a memory to open.

- ``settings``: the embedded defaults with the SQLite file in ``tmp_path``, the fast offline
  hashing embedder (64-d) and the offline mind reading on a thread (no worker process to
  start per test; ``test_offline_processes.py`` runs the processes). ``make_settings(overrides)``
  gives the same with more keys changed.
- ``clock``: a ``ManualClock`` standing at ``NOW``; tests move it with ``clock.advance(days=1)``.
- ``open_test_memory``: ``open_memory`` on those settings, that clock and a ``HashingEmbedder``;
  call it as ``open_test_memory({"scope.v1_proven": False}, write_path=...)`` or with
  ``mind=FakeMind(...)``; with neither, the write path runs the bundled offline mind.
- ``postgres_url``: the URL of a fresh, empty PostgreSQL database, dropped after the test. The
  server is the one named by ``PERSONA_MEMORY_TEST_POSTGRES_URL`` (its role needs CREATEDB),
  else a throw-away server this session starts and stops (``pg_server``). Where none can be
  started, the tests that ask for it are skipped with the reason (``pytest -rs`` lists it) —
  unless ``PERSONA_MEMORY_TEST_POSTGRES_REQUIRED=1`` (CI sets it), where they fail instead.

A note on virtual time: a task waiting for the SQLite worker thread counts as blocked for trio,
so a clock that jumps the moment every task waits would leap from timer to timer (retirement
checks, sweeps, backoffs) for as long as a database call is in flight — holding the interpreter
lock that call needs, so the call runs slower and the leaping goes on, for minutes of real time
on a busy machine. ``autojump_clock`` here (replacing pytest-trio's) jumps only after a
millisecond with nothing to run. The clock may still jump while a database call is in flight:
tests that assert exact virtual times do so only around code that does not touch the database.
"""

from __future__ import annotations

import itertools
import os
from contextlib import AbstractAsyncContextManager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import pytest
import trio.testing
from hypothesis import settings as hypothesis_settings

import pg_server

from persona_memory import ManualClock, Memory, Settings, load_settings, open_memory
from persona_memory.embedding import Embedder, HashingEmbedder

NOW = datetime(2026, 8, 18, 12, 0, tzinfo=timezone.utc)
DIM = 64

OpenTestMemory = Callable[..., AbstractAsyncContextManager[Memory]]


# A property test asserts what the code does, never how fast: hypothesis's per-example deadline
# is a timed assertion, and the first example of a test may pay a model's load on a busy machine.
hypothesis_settings.register_profile("persona-memory", deadline=None)
hypothesis_settings.load_profile("persona-memory")


@pytest.fixture
def autojump_clock() -> trio.testing.MockClock:
    """A virtual clock that jumps to the next timer once nothing has run for a millisecond of
    real time (see the module's note on virtual time)."""
    return trio.testing.MockClock(autojump_threshold=0.001)


def settings_for(tmp_path: Path, overrides: Mapping[str, Any] | None = None) -> Settings:
    """Defaults with the database in ``tmp_path`` (unless ``overrides`` name a ``storage.url``),
    the hashing embedder, the offline mind on a thread, and ``overrides``."""
    overrides = dict(overrides or {})
    place = {} if overrides.get("storage.url") else {"storage.path": str(tmp_path / "m.db")}
    fast = {"embedder.kind": "hashing", "embedder.dim": DIM, "mind.offline_processes": 0}
    return load_settings(None, {**place, **fast, **overrides})


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., Settings]:
    return lambda overrides=None: settings_for(tmp_path, overrides)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return settings_for(tmp_path)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(NOW)


@pytest.fixture
def open_test_memory(tmp_path: Path, clock: ManualClock) -> OpenTestMemory:
    """``open_memory`` for tests: temporary database, the ``clock`` fixture, hashing embedder."""

    def open_(
        overrides: Mapping[str, Any] | None = None,
        *,
        write_path: Any = None,
        embedder: Embedder | None = None,
        mind: Any = None,
    ) -> AbstractAsyncContextManager[Memory]:
        return open_memory(
            settings_for(tmp_path, overrides),
            clock=clock,
            embedder=embedder if embedder is not None else HashingEmbedder(DIM),
            write_path=write_path,
            mind=mind,
        )

    return open_


REQUIRE_POSTGRES_ENV = "PERSONA_MEMORY_TEST_POSTGRES_REQUIRED"
_database_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """The URL of the suite's PostgreSQL server (see the module docstring); skips without one."""
    configured = os.environ.get(pg_server.URL_ENV, "").strip()
    if configured:
        if not configured.startswith(("postgresql://", "postgres://")):
            pytest.fail(f"{pg_server.URL_ENV} must be a postgresql:// URL, got {configured!r}")
        yield configured
        return
    try:
        with pg_server.throwaway_server() as url:
            yield url
    except pg_server.Unavailable as exc:
        if os.environ.get(REQUIRE_POSTGRES_ENV) == "1":
            pytest.fail(f"{REQUIRE_POSTGRES_ENV}=1 but no PostgreSQL server could be started: {exc}")
        pytest.skip(f"PostgreSQL leg skipped: {exc}")


@pytest.fixture
def postgres_url(postgres_server_url: str) -> Iterator[str]:
    """A fresh, empty database on the suite's server, dropped (connections and all) afterwards."""
    import psycopg

    name = f"pm_test_{os.getpid()}_{next(_database_numbers)}"
    with psycopg.connect(postgres_server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield pg_server.with_database(postgres_server_url, name)
    finally:
        with psycopg.connect(postgres_server_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def on_each_backend(request: pytest.FixtureRequest) -> dict[str, str]:
    """The overrides that put a memory on SQLite (none: the file in ``tmp_path``) or on a fresh
    PostgreSQL database (``storage.url``; that leg skips where no server can be had)."""
    if request.param == "sqlite":
        return {}
    return {"storage.url": request.getfixturevalue("postgres_url")}


def on_backend(open_test_memory: OpenTestMemory, backend: Mapping[str, Any]) -> OpenTestMemory:
    """``open_test_memory`` with ``backend``'s overrides (``on_each_backend``) under every call's
    own: a module whose fixture ``open_test_memory`` returns this runs each test on both."""

    def open_(overrides: Mapping[str, Any] | None = None, **options: Any) -> AbstractAsyncContextManager[Memory]:
        return open_test_memory({**(overrides or {}), **backend}, **options)

    return open_


@pytest.fixture(params=["sqlite", "postgresql"])
def open_some_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., Any]:
    """``open_store`` on a file in ``tmp_path``, or ``open_postgres_store`` on a fresh database
    (``postgres_url``; that leg skips with its reason where no server can be had): the tests
    that take it run once on each backend, named ``[sqlite]`` and ``[postgresql]``."""
    from persona_memory.storage.store import open_postgres_store, open_store

    if request.param == "sqlite":
        return lambda **options: open_store(str(tmp_path / "memory.db"), **options)
    url = request.getfixturevalue("postgres_url")
    return lambda **options: open_postgres_store(url, **options)
