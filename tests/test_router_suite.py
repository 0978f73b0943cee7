"""The router suite: what a user's page shows after two things said days apart.

Each case is a conversation through the public API, with the bundled offline mind: a private
chat with the persona, one utterance, the room goes quiet; days later another utterance, quiet
again. Then the human's page (``memories_about``) is read: which lines are current and which
are closed. A case names each expected line by a few words only it holds, so the cases check
the routing, not the exact wording extraction gives a sentence.

The cases follow the anchors' examples (mem0's update-memory prompt: a new value replaces the
old, a repeat changes nothing, something new is added; Graphiti's dedupe: the same fact said
twice is one fact, two distinct events are two) in sentences of our own.
"""

from __future__ import annotations

import attrs
import pytest

import persona_memory as pm

DAN, CARA = 42, 17
DM = dict(room_id="dm", personas=("warren",), humans={DAN}, private=True, names={DAN: "Dan"})


@attrs.frozen
class Case:
    first: str
    then: str
    current: tuple[str, ...]  # one current line holds each of these words
    closed: tuple[str, ...] = ()  # one closed line holds each of these words


def case(first: str, then: str, current: tuple[str, ...], closed: tuple[str, ...] = ()) -> Case:
    return Case(first, then, current, closed)


UPDATES = {
    "a new employer replaces the old": case(
        "I work at Acme Corp.", "I now work at Globex, I left Acme last month.", ("Globex",), ("works at Acme Corp",)
    ),
    "a new job said another way": case(
        "I work at Harbor Bank.", "I got a new job at Kestrel Labs!", ("Kestrel Labs",), ("Harbor Bank",)
    ),
    "a move replaces the old home": case("I live in Berlin.", "We moved to Lisbon.", ("Lisbon",), ("Berlin",)),
    "a move for work": case("I live in Porto.", "I just moved to Osaka for work.", ("Osaka",), ("Porto",)),
    "love turned to hate": case("I love opera.", "I hate opera now.", ("hates opera",), ("loves opera",)),
    "hate turned to love": case("I hate running.", "I love running now.", ("loves running",), ("hates running",)),
    "single, then engaged": case("I'm single.", "I got engaged to Sam!", ("engaged to Sam",), ("single",)),
    "dating, then broke up": case(
        "I'm dating Robin.", "I broke up with Robin last week.", ("broke up",), ("dating Robin",)
    ),
    "engaged, then married": case(
        "I'm engaged to Alex.", "I got married to Alex in June!", ("married",), ("engaged",)
    ),
    "married, then divorced": case(
        "I'm married to Chris.", "I got divorced this spring.", ("divorced",), ("married",)
    ),
    "vegetarian, then eating meat again": case(
        "I'm vegetarian.", "I started eating meat again.", ("meat",), ("vegetarian",)
    ),
    "vegetarian, then vegan": case("I'm vegetarian.", "I'm vegan now.", ("vegan",), ("vegetarian",)),
    "junior, then promoted": case(
        "I work as a junior analyst.", "I got promoted to senior analyst.", ("senior analyst",), ("junior analyst",)
    ),
    "a degree finished": case(
        "I study law at Tartu University.", "I graduated from Tartu University!", ("graduated",), ("law at Tartu",)
    ),
    "a course finished": case(
        "I'm taking a welding course.", "I finished the welding course.", ("finished",), ("taking a welding",)
    ),
    "a school changed": case(
        "I go to Lakeside College.", "I transferred to Hillcrest University.", ("Hillcrest",), ("Lakeside",)
    ),
    "something owned, then sold": case(
        "I own a sailboat.", "I sold my sailboat.", ("sold",), ("owns a sailboat",)
    ),
    "a job quit": case(
        "I'm a nurse at the children's hospital.", "I quit my job at the hospital.", ("quit",), ("nurse",)
    ),
    "moved out of the old place": case("I live in Cusco.", "I moved out of Cusco.", ("moved out",), ("lives in Cusco",)),
    "switched jobs, said in passing": case(
        "I work at Harbor Bank.", "I switched jobs, I'm at Globex now.", ("switched jobs",), ("Harbor Bank",)
    ),
    "moved in with a partner": case(
        "I live in a flat in Leeds.", "I moved in with my girlfriend.", ("moved in with",), ("Leeds",)
    ),
    "given away": case("I own a car.", "I gave my car to my cousin.", ("cousin",), ("owns a car",)),
    "a habit back after quitting": case(
        "I quit smoking last year.", "I started smoking again.", ("smoking again",), ("quit smoking",)
    ),
    "vegetarian for years, then eating meat again": case(
        "I've been vegetarian for ten years.", "I started eating meat again.", ("eating meat",), ("ten years",)
    ),
    "single, then seeing someone": case("I'm single.", "I'm seeing someone.", ("seeing someone",), ("single",)),
    "single for a while, then tied the knot": case(
        "I've been single for two years.", "I tied the knot with Bea!", ("knot",), ("two years",)
    ),
    "eating meat, then vegan": case("I eat meat.", "I went vegan.", ("vegan",), ("eats meat",)),
}

