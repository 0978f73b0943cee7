"""The Host header is not trusted: a request naming a host the app does not answer to is refused,
redirects are built on the configured public URL, and a form's Origin is compared with the
configured origin — never with what the request's Host says."""

from __future__ import annotations

import pytest

from persona_memory.settings import load_settings
from persona_memory.web.app import SECURITY_HEADERS
from persona_memory.web.hosts import PublicOrigin, allowed_hosts, host_name
from web_helpers import DAN, RUNTIME, SITE_SETTINGS, open_site, sign_in, site  # noqa: F401

EVIL = {"Host": "evil.example"}


async def test_a_request_naming_another_host_is_refused_before_any_route_runs(site):
    page = await site.client.get("/clear/", headers=EVIL)
    assert page.status_code == 400 and "location" not in page.headers
    assert page.headers["content-type"].startswith("text/html")
    assert "This site is not served at that address. Open it at http://testserver." in page.text
    assert "evil.example" not in page.text
    api = await site.client.post("/api/drain/", headers={**EVIL, **RUNTIME})
    assert api.status_code == 400 and "location" not in api.headers
    assert api.json() == {"error": "the Host header names a host this server does not answer to; call it at "
                                   "web.public_url or a name in web.allowed_hosts"}
    for answer in (page, api):
        for header, value in SECURITY_HEADERS.items():
            assert answer.headers[header] == value
    token = site.auth.login_token(DAN)
    login = await site.client.post("/login", data={"token": token}, headers=EVIL)
    assert login.status_code == 400 and "set-cookie" not in login.headers
    assert (await site.client.post("/login", data={"token": token})).status_code == 303  # the link was not used up


async def test_a_redirect_is_built_on_the_public_url_whatever_allowed_name_the_request_used(site):
    for host in ("localhost:8710", "127.0.0.1", "[::1]:8710", "TestServer.", "testserver"):
        moved = await site.client.get("/note/", headers={"Host": host})
        assert moved.status_code == 307 and moved.headers["location"] == "http://testserver/note", host
    assert (await site.client.get("/static", headers={"Host": "localhost"})).headers["location"] == \
        "http://testserver/static/"


async def test_the_origin_check_compares_with_the_configured_origin_not_the_host(site):
    csrf = await sign_in(site.client, site.auth, DAN)
    row_id = min(r.id for r in await site.memory.memories_about(DAN))
    for host, origin in (("localhost", "http://localhost"), ("127.0.0.1:8710", "http://127.0.0.1:8710")):
        refused = await site.client.post(f"/memories/{row_id}/delete", data={"csrf": csrf},
                                         headers={"Host": host, "Origin": origin})
        assert refused.status_code == 403 and "another site" in refused.text
    spoofed = await site.client.post(f"/memories/{row_id}/delete", data={"csrf": csrf},
                                     headers={"Host": "evil.example", "Origin": "http://evil.example"})
    assert spoofed.status_code == 400
    assert row_id in {r.id for r in await site.memory.memories_about(DAN)}
    same = await site.client.post(f"/memories/{row_id}/delete", data={"csrf": csrf},
                                  headers={"Host": "localhost", "Origin": "HTTP://TESTSERVER:80"})
    assert same.status_code == 303 and same.headers["location"] == "/?done=deleted"


async def test_allowed_hosts_names_exactly_the_hosts_served_besides_the_public_one(make_settings, clock):
    settings = make_settings({**SITE_SETTINGS, "web.public_url": "https://memory.example.com",
                              "web.allowed_hosts": ["pm.internal"]})
    async with open_site(settings, clock) as served:
        for host, status in (("memory.example.com", 401), ("pm.internal:8710", 401), ("localhost", 400),
                             ("127.0.0.1", 200), ("evil.example", 400)):  # 127.0.0.1 is web.host
            got = await served.client.get("/export" if status != 200 else "/login", headers={"Host": host})
            assert got.status_code == status, host
        moved = await served.client.get("/note/", headers={"Host": "pm.internal"})
        assert moved.headers["location"] == "https://memory.example.com/note"


def test_the_allowed_names_and_how_a_host_header_reads():
    web = load_settings(None, {"web.public_url": "https://Memory.Example.com/", "web.host": "0.0.0.0"}).web
    assert allowed_hosts(web) == {"memory.example.com", "localhost", "127.0.0.1", "::1"}
    assert allowed_hosts(web, also=["10.0.0.2"]) == {"memory.example.com", "localhost", "127.0.0.1", "::1", "10.0.0.2"}
    listed = load_settings(None, {"web.allowed_hosts": ["pm.internal", "::1"], "web.host": "10.0.0.2"}).web
    assert allowed_hosts(listed) == {"10.0.0.2", "pm.internal", "::1"}  # public_url is http://10.0.0.2:8710
    assert [host_name(h) for h in ("a.example:80", "A.EXAMPLE.", "[::1]:8710", "[0:0::1]", "::1", "a:b", "[::1",
                                    "[nope]:1", "")] == \
        ["a.example", "a.example", "::1", "::1", None, None, None, None, None]
    assert PublicOrigin.from_url("http://127.0.0.1:0").netloc is None  # serve --port 0: the port is not known yet
    assert PublicOrigin.from_url("https://Memory.Example.com:443/pm").netloc == "memory.example.com"


@pytest.mark.parametrize("bad", [["https://memory.example.com"], ["memory.example.com:443"], [""], "memory.example.com"])
def test_a_bad_allowed_hosts_setting_says_what_it_takes(bad):
    from persona_memory.errors import ConfigError

    with pytest.raises(ConfigError, match="web.allowed_hosts must be"):
        load_settings(None, {"web.allowed_hosts": bad})
