"""The offline router (call B): NONE, CLOSE, UPDATE, ADD by word overlap and change cues."""

from __future__ import annotations

import pytest

from persona_memory.minds.offline.route import route_candidate
from persona_memory.minds.offline.stems import content_stems, likeness
from persona_memory.minds.port import Neighbour, RoutingRequest


def route(text: str, *neighbours: str) -> dict:
    offered = tuple(Neighbour(label=str(i), text=t) for i, t in enumerate(neighbours))
    return route_candidate(
        RoutingRequest(persona="warren", subject="u:42", kind="fact", text=text, valid_from=None, neighbours=offered)
    )


def test_nothing_to_compare_with_is_an_add() -> None:
    assert route("u:42 has a cat named Tom.") == {"event": "ADD"}


@pytest.mark.parametrize(
    ("candidate", "known"),
    [
        ("u:42 loves hiking.", "u:42 loves hiking."),
        ("u:42 really loves hiking!", "u:42 loves hiking."),
        ("u:42 loves hiking.", "u:42 loves hiking in the Alps."),
        ("u:42 owns a flat in Xuhui.", "u:42 owns a flat in Xuhui, bought Jul 2026."),
    ],
)
def test_a_neighbour_that_already_says_it_is_none(candidate: str, known: str) -> None:
    assert route(candidate, "u:42 studies Japanese.", known) == {"event": "NONE"}


def test_a_change_that_shares_the_object_updates_that_neighbour() -> None:
    assert route(
        "u:42 sold the flat in Xuhui.",
        "u:42 loves hiking.",
        "u:42 owns a flat in Xuhui, bought Jul 2026.",
    ) == {"event": "UPDATE", "old_id": "1"}


@pytest.mark.parametrize(
    ("candidate", "known"),
    [
        ("u:42 quit their job at Google.", "u:42 works at Google as an engineer."),
        ("u:42 now works at Tencent.", "u:42 works at Google as an engineer."),
        ("u:42 moved to Berlin in 2026.", "u:42 lives in a flat in Shanghai."),
        ("u:42 moved out of the flat in Xuhui.", "u:42 owns a flat in Xuhui."),
        ("u:42 broke up with their girlfriend Mia.", "u:42 is dating Mia, their girlfriend."),
        ("u:42 divorced their husband in 2025.", "u:42 is married to their husband Tom."),
        ("u:42 changed their name to Danny.", "u:42's name is Daniel."),
    ],
)
def test_each_change_cue_updates(candidate: str, known: str) -> None:
    assert route(candidate, known) == {"event": "UPDATE", "old_id": "0"}


def test_a_pure_ending_closes_the_neighbour() -> None:
    assert route("u:42 no longer plays tennis.", "u:42 studies Japanese.", "u:42 plays tennis every Sunday.") == {
        "event": "CLOSE",
        "old_id": "1",
    }
    assert route("u:42 doesn't eat meat anymore.", "u:42 eats meat every day.") == {"event": "CLOSE", "old_id": "0"}
    assert route("u:42 stopped running marathons.", "u:42 runs marathons.") == {"event": "CLOSE", "old_id": "0"}


def test_an_ending_with_a_replacement_is_an_update() -> None:
    assert route("u:42 no longer works at Google and now works at Tencent.", "u:42 works at Google.") == {
        "event": "UPDATE",
        "old_id": "0",
    }


def test_a_change_about_something_else_is_an_add() -> None:
    assert route("u:42 no longer plays guitar.", "u:42 plays tennis every Sunday.") == {"event": "ADD"}
    assert route("u:42 sold their old bike.", "u:42 owns a flat in Xuhui.") == {"event": "ADD"}


def test_the_same_fact_better_said_is_an_update() -> None:
    assert route("u:42 loves hiking in the Alps with their dog.", "u:42 loves hiking.") == {
        "event": "UPDATE",
        "old_id": "0",
    }


def test_a_contradiction_is_an_update_and_a_pure_ending_of_the_same_words_a_close() -> None:
    assert route("u:42 is vegetarian.", "u:42 is not vegetarian anymore.") == {"event": "UPDATE", "old_id": "0"}
    assert route("u:42 does not drink coffee.", "u:42 drinks coffee.") == {"event": "UPDATE", "old_id": "0"}
    assert route("u:42 is not vegetarian anymore.", "u:42 is vegetarian.") == {"event": "CLOSE", "old_id": "0"}


def test_a_new_fact_among_unrelated_neighbours_is_an_add() -> None:
    assert route("u:42 has a cat named Tom.", "u:42 loves hiking.", "u:42 works at Google.") == {"event": "ADD"}


