"""The room registry of one process (``rooms.RoomRegistry``): its transitions and who hears
each event. Pure: no trio, no store.

A refused event leaves the registry as it was; an accepted one names every persona that must
hear it, with the room as that persona now knows it.
"""

from __future__ import annotations

import json

import pytest

from persona_memory import MemberJoined, MemberLeft, RoomArchived, RoomOpened, RoomWentQuiet
from persona_memory.cluster.registry import room_json, room_of
from persona_memory.errors import InvalidInput, NotInRoom, UnknownRoom
from persona_memory.rooms import Hearing, Presence, RoomRegistry, RoomState

MIA, OWEN = 31, 32


def porch(**changes: object) -> RoomOpened:
    fields: dict[str, object] = dict(room_id="porch", personas=("hazel", "marlow"), humans={MIA})
    fields.update(changes)
    return RoomOpened(**fields)  # type: ignore[arg-type]


def snapshot(rooms: RoomRegistry) -> dict[str, RoomState]:
    return {room_id: rooms[room_id] for room_id in rooms}


def test_an_open_room_is_heard_by_its_cast_and_shows_who_is_present() -> None:
    rooms = RoomRegistry()
    change = rooms.accept(porch(names={MIA: "Mia"}, title="Evening porch"))

    assert change.before is None
    assert [(h.persona, h.event, h.room) for h in change.hearings] == [
        ("hazel", change.event, change.room), ("marlow", change.event, change.room)
    ]
    assert rooms.hearers("porch") == ("hazel", "marlow")
    assert rooms.presence("porch") == Presence(frozenset({MIA}), ("hazel", "marlow"))
    assert rooms.incognito("porch") is False
    assert rooms["porch"].title == "Evening porch"
    assert rooms.room_of("marlow", "porch") is rooms["porch"]
    assert rooms.rooms_of("hazel") == (rooms["porch"],)
    assert rooms.in_a_room() == frozenset({"hazel", "marlow"})


def test_joins_and_leaves_give_increasing_generations_across_rooms() -> None:
    rooms = RoomRegistry()
    opened = rooms.accept(porch()).room.generation
    other = rooms.accept(RoomOpened(room_id="loft", personas=("quill",), humans={OWEN})).room.generation
    joined = rooms.accept(MemberJoined(room_id="porch", user_id=OWEN)).room
    left = rooms.accept(MemberLeft(room_id="porch", user_id=MIA)).room

    assert opened < other < joined.generation < left.generation
    assert joined.present == frozenset({MIA, OWEN})
    assert rooms.presence("porch") == Presence(frozenset({OWEN}), ("hazel", "marlow"))


def test_a_quiet_room_keeps_its_generation_and_is_heard_by_its_cast() -> None:
    rooms = RoomRegistry()
    room = rooms.accept(porch()).room
    quiet = rooms.accept(RoomWentQuiet(room_id="porch"))

    assert quiet.room == room
    assert [h.persona for h in quiet.hearings] == ["hazel", "marlow"]


@pytest.mark.parametrize(
    ("event", "error", "says"),
    [
        (MemberJoined(room_id="porch", user_id=MIA), InvalidInput, "already in room 'porch'"),
        (MemberLeft(room_id="porch", user_id=OWEN), NotInRoom, f"u:{OWEN} is not in room 'porch'"),
        (MemberJoined(room_id="attic", user_id=OWEN), UnknownRoom, "send RoomOpened for it first"),
        (RoomArchived(room_id="attic"), UnknownRoom, "room 'attic' is not open"),
        (porch(incognito=True), InvalidInput, "incognito is fixed"),
    ],
)
def test_a_refused_event_changes_nothing(event, error, says) -> None:
    rooms = RoomRegistry()
    rooms.accept(porch())
    before = snapshot(rooms)

    with pytest.raises(error, match=says):
        rooms.accept(event)

    assert snapshot(rooms) == before
    assert rooms.incognito("porch") is False


