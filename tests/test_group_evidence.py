"""The group evidence rule: a row about a person cites only lines in which that person speaks
or is spoken to. Through the write path (a group room, the room goes quiet, the memory
drains) and, for the reasons, through ``check_candidates``.

Dan (u:42) and Cara (u:17) talk with Warren in a group room.
"""

from __future__ import annotations

import pytest

import persona_memory as pm
from persona_memory.minds.fake import FakeMind
from persona_memory.write.validation import SliceFacts, check_candidates

DAN, CARA = 42, 17
GROUP = dict(room_id="g", personas=("warren",), humans=frozenset({DAN, CARA}), names={DAN: "Dan", CARA: "Cara"})


def about_cara(text: str, *cited: int):
    """A mind that files one row about Cara citing the slice's lines at ``cited`` (0-based)."""

    def extract(request):
        evidence = [request.lines[i].id for i in cited]
        return {"memories": [{"subject": "u:17", "kind": "fact", "text": text, "importance": 6, "evidence": evidence}]}

    return FakeMind(extract=extract)


async def talk(memory, *lines):
    await memory.send(pm.RoomOpened(**GROUP))
    ids = [await memory.post_line("g", speaker, text) for speaker, text in lines]
    await memory.send(pm.RoomWentQuiet(room_id="g"))
    await memory.drain()
    return ids


async def test_a_row_about_cara_built_on_dans_words_is_not_stored(open_test_memory):
    mind = about_cara("Cara is moving to Lisbon.", 0, 1)
    async with open_test_memory(mind=mind) as memory:
        await talk(memory, ("u:42", "As Cara said, I'm moving to Lisbon."), ("u:17", "Lisbon will be lovely in May."))
        assert await memory.memories_about(CARA) == []


async def test_a_line_that_calls_cara_by_name_may_be_cited(open_test_memory):
    mind = about_cara("Cara came third in the half marathon after a fast race.", 0, 1)
    async with open_test_memory(mind=mind) as memory:
        ids = await talk(memory, ("u:42", "Cara, how did the race go? Fast?"), ("u:17", "I came third in the half marathon."))
        (row,) = await memory.memories_about(CARA)
        assert row.text == "u:17 came third in the half marathon after a fast race."
        assert sorted(row.evidence) == ids


async def test_a_question_to_the_room_that_cara_answers_may_be_cited(open_test_memory):
    mind = about_cara("Cara is training for the Porto marathon, her next race.", 0, 1)
    async with open_test_memory(mind=mind) as memory:
        ids = await talk(memory, ("u:42", "Anyone got a race coming up?"), ("u:17", "I'm training for the Porto marathon."))
        (row,) = await memory.memories_about(CARA)
        assert sorted(row.evidence) == ids


async def test_the_personas_answer_to_cara_may_be_cited(open_test_memory):
    answered = about_cara("Cara is training for the Porto marathon in October.", 0, 1)
    async with open_test_memory(mind=answered) as memory:
        ids = await talk(memory, ("u:17", "I'm training for the Porto marathon."), ("warren", "Porto in October is a lovely race."))
        (row,) = await memory.memories_about(CARA)
        assert sorted(row.evidence) == ids


async def test_the_personas_words_to_dan_are_not_evidence_about_cara(open_test_memory):
    to_dan = about_cara("Cara is moving to Lisbon.", 0, 1)
    async with open_test_memory(mind=to_dan) as memory:
        await talk(memory, ("u:17", "Lisbon is lovely."), ("warren", "Dan, congratulations on moving to Lisbon!"))
        assert await memory.memories_about(CARA) == []


async def test_caras_own_fact_no_longer_cites_the_gossip_she_answered(open_test_memory):
    # the offline reader cites the line a reply answers; here that line is Dan's claim about
    # Cara, which does not speak to her: her row keeps her own line only
    async with open_test_memory() as memory:
        ids = await talk(memory, ("u:42", "Cara is pregnant, by the way."), ("u:17", "I run marathons every spring."))
        (row,) = await memory.memories_about(CARA)
        assert row.text == "u:17 runs marathons every spring."
        assert row.evidence == (ids[1],)
        assert all("pregnant" not in r.text for r in await memory.memories_about(DAN))


