"""States: the one-value attributes kept as a table (relationship status, diet), read from a
memory sentence through ``minds.offline.slots``."""

from __future__ import annotations

import re

import pytest

from persona_memory.minds.offline import states
from persona_memory.minds.offline.slots import conflicts, readings
from persona_memory.minds.offline.states import TABLE, Attribute, Value, read_state


def read(text: str) -> list[tuple[str, str, bool]]:
    return [(r.slot.name, r.value, r.ends) for r in readings(text)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("u:9 is single.", "single"),
        ("u:9 has been single for three years (since 2023).", "single"),
        ("u:9 is single again.", "single"),
        ("u:9 broke up with Nadia in March.", "single nadia"),
        ("u:9 and Nadia split up last winter.", "single"),
        ("u:9 called off their engagement.", "single"),
        ("u:9 is seeing someone.", "dating"),
        ("u:9 is seeing a guy from the climbing gym.", "dating"),
        ("u:9 has been dating Priya since the spring.", "dating priya"),
        ("u:9 started seeing Priya.", "dating priya"),
        ("u:9 started going out with Priya in May.", "dating priya"),
        ("u:9 and Priya are together now.", "dating"),
        ("u:9 is in a long-distance relationship with Priya.", "dating priya"),
        ("u:9 got back together with Nadia.", "dating nadia"),
        ("u:9 got engaged.", "engaged"),
        ("u:9 is engaged to Tomas.", "engaged tomas"),
        ("u:9 proposed to Tomas on a ferry.", "engaged tomas"),
        ("u:9 has a fiancée named Ilse.", "engaged ilse"),
        ("u:9 tied the knot last weekend.", "married"),
        ("u:9 tied the knot with Ilse in Ghent.", "married ilse"),
        ("u:9 is happily married to Ilse.", "married ilse"),
        ("u:9 got married in a registry office.", "married"),
        ("u:9 got divorced from Ilse in 2024.", "divorced ilse"),
        ("u:9 is separated from their husband.", "separated husband"),
        ("u:9 is a widower.", "widowed"),
        ("u:9 is not married.", "not married"),
    ],
)
def test_a_relationship_status_in_the_ways_people_say_it(text: str, value: str) -> None:
    assert read(text) == [("relationship", value, False)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("u:9 has been vegetarian for twelve years.", "vegetarian"),
        ("u:9 became a vegetarian after university.", "vegetarian"),
        ("u:9 doesn't eat meat.", "vegetarian"),
        ("u:9 went vegan in January.", "vegan"),
        ("u:9 is fully plant-based now.", "vegan"),
        ("u:9 is a pescatarian.", "pescatarian"),
        ("u:9 started eating meat again.", "eats meat"),
        ("u:9 is back to eating meat.", "eats meat"),
        ("u:9 is an omnivore.", "eats meat"),
        ("u:9 went keto this autumn.", "keto"),
        ("u:9 is on a strict paleo diet.", "paleo"),
        ("u:9 is on a low-sodium diet.", "low-sodium"),  # a diet the table does not name
        ("u:9 is not vegan.", "not vegan"),
    ],
)
def test_a_diet_in_the_ways_people_say_it(text: str, value: str) -> None:
    assert read(text) == [("diet", value, False)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("u:9 gave up meat.", ("diet", "eats meat", True)),
        ("u:9 stopped eating meat.", ("diet", "eats meat", True)),
        ("u:9 doesn't eat meat anymore.", ("diet", "eats meat", True)),
        ("u:9 is not vegan anymore.", ("diet", "vegan", True)),
        ("u:9 is no longer a vegetarian.", ("diet", "vegetarian", True)),
        ("u:9 used to be vegan.", ("diet", "vegan", True)),
        ("u:9 is no longer married.", ("relationship", "married", True)),
    ],
)
def test_an_ending_with_nothing_in_its_place(text: str, expected: tuple[str, str, bool]) -> None:
    assert read(text) == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "u:9 went to a wedding.",
        "u:9 was a groomsman at their cousin's wedding.",
        "u:9 watched a film about a divorce.",
        "u:9's sister got engaged.",
        "u:9's best friend tied the knot.",
        "u:9 is planning to get married next year.",
        "u:9 is seeing a physiotherapist for their knee.",
        "u:9 is going out with friends tonight.",
        "u:9 is engaged in a long dispute with their landlord.",
        "u:9 broke up a fight outside the pub.",
        "u:9 is single-handedly running the bakery.",
        "u:9 is a single parent.",
        "u:9 and Priya went together to the market.",
        "u:9 ate a steak at a barbecue.",
        "u:9 cooked a vegetarian curry for six.",
        "u:9 got a vegan cookbook for their birthday.",
        "u:9 went to a vegan bakery in Leeds.",
        "u:9 is a vegan chef.",
        "u:9 wants to go vegan.",
        "u:9 was vegetarian as a teenager.",
    ],
)
def test_an_event_that_only_touches_a_state_sets_none(text: str) -> None:
    assert [r for r in readings(text) if r.slot.name in states.ATTRIBUTES] == []


def test_a_new_value_conflicts_with_the_old_and_the_same_value_does_not() -> None:
    (single,) = readings("u:9 is single.")
    (engaged,) = readings("u:9 got engaged to Tomas.")
    (engaged_again,) = readings("u:9 is engaged to Tomas.")
    (vegetarian,) = readings("u:9 has been vegetarian for twelve years.")
    (meat,) = readings("u:9 started eating meat again.")
    (no_meat,) = readings("u:9 gave up meat.")
    assert conflicts(engaged, single) and conflicts(single, engaged)
    assert not conflicts(engaged_again, engaged)
    assert conflicts(meat, vegetarian) and conflicts(vegetarian, meat)
    assert conflicts(no_meat, meat) and not conflicts(no_meat, vegetarian)


def test_every_value_of_the_table_is_read_back_from_its_own_words() -> None:
    # each value said after "is" with each of its ``be`` phrasings (optional words left out,
    # the first of each set of alternatives, a name for the other person) reads as that
    # value: the table and its compiled form agree
    for attribute in TABLE:
        for value in attribute.values:
            for be in value.be:
                required = re.sub(r"\[[^\]]*\]", "", be).split()
                words = " ".join("sam" if w == "{who}" else w.split("|")[0] for w in required)
                found = read_state(f"is {words}")
                assert found is not None and (found.attribute, found.value) == (attribute.name, value.name), be


def test_the_phrasing_syntax() -> None:
    table = Attribute("mood", (Value("calm", be=("[a] calm|serene [person]",), say=("took {their} time [with {who}]",)),))
    compiled = states._compile(table)
    for clause, who in [
        ("is calm", ""),
        ("is a serene person", ""),
        ("has been calm for a while", ""),
        ("took their time with ana", "ana"),
        ("took her time", ""),
    ]:
        found = compiled.pattern.match(clause)
        assert found is not None, clause
        assert compiled.read(found) == states.Match("mood", "calm", who=who)
    assert compiled.pattern.match("is a calm lake") is None  # a noun follows: a description
    assert compiled.read(compiled.pattern.match("is not calm")) == states.Match("mood", "not calm")
    assert compiled.read(compiled.pattern.match("is not calm anymore")) == states.Match("mood", "calm", ends=True)


def test_the_table_is_compiled_once() -> None:
    assert all(isinstance(c.pattern, re.Pattern) for c in states.COMPILED)
    assert [c.attribute for c in states.COMPILED] == [a.name for a in TABLE]
