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