CLOSES = {
    "a habit quit": case("I smoke a pack a day.", "I quit smoking.", (), ("pack a day",)),
    "drinking given up": case("I drink wine every night.", "I gave up drinking.", (), ("wine",)),
    "a weekly game stopped": case("I play tennis every Sunday.", "I stopped playing tennis.", (), ("tennis",)),
    "no longer a smoker": case("I smoke a pack a day.", "I'm not a smoker anymore.", (), ("pack a day",)),
    "a liking ended": case("I love jazz.", "I don't like jazz anymore.", (), ("jazz",)),
    "a diet ended": case("I'm vegan.", "I'm not vegan anymore.", (), ("vegan",)),
    "meat given up": case("I eat meat every day.", "I gave up meat.", (), ("every day",)),
    "a workplace left, nothing new": case(
        "I work at the museum.", "I don't work at the museum anymore.", (), ("museum",)
    ),
}

NONES = {
    "the same words again": case("I have a dog named Biscuit.", "I have a dog named Biscuit.", ("Biscuit",)),
    "the same liking, louder": case("I love hiking.", "I really love hiking!", ("hiking",)),
    "the same employer, fewer words": case("I work at Acme Corp.", "I work at Acme.", ("Acme",)),
    "the same diet, with an article": case("I'm vegetarian.", "I'm a vegetarian.", ("vegetarian",)),
    "still single": case("I'm single.", "I'm still single.", ("single",)),
    "the same engagement": case("I got engaged to Sam!", "I'm engaged to Sam.", ("engaged",)),
    "the same home": case("I live in Berlin.", "I live in Berlin.", ("Berlin",)),
}

