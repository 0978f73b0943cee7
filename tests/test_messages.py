"""The room events: frozen facts, checked when they are built.

A malformed event never reaches a mailbox: building it raises a ``ValueError`` whose message
names the field to fix.
"""

from __future__ import annotations

import attrs
import pytest

from persona_memory import MemberJoined, MemberLeft, RoomArchived, RoomOpened, RoomWentQuiet
from persona_memory.errors import InvalidInput


def opened(**changes: object) -> RoomOpened:
    fields: dict[str, object] = dict(room_id="r1", personas=("warren",), humans={42})
    fields.update(changes)
    return RoomOpened(**fields)  # type: ignore[arg-type]


def test_a_good_room_opened_keeps_what_it_was_given() -> None:
    event = opened(personas=["warren", "nolan"], humans=[42, 17], topic="films", names={42: "Dan"})
    assert event.personas == ("warren", "nolan")
    assert event.humans == frozenset({42, 17})
    assert event.topic == "films"
    assert dict(event.names) == {42: "Dan"}
    assert (event.private, event.incognito, event.kit) == (False, False, None)


def test_events_are_frozen() -> None:
    event = opened()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        event.room_id = "r2"  # type: ignore[misc]
    with pytest.raises(TypeError):
        event.names[42] = "Dan"  # type: ignore[index]


def test_names_do_not_take_part_in_equality() -> None:
    assert opened(names={42: "Dan"}) == opened(names={42: "Daniel"})


@pytest.mark.parametrize(
    "build",
    [
        lambda room_id: opened(room_id=room_id),
        lambda room_id: MemberJoined(room_id=room_id, user_id=42),
        lambda room_id: MemberLeft(room_id=room_id, user_id=42),
        lambda room_id: RoomWentQuiet(room_id=room_id),
        lambda room_id: RoomArchived(room_id=room_id),
    ],
    ids=["RoomOpened", "MemberJoined", "MemberLeft", "RoomWentQuiet", "RoomArchived"],
)
@pytest.mark.parametrize("room_id", ["", "   ", None, 7, "r" * 201])
def test_every_event_refuses_a_bad_room_id(build, room_id: object) -> None:
    with pytest.raises(ValueError, match="room_id"):
        build(room_id)


@pytest.mark.parametrize("cls", [MemberJoined, MemberLeft])
@pytest.mark.parametrize("user_id", [0, -3, "42", 4.0, True, None])
def test_member_events_refuse_a_user_id_that_is_not_a_positive_int(cls, user_id: object) -> None:
    with pytest.raises(ValueError, match="user_id"):
        cls(room_id="r1", user_id=user_id)


@pytest.mark.parametrize("personas", [(), [], "warren", ("Warren",), ("warren", "warren"), ("",), None])
def test_room_opened_refuses_bad_personas(personas: object) -> None:
    with pytest.raises(ValueError, match="personas"):
        opened(personas=personas)


@pytest.mark.parametrize("humans", [{0}, {-1}, {"42"}, {4.5}, "42", None, 42])
def test_room_opened_refuses_bad_humans(humans: object) -> None:
    with pytest.raises(ValueError, match="humans"):
        opened(humans=humans)


def test_a_private_chat_with_two_humans_is_refused() -> None:
    with pytest.raises(ValueError, match="private chat has exactly one persona and one human"):
        opened(humans={42, 17}, private=True)


def test_a_private_chat_with_two_personas_is_refused() -> None:
    with pytest.raises(ValueError, match="private chat"):
        opened(personas=("warren", "nolan"), private=True)


def test_a_private_chat_with_nobody_is_refused() -> None:
    with pytest.raises(ValueError, match="private chat"):
        opened(humans=set(), private=True)


def test_a_group_room_may_open_with_no_human_yet() -> None:
    assert opened(humans=set()).humans == frozenset()


@pytest.mark.parametrize("field", ["private", "incognito"])
def test_flags_must_be_bools(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        opened(**{field: 1})


@pytest.mark.parametrize("field", ["kit", "topic"])
@pytest.mark.parametrize("value", ["", "  ", 3])
def test_optional_texts_refuse_empty_or_non_strings(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        opened(**{field: value})


@pytest.mark.parametrize("names", [{0: "Dan"}, {42: ""}, {42: "x" * 101}, ["Dan"]])
def test_names_must_map_user_ids_to_display_names(names: object) -> None:
    with pytest.raises(ValueError, match="names"):
        opened(names=names)


def test_bad_input_errors_are_invalid_input() -> None:
    with pytest.raises(InvalidInput):
        RoomWentQuiet(room_id="")
