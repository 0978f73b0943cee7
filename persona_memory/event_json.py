"""Room events as the runtime API's JSON, both ways. Pure.

``event_body(RoomOpened(...))`` is the body ``POST /api/rooms/{room_id}/events`` takes (the
room id travels in the path); ``event_of(room_id, body)`` turns a body the contract's schema has
checked back into the message, whose own validators then check its values. The names: opened,
member_joined, member_left, went_quiet, archived.
"""

from __future__ import annotations

from typing import Any, assert_never

from .messages import MemberJoined, MemberLeft, RoomArchived, RoomEvent, RoomOpened, RoomWentQuiet


def event_body(event: RoomEvent) -> dict[str, Any]:
    """The JSON body of ``event`` (without its room id, which is in the path)."""
    match event:
        case RoomOpened():
            return {
                "event": "opened",
                "personas": list(event.personas),
                "humans": sorted(event.humans),
                "private": event.private,
                "incognito": event.incognito,
                "kit": event.kit,
                "topic": event.topic,
                "title": event.title,
                "names": {str(uid): name for uid, name in sorted(event.names.items())},
            }
        case MemberJoined():
            return {"event": "member_joined", "user_id": event.user_id}
        case MemberLeft():
            return {"event": "member_left", "user_id": event.user_id}
        case RoomWentQuiet():
            return {"event": "went_quiet"}
        case RoomArchived():
            return {"event": "archived"}
        case _:
            assert_never(event)


def event_of(room_id: str, body: dict[str, Any]) -> RoomEvent:
    """The room event a checked body describes."""
    match body["event"]:
        case "opened":
            return RoomOpened(
                room_id=room_id,
                personas=tuple(body["personas"]),
                humans=frozenset(body["humans"]),
                private=body.get("private", False),
                incognito=body.get("incognito", False),
                kit=body.get("kit"),
                topic=body.get("topic"),
                title=body.get("title"),
                names={int(uid): name for uid, name in body.get("names", {}).items()},
            )
        case "member_joined":
            return MemberJoined(room_id=room_id, user_id=body["user_id"])
        case "member_left":
            return MemberLeft(room_id=room_id, user_id=body["user_id"])
        case "went_quiet":
            return RoomWentQuiet(room_id=room_id)
        case "archived":
            return RoomArchived(room_id=room_id)
    raise AssertionError(f"the schema admits no event {body['event']!r}")