ADDS = {
    "two runs are two events": case("I ran 5 miles on Tuesday.", "I ran 3 miles on Wednesday.", ("5 miles", "3 miles")),
    "two pets are two rows": case("I have a dog.", "I have a cat.", ("dog", "cat")),
    "two trips are two events": case(
        "I visited Lyon with my sister.", "I visited Bergen with my brother.", ("Lyon", "Bergen")
    ),
    "an unrelated fact": case("I work at Acme Corp.", "I'm allergic to peanuts.", ("Acme", "peanuts")),
    "two likings": case("I love opera.", "I love jazz.", ("opera", "jazz")),
    "two courses": case("I'm taking a welding course.", "I'm taking a glassblowing course.", ("welding", "glassblowing")),
    "two things owned": case("I own a sailboat.", "I bought a van.", ("sailboat", "van")),
    "a visit does not move a home": case("I live in Berlin.", "I visited Lisbon last week.", ("Berlin", "Lisbon")),
    "a sibling's move is not one's own": case(
        "I live in Berlin.", "My sister moved to Lisbon.", ("lives in Berlin", "sister moved to Lisbon")
    ),
    "selling one thing leaves another": case("I own a sailboat.", "I sold my old bike.", ("sailboat", "bike")),
    "two dogs are two rows": case("I have a dog named Rex.", "I have a dog named Bo.", ("Rex", "Bo")),
    "keys left at the office leave the job alone": case(
        "I work for a startup.", "I left my keys at the office yesterday.", ("startup", "keys")
    ),
    "hours in the garden are not a job": case(
        "I work at the bank.", "I work for hours on my garden every weekend.", ("bank", "garden")
    ),
    "a stop on the way is not quitting": case(
        "I smoke a pack a day.", "I stopped at the pharmacy after work.", ("pack a day", "pharmacy")
    ),
    "a sister's job is not one's own": case(
        "I work as a nurse.", "My sister works as a teacher.", ("nurse", "teacher")
    ),
    "a brother's engagement is not one's own": case(
        "I'm dating Robin.", "My brother is engaged to Kim.", ("dating Robin", "Kim")
    ),
    "a wedding does not end being single": case("I'm single.", "I went to a wedding.", ("single", "wedding")),
    "a steak at a barbecue is not a diet": case(
        "I'm vegetarian.", "I ate a steak at a barbecue.", ("vegetarian", "steak")
    ),
    "a weekend away does not move a home": case(
        "I live in Porto.", "I spent a weekend in Lisbon.", ("Porto", "Lisbon")
    ),
    "a sister's engagement is not one's own status": case(
        "I'm single.", "My sister got engaged.", ("is single", "sister got engaged")
    ),
    "a sister's divorce is not one's own": case(
        "I'm married to Tom.", "My sister divorced her husband.", ("married to Tom", "sister divorced")
    ),
    "liking a city does not move one there": case(
        "I moved to Lisbon.", "I love Lisbon in the spring.", ("moved to Lisbon", "loves Lisbon")
    ),
    "one game is not a habit changed": case(
        "I play tennis every Sunday.", "I played tennis with my cousin yesterday.", ("every Sunday", "cousin")
    ),
}

CASES = {**UPDATES, **CLOSES, **NONES, **ADDS}


async def say_days_apart(memory, clock, first: str, then: str) -> None:
    await memory.send(pm.RoomOpened(**DM))
    await memory.post_line("dm", "u:42", first)
    await memory.send(pm.RoomWentQuiet(room_id="dm"))
    await memory.drain()
    clock.advance(days=3)
    await memory.send(pm.RoomOpened(**DM))
    await memory.post_line("dm", "u:42", then)
    await memory.send(pm.RoomWentQuiet(room_id="dm"))
    await memory.drain()


def assert_page(rows, current: tuple[str, ...], closed: tuple[str, ...]) -> None:
    shown = [r.text for r in rows if r.valid_to is None]
    gone = [r.text for r in rows if r.valid_to is not None]
    assert len(shown) == len(current), f"current lines: {shown}"
    assert len(gone) == len(closed), f"closed lines: {gone}"
    for words in current:
        assert sum(words.casefold() in t.casefold() for t in shown) == 1, (words, shown)
    for words in closed:
        assert sum(words.casefold() in t.casefold() for t in gone) == 1, (words, gone)


def test_the_suite_is_large_enough() -> None:
    assert len(CASES) >= 40
    assert len(UPDATES) >= 15 and len(CLOSES) >= 5 and len(NONES) >= 5 and len(ADDS) >= 8


@pytest.mark.parametrize("name", list(CASES))
async def test_two_things_said_days_apart(open_test_memory, clock, name: str) -> None:
    c = CASES[name]
    async with open_test_memory() as memory:
        await say_days_apart(memory, clock, c.first, c.then)
        rows = await memory.memories_about(DAN)
    assert_page(rows, c.current, c.closed)
    for row in rows:
        if row.valid_to is not None:
            assert row.valid_to == clock.now().date().isoformat() or row.valid_to <= clock.now().date().isoformat()


