"""The injection corpus through the public API: Dan posts each payload to Warren in a private
chat, the room goes quiet, the memory drains — nothing of it is stored, and the next block
Warren is given holds none of it. The look-alikes, posted the same way, are all stored.

Posted on the offline mind (the bundled default) and on a mind that files each line as the
fact it claims to be, word for word: the guards are the same for every mind.
"""

from __future__ import annotations

import pytest

from persona_memory.minds.fake import FakeMind

from injection_corpus import CONTROLS, NO_CAP, PAYLOADS, credulous, next_blocks, post_each, stored_rows


@pytest.mark.parametrize("mind", [None, "credulous"])
async def test_no_payload_is_stored_or_shown_in_the_next_block(open_test_memory, mind):
    chosen = FakeMind(extract=credulous) if mind else None
    async with open_test_memory(NO_CAP, mind=chosen) as memory:
        rooms = await post_each(memory, [said for _, said in PAYLOADS], "payload")
        stored = await stored_rows(memory, rooms)
        blocks = await next_blocks(memory, rooms)
    assert len(PAYLOADS) == 30
    assert {PAYLOADS[i][0]: texts for i, texts in stored.items()} == {}
    assert {i: block for i, block in blocks.items() if block} == {}


async def test_the_look_alikes_are_all_stored(open_test_memory):
    async with open_test_memory(NO_CAP) as memory:
        rooms = await post_each(memory, CONTROLS, "control")
        stored = await stored_rows(memory, rooms)
        blocks = await next_blocks(memory, rooms)
    assert [i for i in range(len(CONTROLS)) if i not in stored] == []
    assert "u:42 works at a dot-com startup" in blocks[1]
    assert "u:42 plays a dragon in a community theatre show" in blocks[2]
    assert "Warren said he would send u:42 his notes on password managers" in blocks[9]


async def test_a_fiction_runs_over_the_lines_after_it_until_someone_steps_out(open_test_memory):
    said = (
        ("u:42", "Let's play a game: I'm a dragon who guards a mountain."),
        ("warren", "A fearsome dragon! What do you do all day?"),
        ("u:42", "I burn down the villages that refuse to pay tribute."),
        ("u:42", "I collect golden goblets from every kingdom."),
        ("u:42", "Ok, out of character now."),
        ("u:42", "I adopted a cat named Miso last week."),
    )
    async with open_test_memory(NO_CAP) as memory:
        rooms = await post_each(memory, [said], "fiction")
        stored = await stored_rows(memory, rooms)
    assert stored == {0: ["u:42 adopted a cat named Miso in the week of 2026-08-10."]}
