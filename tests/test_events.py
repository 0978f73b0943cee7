"""Events: every change a person or the runtime cares about is written to the outbox in the
change's own transaction, and pushed to signed webhooks at least once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import trio

import persona_memory as pm
from persona_memory.errors import NotYourNotice
from persona_memory.events import ControlsChanged, MemoryClosed, MemoryDeleted, MemoryNoted, NoticeUndone
from persona_memory.storage import outbox, writes
from web_helpers import BEARER, SECRET_ENV
from webhook_receiver import Receiver

ROOT = Path(__file__).resolve().parent.parent

DAN, CARA = 42, 17
DM = dict(room_id="dm", personas=("warren",), humans={DAN}, private=True, names={DAN: "Dan"})
SECRET_A, SECRET_B = "first hook's secret", "second hook's secret"


async def told(memory, room, *lines):
    for speaker, text in lines:
        await memory.post_line(room, speaker, text)
    await memory.send(pm.RoomWentQuiet(room_id=room))
    await memory.drain()


async def events_since(memory, after=0):
    return await memory.events_after(after, 1000)


async def test_each_change_of_a_person_is_one_event_that_names_ids_and_no_text(open_test_memory):
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(**DM))
        await told(memory, "dm", ("u:42", "I adopted a greyhound named Pixel."))
        (notice,) = await memory.notices(DAN)
        (row,) = await memory.memories_about(DAN)
        await memory.set_memory_note(DAN, "Call me Dan, never Daniel.")
        await memory.set_memory_on(DAN, False)
        await memory.set_memory_on(DAN, True)
        await memory.set_muted(DAN, "warren", True)
        await memory.set_muted(DAN, "warren", False)
        await memory.undo(DAN, notice.id)

        happened = await events_since(memory)
        assert [one.event for one in happened] == [
            MemoryNoted(notice.id, DAN, "warren", "dm", (row.id,)),
            ControlsChanged(DAN, "note"),
            ControlsChanged(DAN, "memory_on", False),
            ControlsChanged(DAN, "memory_on", True),
            ControlsChanged(DAN, "muted", True, "warren"),
            ControlsChanged(DAN, "muted", False, "warren"),
            MemoryDeleted(DAN, "warren", (row.id,), "undone"),
            NoticeUndone(notice.id, DAN, "warren"),
        ]
        ids = [one.id for one in happened]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        wire = b"".join(one.body() for one in happened)
        assert b"greyhound" not in wire and b"Pixel" not in wire and b"Daniel" not in wire
        assert await memory.events_after(ids[-1]) == []
        assert await memory.newest_event() == ids[-1]


async def test_a_row_a_later_one_replaces_is_closed_in_the_same_event_stream(open_test_memory):
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(**DM))
        await told(memory, "dm", ("u:42", "I have been vegetarian for ten years."))
        (before,) = await memory.memories_about(DAN)
        await told(memory, "dm", ("u:42", "I started eating meat again last month."))
        closed = {r.id: r for r in await memory.memories_about(DAN)}[before.id]
        assert closed.valid_to is not None and closed.closed_by is not None
        happened = [one.event for one in await events_since(memory)]
        assert MemoryClosed(before.id, DAN, "warren", closed.closed_by, closed.valid_to) in happened
        assert [type(e) for e in happened] == [MemoryNoted, MemoryNoted, MemoryClosed]


async def test_a_deleted_row_and_a_cleared_persona_are_events(open_test_memory):
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(**DM))
        await told(memory, "dm", ("u:42", "I adopted a greyhound named Pixel."))
        (first,) = await memory.memories_about(DAN)
        await memory.delete_memory(DAN, first.id)
        await told(memory, "dm", ("u:42", "I work as a night nurse at the children's hospital."))
        (second,) = await memory.memories_about(DAN)
        notices = await memory.notices(DAN)
        start = await memory.newest_event()
        assert await memory.clear_memories(DAN) == 1

        deleted = [one.event for one in await events_since(memory) if isinstance(one.event, MemoryDeleted)]
        assert deleted == [
            MemoryDeleted(DAN, "warren", (first.id,), "deleted"),
            MemoryDeleted(DAN, "warren", (second.id,), "cleared"),
        ]
        after_clear = [one.event for one in await events_since(memory, start)]
        assert after_clear[0] == MemoryDeleted(DAN, "warren", (second.id,), "cleared")
        assert after_clear[1:] == [NoticeUndone(n.id, DAN, "warren") for n in sorted(notices, key=lambda n: n.id)]


async def test_a_change_that_is_refused_writes_no_event(open_test_memory):
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(**DM))
        await told(memory, "dm", ("u:42", "I adopted a greyhound named Pixel."))
        (notice,) = await memory.notices(DAN)
        (row,) = await memory.memories_about(DAN)
        before = await memory.newest_event()
        with pytest.raises(NotYourNotice):
            await memory.undo(CARA, notice.id)
        with pytest.raises(pm.NotYourMemory):
            await memory.delete_memory(CARA, row.id)
        with pytest.raises(pm.InvalidInput):
            await memory.set_memory_note(DAN, "x" * 401)
        assert await memory.newest_event() == before
        with pytest.raises(pm.InvalidInput, match="after_id"):
            await memory.events_after(-1)


async def test_a_change_whose_transaction_fails_after_it_leaves_neither_change_nor_event(open_test_memory, clock):
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(**DM))
        await told(memory, "dm", ("u:42", "I adopted a greyhound named Pixel."))
        (notice,) = await memory.notices(DAN)
        (row,) = await memory.memories_about(DAN)
        before = await memory.newest_event()
        store = memory._store
        seen_inside = []

        def undo_then_fail(conn):
            writes.undo(conn, DAN, notice.id, clock.now())
            seen_inside.extend(one.event for one in outbox.after(conn, before))
            raise OSError("the disk filled up")

        with pytest.raises(Exception, match="disk filled"):
            await store.write(undo_then_fail)
        assert seen_inside == [MemoryDeleted(DAN, "warren", (row.id,), "undone"), NoticeUndone(notice.id, DAN, "warren")]
        assert await memory.newest_event() == before
        assert [n.id for n in await memory.notices(DAN)] == [notice.id]
        assert [r.id for r in await memory.memories_about(DAN)] == [row.id]


# ---- webhooks ---------------------------------------------------------------------------------


def hooks(port, *tables):
    fast = {"events.retry_initial_seconds": 0.01, "events.retry_max_seconds": 0.05, "events.poll_seconds": 0.02}
    return {"events.webhooks": [{**t, "url": f"http://127.0.0.1:{port}{t['url']}"} for t in tables], **fast}


async def test_each_webhook_gets_its_kinds_signed_and_text_only_if_it_asked(open_test_memory, clock, monkeypatch):
    monkeypatch.setenv("PM_TEST_HOOK_A", SECRET_A)
    monkeypatch.setenv("PM_TEST_HOOK_B", SECRET_B)
    receiver = Receiver()
    async with trio.open_nursery() as nursery:
        port = await nursery.start(receiver.serve)
        settings = hooks(
            port,
            {"url": "/a", "secret_env": "PM_TEST_HOOK_A"},
            {"url": "/b", "secret_env": "PM_TEST_HOOK_B", "kinds": ["memory.noted"], "include_text": True},
        )
        async with open_test_memory(settings) as memory:
            await memory.set_memory_note(DAN, "Call me Dan, never Daniel.")
            (note,) = await receiver.wait_for(1, "/a")
            await memory.send(pm.RoomOpened(**DM))
            await told(memory, "dm", ("u:42", "I adopted a greyhound named Pixel."))
            (notice,) = await memory.notices(DAN)
            (row,) = await memory.memories_about(DAN)
            (_, noted_a) = await receiver.wait_for(2, "/a")
            (noted_b,) = await receiver.wait_for(1, "/b")
        nursery.cancel_scope.cancel()

    now = clock.now().timestamp()
    body = json.loads(note.body)
    assert note.verifies(SECRET_A, now) and not note.verifies(SECRET_B, now)
    assert body["kind"] == "controls.changed" and body["data"] == {
        "user_id": DAN, "control": "note", "value": None, "persona": None}
    assert note.event_id == str(body["id"]) and "text" not in body and b"Daniel" not in note.body

    assert noted_a.verifies(SECRET_A, now) and b"greyhound" not in noted_a.body
    assert json.loads(noted_a.body)["data"]["notice_id"] == notice.id

    assert noted_b.verifies(SECRET_B, now)
    b_body = json.loads(noted_b.body)
    assert noted_b.event_id == noted_a.event_id == str(b_body["id"])
    assert b_body["text"] == {"notice": notice.text, "memories": {str(row.id): row.text}}
    assert [r.path for r in receiver.got].count("/b") == 1  # never the note's event


async def test_a_webhook_that_fails_gets_the_same_event_again_until_it_takes_it(open_test_memory, clock, monkeypatch):
    monkeypatch.setenv("PM_TEST_HOOK_A", SECRET_A)
    receiver = Receiver(answers=[500, 500, 503])
    async with trio.open_nursery() as nursery:
        port = await nursery.start(receiver.serve)
        async with open_test_memory(hooks(port, {"url": "/a", "secret_env": "PM_TEST_HOOK_A"})) as memory:
            await memory.set_memory_on(DAN, False)
            await memory.set_memory_on(DAN, True)
            await receiver.wait_for(2)
        nursery.cancel_scope.cancel()

    first, second = [json.loads(r.body)["id"] for r in receiver.taken()]
    assert [(r.status, r.event_id) for r in receiver.got] == [
        (500, str(first)), (500, str(first)), (503, str(first)), (200, str(first)), (200, str(second))]
    assert len({r.body for r in receiver.got[:4]}) == 1
    assert all(r.verifies(SECRET_A, clock.now().timestamp()) for r in receiver.got)


async def test_a_webhooks_secret_missing_from_the_environment_is_named_before_the_memory_opens(open_test_memory, monkeypatch):
    monkeypatch.delenv("PM_TEST_HOOK_GONE", raising=False)
    with pytest.raises(pm.ConfigError, match="PM_TEST_HOOK_GONE"):
        async with open_test_memory(hooks(9, {"url": "/a", "secret_env": "PM_TEST_HOOK_GONE"})):
            pass


@pytest.mark.parametrize("table, fix", [
    ({"url": "ftp://x", "secret_env": "S"}, "url must be an http"),
    ({"url": "http://x", "secret_env": "not a name"}, "secret_env must be the NAME"),
    ({"url": "http://x", "secret_env": "S", "kinds": ["memory.forgotten"]}, "unknown event kind 'memory.forgotten'"),
    ({"url": "http://x", "secret_env": "S", "include_text": "yes"}, "include_text must be true or false"),
    ({"url": "http://x", "secret_env": "S", "secret": "x"}, "unknown key 'secret'"),
])
def test_a_wrong_webhook_is_refused_with_what_to_fix(table, fix):
    with pytest.raises(pm.ConfigError, match=fix):
        pm.load_settings(None, {"events.webhooks": [table]})


async def _first_line(proc) -> str:
    """The first line ``proc`` prints (where ``persona-memory serve`` says its address)."""
    got = b""
    while not got.endswith(b"\n"):
        chunk = await proc.stdout.receive_some(1)
        if not chunk:
            break
        got += chunk
    return got.decode()


async def _serve(config, db, env):
    """``persona-memory serve`` in a child process; returns it and the port it serves on."""
    proc = await trio.lowlevel.open_process(
        [sys.executable, "-m", "persona_memory.cli", "serve", "--config", str(config), "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
    )
    first = await _first_line(proc)
    assert first.startswith("persona-memory: serving http://127.0.0.1:"), first
    return proc, int(first.split(":")[3].split(" ")[0])


async def test_a_server_killed_between_commit_and_delivery_delivers_the_event_when_it_starts_again(tmp_path, clock):
    receiver = Receiver(answers=[500] * 10_000)  # the first server's deliveries all fail
    env = {**os.environ, **SECRET_ENV, "PM_TEST_HOOK_A": SECRET_A,
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    async with trio.open_nursery() as nursery:
        port = await nursery.start(receiver.serve)
        config = tmp_path / "config.toml"
        config.write_text(
            '[embedder]\nkind = "hashing"\ndim = 64\n[mind]\noffline_processes = 0\n[web]\nport = 0\n'
            "[events]\nretry_initial_seconds = 0.05\nretry_max_seconds = 0.2\npoll_seconds = 0.02\n"
            f'webhooks = [{{url = "http://127.0.0.1:{port}/a", secret_env = "PM_TEST_HOOK_A"}}]\n',
            encoding="utf-8",
        )
        first, web = await _serve(config, tmp_path / "m.db", env)
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{web}") as client:
                put = await client.put(f"/api/users/{DAN}/note", json={"note": "Call me Dan."}, headers=BEARER)
                assert put.status_code < 300, put.text
            await receiver.wait_for(1, taken=False)  # committed, and its delivery under way
        finally:
            first.kill()  # SIGKILL: no shutdown, no drain
            await first.wait()
        assert first.returncode == -signal.SIGKILL
        attempts = list(receiver.got)
        assert attempts and all(r.status == 500 for r in attempts)
        receiver.answers.clear()  # the receiver takes what comes from now on

        second, _ = await _serve(config, tmp_path / "m.db", env)
        try:
            (delivered,) = await receiver.wait_for(1)
        finally:
            second.kill()
            await second.wait()
        nursery.cancel_scope.cancel()

    assert delivered.event_id == attempts[0].event_id
    assert {r.event_id for r in attempts} == {delivered.event_id}
    assert delivered.body == attempts[0].body
    assert json.loads(delivered.body)["kind"] == "controls.changed"
    assert delivered.verifies(SECRET_A, time.time())


async def test_on_postgresql_the_events_commit_with_their_change_and_read_back_in_order(open_test_memory, postgres_url):
    async with open_test_memory({"storage.url": postgres_url}) as memory:
        await memory.set_memory_note(DAN, "Call me Dan.")
        await memory.set_muted(DAN, "warren", True)
        with pytest.raises(pm.InvalidInput):
            await memory.set_memory_note(DAN, "x" * 401)
        await memory.set_memory_on(CARA, False)
        happened = await events_since(memory)
        assert [one.event for one in happened] == [
            ControlsChanged(DAN, "note"),
            ControlsChanged(DAN, "muted", True, "warren"),
            ControlsChanged(CARA, "memory_on", False),
        ]
        assert [one.id for one in happened] == sorted(one.id for one in happened)
        store = memory._store
        assert await store.outbox.cursor("hook") == happened[-1].id  # a new subscriber starts at the newest
        await store.outbox.advance("hook", happened[0].id)  # never back
        assert await store.outbox.cursor("hook") == happened[-1].id
        assert await store.outbox.texts_of(happened[0].event) == {"note": "Call me Dan."}


async def test_old_events_go_once_every_webhook_has_them_and_no_id_is_given_twice(tmp_path):
    from datetime import datetime, timedelta, timezone

    from persona_memory.storage.store import open_store

    long_ago = datetime(2026, 1, 1, tzinfo=timezone.utc)
    async with open_store(str(tmp_path / "m.db")) as store:
        assert await store.outbox.cursor("a") == 0
        await store.write(lambda conn: outbox.record(conn, [ControlsChanged(DAN, "note")] * 3, long_ago))
        assert await store.outbox.cursor("b") == 3  # came later: starts at the newest
        await store.outbox.advance("a", 2)
        day_after = long_ago + timedelta(days=1)
        assert await store.outbox.prune(long_ago, ["a", "b"]) == 0  # none is old enough
        assert await store.outbox.prune(day_after, ["a", "b"]) == 2  # a has not had event 3
        assert [one.id for one in await store.outbox.after(0)] == [3]
        await store.outbox.advance("a", 3)
        assert await store.outbox.prune(day_after, ["a", "b"]) == 0  # the newest stays
        await store.write(lambda conn: outbox.record(conn, [ControlsChanged(DAN, "note")], long_ago))
        assert [one.id for one in await store.outbox.after(0)] == [3, 4]
        assert await store.outbox.prune(day_after, ["a"]) == 1  # b is no longer configured
        assert [one.id for one in await store.outbox.after(0)] == [4]


def test_a_signature_holds_only_for_its_body_its_time_and_its_secret():
    from persona_memory.events import signature, verify

    body = b'{"id":7,"kind":"notice.undone"}'
    signed = signature(b"k", 1_800_000_000, body)
    assert signed.startswith("sha256=") and len(signed) == 7 + 64
    assert verify(b"k", "1800000000", signed, body, now=1_800_000_100)
    assert not verify(b"k", "1800000000", signed, body + b" ", now=1_800_000_100)  # another body
    assert not verify(b"other", "1800000000", signed, body, now=1_800_000_100)  # another secret
    assert not verify(b"k", "1800000001", signed, body, now=1_800_000_100)  # another time
    assert not verify(b"k", "1800000000", signed, body, now=1_800_000_301)  # replayed too late
    assert not verify(b"k", "soon", signed, body, now=1_800_000_100)