def test_a_reopen_without_a_persona_archives_the_room_for_that_persona_alone() -> None:
    rooms = RoomRegistry()
    first = rooms.accept(porch()).room
    change = rooms.accept(porch(personas=("hazel", "quill")))

    assert change.before == first
    by_persona = {h.persona: h for h in change.hearings}
    assert set(by_persona) == {"hazel", "quill", "marlow"}
    assert by_persona["quill"] == Hearing("quill", change.event, change.room)
    gone = by_persona["marlow"]
    assert gone.gone and gone.event == RoomArchived(room_id="porch")
    assert gone.room.archived and gone.room.personas == ("hazel", "marlow")
    assert gone.room.generation == change.room.generation
    assert rooms.hearers("porch") == ("hazel", "quill")
    with pytest.raises(NotInRoom, match="persona 'marlow' is not in room 'porch' \\(it has hazel, quill\\)"):
        rooms.room_of("marlow", "porch")


def test_an_archive_closes_the_room_but_its_incognito_stays_fixed() -> None:
    rooms = RoomRegistry()
    rooms.accept(porch(incognito=True))
    change = rooms.accept(RoomArchived(room_id="porch"))

    assert change.room.archived
    assert [h.persona for h in change.hearings] == ["hazel", "marlow"]
    assert "porch" not in rooms and rooms.hearers("porch") == () and rooms.presence("porch") is None
    assert rooms.in_a_room() == frozenset()
    assert rooms.incognito("porch") is True
    with pytest.raises(UnknownRoom):
        rooms.room_of("hazel", "porch")
    with pytest.raises(InvalidInput, match="incognito is fixed"):
        rooms.accept(porch(incognito=False))


def test_a_room_id_the_file_knows_keeps_its_first_incognito() -> None:
    rooms = RoomRegistry({"porch": True})

    assert rooms.incognito("porch") is True and rooms.incognito("attic") is None
    with pytest.raises(InvalidInput, match="first opened with incognito=True"):
        rooms.accept(porch())
    assert "porch" not in rooms
    rooms.accept(porch(incognito=True))
    assert rooms.incognito("porch") is True


def test_who_may_hear_an_event_before_it_is_applied() -> None:
    rooms = RoomRegistry()
    assert rooms.may_hear(porch()) == ("hazel", "marlow")
    rooms.accept(porch())
    assert rooms.may_hear(porch(personas=("quill", "hazel"))) == ("quill", "hazel", "marlow")
    assert rooms.may_hear(MemberJoined(room_id="porch", user_id=OWEN)) == ("hazel", "marlow")
    assert rooms.may_hear(MemberJoined(room_id="attic", user_id=OWEN)) == ()


def test_a_state_applied_elsewhere_is_adopted_unless_an_older_one() -> None:
    rooms = RoomRegistry()
    newer = RoomState.opened(porch(), 7)
    rooms.adopt(newer.opening(), newer)
    rooms.adopt(porch(humans={OWEN}), RoomState.opened(porch(humans={OWEN}), 5))
    assert rooms["porch"] == newer

    gone = RoomState.opened(porch(), 8)
    rooms.adopt(RoomArchived(room_id="porch"), gone, gone=True)
    assert rooms["porch"] == newer  # archived for one persona only: the room stays open

    rooms.adopt(RoomArchived(room_id="porch"), RoomState.opened(porch(), 9))
    assert "porch" not in rooms


def test_an_open_and_its_state_convert_both_ways() -> None:
    event = porch(private=False, kit="quiz", topic="gardens", names={MIA: "Mia"}, title="Porch")
    room = RoomState.opened(event, 3)

    assert room.opening() == event
    assert RoomState.opened(room.opening(), 3) == room
    assert dict(room.names) == {MIA: "Mia"} and not room.writable


def test_the_shared_registry_json_carries_the_title_and_reads_rooms_stored_without_one() -> None:
    room = RoomState.opened(porch(title="Porch", names={MIA: "Mia"}), 4)
    assert room_of(room_json(room)) == room

    untitled = RoomState.opened(porch(), 4)
    body = json.loads(room_json(untitled))
    assert "title" not in body  # what was stored before titles travelled reads the same
    assert room_of(json.dumps(body)) == untitled
