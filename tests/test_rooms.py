"""The room registry's transitions (``rooms.apply``): pure, one event at a time.

``apply`` returns the room's next state or refuses the event; it never changes the table it is
given, so a refused event changes nothing.
"""

from __future__ import annotations

import pytest

from persona_memory import MemberJoined, MemberLeft, RoomArchived, RoomOpened, RoomWentQuiet
from persona_memory.core.audience import Audience
from persona_memory.errors import InvalidInput, NotInRoom, UnknownRoom
from persona_memory.rooms import RoomState, apply


def open_room(**changes: object) -> dict[str, RoomState]:
    fields: dict[str, object] = dict(room_id="r1", personas=("warren", "nolan"), humans={42})
    fields.update(changes)
    room = apply({}, RoomOpened(**fields), 1)  # type: ignore[arg-type]
    return {room.room_id: room}


def test_opening_records_the_cast_and_the_flags() -> None:
    room = apply(
        {},
        RoomOpened(
            room_id="r1", personas=("warren",), humans={42}, private=True, topic="films",
            names={42: "Dan"},
        ),
        5,
    )
    assert room.personas == ("warren",)
    assert room.present == frozenset({42})
    assert (room.private, room.incognito, room.kit, room.topic) == (True, False, None, "films")
    assert dict(room.names) == {42: "Dan"}
    assert room.generation == 5
    assert not room.archived
    assert room.audience == Audience(present=frozenset({42}), private=True, incognito=False)


def test_join_and_leave_change_who_is_present_and_the_generation() -> None:
    rooms = open_room()
    joined = apply(rooms, MemberJoined(room_id="r1", user_id=17), 2)
    assert joined.present == frozenset({42, 17})
    assert joined.generation == 2
    left = apply({"r1": joined}, MemberLeft(room_id="r1", user_id=42), 3)
    assert left.present == frozenset({17})
    assert left.generation == 3
    assert left.personas == ("warren", "nolan")


def test_apply_does_not_change_the_table_it_is_given() -> None:
    rooms = open_room()
    before = dict(rooms)
    apply(rooms, MemberJoined(room_id="r1", user_id=17), 2)
    assert rooms == before


def test_a_human_cannot_join_twice() -> None:
    with pytest.raises(InvalidInput, match="already in room"):
        apply(open_room(), MemberJoined(room_id="r1", user_id=42), 2)


def test_a_private_chat_takes_no_second_human() -> None:
    rooms = open_room(personas=("warren",), private=True)
    with pytest.raises(InvalidInput, match="private chat"):
        apply(rooms, MemberJoined(room_id="r1", user_id=17), 2)


def test_an_absent_human_cannot_leave() -> None:
    with pytest.raises(NotInRoom, match="u:17 is not in room 'r1'"):
        apply(open_room(), MemberLeft(room_id="r1", user_id=17), 2)


@pytest.mark.parametrize(
    "event",
    [
        MemberJoined(room_id="nowhere", user_id=42),
        MemberLeft(room_id="nowhere", user_id=42),
        RoomWentQuiet(room_id="nowhere"),
        RoomArchived(room_id="nowhere"),
    ],
)
def test_events_for_a_room_never_opened_are_unknown_room(event: object) -> None:
    with pytest.raises(UnknownRoom, match="send RoomOpened for it first"):
        apply(open_room(), event, 2)  # type: ignore[arg-type]


def test_quiet_keeps_the_room_as_it_is() -> None:
    rooms = open_room()
    assert apply(rooms, RoomWentQuiet(room_id="r1"), 9) == rooms["r1"]


def test_archiving_marks_the_room_archived_at_its_generation() -> None:
    rooms = open_room()
    archived = apply(rooms, RoomArchived(room_id="r1"), 9)
    assert archived.archived
    assert archived.generation == rooms["r1"].generation


def test_reopening_replaces_the_state() -> None:
    rooms = open_room()
    again = apply(rooms, RoomOpened(room_id="r1", personas=("nolan",), humans={17}), 4)
    assert again.personas == ("nolan",)
    assert again.present == frozenset({17})
    assert again.generation == 4


@pytest.mark.parametrize(
    ("incognito", "kit", "writable"),
    [(False, None, True), (True, None, False), (False, "chess", False)],
)
def test_only_plain_rooms_are_writable(incognito: bool, kit: str | None, writable: bool) -> None:
    assert open_room(incognito=incognito, kit=kit)["r1"].writable is writable