FACTS = SliceFacts(
    persona="warren",
    line_speakers={1: "u:42", 2: "u:17", 3: "warren", 4: "u:17"},
    writable=frozenset({DAN, CARA}),
    names={DAN: "Dan", CARA: "Cara"},
    line_texts={
        1: "As Cara said, I'm moving to Lisbon.",
        2: "Lisbon will be lovely in May.",
        3: "@Dan the Lisbon flat sounds perfect.",
        4: "I found a job at a bakery.",
    },
)


@pytest.mark.parametrize(
    ("text", "evidence", "reason"),
    [
        ("u:17 is moving to Lisbon.", [1, 2], "evidence not said by or to u:17: the row takes mov from line 1, u:42's"),
        ("u:17 has a flat in Lisbon.", [3, 2], "evidence not said by or to u:17: the row takes flat from line 3, warren's"),
    ],
)
def test_the_reason_names_the_line_and_the_words_taken(text: str, evidence: list[int], reason: str) -> None:
    item = {"subject": "u:17", "kind": "fact", "text": text, "importance": 6, "evidence": evidence}
    kept, dropped = check_candidates({"memories": [item]}, FACTS)
    assert kept == []
    assert dropped[0].reason.startswith(reason)


def test_a_cited_line_that_gave_the_row_no_word_is_left_out_of_its_evidence() -> None:
    item = {"subject": "u:17", "kind": "fact", "text": "u:17 found a job at a bakery.", "importance": 6, "evidence": [1, 4]}
    (kept,), dropped = check_candidates({"memories": [item]}, FACTS)
    assert dropped == []
    assert kept.evidence == (4,)


def test_in_a_private_chat_the_personas_lines_speak_to_the_one_human() -> None:
    facts = SliceFacts(
        persona="warren",
        line_speakers={1: "warren", 2: "u:42"},
        writable=frozenset({DAN}),
        names={DAN: "Dan"},
        line_texts={1: "How is the new studio in Xuhui?", 2: "The studio is tiny but bright."},
    )
    item = {"subject": "u:42", "kind": "fact", "text": "u:42 has a tiny, bright studio in Xuhui.", "importance": 6, "evidence": [1, 2]}
    (kept,), dropped = check_candidates({"memories": [item]}, facts)
    assert dropped == [] and kept.evidence == (1, 2)


@pytest.mark.parametrize(
    ("text", "called_refs"),
    [
        ("Cara, how was the race?", {"u:17"}),
        ("Hey Cara! Long time.", {"u:17"}),
        ("How was the race, Cara?", {"u:17"}),
        ("@cara the photos are up", {"u:17"}),
        ("u:17: the photos are up", {"u:17"}),
        ("Thanks Warren, that helps.", {"warren"}),
        ("Wow, Cara! Third place is huge.", {"u:17"}),
        ("Thanks, Cara. The map helped.", {"u:17"}),
        ("Thanks Cara - the map helped.", {"u:17"}),
        ("That's brilliant, Cara! How long did you train?", {"u:17"}),
        ("Great news Cara! How long did you train?", {"u:17"}),
        ("Thanks so much, Cara. The map helped.", {"u:17"}),
        ("Great race Cara ran today!", set()),
        ("I met Ana, Cara, and Joe at the market.", set()),
        ("As Cara said, I'm moving to Lisbon.", set()),
        ("I told Cara about the race.", set()),
        ("I'm moving to Lisbon, Portugal.", set()),
    ],
)
def test_a_line_calls_someone_by_name_only_as_an_address(text: str, called_refs: set[str]) -> None:
    from persona_memory.write.addressed import called

    people = {"u:42": ("Dan",), "u:17": ("Cara Mendes",), "warren": ("Warren",)}
    assert called(text, people) == called_refs
