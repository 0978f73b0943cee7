"""Access to the human's pages: login links, the session cookie, secrets from the environment,
and the ``login-link`` command."""

from __future__ import annotations

from datetime import timedelta

import pytest

from persona_memory import ManualClock
from persona_memory.cli import main
from persona_memory.errors import ConfigError
from persona_memory.settings import load_settings
from persona_memory.web import Auth, Session, WebSecrets
from web_helpers import DAN, SECRET_ENV, SECRETS, SITE_SETTINGS, open_site, sign_in, site  # noqa: F401

WEB = load_settings(None, SITE_SETTINGS).web
ENV = SECRET_ENV


async def test_a_login_link_signs_the_person_in_once_with_a_safe_cookie(site):
    token = site.auth.login_token(DAN)
    shown = await site.client.get("/login", params={"token": token})
    assert "signs you in as <strong>Dan</strong>" in shown.text
    assert (await site.client.get("/login", params={"token": token})).status_code == 200
    done = await site.client.post("/login", data={"token": token})
    cookie = done.headers["set-cookie"]
    assert done.status_code == 303 and cookie.startswith("pm_session=")
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/" in cookie
    assert "Max-Age=43200" in cookie and "Secure" not in cookie
    assert (await site.client.get("/")).status_code == 200
    async with site.other_client() as replay:
        used = await replay.post("/login", data={"token": token})
        assert used.status_code == 403 and "was used already" in used.text
        assert "set-cookie" not in used.headers
        assert "was used already" in (await replay.get("/login", params={"token": token})).text


async def test_the_cookie_is_secure_when_served_behind_tls(make_settings, clock):
    async with open_site(make_settings({**SITE_SETTINGS, "web.secure_cookies": True}), clock) as secure:
        token = secure.auth.login_token(DAN)
        done = await secure.client.post("/login", data={"token": token})
        assert "; Secure" in done.headers["set-cookie"]


async def test_a_tampered_link_is_refused(site):
    token = site.auth.login_token(DAN)
    payload, stamp, signature = token.split(".")
    forged_for_17 = Auth(SECRETS, WEB, site.clock).login_token(17).split(".")[0]
    other_key = WebSecrets(signing_key="k" * 40, api_token="t" * 40)
    for bad in [
        f"{payload}.{stamp}.{signature[:-2]}{'AA' if signature[-2:] != 'AA' else 'BB'}",
        f"{forged_for_17}.{stamp}.{signature}",
        token[:-5],
        "not-a-token",
        Auth(other_key, WEB, site.clock).login_token(DAN),
    ]:
        shown = await site.client.get("/login", params={"token": bad})
        assert shown.status_code == 403 and "This login link is not valid" in shown.text
        posted = await site.client.post("/login", data={"token": bad})
        assert posted.status_code == 403 and "set-cookie" not in posted.headers
    assert (await site.client.get("/")).status_code == 401


async def test_a_link_works_for_login_link_minutes_and_not_after(site):
    fresh = site.auth.login_token(DAN)
    stale = site.auth.login_token(DAN)
    site.clock.advance(minutes=14, seconds=59)
    assert (await site.client.get("/login", params={"token": fresh})).status_code == 200
    site.clock.advance(seconds=2)
    expired = await site.client.post("/login", data={"token": stale})
    assert expired.status_code == 403 and "This login link has expired" in expired.text
    assert "set-cookie" not in expired.headers


async def test_a_link_from_the_future_is_refused(site):
    early = Auth(SECRETS, WEB, ManualClock(site.clock.now() + timedelta(hours=1)))
    refused = await site.client.post("/login", data={"token": early.login_token(DAN)})
    assert refused.status_code == 403


async def test_a_session_lasts_session_hours(site):
    await sign_in(site.client, site.auth, DAN)
    site.clock.advance(hours=11, minutes=59)
    assert (await site.client.get("/")).status_code == 200
    site.clock.advance(minutes=2)
    assert (await site.client.get("/")).status_code == 401


async def test_a_tampered_or_foreign_cookie_is_no_session(site):
    await sign_in(site.client, site.auth, DAN)
    cookie = site.client.cookies.get("pm_session")
    other = Auth(WebSecrets(signing_key="k" * 40, api_token="t" * 40), WEB, site.clock)

    for bad in [cookie[:-3] + ("xyz" if cookie.endswith("abc") else "abc"), other.session_cookie(Session(DAN, "x")), "", "garbage"]:
        async with site.other_client() as browser:
            browser.cookies.set("pm_session", bad)
            assert (await browser.get("/")).status_code == 401


