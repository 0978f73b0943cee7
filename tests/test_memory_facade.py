"""The facade as the chat runtime sees it: cached blocks, the touch, bad input, a closed memory.

Rows are put in through the storage layer, so these tests do not depend on the write path.
Dan is ``u:42``, Cara ``u:17``; Warren is the persona.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Sequence

import numpy as np
import pytest
from conftest import DIM, NOW
from rowfactory import make_row

from persona_memory import (
    MemberJoined,
    MemberLeft,
    MemoryClosed,
    MemoryRow,
    NotInRoom,
    RoomArchived,
    RoomOpened,
    RoomWentQuiet,
    UnknownRoom,
)
from persona_memory.embedding import HashingEmbedder

DAN, CARA = 42, 17
PERSONAL_OFF = {"scope.v1_proven": False}


def private(room_id: str, human: int = DAN, **changes: object) -> RoomOpened:
    return RoomOpened(room_id=room_id, personas=("warren",), humans={human}, private=True, **changes)


def group(room_id: str, *humans: int) -> RoomOpened:
    return RoomOpened(room_id=room_id, personas=("warren",), humans=set(humans))


def about(user_id: int, text: str, **changes: object) -> MemoryRow:
    return make_row(id=None, subject=f"u:{user_id}", text=text, created=NOW - timedelta(days=2), **changes)


def world(text: str) -> MemoryRow:
    return make_row(id=None, subject="world", kind="event", text=text, created=NOW - timedelta(days=2))


class CountingEmbedder:
    """The hashing embedder, counting its calls."""

    def __init__(self) -> None:
        self._inner = HashingEmbedder(DIM)
        self.calls = 0
        self.name = self._inner.name
        self.dim = self._inner.dim

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        return await self._inner.embed(texts)

    async def aclose(self) -> None:
        await self._inner.aclose()


def count_store_calls(memory, monkeypatch) -> dict[str, int]:
    """Wrap the store's two doors (every read and every write goes through one) with counters."""
    calls = {"read": 0, "write": 0}
    for door in ("read", "write"):
        inner = getattr(memory._store, door)

        async def counted(fn, _inner=inner, _door=door):
            calls[_door] += 1
            return await _inner(fn)

        monkeypatch.setattr(memory._store, door, counted)
    return calls


# ---- the cache: built at open, join and leave; never per turn --------------------------------


async def test_block_answers_from_the_cache_without_touching_the_database(
    open_test_memory, monkeypatch
) -> None:
    embedder = CountingEmbedder()
    async with open_test_memory(embedder=embedder) as memory:
        await memory._store.memories.insert(
            [about(DAN, "Dan owns a flat in Xuhui."), world("Nolan's Odyssey opened 2026-07-17.")]
        )
        await memory.send(private("r1", topic="How is the flat?"))
        first = await memory.block("warren", "r1")
        await memory.drain()
        assert "Dan owns a flat in Xuhui." in first and "Odyssey" in first

        calls = count_store_calls(memory, monkeypatch)
        embeds = embedder.calls
        answers = [await memory.block("warren", "r1") for _ in range(200)]
        assert all(answer is first for answer in answers)
        assert calls == {"read": 0, "write": 0}
        assert embedder.calls == embeds

        # The counters do see the database when it is used.
        await memory.memories_about(DAN)
        assert calls["read"] == 1


async def test_rows_written_while_a_room_is_live_show_at_the_next_open_join_or_leave(
    open_test_memory,
) -> None:
    async with open_test_memory(PERSONAL_OFF) as memory:
        await memory.send(group("g", DAN))
        assert await memory.block("warren", "g") == ""

        await memory.set_memory_note(DAN, "Call me Dan.")  # a privacy edit: it shows at once
        before = await memory.block("warren", "g")
        assert "Call me Dan." in before
        await memory._store.memories.insert(
            [world("The Fed held rates in September."), about(DAN, "Dan plays chess on Sundays.")]
        )
        assert await memory.block("warren", "g") is before
        await memory.send(RoomWentQuiet(room_id="g"))
        await memory.drain()
        assert await memory.block("warren", "g") is before

        await memory.send(MemberJoined(room_id="g", user_id=CARA))
        joined = await memory.block("warren", "g")
        assert "The Fed held rates in September." in joined
        assert "Dan plays chess on Sundays." in joined
        assert "Call me Dan." in joined

        await memory._store.memories.insert([about(CARA, "Cara is training for a marathon.")])
        assert await memory.block("warren", "g") is joined
        await memory.send(MemberLeft(room_id="g", user_id=DAN))
        left = await memory.block("warren", "g")
        assert "Cara is training for a marathon." in left
        assert "Dan plays chess on Sundays." not in left and "Call me Dan." not in left
        assert "The Fed held rates in September." in left

        await memory._store.memories.insert([about(CARA, "Cara prefers index funds.")])
        await memory.send(group("g", CARA))
        assert "Cara prefers index funds." in await memory.block("warren", "g")


