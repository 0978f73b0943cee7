"""What a room is searched by: its opener or a message, less the names of who is there."""

from __future__ import annotations

from datetime import timedelta
from typing import Sequence

import numpy as np
from conftest import DIM, NOW
from rowfactory import make_row

from persona_memory import MemberJoined, RoomOpened
from persona_memory.core.query import searched_text, without_names
from persona_memory.embedding import HashingEmbedder

DAN = 42


def test_a_present_name_and_its_possessive_are_taken_out() -> None:
    assert searched_text("Dan, how did Dan's move to Leeds go?", ["Dan"], []) == "how did move to Leeds go?"


def test_each_word_of_a_display_name_and_the_personas_name_are_taken_out() -> None:
    said = "Hey Warren, has Mary Jo found a flat yet? Mary says it's near the canal."
    assert searched_text(said, ["Mary Jo"], ["warren"]) == "Hey, has found a flat yet? says it's near the canal."


def test_a_name_that_is_also_a_word_goes_only_when_written_as_a_name() -> None:
    assert without_names("Will you ask Will about the will?", ["Will"]) == "you ask about the will?"


def test_other_words_and_other_peoples_names_stay() -> None:
    assert searched_text("How is Danny's garden, Dan?", ["Dan"], []) == "How is Danny's garden?"


def test_an_opener_that_only_names_who_is_there_or_greets_leaves_nothing() -> None:
    assert searched_text("Dan! Warren!", ["Dan"], ["warren"]) == ""
    assert searched_text("Hi Dan!", ["Dan"], ["warren"]) == ""
    assert searched_text("Hey Warren, how are you?", ["Dan"], ["warren"]) == ""
    assert searched_text("Hey Warren, how was the ferry?", ["Dan"], ["warren"]) == "Hey, how was the ferry?"


class RecordingEmbedder:
    """The hashing embedder, keeping every text it was asked to embed."""

    def __init__(self) -> None:
        self._inner = HashingEmbedder(DIM)
        self.name, self.dim = self._inner.name, self._inner.dim
        self.texts: list[str] = []

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += list(texts)
        return await self._inner.embed(texts)

    async def aclose(self) -> None:
        await self._inner.aclose()


def chat(room_id: str, topic: str | None) -> RoomOpened:
    return RoomOpened(room_id=room_id, personas=("warren",), humans={DAN}, private=True,
                      topic=topic, names={DAN: "Dan"})


async def test_a_greeting_by_name_ranks_the_block_as_a_room_without_a_topic(open_test_memory) -> None:
    async with open_test_memory({"block.char_limit": 100}) as memory:
        await memory.send(chat("old", None))
        named = await memory.post_line("old", "warren", "Morning Dan! Did the vet see Biscuit?")
        await memory._store.memories.insert([
            make_row(id=None, text="u:42's dog Biscuit saw the vet at the surgery on the hill.", importance=3, evidence=(named,),
                     created=NOW - timedelta(days=2)),
            make_row(id=None, text="u:42 starts a new job at the port office next Monday.", importance=9,
                     created=NOW - timedelta(days=2)),
        ])
        await memory.send(chat("hello", "Hi Dan!"))
        block = await memory.block("warren", "hello")
    assert "new job at the port" in block and "Biscuit" not in block


async def test_an_opener_that_only_greets_is_never_embedded(open_test_memory) -> None:
    embedder = RecordingEmbedder()
    async with open_test_memory(embedder=embedder) as memory:
        await memory.send(chat("r1", "Hi Dan!"))
        await memory.block("warren", "r1")
        assert await memory.recall("warren", "r1", "Hello Warren!") == ""
    assert embedder.texts == []


async def test_the_topic_and_a_recall_message_are_embedded_without_the_names(open_test_memory) -> None:
    embedder = RecordingEmbedder()
    async with open_test_memory(embedder=embedder) as memory:
        await memory.send(chat("r1", "Dan, how is the flat hunt going?"))
        await memory.block("warren", "r1")
        await memory.recall("warren", "r1", "Warren, what did I tell you about the canal?")
    assert "how is the flat hunt going?" in embedder.texts
    assert "what did I tell you about the canal?" in embedder.texts
    assert not any("Dan" in text or "Warren" in text for text in embedder.texts)


async def test_a_name_leaves_the_topic_when_its_person_joins(open_test_memory) -> None:
    embedder = RecordingEmbedder()
    async with open_test_memory(embedder=embedder) as memory:
        await memory.send(RoomOpened(room_id="g", personas=("warren",), humans={DAN},
                                     topic="Is Cara coming to the pottery class?", names={DAN: "Dan", 17: "Cara"}))
        await memory.block("warren", "g")
        await memory.send(MemberJoined(room_id="g", user_id=17))
        await memory.block("warren", "g")
    assert embedder.texts == ["Is Cara coming to the pottery class?", "Is coming to the pottery class?"]
