"""Slots: which one-value slot a memory sentence fills, with what, and whether it only ends it."""

from __future__ import annotations

import pytest

from persona_memory.minds.offline.slots import Reading, Slot, conflicts, readings, same_value, slot_of


def read(text: str) -> list[tuple[str, str, str, bool]]:
    return [(r.slot.name, r.slot.key, r.value, r.ends) for r in readings(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("u:7 works at Brightline Foods.", [("employer", "", "brightline foods", False)]),
        (
            "u:7 works at Harbor Bank as a loan officer.",
            [("employer", "", "harbor bank", False), ("role", "", "loan officer", False)],
        ),
        ("u:7 works as a night nurse.", [("role", "", "night nurse", False)]),
        ("u:7 got a new job at Kestrel Labs.", [("employer", "", "kestrel labs", False)]),
        ("u:7 was promoted to head baker last week.", [("role", "", "head baker", False)]),
        ("u:7 is an electrician at the city council.", [("employer", "", "city council", False), ("role", "", "electrician", False)]),
        ("u:7 quit their job at the bakery.", [("employer", "", "bakery", True), ("role", "", "", True)]),
        ("u:7 was laid off in March.", [("employer", "", "", True), ("role", "", "", True)]),
        ("u:7 no longer works at the museum.", [("employer", "", "museum", True), ("role", "", "", True)]),
    ],
)
def test_where_someone_works_and_as_what(text, expected):
    assert read(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("u:7 lives in Tartu.", [("home", "", "tartu", False)]),
        ("u:7 lives in a small flat in Gdansk.", [("home", "", "small flat in gdansk", False)]),
        ("u:7 moved to Perth with their brother.", [("home", "", "perth", False)]),
        ("u:7 and their wife moved back to Leeds in 2025.", [("home", "", "leeds", False)]),
        ("u:7 is moving to Denver next month.", [("home", "", "denver", False)]),
        ("u:7 moved out of the shared house.", [("home", "", "shared house", True)]),
        ("u:7 no longer lives in Cusco.", [("home", "", "cusco", True)]),
    ],
)
def test_where_someone_lives(text, expected):
    assert read(text) == expected


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("u:7 is single.", "single"),
        ("u:7 is dating Robin.", "dating robin"),
        ("u:7 has a new girlfriend named Ines.", "dating ines"),
        ("u:7 got engaged to Robin over the weekend!", "engaged robin"),
        ("u:7 is married to Alex.", "married alex"),
        ("u:7 got divorced last year.", "divorced"),
        ("u:7 broke up with Robin.", "single robin"),
    ],
)
def test_relationship_status(text, value):
    assert read(text) == [("relationship", "", value, False)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("u:7 is vegan.", [("diet", "", "vegan", False)]),
        ("u:7 went vegetarian in January.", [("diet", "", "vegetarian", False)]),
        ("u:7 is on a keto diet.", [("diet", "", "keto", False)]),
        ("u:7 started eating meat again.", [("diet", "", "eats meat", False)]),
        ("u:7 is no longer vegan.", [("diet", "", "vegan", True)]),
        ("u:7 is not vegetarian.", [("diet", "", "not vegetarian", False)]),
    ],
)
def test_diet(text, expected):
    assert read(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("u:7 smokes about ten cigarettes a day.", [("habit", "smok", "smok", False)]),
        ("u:7 quit smoking.", [("habit", "smok", "smok", True)]),
        ("u:7 is a heavy smoker.", [("habit", "smok", "smok", False)]),
        ("u:7 drinks wine most nights.", [("habit", "drink", "drink", False)]),
        ("u:7 gave up drinking.", [("habit", "drink", "drink", True)]),
        ("u:7 swims laps every Thursday.", [("habit", "lap", "swim", False)]),
        ("u:7 stopped swimming laps.", [("habit", "lap", "swim", True)]),
        ("u:7 does not smoke.", [("habit", "smok", "not smok", False)]),
    ],
)
def test_habits_keyed_by_the_habit(text, expected):
    assert read(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("u:7 studies law at Tartu University.", [("school", "", "tartu university", False)]),
        ("u:7 is a second-year student at the art college.", [("school", "", "art college", False)]),
        ("u:7 graduated from the art college.", [("school", "", "art college", True)]),
        ("u:7 dropped out of nursing school.", [("school", "", "nursing school", True)]),
        ("u:7 is taking a welding course.", [("course", "weld", "", False)]),
        ("u:7 finished the welding course.", [("course", "weld", "", True)]),
        ("u:7 is learning Portuguese.", [("course", "portugues", "", False)]),
    ],
)
def test_schools_and_courses(text, expected):
    assert read(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("u:7 owns a sailboat called Marlin.", [("owns", "sailboat", "", False)]),
        ("u:7 bought a used van in May.", [("owns", "van", "", False)]),
        ("u:7 sold the van.", [("owns", "van", "", True)]),
        ("u:7 has a cat named Pepper.", [("owns", "cat", "", False)]),
        ("u:7 has two rabbits.", [("owns", "rabbit", "", False)]),
        ("u:7 has a sister in Lyon.", []),
    ],
)
def test_things_owned_keyed_by_the_object(text, expected):
    assert read(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("u:7 loves jazz.", [("stance", "jazz", "+", False)]),
        ("u:7 really enjoys hiking in the hills.", [("stance", "hik", "+", False)]),
        ("u:7 hates jazz now.", [("stance", "jazz", "-", False)]),
        ("u:7 can't stand spicy food.", [("stance", "spicy food", "-", False)]),
        ("u:7 doesn't like jazz anymore.", [("stance", "jazz", "", True)]),
        ("u:7 loves it.", []),
    ],
)
def test_a_stance_keyed_by_its_object(text, expected):
    assert read(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "u:7's brother works at the harbour.",  # someone else's job
        "u:7 wants to move to Bergen.",  # a wish
        "u:7 might quit their job.",  # a maybe
        "u:7 lived in Osaka as a child.",  # a past state
        "u:7 ran 6 miles on Saturday.",  # an event, not a habit
        "u:7 visited the museum with a friend.",
        "Warren promised to call u:7 on Friday.",  # not about a human's own slot
        "u:7 is interviewing at a bank on Monday.",
        "u:7 left work early to see a film.",
    ],
)
def test_what_fills_no_slot(text):
    assert readings(text) == ()
    assert slot_of(text) is None