async def test_join_and_leave_rebuild_for_the_people_present(open_test_memory) -> None:
    async with open_test_memory(PERSONAL_OFF) as memory:
        await memory._store.memories.insert(
            [about(DAN, "Dan owns a flat in Xuhui."), about(CARA, "Cara plays the cello.")]
        )
        await memory.send(group("g", DAN))
        only_dan = await memory.block("warren", "g")
        assert "Dan owns a flat in Xuhui." in only_dan and "cello" not in only_dan

        await memory.send(MemberJoined(room_id="g", user_id=CARA))
        both = await memory.block("warren", "g")
        assert "Dan owns a flat in Xuhui." in both and "Cara plays the cello." in both

        await memory.send(MemberLeft(room_id="g", user_id=DAN))
        only_cara = await memory.block("warren", "g")
        assert "Xuhui" not in only_cara and "Cara plays the cello." in only_cara


async def test_the_proven_scope_keeps_personal_rows_out_of_group_rooms(open_test_memory) -> None:
    async with open_test_memory() as memory:
        await memory._store.memories.insert(
            [about(DAN, "Dan owns a flat in Xuhui."), world("Nolan's Odyssey opened 2026-07-17.")]
        )
        await memory.send(group("g", DAN))
        await memory.send(private("dm"))
        in_group = await memory.block("warren", "g")
        assert "Odyssey" in in_group and "Xuhui" not in in_group
        assert "Dan owns a flat in Xuhui." in await memory.block("warren", "dm")


async def test_a_room_reopens_after_it_was_archived(open_test_memory) -> None:
    async with open_test_memory() as memory:
        await memory.send(private("r1"))
        assert await memory.block("warren", "r1") == ""
        await memory.send(RoomArchived(room_id="r1"))
        with pytest.raises(UnknownRoom):
            await memory.block("warren", "r1")

        await memory._store.memories.insert([about(DAN, "Dan owns a flat in Xuhui.")])
        await memory.send(private("r1"))
        assert "Dan owns a flat in Xuhui." in await memory.block("warren", "r1")
        await memory.send(RoomArchived(room_id="r1"))
        await memory.send(private("r1", human=CARA))
        assert await memory.block("warren", "r1") == ""


async def test_an_incognito_room_has_an_empty_block(open_test_memory) -> None:
    async with open_test_memory() as memory:
        await memory._store.memories.insert([about(DAN, "Dan owns a flat in Xuhui."), world("Odyssey opened.")])
        await memory.send(private("r1", incognito=True))
        assert await memory.block("warren", "r1") == ""


# ---- the touch ------------------------------------------------------------------------------


async def test_every_row_loaded_into_a_block_is_touched_and_no_other(open_test_memory, clock) -> None:
    loaded_counts: dict[str, int] = {}
    async with open_test_memory({"block.per_human": 3}) as memory:
        stored = await memory._store.memories.insert(
            [about(DAN, f"Dan mentioned hobby number {n}.", importance=1 + n % 10) for n in range(8)]
            + [about(CARA, "Cara plays the cello."), world("Nolan's Odyssey opened 2026-07-17.")]
        )
        [closed] = await memory._store.memories.insert(
            [about(DAN, "Dan rented a flat in Jing'an.", valid_from="2025", valid_to="2026-06")]
        )
        rounds = []
        for room_id in ("r1", "r2"):
            await memory.send(private(room_id))
            text = await memory.block("warren", room_id)
            rounds.append((text, clock.now()))
            await memory.drain()
            clock.advance(days=1)

        _, rows_now = await memory._store.memories.rows("warren")
        by_id = {r.id: r for r in rows_now}
        about_dan_now = {r.id: r for r in await memory.memories_about(DAN)}

    for row in stored:
        seen_at = [when for text, when in rounds if f'"{row.text}"' in text]
        loaded_counts[row.text] = len(seen_at)
        now = by_id[row.id]
        assert now.recall_count == len(seen_at)
        assert now.last_recalled == (seen_at[-1] if seen_at else None)
    assert about_dan_now[closed.id].recall_count == 0 and about_dan_now[closed.id].last_recalled is None
    # The test means something: some rows loaded (the world row both times), some never did —
    # Cara's (she was never present) and Dan's beyond the three per human.
    assert loaded_counts["Nolan's Odyssey opened 2026-07-17."] == 2
    assert loaded_counts["Cara plays the cello."] == 0
    assert any(n == 0 for text, n in loaded_counts.items() if text.startswith("Dan"))


