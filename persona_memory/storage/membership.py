"""Worker membership: which workers share one PostgreSQL database's personas, live until when.

A worker *joins* (a row of ``workers``: its id, when it joined, and an expiry), *heartbeats*
to push its expiry on, *leaves* (its row is deleted), and anyone can list the *live* workers —
the list ``cluster/spread.py`` spreads the personas over. A worker that dies stops
heartbeating; once its expiry passes it is no longer listed, and the others take its share.

Rules:
- Time is the database server's (``now()``), as for the leases (``leases.py``): a worker with
  a skewed clock can neither stay listed past its expiry nor drop out early.
- ``join`` and ``heartbeat`` are one upsert: a worker whose row lapsed (it was paused past its
  expiry) comes back by its next heartbeat, with ``joined_at`` moved to then; ``heartbeat``
  says whether it had lapsed, so the worker knows the others may have taken its share.
- Being listed grants nothing: who writes a persona is decided by its lease alone, and a
  worker listed as live may hold no lease at all. Membership only steers the spread.
- ``known_personas`` lists the personas a worker may consider: those with rows or rooms.
- A row that lapsed stays until the worker comes back or ``forget_lapsed`` deletes it; it is
  never listed as live.
- PostgreSQL only: a SQLite file is owned by one process, so asking is ``InvalidInput``. The
  functions take the store's connection and run in the caller's unit of work.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime

import attrs

from ..errors import InvalidInput
from .dialect import dialect_of
from .leases import MAX_LEASE_SECONDS, MAX_OWNER_CHARS, _check_seconds


@attrs.frozen
class Member:
    """A live worker: listed since ``joined_at`` until ``expires_at`` (server time), answering
    at ``address`` (``None``: it gave none)."""

    worker: str
    joined_at: datetime
    expires_at: datetime
    address: str | None = None


def join(conn: sqlite3.Connection, worker: str, seconds: float, address: str | None = None) -> Member:
    """List ``worker`` as live for ``seconds`` from now (server time); its row as written.
    ``address``: where its runtime API answers (``owner_address``); ``None`` keeps the last.

    Raises:
        InvalidInput: a bad worker id or duration, or a SQLite store.
    """
    _check(conn, worker)
    found = conn.execute(
        "INSERT INTO workers AS w (worker, joined_at, expires_at, address) "
        "VALUES (?, now(), now() + make_interval(secs => ?), ?) "
        "ON CONFLICT (worker) DO UPDATE SET expires_at = excluded.expires_at, "
        "joined_at = CASE WHEN w.expires_at > now() THEN w.joined_at ELSE now() END, "
        "address = coalesce(excluded.address, w.address) "
        "RETURNING joined_at, expires_at",
        (worker, _check_seconds(seconds), check_address(address)),
    ).fetchone()
    return Member(worker, datetime.fromisoformat(found[0]), datetime.fromisoformat(found[1]))


def heartbeat(conn: sqlite3.Connection, worker: str, seconds: float, address: str | None = None) -> bool:
    """Keep ``worker`` listed for ``seconds`` more (joining again if it had lapsed); whether it
    was still live — ``False``: it had lapsed or never joined, and is listed again from now.

    Raises:
        InvalidInput: a bad worker id or duration, or a SQLite store.
    """
    _check(conn, worker)
    was_live = conn.execute(
        "SELECT expires_at > now() FROM workers WHERE worker = ? FOR UPDATE", (worker,)
    ).fetchone()
    join(conn, worker, seconds, address)
    return bool(was_live and was_live[0])


def leave(conn: sqlite3.Connection, worker: str) -> bool:
    """Take ``worker`` off the list at once; whether it was listed (live or lapsed)."""
    _check(conn, worker)
    return conn.execute("DELETE FROM workers WHERE worker = ?", (worker,)).rowcount == 1


def live_workers(conn: sqlite3.Connection) -> list[Member]:
    """The workers whose expiry has not passed (server time), by worker id."""
    _check(conn, "-")
    return [
        Member(r[0], datetime.fromisoformat(r[1]), datetime.fromisoformat(r[2]), r[3])
        for r in conn.execute(
            "SELECT worker, joined_at, expires_at, address FROM workers WHERE expires_at > now() ORDER BY worker"
        )
    ]


def forget_lapsed(conn: sqlite3.Connection, older_than_seconds: float = MAX_LEASE_SECONDS) -> int:
    """Delete the rows of workers lapsed more than ``older_than_seconds`` ago; how many."""
    _check(conn, "-")
    return conn.execute(
        "DELETE FROM workers WHERE expires_at <= now() - make_interval(secs => ?)",
        (_check_seconds(older_than_seconds),),
    ).rowcount


def owner_address(conn: sqlite3.Connection, persona: str) -> tuple[str, str | None] | None:
    """The worker holding ``persona``'s live lease and the address it answers at (``None``:
    it gave none, or has lapsed off the list), or ``None`` when no live lease names an owner."""
    _check(conn, "-")
    found = conn.execute(
        "SELECT l.owner, w.address FROM persona_leases l "
        "LEFT JOIN workers w ON w.worker = l.owner AND w.expires_at > now() "
        "WHERE l.persona = ? AND l.owner IS NOT NULL AND l.expires_at > now()",
        (persona,),
    ).fetchone()
    return None if found is None else (found[0], found[1])


def known_personas(conn: sqlite3.Connection) -> list[str]:
    """Every persona the store knows — with memory rows, or in a room (archived or not) — sorted:
    what a worker considers when it is not given a list (``cluster/worker.py``)."""
    _check(conn, "-")
    items = dialect_of(conn).items_of("rooms.personas", "p")
    return [
        r[0]
        for r in conn.execute(
            f"SELECT persona FROM persona_memory UNION SELECT p.value FROM rooms, {items} ORDER BY 1"
        )
    ]


MAX_ADDRESS_CHARS = 500


def check_address(address: object) -> str | None:
    """``address`` if it is a worker's address (an http(s) URL) or ``None``; else ``InvalidInput``."""
    if address is not None and (not isinstance(address, str) or not address.startswith(("http://", "https://"))
                                or len(address) > MAX_ADDRESS_CHARS):
        raise InvalidInput(
            f"a worker's address must be an http:// or https:// URL of at most {MAX_ADDRESS_CHARS} "
            f"characters (where its runtime API answers), got {address!r}"
        )
    return address


def _check(conn: object, worker: object) -> None:
    if dialect_of(conn).name != "postgresql":
        raise InvalidInput(
            "worker membership needs a PostgreSQL store (storage.url = 'postgresql://…'); a "
            "SQLite file is owned by one process and has no cluster of workers"
        )
    if not isinstance(worker, str) or not worker or len(worker) > MAX_OWNER_CHARS:
        raise InvalidInput(
            f"a worker id must be a non-empty str of at most {MAX_OWNER_CHARS} characters, got {worker!r}"
        )