def test_later_clauses_count_only_without_a_subject_of_their_own():
    assert read("u:7 quit their job and moved to Bergen.") == [
        ("employer", "", "", True),
        ("role", "", "", True),
        ("home", "", "bergen", False),
    ]
    assert read("u:7 is engaged to Robin, who works at a bank.") == [("relationship", "", "engaged robin", False)]


def test_a_slot_given_a_value_is_not_also_ended():
    assert read("u:7 now works at Northwind, they left Quill Media in June.") == [
        ("employer", "", "northwind", False),
        ("home", "", "quill media", True),
    ]


def test_values_compare_loosely_for_names_and_exactly_for_states():
    assert same_value("employer", "quill media", "quill media ltd")
    assert same_value("home", "small flat in gdansk", "gdansk")
    assert not same_value("home", "gdansk", "perth")
    assert not same_value("role", "junior analyst", "senior analyst")
    assert same_value("relationship", "engaged robin", "engaged")
    assert not same_value("relationship", "engaged robin", "married robin")
    assert not same_value("stance", "+", "-")
    assert not same_value("diet", "vegetarian", "not vegetarian")


def test_what_conflicts():
    works_at = Reading(Slot("employer"), "quill media")
    assert conflicts(Reading(Slot("employer"), "northwind"), works_at)
    assert not conflicts(Reading(Slot("employer"), "quill media ltd"), works_at)
    assert conflicts(Reading(Slot("employer"), "", ends=True), works_at)
    assert conflicts(Reading(Slot("employer"), "quill", ends=True), works_at)
    assert not conflicts(Reading(Slot("employer"), "harbor bank", ends=True), works_at)
    assert not conflicts(Reading(Slot("home"), "perth"), works_at)
    assert not conflicts(Reading(Slot("owns", "van"), ""), Reading(Slot("owns", "van"), ""))
    assert conflicts(Reading(Slot("owns", "van"), "", ends=True), Reading(Slot("owns", "van"), ""))
    assert not conflicts(Reading(Slot("owns", "van"), "", ends=True), Reading(Slot("owns", "bike"), ""))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("u:7 switched jobs, they're at a bakery now.", [("employer", "", "", True), ("role", "", "", True)]),
        ("u:7 got a promotion to shift lead.", [("role", "", "shift lead", False)]),
        ("u:7 and their partner live in Bergen now.", [("home", "", "bergen", False)]),
        ("u:7 moved back home to Tartu.", [("home", "", "tartu", False)]),
        ("u:7 moved in with their boyfriend.", [("home", "", "", True)]),
        ("u:7 is not a smoker anymore.", [("habit", "smok", "smok", True)]),
        ("u:7 gave their old piano to a school.", [("owns", "piano", "", True)]),
        ("u:7 gave a talk at the library.", []),
    ],
)
def test_other_ways_a_chat_says_a_change(text, expected):
    assert read(text) == expected