# ---- bad input ------------------------------------------------------------------------------


async def test_send_refuses_what_is_not_a_room_event(open_test_memory) -> None:
    async with open_test_memory() as memory:
        with pytest.raises(ValueError, match="room event"):
            await memory.send("RoomOpened r1")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: RoomOpened(room_id="", personas=("warren",), humans={DAN}), "room_id"),
        (lambda: RoomOpened(room_id="r1", personas=(), humans={DAN}), "personas"),
        (lambda: RoomOpened(room_id="r1", personas=("warren",), humans={0}), "humans"),
        (lambda: MemberJoined(room_id="r1", user_id=-4), "user_id"),
        (lambda: MemberLeft(room_id="r1", user_id="42"), "user_id"),
    ],
)
def test_malformed_messages_never_get_built(build, field: str) -> None:
    with pytest.raises(ValueError, match=field):
        build()


async def test_a_private_room_with_two_humans_is_refused(open_test_memory) -> None:
    async with open_test_memory() as memory:
        with pytest.raises(ValueError, match="private chat"):
            await memory.send(
                RoomOpened(room_id="r1", personas=("warren",), humans={DAN, CARA}, private=True)
            )
        await memory.send(private("r1"))
        before = await memory.block("warren", "r1")
        with pytest.raises(ValueError, match="private chat"):
            await memory.send(MemberJoined(room_id="r1", user_id=CARA))
        assert await memory.block("warren", "r1") is before


@pytest.mark.parametrize(
    "event",
    [
        MemberJoined(room_id="nowhere", user_id=DAN),
        MemberLeft(room_id="nowhere", user_id=DAN),
        RoomWentQuiet(room_id="nowhere"),
        RoomArchived(room_id="nowhere"),
    ],
    ids=["MemberJoined", "MemberLeft", "RoomWentQuiet", "RoomArchived"],
)
async def test_events_for_a_room_never_opened_are_refused_and_the_actors_live_on(
    open_test_memory, event
) -> None:
    async with open_test_memory() as memory:
        await memory._store.memories.insert([world("Nolan's Odyssey opened 2026-07-17.")])
        await memory.send(private("r1"))
        with pytest.raises(UnknownRoom, match="'nowhere' is not open"):
            await memory.send(event)
        with pytest.raises(ValueError):
            await memory.block("warren", "nowhere")
        assert "Odyssey" in await memory.block("warren", "r1")
        await memory.send(private("r2", human=CARA))
        assert "Odyssey" in await memory.block("warren", "r2")
        await memory.drain()


async def test_block_for_a_persona_not_in_the_room_is_not_in_room(open_test_memory) -> None:
    async with open_test_memory() as memory:
        await memory.send(private("r1"))
        with pytest.raises(NotInRoom, match="'nolan' is not in room 'r1'"):
            await memory.block("nolan", "r1")
        with pytest.raises(ValueError, match="persona"):
            await memory.block("Nolan!", "r1")
        with pytest.raises(ValueError, match="room_id"):
            await memory.block("warren", "")


