"""Signing out and using a login link hold wherever the database is: after ``serve`` restarts
(a new app over the same file), on another worker sharing the database (two apps at once, on
SQLite and on PostgreSQL), and the records of them go once the link or session has expired."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx
import trio

import persona_memory as pm
from persona_memory.embedding import HashingEmbedder
from persona_memory.web import build_app
from persona_memory.web.auth import CLOCK_SKEW, SESSION_COOKIE
from web_helpers import DAN, SECRETS, SITE_SETTINGS, client_for, csrf_of, sign_in

CARA = 17


@asynccontextmanager
async def serving(settings: pm.Settings, clock: pm.ManualClock) -> AsyncIterator[tuple[pm.Memory, Any]]:
    """A memory on ``settings`` and its web app (what one ``serve`` process runs)."""
    async with pm.open_memory(settings, clock=clock, embedder=HashingEmbedder(64)) as memory:
        yield memory, build_app(memory, settings.web, SECRETS, clock=clock)


async def sign_out(client: httpx.AsyncClient) -> None:
    csrf = csrf_of((await client.get("/")).text)
    out = await client.post("/logout", data={"csrf": csrf})
    assert out.status_code == 303 and out.headers["location"] == "/login"


async def opens_home(app: Any, cookie: str) -> int:
    async with client_for(app) as browser:
        browser.cookies.set(SESSION_COOKIE, cookie)
        return (await browser.get("/")).status_code


async def redeem(app: Any, token: str) -> httpx.Response:
    async with client_for(app) as browser:
        return await browser.post("/login", data={"token": token})


async def revocations(memory: pm.Memory) -> dict[str, int]:
    rows = await memory._store.read(
        lambda conn: conn.execute("SELECT kind, count(*) FROM web_revocations GROUP BY kind").fetchall()
    )
    return {kind: count for kind, count in rows}


async def test_a_signed_out_cookie_and_a_used_link_stay_refused_after_a_restart(make_settings, clock):
    settings = make_settings(SITE_SETTINGS)
    async with serving(settings, clock) as (_, app):
        async with client_for(app) as browser, client_for(app) as other:
            await sign_in(browser, app.state.auth, DAN)
            ended = browser.cookies.get(SESSION_COOKIE)
            await sign_out(browser)
            await sign_in(other, app.state.auth, CARA)
            kept = other.cookies.get(SESSION_COOKIE)
        used = app.state.auth.login_token(DAN)
        assert (await redeem(app, used)).status_code == 303
        unused = app.state.auth.login_token(DAN)

    async with serving(settings, clock) as (_, restarted):
        assert await opens_home(restarted, ended) == 401
        assert await opens_home(restarted, kept) == 200  # only what was revoked is refused
        async with client_for(restarted) as browser:
            shown = await browser.get("/login", params={"token": used})
            assert shown.status_code == 403 and "This login link was used already" in shown.text
        again = await redeem(restarted, used)
        assert again.status_code == 403 and "set-cookie" not in again.headers
        assert (await redeem(restarted, unused)).status_code == 303


@asynccontextmanager
async def two_workers(make_settings, clock, backend: Mapping[str, str]) -> AsyncIterator[tuple[Any, Any]]:
    """Two apps over one database at the same time, as two cluster workers are."""
    settings = make_settings({**SITE_SETTINGS, **backend})
    async with serving(settings, clock) as (_, a), serving(settings, clock) as (_, b):
        yield a, b


async def test_a_link_used_at_one_worker_and_a_session_ended_there_are_refused_at_the_other(
    make_settings, clock, on_each_backend
):
    async with two_workers(make_settings, clock, on_each_backend) as (a, b):
        token = a.state.auth.login_token(DAN)
        assert (await redeem(a, token)).status_code == 303
        at_b = await redeem(b, token)
        assert at_b.status_code == 403 and "This login link was used already" in at_b.text
        async with client_for(a) as browser:
            await sign_in(browser, a.state.auth, DAN)
            cookie = browser.cookies.get(SESSION_COOKIE)
            assert await opens_home(b, cookie) == 200
            await sign_out(browser)
        assert await opens_home(b, cookie) == 401
        assert await opens_home(a, cookie) == 401


async def test_one_link_redeemed_at_two_workers_at_once_signs_in_once(make_settings, clock, on_each_backend):
    async with two_workers(make_settings, clock, on_each_backend) as (a, b):
        token = a.state.auth.login_token(DAN)
        answers: list[int] = []

        async def redeem_at(app: Any) -> None:
            answers.append((await redeem(app, token)).status_code)

        async with trio.open_nursery() as nursery:
            for app in (a, b, a, b):
                nursery.start_soon(redeem_at, app)
        assert sorted(answers) == [303, 403, 403, 403]


async def test_a_revocation_is_kept_while_its_link_or_session_could_still_be_used_then_pruned(
    make_settings, clock
):
    async with serving(make_settings(SITE_SETTINGS), clock) as (memory, app):
        first = app.state.auth.login_token(DAN)
        assert (await redeem(app, first)).status_code == 303
        async with client_for(app) as browser:
            await sign_in(browser, app.state.auth, DAN)
            ended = browser.cookies.get(SESSION_COOKIE)
            await sign_out(browser)
        assert await revocations(memory) == {"link": 2, "session": 1}

        clock.advance(minutes=15, seconds=-1)  # the first link still within its lifetime
        assert (await redeem(app, first)).status_code == 403
        assert (await redeem(app, app.state.auth.login_token(CARA))).status_code == 303
        assert await revocations(memory) == {"link": 3, "session": 1}  # nothing pruned early

        clock.advance(seconds=1 + CLOCK_SKEW.total_seconds() + 1)  # the first two links are past it
        expired = await redeem(app, first)
        assert expired.status_code == 403 and "This login link has expired" in expired.text
        assert (await redeem(app, app.state.auth.login_token(CARA))).status_code == 303
        assert await revocations(memory) == {"link": 2, "session": 1}

        clock.advance(hours=12)  # and the ended session is past its own
        assert await opens_home(app, ended) == 401
        async with client_for(app) as browser:
            await sign_in(browser, app.state.auth, CARA)
            await sign_out(browser)
        assert await revocations(memory) == {"link": 1, "session": 1}
