"""What the HTTP mind is told about the room, seen where a model would see it.

Each test plays a room through the public API (``open_memory`` with ``mind.kind = "http"``)
against the loopback OpenAI-compatible server, which records every request; the server's
default answer keeps nothing (``{"memories": []}``). The tests read the extraction call's
messages: the room's situation in the user message, the rules in the system message.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from openai_server import CHAT, OpenAIServer, open_openai_server
from persona_memory import RoomOpened, RoomWentQuiet

KEY_ENV = "PERSONA_MEMORY_SITUATION_TEST_KEY"


@pytest.fixture
async def server() -> AsyncIterator[OpenAIServer]:
    async with open_openai_server() as running:
        yield running


@pytest.fixture
def http_memory(open_test_memory, server: OpenAIServer, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(KEY_ENV, "sk-situation")
    return lambda: open_test_memory(
        {"mind.kind": "http", "mind.base_url": server.base_url, "mind.model": "test-model",
         "mind.api_key_env": KEY_ENV, "http.max_retries": 0}
    )


def extraction_calls(server: OpenAIServer) -> list[tuple[str, str]]:
    """(system, user) of every extraction call the server received, in order."""
    out = []
    for request in server.requests_to(CHAT):
        system, user = request.body["messages"]
        if system["content"].startswith("You are") and "memories" in user["content"]:
            out.append((system["content"], user["content"]))
    return out


async def test_a_private_chat_with_a_topic_is_told_both(http_memory, server: OpenAIServer) -> None:
    async with http_memory() as memory:
        await memory.send(RoomOpened(room_id="dm", personas=("warren",), humans={42}, private=True,
                                     topic="Planning the allotment for spring", names={42: "Dan"}))
        await memory.post_line("dm", "u:42", "I finally got a plot at the community garden.")
        await memory.send(RoomWentQuiet(room_id="dm"))
        await memory.drain()
    [(_, user)] = extraction_calls(server)
    assert "This room is a private chat between Warren and u:42." in user
    assert "The room's topic (what it was opened about; nobody said it): " \
           '"Planning the allotment for spring"' in user
    assert "No game or role-play was mounted in this room around these lines." in user
    assert '- u:42, shown as "Dan"' in user
    assert "Other personas present: none." in user


async def test_a_group_room_names_everyone_present_and_the_other_personas(
    http_memory, server: OpenAIServer
) -> None:
    async with http_memory() as memory:
        await memory.send(RoomOpened(room_id="g", personas=("warren", "nolan"), humans={42, 17},
                                     names={42: "Dan", 17: "Cara"}))
        await memory.post_line("g", "u:42", "My band plays at the Harbour Inn on Saturday.")
        await memory.post_line("g", "u:17", "I'm flying to Oslo for a conference in May.")
        await memory.send(RoomWentQuiet(room_id="g"))
        await memory.drain()
    calls = extraction_calls(server)
    assert len(calls) == 2  # one per persona: each writes its own memory
    warren = next(user for _, user in calls if "Warren last took notes" in user)
    assert "This room is a group room with Warren." in warren
    assert '- u:17, shown as "Cara"' in warren and '- u:42, shown as "Dan"' in warren
    assert "Other personas present: nolan." in warren
    assert "The room has no topic." in warren
    assert "switched off" not in warren


async def test_people_with_memory_off_are_counted_but_not_shown(http_memory, server: OpenAIServer) -> None:
    async with http_memory() as memory:
        await memory.set_memory_on(17, False)
        await memory.send(RoomOpened(room_id="g", personas=("warren",), humans={42, 17},
                                     names={42: "Dan", 17: "Cara"}))
        await memory.post_line("g", "u:42", "I started learning the bagpipes last week.")
        await memory.post_line("g", "u:17", "My landlord is selling the building.")
        await memory.send(RoomWentQuiet(room_id="g"))
        await memory.drain()
    [(_, user)] = extraction_calls(server)
    assert "1 other person present keeps their memory switched off: their lines are left out; " \
           "write nothing about them." in user
    assert "u:17" not in user and "Cara" not in user and "landlord" not in user


async def test_a_kit_mounted_after_the_lines_is_said_so(http_memory, server: OpenAIServer) -> None:
    async with http_memory() as memory:
        opened = dict(room_id="g", personas=("warren",), humans={42}, names={42: "Dan"})
        await memory.send(RoomOpened(**opened))
        await memory.post_line("g", "u:42", "I moved to a flat near the river in June.")
        await memory.send(RoomOpened(**opened, kit="dragon-quest"))
        await memory.post_line("g", "u:42", "My knight swears an oath to the queen.")
        await memory.send(RoomWentQuiet(room_id="g"))
        await memory.drain()
    [(_, user)] = extraction_calls(server)
    assert 'A game or role-play ("dragon-quest") was mounted in this room after these lines; ' \
           "they were said before it." in user
    assert "mounted in this room before" not in user
    assert "knight" not in user  # the kit's own lines are never read


async def test_a_kit_mounted_before_the_cursor_is_told_to_the_next_slice(
    http_memory, server: OpenAIServer
) -> None:
    async with http_memory() as memory:
        opened = dict(room_id="g", personas=("warren",), humans={42}, names={42: "Dan"})
        await memory.send(RoomOpened(**opened))
        await memory.post_line("g", "u:42", "I work night shifts at the bakery.")
        await memory.send(RoomOpened(**opened, kit="murder-mystery"))
        await memory.post_line("g", "u:42", "As the butler, I was in the library all evening.")
        await memory.send(RoomWentQuiet(room_id="g"))
        await memory.drain()
        await memory.send(RoomOpened(**opened))  # the game is over; the chat goes on
        await memory.post_line("g", "u:42", "That butler of mine was far too suspicious.")
        await memory.send(RoomWentQuiet(room_id="g"))
        await memory.drain()
    [(_, first), (_, second)] = extraction_calls(server)
    assert '("murder-mystery") was mounted in this room after these lines' in first
    assert 'A game or role-play ("murder-mystery") was mounted in this room before some of these ' \
           "lines: people may still talk in character or about the game." in second
    assert "after these lines" not in second
    assert "far too suspicious" in second and "library" not in second


async def test_the_system_message_carries_the_extraction_rules(http_memory, server: OpenAIServer) -> None:
    async with http_memory() as memory:
        await memory.send(RoomOpened(room_id="dm", personas=("warren",), humans={42}, private=True))
        await memory.post_line("dm", "u:42", "I adopted a greyhound called Pixel.")
        await memory.send(RoomWentQuiet(room_id="dm"))
        await memory.drain()
    [(system, _)] = extraction_calls(server)
    for rule in [
        # listener instructions
        "Only what the speaker says about themselves, not what they say to the listener.",
        "are not the speaker's preference, plan or habit",
        # pleasantries, on the Generative Agents scale
        "No greetings, thanks, pleasantries or small talk",
        "If one is kept at all, its importance is 1 or 2.",
        "On the scale of 1 to 10, where 1 is purely mundane (e.g., brushing teeth, making bed) and "
        "10 is extremely poignant (e.g., a break up, college acceptance), rate the likely "
        "poignancy of the following piece of memory.",
        "a plainly stated preference is at least 3",
        # dangling references
        "No dangling references. Every pronoun or demonstrative in a memory",
        "must have what it refers to inside the same memory",
        # one follow-up per row
        "One follow-up per memory.",
        "never merge them into one sentence",
        # "we"
        '"We" and "our" only when the conversation says who "we" is',
        # specific content
        "Keep the specific content: names, objects, places, numbers, dates and titles",
        # one-value slots for the router
        "Some things hold one value at a time",
        "u:42 now works at Globex as a data analyst; they left Acme in October 2026.",
        "That is how the old memory gets closed.",
        # the situation
        "Use the room's situation.",
        "keep only what they say as themselves",
        # the design's fixed rules stay
        "Name people by their `u:` id, never by their display name",
        "Nothing about a person who is not present",
        "If no time is stated, leave `valid_from` out; never guess it.",
    ]:
        assert rule in system, rule
    assert "$" not in system