@pytest.mark.parametrize("name", list(UPDATES))
async def test_an_update_keeps_the_arc(open_test_memory, clock, name: str) -> None:
    c = UPDATES[name]
    async with open_test_memory() as memory:
        await say_days_apart(memory, clock, c.first, c.then)
        rows = await memory.memories_about(DAN)
    (old,) = [r for r in rows if r.valid_to is not None]
    (new,) = [r for r in rows if r.valid_to is None]
    assert old.closed_by == new.id


@pytest.mark.parametrize(
    ("first", "then", "old_text", "new_text"),
    [
        ("I'm single.", "I got engaged!", "u:42 is single.", "u:42 got engaged."),
        (
            "I've been vegetarian for ten years.",
            "I started eating meat again.",
            "u:42 has been vegetarian for ten years",
            "u:42 started eating meat again.",
        ),
    ],
)
async def test_a_status_or_a_diet_that_changed_closes_the_old_row(
    open_test_memory, clock, first: str, then: str, old_text: str, new_text: str
) -> None:
    async with open_test_memory() as memory:
        await say_days_apart(memory, clock, first, then)
        rows = await memory.memories_about(DAN)
    (old,) = [r for r in rows if r.text.startswith(old_text)]
    (new,) = [r for r in rows if r.text == new_text]
    assert new.valid_to is None
    assert old.valid_to == clock.now().date().isoformat()
    assert old.closed_by == new.id


async def test_a_close_stores_nothing_new_and_the_block_forgets_it(open_test_memory, clock) -> None:
    async with open_test_memory() as memory:
        await say_days_apart(memory, clock, "I smoke a pack a day.", "I quit smoking.")
        (row,) = await memory.memories_about(DAN)
        assert row.valid_to is not None and row.closed_by is None
        await memory.send(pm.RoomOpened(**DM))
        assert "pack a day" not in await memory.block("warren", "dm")


async def test_in_a_group_one_persons_slot_is_not_anothers(open_test_memory, clock) -> None:
    group = dict(room_id="g", personas=("warren",), humans={DAN, CARA}, names={DAN: "Dan", CARA: "Cara"})
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(**group))
        await memory.post_line("g", "u:42", "I live in Berlin.")
        await memory.post_line("g", "u:17", "I work at Acme Corp.")
        await memory.send(pm.RoomWentQuiet(room_id="g"))
        await memory.drain()
        clock.advance(days=2)
        await memory.post_line("g", "u:17", "I moved to Lisbon.")
        await memory.post_line("g", "u:42", "I now work at Globex.")
        await memory.send(pm.RoomWentQuiet(room_id="g"))
        await memory.drain()
        dan, cara = await memory.memories_about(DAN), await memory.memories_about(CARA)
    assert_page(dan, ("Berlin", "Globex"), ())
    assert_page(cara, ("Acme", "Lisbon"), ())


async def test_rows_written_behind_the_actors_back_are_routed_against(open_test_memory, clock) -> None:
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(**DM))
        await memory.post_line("dm", "u:42", "I have a dog.")
        await memory.send(pm.RoomWentQuiet(room_id="dm"))
        await memory.drain()
        # another program writes a row straight into the file: the actor's copy is now stale
        await memory._store.memories.insert(
            [
                pm.MemoryRow(
                    persona="warren", subject="u:42", kind="fact", text="u:42 lives in Berlin.",
                    importance=5, created=clock.now(), witnessed={DAN}, room_id="dm",
                )
            ]
        )
        clock.advance(days=1)
        await memory.post_line("dm", "u:42", "I moved to Lisbon.")
        await memory.send(pm.RoomWentQuiet(room_id="dm"))
        await memory.drain()
        rows = await memory.memories_about(DAN)
    assert_page(rows, ("dog", "Lisbon"), ("Berlin",))