@pytest.mark.parametrize(
    "candidate",
    [
        "u:42 sold the flat in Xuhui.",
        "u:42 no longer plays tennis.",
        "u:42 loves hiking.",
        "u:42 loves hiking in the Alps with their dog.",
        "u:42 has a cat named Tom.",
    ],
)
def test_only_offered_labels_are_ever_returned(candidate: str) -> None:
    neighbours = ("u:42 plays tennis every Sunday.", "u:42 owns a flat in Xuhui.", "u:42 loves hiking.")
    answer = route(candidate, *neighbours)
    assert answer["event"] in ("ADD", "UPDATE", "CLOSE", "NONE")
    assert ("old_id" in answer) == (answer["event"] in ("UPDATE", "CLOSE"))
    if "old_id" in answer:
        assert answer["old_id"] in {"0", "1", "2"}


def test_the_router_is_deterministic() -> None:
    args = ("u:42 sold the flat in Xuhui.", "u:42 owns a flat in Xuhui.", "u:42 owns a flat in Xuhui!")
    assert route(*args) == route(*args) == {"event": "UPDATE", "old_id": "0"}


def test_likeness_folds_forms_and_ignores_ids_and_stop_words() -> None:
    assert content_stems("u:42 sold the flats") == content_stems("u:7 sells a flat")
    assert likeness(content_stems("u:42 plays tennis"), content_stems("u:42 played tennis!")) == 1.0
    assert likeness(content_stems("u:42 plays tennis"), content_stems("u:42 owns a flat")) == 0.0
    assert "not" in content_stems("u:42 doesn't smoke anymore")


# one-value attributes: a new value closes the old one, an event that only touches it does not


@pytest.mark.parametrize(
    ("candidate", "known"),
    [
        ("u:42 got engaged.", "u:42 is single."),
        ("u:42 started eating meat again.", "u:42 has been vegetarian for ten years."),
        ("u:42 tied the knot with Bea in Sintra.", "u:42 is engaged to Bea."),
        ("u:42 broke up with Bea.", "u:42 has been dating Bea since March."),
        ("u:42 is seeing someone.", "u:42 has been single for two years."),
        ("u:42 and Bea are together now.", "u:42 is single."),
        ("u:42 went vegan.", "u:42 is vegetarian."),
        ("u:42 is a pescatarian now.", "u:42 eats meat."),
        ("u:42 got divorced.", "u:42 is happily married to Bea."),
        ("u:42 has been working at Globex since May.", "u:42 works at Acme Corp."),
        ("u:42 has been living in Lisbon since 2025.", "u:42 lives in Porto."),
    ],
)
def test_a_one_value_attribute_given_a_new_value_updates_the_old(candidate: str, known: str) -> None:
    assert route(candidate, "u:42 plays chess on Sundays.", known) == {"event": "UPDATE", "old_id": "1"}


@pytest.mark.parametrize(
    ("candidate", "known"),
    [
        ("u:42 gave up meat.", "u:42 eats meat most days."),
        ("u:42 is no longer vegan.", "u:42 went vegan in 2024."),
        ("u:42 is not married anymore.", "u:42 is married to Bea."),
    ],
)
def test_a_one_value_attribute_only_ended_closes_the_old(candidate: str, known: str) -> None:
    assert route(candidate, known) == {"event": "CLOSE", "old_id": "0"}


@pytest.mark.parametrize(
    ("candidate", "known"),
    [
        ("u:42 went to a wedding.", "u:42 is single."),
        ("u:42 was a groomsman at a wedding in Braga.", "u:42 is single."),
        ("u:42 ate a steak at a barbecue.", "u:42 is vegetarian."),
        ("u:42 cooked a vegetarian lasagne for friends.", "u:42 eats meat."),
        ("u:42 went to a vegan bakery.", "u:42 eats meat."),
        ("u:42 visited Lisbon.", "u:42 lives in Porto."),
        ("u:42 spent a week in Lisbon.", "u:42 lives in Porto."),
        ("u:42's sister got engaged.", "u:42 is single."),
        ("u:42's sister got engaged.", "u:42 is engaged to Bea."),
        ("u:42's sister divorced her husband.", "u:42 is married to their husband Tom."),
        ("u:42's brother went vegan.", "u:42 is vegetarian."),
        ("u:42 is seeing a physiotherapist.", "u:42 is dating Bea."),
        ("u:42 broke up a fight at the bar.", "u:42 is dating Bea."),
        ("u:42 is engaged in a dispute with their landlord.", "u:42 is married to Bea."),
        ("u:42 wants to go vegan.", "u:42 is vegetarian."),
        ("u:42 is planning to get married next year.", "u:42 is engaged to Bea."),
    ],
)
def test_an_event_that_only_touches_a_one_value_attribute_is_an_add(candidate: str, known: str) -> None:
    assert route(candidate, known) == {"event": "ADD"}


def test_the_same_value_again_is_none_or_the_old_row_better_said() -> None:
    assert route("u:42 is still single.", "u:42 is single.") == {"event": "NONE"}
    assert route("u:42 is a vegetarian.", "u:42 is vegetarian.") == {"event": "NONE"}
    assert route("u:42 has been vegetarian for ten years.", "u:42 is vegetarian.") == {"event": "UPDATE", "old_id": "0"}
    assert route("u:42 is engaged to Bea.", "u:42 is engaged to Kim.") == {"event": "UPDATE", "old_id": "0"}