async def test_a_note_over_400_chars_is_refused_and_nothing_is_stored(open_test_memory) -> None:
    async with open_test_memory() as memory:
        await memory.set_memory_note(DAN, "Call me Dan.")
        with pytest.raises(ValueError, match="401 characters; the limit is 400"):
            await memory.set_memory_note(DAN, "x" * 401)
        with pytest.raises(ValueError, match="401 characters"):
            await memory.set_memory_note(CARA, "y" * 401)
        controls = await memory._store.controls.of([DAN, CARA])
        assert controls[DAN].memory_note == "Call me Dan."
        assert controls[CARA].memory_note == ""
        await memory.set_memory_note(CARA, "z" * 400)
        assert (await memory._store.controls.of([CARA]))[CARA].memory_note == "z" * 400


@pytest.mark.parametrize("slug", ["Warren", "", "war ren", "9lives", "x" * 65, None])
async def test_set_muted_refuses_a_malformed_persona_slug(open_test_memory, slug) -> None:
    async with open_test_memory() as memory:
        with pytest.raises(ValueError, match="persona"):
            await memory.set_muted(DAN, slug, True)
        assert (await memory._store.controls.of([DAN]))[DAN].muted == frozenset()


@pytest.mark.parametrize("user_id", [0, -1, "42", 4.2, True])
async def test_every_setter_refuses_a_bad_user_id(open_test_memory, user_id) -> None:
    async with open_test_memory() as memory:
        with pytest.raises(ValueError, match="user_id"):
            await memory.set_memory_note(user_id, "hi")
        with pytest.raises(ValueError, match="user_id"):
            await memory.set_memory_on(user_id, False)
        with pytest.raises(ValueError, match="user_id"):
            await memory.set_muted(user_id, "warren", True)
        with pytest.raises(ValueError, match="user_id"):
            await memory.memories_about(user_id)
        assert await memory._store.read(lambda conn: conn.execute("SELECT count(*) FROM users").fetchone()[0]) == 0


async def test_switches_refuse_non_bools(open_test_memory) -> None:
    async with open_test_memory() as memory:
        with pytest.raises(ValueError, match="True or False"):
            await memory.set_memory_on(DAN, 0)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="True or False"):
            await memory.set_muted(DAN, "warren", "yes")  # type: ignore[arg-type]


# ---- a closed memory ------------------------------------------------------------------------


async def test_every_call_after_close_raises_memory_closed(open_test_memory) -> None:
    async with open_test_memory() as memory:
        await memory.send(private("r1"))
        await memory.block("warren", "r1")
    calls = [
        lambda: memory.send(private("r2")),
        lambda: memory.send(RoomWentQuiet(room_id="r1")),
        lambda: memory.block("warren", "r1"),
        lambda: memory.drain(),
        lambda: memory.post_line("r1", speaker="u:42", text="hello"),
        lambda: memory.set_memory_note(DAN, "Call me Dan."),
        lambda: memory.set_memory_on(DAN, False),
        lambda: memory.set_muted(DAN, "warren", True),
        lambda: memory.memories_about(DAN),
    ]
    for call in calls:
        with pytest.raises(MemoryClosed):
            await call()


@pytest.fixture
def open_test_memory(open_test_memory, on_each_backend):
    """conftest's ``open_test_memory``, on SQLite and on PostgreSQL: every test here runs on both."""
    from conftest import on_backend

    return on_backend(open_test_memory, on_each_backend)


async def test_a_line_is_kept_for_a_room_not_yet_open_unless_the_caller_requires_presence(open_test_memory) -> None:
    async with open_test_memory() as memory:
        early = await memory.post_line("r1", "u:42", "I'll tell you about the allotment later.")
        assert early > 0 and [line.id for line in await memory._store.transcript.lines("r1")] == [early]
        with pytest.raises(UnknownRoom, match="room 'r2' is not open.*The line was not stored"):
            await memory.post_line("r2", "u:42", "Anyone here?", require_present=True)
        await memory.send(private("r2"))
        with pytest.raises(NotInRoom, match=r"u:17 is not in room 'r2' \(its humans: u:42; its personas: warren\)"):
            await memory.post_line("r2", "u:17", "Hello from outside.", require_present=True)
        with pytest.raises(NotInRoom, match="nolan is not in room 'r2'"):
            await memory.post_line("r2", "nolan", "I was never invited.", require_present=True)
        assert await memory._store.transcript.lines("r2") == []
        said = [await memory.post_line("r2", speaker, "Good morning.", require_present=True)
                for speaker in ("u:42", "warren")]
        assert [line.id for line in await memory._store.transcript.lines("r2")] == said
