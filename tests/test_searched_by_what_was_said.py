"""A row is searched by its text and by what its transcript lines said; only its text is shown.

A memory is the speaker's words cut to one fact ("u:42 watched a film about lighthouses"), and
a later question asks in the speaker's own words ("Did you like Keepers of the Light?"). The
lexical half of the hybrid relevance reads both, so the row is found; the block and the note
still render the row's text alone. Dan is ``u:42``; Warren is the persona.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from rowfactory import make_row

import persona_memory as pm
from persona_memory.core.table import RowTable, searched
from persona_memory.minds.fake import FakeMind

DAN = 42
SAID = "Finally watched Keepers of the Light last night, that lighthouse film."
ROW_TEXT = "u:42 watched a film about lighthouses."
OTHER_SAID = "I watched a cooking show about bread."
OTHER_ROW = "u:42 watched a cooking show."


def test_the_table_searches_a_row_by_its_text_and_what_its_lines_said() -> None:
    film, show = make_row(text=ROW_TEXT), make_row(text=OTHER_ROW)
    with_said = RowTable.from_rows([film, show], {}, {}, {film.id: SAID})
    without = RowTable.from_rows([film, show], {}, {})
    every = np.arange(2, dtype=np.int64)
    # "keeper" is only in what Dan said: N = 2, df = 1, so idf = ln(1 + 1.5 / 1.5) = ln 2,
    # and only the row whose line said it scores.
    scores = with_said.lexical.scores(["keeper"], every)
    assert scores[0] > 0 and scores[1] == 0.0
    assert with_said.lexical.relevance(["keeper"], every)[0] == pytest.approx(
        scores[0] / (math.log(2) * 2.2)
    )
    assert without.lexical.scores(["keeper"], every).tolist() == [0.0, 0.0]
    # What is shown is the row's text alone.
    assert with_said.lines == without.lines
    assert "Keepers" not in with_said.lines[0]
    assert searched(film, {film.id: SAID}) == f"{ROW_TEXT}\n{SAID}"
    assert searched(show, {film.id: SAID}) == OTHER_ROW


def keeping(texts: dict[str, tuple[str, int]]) -> FakeMind:
    """A mind that keeps one fact per slice: the row text and importance given for the
    slice's first line."""

    async def extract(request):
        first = request.lines[0]
        text, importance = texts[first.text]
        return {"memories": [{"subject": "u:42", "kind": "fact", "text": text,
                              "importance": importance, "evidence": [first.id]}]}

    return FakeMind(extract=extract)


async def say(memory: pm.Memory, room_id: str, text: str) -> None:
    await memory.send(pm.RoomOpened(room_id=room_id, personas=("warren",), humans={DAN}, private=True))
    await memory.post_line(room_id, "u:42", text)
    await memory.send(pm.RoomWentQuiet(room_id=room_id))
    await memory.drain()
    await memory.send(pm.RoomArchived(room_id=room_id))


async def opened_dm3(memory: pm.Memory, topic: str | None = None) -> str:
    await memory.send(pm.RoomOpened(room_id="dm3", personas=("warren",), humans={DAN}, private=True, topic=topic))
    return await memory.block("warren", "dm3")


@pytest.mark.parametrize("reopened", [False, True], ids=["after-its-own-write", "after-a-reload"])
async def test_a_question_in_the_speakers_words_recalls_the_row_and_shows_only_its_text(
    open_test_memory, clock, reopened: bool
) -> None:
    mind = keeping({SAID: (ROW_TEXT, 4), OTHER_SAID: (OTHER_ROW, 8)})
    question = "Did you like Keepers of the Light?"
    async with open_test_memory({"block.per_human": 1}, mind=mind) as memory:
        await say(memory, "dm1", SAID)
        clock.advance(days=3)
        await say(memory, "dm2", OTHER_SAID)  # newer and weightier: the block's one line
        if not reopened:
            block = await opened_dm3(memory)
            note = await memory.recall("warren", "dm3", question)
    if reopened:
        async with open_test_memory({"block.per_human": 1}, mind=mind) as memory:
            block = await opened_dm3(memory)
            note = await memory.recall("warren", "dm3", question)
    assert f'"{OTHER_ROW}"' in block and ROW_TEXT not in block
    assert f'"{ROW_TEXT}"' in note and OTHER_ROW not in note
    assert "Keepers" not in note


@pytest.mark.parametrize("reopened", [False, True], ids=["after-its-own-write", "after-a-reload"])
async def test_a_topic_in_the_speakers_words_ranks_the_row_first(
    open_test_memory, clock, reopened: bool
) -> None:
    mind = keeping({SAID: (ROW_TEXT, 4), OTHER_SAID: (OTHER_ROW, 8)})
    settings = {"block.per_human": 1, "block.topic_per_human": 1}
    async with open_test_memory(settings, mind=mind) as memory:
        await say(memory, "dm1", SAID)
        clock.advance(days=3)
        await say(memory, "dm2", OTHER_SAID)  # newer and weightier: first but for the topic
        if not reopened:
            block = await opened_dm3(memory, "Keepers of the Light")
    if reopened:
        async with open_test_memory(settings, mind=mind) as memory:
            block = await opened_dm3(memory, "Keepers of the Light")
    assert f'"{ROW_TEXT}"' in block and OTHER_ROW not in block
    assert "Keepers" not in block
