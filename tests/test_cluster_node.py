"""Two cluster workers on one PostgreSQL, in one process (``cluster/node.py``): any worker takes
any call, the owner answers blocks and recall notes, writes land once, a killed worker's
personas are served again by the survivor, and a worker that lost a persona writes nothing.

Each worker is the real thing: ``open_cluster_memory`` over its own stores, serving its web
app on a loopback port (forwarded blocks travel over HTTP). Leases and membership run on the
server's clock, so these tests use trio's real clock, short leases, and deadline loops.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
import trio

from persona_memory import MemberJoined, RoomOpened, RoomWentQuiet
from persona_memory.cluster.node import ClusterMemory, open_cluster_memory
from persona_memory.errors import InvalidInput, LeaseLost, NotOwnedHere
from persona_memory.storage import membership
from persona_memory.web import Auth, WebSecrets, serve_web

from conftest import settings_for

TOKEN = "r" * 40
SECRETS = WebSecrets(signing_key="k" * 40, api_token="a" * 40, runtime_token=TOKEN)
DEADLINE = 20.0


def _settings(tmp_path: Path, url: str):
    return settings_for(tmp_path, {
        "storage.url": url, "cluster.lease_seconds": 1.0, "cluster.renew_seconds": 0.3,
        "web.host": "127.0.0.1", "web.port": 0,
    })


class Node:
    def __init__(self, memory: ClusterMemory, scope: trio.CancelScope, url: str = "") -> None:
        self.memory = memory
        self.scope = scope
        self.url = url  # where its web app answers


@asynccontextmanager
async def running(tmp_path: Path, url: str, nursery: trio.Nursery, worker_id: str, mind=None) -> AsyncIterator[Node]:
    settings = _settings(tmp_path, url)
    ready: list[Node] = []
    started = trio.Event()

    async def run() -> None:
        with trio.CancelScope() as scope:
            async with open_cluster_memory(settings, worker_id, runtime_token=TOKEN, mind=mind) as memory:
                async with trio.open_nursery() as inner:
                    port = await inner.start(lambda task_status: serve_web(memory, settings, secrets=SECRETS, task_status=task_status))
                    memory.worker.advertise(f"http://127.0.0.1:{port}")
                    ready.append(Node(memory, scope, f"http://127.0.0.1:{port}"))
                    started.set()
                    await trio.sleep_forever()

    nursery.start_soon(run)
    await started.wait()
    yield ready[0]


@asynccontextmanager
async def two_workers(tmp_path: Path, url: str) -> AsyncIterator[tuple[Node, Node, trio.Nursery]]:
    """Workers ``w-a`` and ``w-b`` on ``url`` for the block (the nursery: for a third), all
    stopped at its end as by a crash (nothing released)."""
    async with trio.open_nursery() as nursery:
        async with running(tmp_path, url, nursery, "w-a") as a, running(tmp_path, url, nursery, "w-b") as b:
            yield a, b, nursery
            nursery.cancel_scope.cancel()


async def until(check, what: str) -> None:
    with trio.fail_after(DEADLINE):
        while not await check():
            await trio.sleep(0.05)


async def _owner_of(node: Node, persona: str) -> str | None:
    found = await node.memory._store.read(lambda c: membership.owner_address(c, persona))
    return None if found is None else found[0]


def _open(room: str, persona: str, humans=(42,), private=True, topic=None) -> RoomOpened:
    return RoomOpened(room_id=room, personas=(persona,), humans=frozenset(humans), private=private,
                      incognito=False, kit=None, topic=topic)


PERSONAS = [f"guide-{k}" for k in range(6)]


async def _both_own_some(a: Node, b: Node) -> None:
    async def split() -> bool:
        owned_a, owned_b = set(a.memory.worker.owned()), set(b.memory.worker.owned())
        return owned_a | owned_b == set(PERSONAS) and not owned_a & owned_b and owned_a and owned_b

    await until(split, "the personas split between the two workers")


async def _a_room_each(via: Node, a: Node, b: Node, prefix: str, first_uid: int) -> None:
    """Open a private room per persona (``prefix-k``, human ``first_uid + k``) through ``via``
    — the personas become known through their rooms — and wait until both workers own some."""
    for k, persona in enumerate(PERSONAS):
        await via.memory.send(_open(f"{prefix}-{k}", persona, humans=(first_uid + k,)))
    await _both_own_some(a, b)


async def test_any_worker_takes_events_and_lines_and_the_owner_answers_blocks(tmp_path: Path, postgres_url: str) -> None:
    async with two_workers(tmp_path, postgres_url) as (a, b, nursery):
        await _a_room_each(a, a, b, "room", 100)
        persona = sorted(b.memory.worker.owned())[0]
        k = PERSONAS.index(persona)
        room = f"room-{k}"
        # Lines and the quiet go to the worker that does NOT own the persona.
        await a.memory.post_line(room, f"u:{100 + k}", "I keep bees on a rooftop in the old town.")
        await a.memory.send(RoomWentQuiet(room_id=room))
        await a.memory.drain()  # at a: waits for b, the owner, too
        assert len(await a.memory.memories_about(100 + k)) == 1
        # A reopen through a; the block asked at a comes from b's cache, by HTTP.
        await a.memory.send(_open(room, persona, humans=(100 + k,)))
        block_a = await a.memory.built_block(persona, room)
        block_b = await b.memory.built_block(persona, room)
        assert "bees on a rooftop" in block_a.text
        assert block_a.text == block_b.text and block_a.generation == block_b.generation
        # A join taken at a is in the block b answers right after.
        rows = await b.memory.memories_about(100 + k)
        assert len(rows) == 1 and "bees" in rows[0].text and rows[0].persona == persona


async def test_a_join_taken_at_one_worker_is_in_the_block_the_owner_gives_next(tmp_path: Path, postgres_url: str) -> None:
    async with two_workers(tmp_path, postgres_url) as (a, b, nursery):
        for k, persona in enumerate(PERSONAS):
            await b.memory.send(_open(f"hall-{k}", persona, humans=(7,), private=False))
        await _both_own_some(a, b)
        persona = sorted(a.memory.worker.owned())[0]
        room = f"hall-{PERSONAS.index(persona)}"
        before = await b.memory.built_block(persona, room)
        await b.memory.send(MemberJoined(room_id=room, user_id=8))
        after = await b.memory.built_block(persona, room)
        assert after.generation > before.generation
        assert a.memory.supervisor.rooms[room].present == frozenset({7, 8})
        scraped = a.memory.metrics.render().decode()
        assert f"persona_memory_cluster_owned_personas {float(len(a.memory.worker.owned()))}" in scraped
        assert f"persona_memory_cluster_events_taken {float(a.memory.inbox.taken)}" in scraped
        assert a.memory.inbox.taken >= 1
        with pytest.raises(InvalidInput, match="already"):
            await a.memory.send(MemberJoined(room_id=room, user_id=8))


async def test_a_killed_workers_personas_are_served_and_written_by_the_survivor(tmp_path: Path, postgres_url: str) -> None:
    async with two_workers(tmp_path, postgres_url) as (a, b, nursery):
        await _a_room_each(a, a, b, "den", 200)
        lost = sorted(b.memory.worker.owned())
        b.scope.cancel()  # as a crash: nothing released
        persona = lost[0]
        k = PERSONAS.index(persona)
        await a.memory.post_line(f"den-{k}", f"u:{200 + k}", "I sing in a choir on Sundays.")
        await a.memory.send(RoomWentQuiet(room_id=f"den-{k}"))

        async def taken_over() -> bool:
            return set(lost) <= set(a.memory.worker.owned())

        await until(taken_over, "the survivor owns the dead worker's personas")
        block = await a.memory.block(persona, f"den-{k}")  # rebuilt from the stored room
        assert isinstance(block, str)

        async def written() -> bool:
            return len(await a.memory.memories_about(200 + k)) == 1

        await until(written, "the survivor wrote the line the dead worker never did")


async def test_no_worker_lets_a_room_flip_incognito_and_a_reopen_without_a_persona_archives_it_for_it(
    tmp_path: Path, postgres_url: str
) -> None:
    async with two_workers(tmp_path, postgres_url) as (a, b, nursery):
        await _a_room_each(a, a, b, "nook", 30)
        with pytest.raises(InvalidInput, match="incognito"):
            await b.memory.send(RoomOpened(room_id="nook-0", personas=(PERSONAS[0],), humans=frozenset({30}),
                                           private=True, incognito=True, kit=None, topic=None))
        # nook-1 reopened with another persona: the first one no longer has it.
        first, other = PERSONAS[1], PERSONAS[2]
        await b.memory.send(RoomOpened(room_id="nook-1", personas=(other,), humans=frozenset({31}),
                                       private=True, incognito=False, kit=None, topic=None))
        assert isinstance(await a.memory.block(other, "nook-1"), str)
        with pytest.raises(InvalidInput, match="not in room"):
            await a.memory.block(first, "nook-1")


async def test_a_joining_worker_takes_its_share_and_serves_and_writes_it(tmp_path: Path, postgres_url: str) -> None:
    async with two_workers(tmp_path, postgres_url) as (a, b, nursery):
        for k, persona in enumerate(PERSONAS):
            await a.memory.send(_open(f"loft-{k}", persona, humans=(60 + k,)))
            await a.memory.post_line(f"loft-{k}", f"u:{60 + k}", "I grow chillies on my balcony every summer.")
        await _both_own_some(a, b)
        async with running(tmp_path, postgres_url, nursery, "w-c") as c:
            async def joined() -> bool:
                owners = [set(n.memory.worker.owned()) for n in (a, b, c)]
                return all(owners) and sum(map(len, owners)) == len(PERSONAS) and set().union(*owners) == set(PERSONAS)

            await until(joined, "the third worker took its share")
            for k in range(len(PERSONAS)):
                await b.memory.send(RoomWentQuiet(room_id=f"loft-{k}"))

            async def all_written() -> bool:
                counts = [len(await a.memory.memories_about(60 + k)) for k in range(len(PERSONAS))]
                assert max(counts) <= 1, counts  # never twice
                return min(counts) == 1

            await until(all_written, "every persona wrote its line once")
            persona = sorted(c.memory.worker.owned())[0]
            k = PERSONAS.index(persona)
            await a.memory.send(_open(f"loft-{k}", persona, humans=(60 + k,)))
            assert "chillies" in await a.memory.block(persona, f"loft-{k}")


async def test_lines_a_killed_worker_took_with_its_own_room_open_are_written_by_the_next_owner(
    tmp_path: Path, postgres_url: str
) -> None:
    async with two_workers(tmp_path, postgres_url) as (a, b, nursery):
        await _a_room_each(b, a, b, "attic", 120)
        persona = sorted(b.memory.worker.owned())[0]
        k = PERSONAS.index(persona)
        # b opens a new room of its own persona, takes its lines and its quiet, and dies
        # at once: before its writer or any background task of it could act on them.
        await b.memory.send(_open(f"cellar-{k}", persona, humans=(120 + k,)))
        await b.memory.post_line(f"cellar-{k}", f"u:{120 + k}", "I brew cider from the apples in our orchard.")
        await b.memory.send(RoomWentQuiet(room_id=f"cellar-{k}"))
        b.scope.cancel()

        async def written() -> bool:
            rows = await a.memory.memories_about(120 + k)
            assert len(rows) <= 1
            return len(rows) == 1 and "cider" in rows[0].text

        await until(written, "the survivor wrote the dead worker's last slice")
        facts = await a.memory.room_facts([f"cellar-{k}"])
        assert f"cellar-{k}" in facts  # the room is on the human's page too


async def test_a_delete_at_a_worker_that_does_not_own_the_persona_purges_the_owners_block_at_once(
    tmp_path: Path, postgres_url: str
) -> None:
    async with two_workers(tmp_path, postgres_url) as (a, b, nursery):
        await _a_room_each(a, a, b, "porch", 80)
        persona = sorted(b.memory.worker.owned())[0]
        k = PERSONAS.index(persona)
        uid, room = 80 + k, f"porch-{k}"
        await a.memory.post_line(room, f"u:{uid}", "I restore old pinball machines in my garage.")
        await a.memory.send(RoomWentQuiet(room_id=room))
        await a.memory.drain()
        await a.memory.send(_open(room, persona, humans=(uid,)))
        before = await b.memory.built_block(persona, room)
        assert "pinball" in before.text
        [row] = await a.memory.memories_about(uid)
        await a.memory.delete_memory(uid, row.id)  # at a, which does not own the persona
        assert await a.memory.memories_about(uid) == []
        # The room did not change (same generation), and the line is gone from b's cache.
        after = await b.memory.built_block(persona, room)
        assert after.generation == before.generation and "pinball" not in after.text
        assert "pinball" not in await a.memory.block(persona, room)
        # An undo and a clear-all at a run at b too, and answer what they did.
        await a.memory.post_line(room, f"u:{uid}", "I coach a junior chess club on Thursdays.")
        await a.memory.send(RoomWentQuiet(room_id=room))
        await a.memory.drain()
        [notice] = [n for n in await a.memory.notices(uid) if any(
            "chess" in r.text for r in await a.memory.memories_about(uid) if r.id in n.memory_ids)]
        assert await a.memory.undo(uid, notice.id) == list(notice.memory_ids)
        await a.memory.post_line(room, f"u:{uid}", "I keep two tortoises in the back garden.")
        await a.memory.send(RoomWentQuiet(room_id=room))
        await a.memory.drain()
        assert await a.memory.clear_memories(uid) == 1 and await a.memory.memories_about(uid) == []


async def test_a_worker_that_does_not_hold_a_lease_writes_nothing_for_it(tmp_path: Path, postgres_url: str) -> None:
    async with trio.open_nursery() as nursery:
        async with running(tmp_path, postgres_url, nursery, "w-a") as a:
            with pytest.raises(NotOwnedHere, match="does not hold the lease of persona 'stranger'"):
                a.memory.worker.fence("stranger")
            assert isinstance(NotOwnedHere("p", "w"), LeaseLost)
            # Its cluster routes: the runtime token, a body that says what is wrong, and 421
            # for a persona it does not own (a forward never travels a second hop).
            address = a.memory.worker.address
            async with httpx.AsyncClient() as http:
                url = f"{address}/cluster/built-block"
                no_token = await http.post(url, json={"persona": "stranger", "room_id": "r"})
                assert no_token.status_code == 401
                auth = {"authorization": f"Bearer {TOKEN}"}
                bad = await http.post(url, json={"persona": "stranger"}, headers=auth)
                assert bad.status_code == 422 and "persona, room_id" in bad.json()["error"]
                elsewhere = await http.post(url, json={"persona": "stranger", "room_id": "r"}, headers=auth)
                assert elsewhere.status_code == 421 and "does not hold the lease" in elsewhere.json()["error"]
                edit = await http.post(f"{address}/cluster/edit", json={"persona": "stranger", "edit": "burn"},
                                       headers=auth)
                assert edit.status_code == 422 and '"edit": "delete"' in edit.json()["error"]
            nursery.cancel_scope.cancel()


async def test_a_cluster_worker_needs_postgresql(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="postgresql"):
        async with open_cluster_memory(settings_for(tmp_path), "w-a"):
            pass


async def test_signing_in_and_out_at_one_worker_holds_at_the_other(tmp_path: Path, postgres_url: str) -> None:
    web = _settings(tmp_path, postgres_url).web
    token = Auth(SECRETS, web).login_token(42)
    async with two_workers(tmp_path, postgres_url) as (a, b, nursery):
        async with httpx.AsyncClient(base_url=a.url) as at_a, httpx.AsyncClient(base_url=b.url) as at_b:
            assert (await at_a.post("/login", data={"token": token})).status_code == 303
            used = await at_b.post("/login", data={"token": token})
            assert used.status_code == 403 and "was used already" in used.text
            at_b.cookies.set("pm_session", at_a.cookies.get("pm_session"))
            home = await at_b.get("/")
            assert home.status_code == 200
            csrf = re.search(r'name="csrf" value="([^"]+)"', home.text).group(1)
            assert (await at_b.post("/logout", data={"csrf": csrf})).status_code == 303
            assert (await at_a.get("/")).status_code == 401


async def test_a_forwarded_call_nested_too_deep_is_a_400_not_a_crash(tmp_path: Path, postgres_url: str) -> None:
    async with two_workers(tmp_path, postgres_url) as (a, b, nursery):
        async with httpx.AsyncClient(base_url=a.url, headers={"Authorization": f"Bearer {TOKEN}"}) as at_a:
            for route in ("edit", "recall", "built-block", "drain"):
                got = await at_a.post(f"/cluster/{route}", content=b"[" * 30_000 + b"]" * 30_000)
                assert got.status_code == 400, route
                assert got.json()["error"].startswith("the body nests arrays and objects more than 32 deep")