def test_secrets_come_from_the_environment_and_a_missing_one_names_the_variable():
    web = load_settings().web
    assert WebSecrets.from_env(web, ENV) == SECRETS
    with pytest.raises(ConfigError, match="PERSONA_MEMORY_API_TOKEN is not set"):
        WebSecrets.from_env(web, {"PERSONA_MEMORY_WEB_SECRET": SECRETS.signing_key})
    without_runtime = {k: v for k, v in ENV.items() if k != "PERSONA_MEMORY_RUNTIME_TOKEN"}
    with pytest.raises(ConfigError, match="PERSONA_MEMORY_RUNTIME_TOKEN is not set; it is the bearer token of the runtime API"):
        WebSecrets.from_env(web, without_runtime)
    with pytest.raises(ConfigError, match="PERSONA_MEMORY_WEB_SECRET holds only 5 characters"):
        WebSecrets.from_env(web, {**ENV, "PERSONA_MEMORY_WEB_SECRET": "short"})
    assert WebSecrets.from_env(web, {"PERSONA_MEMORY_WEB_SECRET": SECRETS.signing_key}, api=False).api_token == ""
    assert SECRETS.signing_key not in repr(SECRETS) and SECRETS.runtime_token not in repr(SECRETS)


def test_without_an_api_token_no_bearer_is_accepted():
    web = load_settings().web
    auth = Auth(WebSecrets(signing_key=SECRETS.signing_key, api_token=""), web)
    assert not auth.bearer_ok("Bearer ") and not auth.bearer_ok("Bearer x")


async def test_the_login_link_command_prints_a_link_that_signs_the_user_in(monkeypatch, capsys):
    monkeypatch.setenv("PERSONA_MEMORY_WEB_SECRET", SECRETS.signing_key)
    monkeypatch.delenv("PERSONA_MEMORY_API_TOKEN", raising=False)
    assert main(["login-link", "42"]) == 0
    url = capsys.readouterr().out.strip()
    assert url.startswith("http://127.0.0.1:8710/login?token=")
    auth = Auth(SECRETS, WEB)
    session = await auth.redeem_login(url.split("token=", 1)[1])
    assert session.user_id == DAN


@pytest.mark.parametrize(
    ("config", "arguments", "link_starts"),
    [
        ("[web]\nport = 9123\n", [], "http://127.0.0.1:9123/login?token="),
        ('[web]\npublic_url = "https://memory.example.com/"\n', [], "https://memory.example.com/login?token="),
        ("[web]\nport = 9123\n", ["--public-url", "https://chat.example.org/memory"],
         "https://chat.example.org/memory/login?token="),
        ("", ["--port", "9500"], "http://127.0.0.1:9500/login?token="),
        ("", ["--host", "memory.internal", "--port", "9500"], "http://memory.internal:9500/login?token="),
    ],
)
async def test_the_login_link_is_on_the_address_the_pages_are_served_at(
    tmp_path, monkeypatch, capsys, config, arguments, link_starts
):
    monkeypatch.setenv("PERSONA_MEMORY_WEB_SECRET", SECRETS.signing_key)
    (tmp_path / "config.toml").write_text(config)
    assert main(["login-link", "--config", str(tmp_path / "config.toml"), *arguments, "42"]) == 0
    url = capsys.readouterr().out.strip()
    assert url.startswith(link_starts)
    session = await Auth(SECRETS, WEB).redeem_login(url.split("token=", 1)[1])
    assert session.user_id == DAN


def test_a_login_link_public_url_that_is_not_http_is_refused(monkeypatch, capsys):
    monkeypatch.setenv("PERSONA_MEMORY_WEB_SECRET", SECRETS.signing_key)
    assert main(["login-link", "--public-url", "memory.example.com", "42"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "web.public_url must be an http:// or https:// URL" in captured.err
    assert "got 'memory.example.com'" in captured.err


def test_the_login_link_command_names_a_missing_secret(monkeypatch, capsys):
    monkeypatch.delenv("PERSONA_MEMORY_WEB_SECRET", raising=False)
    assert main(["login-link", "42"]) == 2
    assert "PERSONA_MEMORY_WEB_SECRET is not set" in capsys.readouterr().err
    monkeypatch.setenv("PERSONA_MEMORY_WEB_SECRET", SECRETS.signing_key)
    assert main(["login-link", "0"]) == 2
    assert "positive int user id" in capsys.readouterr().err
