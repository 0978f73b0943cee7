"""Worker processes on one PostgreSQL: failover and fencing.

- **Failover**: three ``persona-memory serve --worker`` processes; a busy-room load through the
  runtime API over HTTP, spread at random over all three; one worker SIGKILLed mid-load. Then
  every cursor reaches its room's end, no line's memory is written twice, every line the
  survivors were given is read by its personas, the audience invariants of the busy-room
  harness hold on every block of the merged result, and the dead worker's personas were owned
  again within ``lease_seconds`` plus a renewal or two (the time is printed).
- **Fencing**: a worker paused (SIGSTOP) in the middle of a slice, past its lease, then resumed
  (SIGCONT), commits nothing: the slice is written once, by the worker that took the persona.

Real processes, real time: deadlines are generous (the VM is noisy), nothing is timed exactly.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import psycopg
import pytest
import trio

from persona_memory import MemberJoined, MemberLeft, RoomOpened, RoomWentQuiet
from persona_memory.client import AsyncRuntimeClient
from persona_memory.errors import MemoryClosed, ProviderUnreachable
from persona_memory.settings import load_settings

import harness
from cluster_procs import TOKEN, WorkerProcess, start_worker, stop_all
from openai_server import CHAT, chat_json_reply, hang, open_openai_server

PERSONAS = [f"keeper-{k}" for k in range(9)]
THINGS = ["a sailing dinghy", "an old film camera", "a sourdough starter", "a climbing wall pass",
          "a cello", "a vegetable plot", "a vintage scooter", "a telescope", "a pottery wheel"]
PLACES = ["Lyon", "Tromso", "Porto", "Hobart", "Quebec", "Split", "Galway", "Kobe", "Cusco"]


def _line(rng: random.Random, uid: int) -> str:
    thing, place = rng.choice(THINGS), rng.choice(PLACES)
    return rng.choice([
        f"I bought {thing} last weekend and I use it every evening.",
        f"My sister moved to {place} in the spring for a nursing job.",
        f"I am saving up for a trip to {place} next summer.",
        f"I started restoring {thing} with my neighbour.",
        f"Work has been hectic, we ship a new release on Friday.",
        f"I finally finished the long novel about {place} I told you about.",
    ])


def _db(url: str):
    return psycopg.connect(url, autocommit=True)


async def _call(clients: dict[str, AsyncRuntimeClient], alive: list[str], rng: random.Random, what, *args):
    """Call a random live worker; a worker that is dead or failing over is skipped for another."""
    for _attempt in range(60):
        name = rng.choice(alive)
        try:
            return await getattr(clients[name], what)(*args)
        except (ProviderUnreachable, MemoryClosed):
            await trio.sleep(0.2)
    raise AssertionError(f"no worker took {what}{args}")


def _owners(url: str) -> dict[str, str]:
    with _db(url) as conn:
        return dict(conn.execute(
            "SELECT persona, owner FROM persona_leases WHERE owner IS NOT NULL AND expires_at > now()"
        ).fetchall())


def _world(url: str) -> harness.WorldView:
    rows = []
    with _db(url) as conn:
        for r in conn.execute(
            "SELECT id, persona, subject, counterpart, witnessed, kind, text, valid_to, closed_by FROM persona_memory"
        ):
            subject, counterpart = r[2], r[3]
            ref = subject if subject.startswith("u:") else counterpart
            rows.append(harness.ModelRow(
                id=r[0], persona=r[1], subject=subject, user=int(ref[2:]) if ref else None,
                witnessed=frozenset(r[4]), kind=r[5], text=r[6], token=r[6], open=r[7] is None and r[8] is None,
            ))
    return harness.WorldView(tuple(rows), frozenset(), frozenset(), {})


async def test_three_workers_one_killed_mid_load_lose_nothing_and_write_nothing_twice(
    tmp_path: Path, postgres_url: str
) -> None:
    rng = random.Random(11)
    workers = [start_worker(postgres_url, f"w{k}", tmp_path) for k in range(3)]
    clients = {w.worker_id: AsyncRuntimeClient(w.url, TOKEN) for w in workers}
    alive = [w.worker_id for w in workers]
    rooms: dict[str, RoomOpened] = {}
    for k, persona in enumerate(PERSONAS):
        rooms[f"chat-{k}"] = RoomOpened(room_id=f"chat-{k}", personas=(persona,), humans=frozenset({300 + k}),
                                        private=True)
        rooms[f"club-{k}"] = RoomOpened(room_id=f"club-{k}", personas=(persona,),
                                        humans=frozenset({300 + k, 500 + k}), private=False)
    try:
        for event in rooms.values():
            await _call(clients, alive, rng, "send", event)
        with trio.fail_after(60):
            while len(_owners(postgres_url)) < len(PERSONAS):
                await trio.sleep(0.1)
        victim = workers[2]
        killed_at = None
        taken_back = None
        for evening in range(4):
            if evening == 2:
                owned_by_victim = {p for p, o in _owners(postgres_url).items() if o == victim.worker_id}
                victim.kill()
                killed_at = time.monotonic()
                alive.remove(victim.worker_id)

            async def room_evening(room_id: str, event: RoomOpened) -> None:
                local = random.Random(f"{room_id}-{evening}")
                await _call(clients, alive, local, "send", event)
                for _ in range(6):
                    uid = local.choice(sorted(event.humans))
                    await _call(clients, alive, local, "post_line", room_id, f"u:{uid}", _line(local, uid))
                if not event.private and local.random() < 0.5:
                    await _call(clients, alive, local, "send", MemberLeft(room_id=room_id, user_id=500 + int(room_id[5:])))
                    await _call(clients, alive, local, "send", MemberJoined(room_id=room_id, user_id=500 + int(room_id[5:])))
                await _call(clients, alive, local, "built_block", event.personas[0], room_id)
                await _call(clients, alive, local, "send", RoomWentQuiet(room_id=room_id))

            async with trio.open_nursery() as nursery:
                for room_id, event in rooms.items():
                    nursery.start_soon(room_evening, room_id, event)
            if killed_at is not None and taken_back is None:
                with trio.fail_after(60):
                    while not owned_by_victim <= {p for p, o in _owners(postgres_url).items() if o in alive}:
                        await trio.sleep(0.05)
                taken_back = time.monotonic() - killed_at
        assert owned_by_victim, "the victim owned nothing: the test killed no owner"
        print(f"\nfailover: the killed worker's {len(owned_by_victim)} personas were owned again after {taken_back:.2f} s "
              f"(lease 2.0 s, renew 0.5 s)")
        assert taken_back < 2.0 + 2 * 0.5 + 3.0  # lease + renewals, and slack for a loaded VM

        # Every cursor reaches its room's end.
        with trio.fail_after(120):
            while True:
                with _db(postgres_url) as conn:
                    behind = conn.execute(
                        "SELECT r.room_id FROM (SELECT room_id, max(id) AS last FROM transcript_lines GROUP BY room_id) r "
                        "LEFT JOIN cursors c ON c.room_id = r.room_id "
                        "WHERE c.last_line_id IS NULL OR c.last_line_id < r.last"
                    ).fetchall()
                if not behind:
                    break
                await trio.sleep(0.2)
        with _db(postgres_url) as conn:
            twice = conn.execute(
                "SELECT persona, text, evidence::text, count(*) FROM persona_memory "
                "GROUP BY persona, text, evidence::text HAVING count(*) > 1"
            ).fetchall()
            lines = conn.execute("SELECT count(*) FROM transcript_lines").fetchone()[0]
            written = conn.execute("SELECT count(*) FROM persona_memory").fetchone()[0]
        assert twice == []
        assert lines == len(rooms) * 6 * 4 and written > len(PERSONAS)
        # Audience: every block of the merged result, at a survivor, as the harness checks it.
        settings = load_settings(None, {"embedder.kind": "hashing", "embedder.dim": 64})
        rules = harness.Rules.from_settings(settings)
        world = _world(postgres_url)
        for room_id, event in rooms.items():
            await _call(clients, alive, rng, "send", event)
            built = await _call(clients, alive, rng, "built_block", event.personas[0], room_id)
            view = harness.RoomView(room_id, event.humans, event.private, False)
            assert harness.check_block(built.text, event.personas[0], view, world, rules) == []
        with trio.fail_after(30):  # and every event queued was taken by an owner
            while True:
                with _db(postgres_url) as conn:
                    if conn.execute("SELECT count(*) FROM persona_events").fetchone()[0] == 0:
                        break
                await trio.sleep(0.1)
    finally:
        for client in clients.values():
            await client.aclose()
        stop_all(workers)


async def test_a_worker_paused_past_its_lease_mid_slice_commits_nothing_when_it_resumes(
    tmp_path: Path, postgres_url: str
) -> None:
    async with open_openai_server() as server:
        extra = {"mind.kind": "http", "mind.base_url": server.base_url, "mind.model": "m",
                 "mind.api_key_env": "PERSONA_MEMORY_TEST_MIND_KEY"}
        import os

        os.environ["PERSONA_MEMORY_TEST_MIND_KEY"] = "k"
        workers = [start_worker(postgres_url, f"f{k}", tmp_path, extra) for k in range(2)]
        clients = {w.worker_id: AsyncRuntimeClient(w.url, TOKEN) for w in workers}
        try:
            personas = [f"warden-{k}" for k in range(6)]
            for k, persona in enumerate(personas):
                await clients["f1"].send(RoomOpened(room_id=f"cell-{k}", personas=(persona,),
                                                    humans=frozenset({700 + k}), private=True))
            with trio.fail_after(60):
                while True:
                    owners = _owners(postgres_url)
                    if len(owners) == len(personas) and set(owners.values()) == {"f0", "f1"}:
                        break
                    await trio.sleep(0.1)
            persona = sorted(p for p, o in owners.items() if o == "f0")[0]
            k = personas.index(persona)
            uid, room = 700 + k, f"cell-{k}"
            line = await clients["f1"].post_line(room, f"u:{uid}", "I adopted a three-legged greyhound called Pip.")
            memory = {"memories": [{"subject": f"u:{uid}", "kind": "fact", "importance": 6, "evidence": [line],
                                    "text": f"u:{uid} adopted a three-legged greyhound called Pip."}]}
            server.script(CHAT, hang(2.5, chat_json_reply(memory)), chat_json_reply(memory))
            await clients["f1"].send(RoomWentQuiet(room_id=room))
            with trio.fail_after(30):
                while not server.requests_to(CHAT):
                    await trio.sleep(0.02)
            paused = workers[0]
            paused.pause()  # in the middle of the slice: its extraction call is out
            with trio.fail_after(60):
                while _owners(postgres_url).get(persona) != "f1":
                    await trio.sleep(0.05)
            with trio.fail_after(60):
                while True:
                    with _db(postgres_url) as conn:
                        if conn.execute("SELECT count(*) FROM persona_memory").fetchone()[0] >= 1:
                            break
                    await trio.sleep(0.1)
            paused.resume()
            # The resumed worker's extraction answer arrives; it must commit nothing.
            await trio.sleep(4.0)
            with _db(postgres_url) as conn:
                rows = conn.execute("SELECT persona, text FROM persona_memory").fetchall()
                cursor = conn.execute("SELECT last_line_id FROM cursors WHERE persona = %s AND room_id = %s",
                                      (persona, room)).fetchone()
            assert rows == [(persona, f"u:{uid} adopted a three-legged greyhound called Pip.")]
            assert cursor == (line,)
            assert len(server.requests_to(CHAT)) == 2  # both workers read the slice; one wrote it
            out = paused.output()
            assert f"worker f0 stopped owning persona {persona}: its lease was lost" in out, out[-3000:]
        finally:
            for client in clients.values():
                await client.aclose()
            stop_all(workers)
