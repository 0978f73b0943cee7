"""The room registry workers share, and the events queued for each persona's owner (PostgreSQL).

One process keeps its rooms in memory (``rooms.RoomRegistry``). Workers sharing one PostgreSQL keep
them here instead, so that any worker can take any room event and its personas' owners see
them in order: ``cluster_rooms`` holds each open room's state as JSON and its generation, and
``persona_events`` the events each persona's owner has still to take, with the room's state
right after each. This module is the SQL; ``cluster/registry.py`` decides what to write.

Rules:
- A room's events are serialised by a transaction-level advisory lock on its id
  (``lock_room``), taken before its state is read: two workers taking events of one room at
  once apply them one after the other, and the ids of its queued events rise in the order
  they committed. (Events of different rooms may commit out of id order; nothing needs an
  order across rooms.)
- Generations come from one sequence, so a room reopened after an archive never reuses one.
- Queuing notifies ``persona_events`` with the persona as the payload, in the same
  transaction: owners listening wake when it commits.
- An owner takes (and deletes) its events only while it holds the persona's live lease
  (``take_events`` checks it in the same statement): a worker that lost a persona cannot
  swallow the next owner's events. What a taken event carried is never lost with its row:
  the room's state stays in ``cluster_rooms`` and the lines past the persona's cursor stay in
  the transcript, which is what a new owner starts from (``settle``).
- ``settle`` (a new owner's start) deletes the persona's queued events first and reads the
  rooms after, in one transaction: an event that commits between the two is either deleted
  and already in the state read, or kept and taken after — seen twice at worst, never lost,
  and never older than the state it follows.
- PostgreSQL only, as the leases: asking a SQLite store is ``InvalidInput``. The functions
  run in the caller's unit of work.
"""

from __future__ import annotations

import sqlite3

import attrs

from .leases import _check_postgres

CHANNEL = "persona_events"
"""The channel a queued event notifies, with its persona as the payload."""


@attrs.frozen
class QueuedEvent:
    """An event for ``persona``'s owner: the event's JSON and its room's state after it."""

    id: int
    persona: str
    room_id: str
    event: str
    room: str


def lock_room(conn: sqlite3.Connection, room_id: str) -> None:
    """Hold ``room_id``'s lock until the transaction ends (see the rules)."""
    _check_postgres(conn)
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 1101))", (room_id,))


def room_state(conn: sqlite3.Connection, room_id: str) -> str | None:
    """The open room's state (JSON text), or ``None`` when it is not open."""
    _check_postgres(conn)
    found = conn.execute("SELECT state FROM cluster_rooms WHERE room_id = ?", (room_id,)).fetchone()
    return None if found is None else found[0]


def first_incognito(conn: sqlite3.Connection, room_id: str) -> bool | None:
    """The ``incognito`` a room id was first recorded with (the ``rooms`` table), if any."""
    found = conn.execute("SELECT incognito FROM rooms WHERE room_id = ?", (room_id,)).fetchone()
    return None if found is None else bool(found[0])


def next_generation(conn: sqlite3.Connection) -> int:
    """A generation no room has had."""
    _check_postgres(conn)
    return int(conn.execute("SELECT nextval('cluster_room_generations')").fetchone()[0])


def put_room(conn: sqlite3.Connection, room_id: str, state: str | None, generation: int) -> None:
    """Store the room's state (``None``: it was archived, so it is no longer open)."""
    _check_postgres(conn)
    if state is None:
        conn.execute("DELETE FROM cluster_rooms WHERE room_id = ?", (room_id,))
        return
    conn.execute(
        "INSERT INTO cluster_rooms (room_id, state, generation) VALUES (?, ?, ?) "
        "ON CONFLICT (room_id) DO UPDATE SET state = excluded.state, generation = excluded.generation",
        (room_id, state, generation),
    )


def queue_events(conn: sqlite3.Connection, items: list[tuple[str, str, str, str]]) -> None:
    """Queue ``(persona, room_id, event, room)`` for each persona's owner, and notify."""
    _check_postgres(conn)
    conn.executemany("INSERT INTO persona_events (persona, room_id, event, room) VALUES (?, ?, ?, ?)", items)
    for persona in sorted({item[0] for item in items}):
        conn.execute("SELECT pg_notify(?, ?)", (CHANNEL, persona))


def take_events(conn: sqlite3.Connection, owner: str, personas: list[str], limit: int) -> list[QueuedEvent]:
    """Delete and return, oldest first, up to ``limit`` queued events of those ``personas``
    whose live lease ``owner`` holds."""
    _check_postgres(conn)
    if not personas:
        return []
    rows = conn.execute(
        "DELETE FROM persona_events WHERE id IN ("
        " SELECT e.id FROM persona_events e JOIN persona_leases l ON l.persona = e.persona"
        " WHERE e.persona = ANY(?) AND l.owner = ? AND l.expires_at > now()"
        " ORDER BY e.id LIMIT ? FOR UPDATE OF e SKIP LOCKED"
        ") RETURNING id, persona, room_id, event, room",
        (personas, owner, limit),
    ).fetchall()
    return sorted((QueuedEvent(r[0], r[1], r[2], r[3], r[4]) for r in rows), key=lambda e: e.id)


def settle(conn: sqlite3.Connection, persona: str) -> list[str]:
    """A new owner's start: drop ``persona``'s queued events, then return the state (JSON) of
    every open room it is in, by room id (see the rules for why in that order)."""
    _check_postgres(conn)
    conn.execute("DELETE FROM persona_events WHERE persona = ?", (persona,))
    return [
        r[0]
        for r in conn.execute(
            "SELECT state FROM cluster_rooms WHERE state -> 'personas' @> jsonb_build_array(?::text) "
            "ORDER BY room_id",
            (persona,),
        )
    ]


def queued(conn: sqlite3.Connection) -> int:
    """How many events wait for an owner, over every persona."""
    _check_postgres(conn)
    return int(conn.execute("SELECT count(*) FROM persona_events").fetchone()[0])
