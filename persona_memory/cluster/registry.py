"""The shared room registry's transitions: what a worker writes when it takes a room event,
and how rooms and events travel as JSON between workers.

Any worker takes any room event (``node.ClusterMemory.send``): in one transaction it locks the
room, checks the event against the room's stored state (``rooms.apply``, the same rule the
single process applies in memory), stores the new state and queues the event, with the room's
state after it, for the owner of every persona in the room (``storage/room_registry.py``). A
refused event raises to its sender and writes nothing. The owners take their events in order
(``inbox.py``).

Rules:
- An open can never flip a room id's ``incognito``: the flag is checked against the open
  state and, for a room seen before, the ``rooms`` table — the same refusal the single
  process gives (``rooms.incognito_is_fixed``).
- An open or an archive is recorded in ``rooms`` in the event's own transaction.
- An event is queued for the personas that hear it (``rooms.hearings``, as the single
  process routes it): a reopen without a persona that was in the room queues, for that
  persona, the archive of the room as it knew it (``gone``).
- The JSON of a room is its ``RoomState`` field for field (``title`` only when it has one);
  of an event, the runtime API's body (``event_json.py``) with its room id — so a queued event
  reads as any API call does.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from types import MappingProxyType
from typing import Any

import attrs

from ..messages import RoomArchived, RoomEvent, RoomOpened
from ..rooms import Presence, RoomState, apply, hearings, incognito_is_fixed
from ..storage import room_registry
from ..storage.queries import record_rooms_on
from ..event_json import event_body, event_of


@attrs.frozen
class Queued:
    """An event taken for ``persona``, decoded: the event, the room after it, and whether it
    is the archive of a room reopened without the persona (``gone``)."""

    id: int
    persona: str
    event: RoomEvent
    room: RoomState
    gone: bool = False


def room_json(room: RoomState) -> str:
    title = {} if room.title is None else {"title": room.title}
    return json.dumps({
        "room_id": room.room_id,
        "personas": list(room.personas),
        "present": sorted(room.present),
        "private": room.private,
        "incognito": room.incognito,
        "kit": room.kit,
        "topic": room.topic,
        "names": {str(uid): name for uid, name in sorted(room.names.items())},
        "generation": room.generation,
        "archived": room.archived,
        **title,
    })


def room_of(text: str) -> RoomState:
    body: dict[str, Any] = json.loads(text)
    return RoomState(
        room_id=body["room_id"],
        personas=tuple(body["personas"]),
        present=frozenset(body["present"]),
        private=body["private"],
        incognito=body["incognito"],
        kit=body["kit"],
        topic=body["topic"],
        names=MappingProxyType({int(uid): name for uid, name in body["names"].items()}),
        generation=body["generation"],
        archived=body["archived"],
        title=body.get("title"),
    )


def event_json(event: RoomEvent, *, gone: bool = False) -> str:
    body = event_body(event)
    body["room_id"] = event.room_id
    if gone:
        body["gone"] = True
    return json.dumps(body)


def queued_of(item: room_registry.QueuedEvent) -> Queued:
    body = json.loads(item.event)
    return Queued(item.id, item.persona, event_of(body["room_id"], body), room_of(item.room), bool(body.get("gone")))


def take_event(conn: sqlite3.Connection, event: RoomEvent, now: datetime) -> RoomState:
    """Apply ``event`` to the shared registry and queue it for its personas' owners, in the
    caller's transaction; the room's state after it. An open or an archive is recorded in the
    ``rooms`` table in the same transaction (what the human's pages and the sweep read), so no
    worker's death can leave a room open in the registry and unknown to the sweep.

    Raises:
        UnknownRoom, NotInRoom, InvalidInput: as ``rooms.apply``, or an open that flips the
            room id's ``incognito``. Nothing is written.
    """
    room_id = event.room_id
    room_registry.lock_room(conn, room_id)
    stored = room_registry.room_state(conn, room_id)
    before = None if stored is None else room_of(stored)
    if isinstance(event, RoomOpened):
        known = before.incognito if before is not None else room_registry.first_incognito(conn, room_id)
        if known is not None and known != event.incognito:
            raise incognito_is_fixed(room_id, known)
    rooms = {} if before is None else {room_id: before}
    room = apply(rooms, event, room_registry.next_generation(conn))  # used by an open, join or leave
    archived = isinstance(event, RoomArchived)
    room_registry.put_room(conn, room_id, None if archived else room_json(room), room.generation)
    items = [
        (heard.persona, room_id, event_json(heard.event, gone=heard.gone), room_json(heard.room))
        for heard in hearings(before, event, room)
    ]
    room_registry.queue_events(conn, items)
    if isinstance(event, RoomOpened):
        record_rooms_on(conn, [(room, now)], [], {uid: (n, now) for uid, n in room.names.items()})
    elif archived:
        record_rooms_on(conn, [], [(room_id, now)], {})
    return room


def presence_in(conn: sqlite3.Connection, room_id: str) -> tuple[Presence | None, bool | None]:
    """Who hears a line said in ``room_id`` now (``None``: it is not open), and the
    ``incognito`` the room id was first opened with (``None``: never)."""
    stored = room_registry.room_state(conn, room_id)
    if stored is not None:
        room = room_of(stored)
        return room.presence, room.incognito
    return None, room_registry.first_incognito(conn, room_id)
