"""Persona leases: which worker owns a persona's writes, at which epoch, until when (PostgreSQL).

Workers that share one PostgreSQL database share its personas, and each persona must be
written by one worker at a time — the one-owner rule of the actors (``STYLE.md``), across
processes. The owner is named by a row of ``persona_leases``: ``(persona, owner, epoch,
expires_at)``. A worker *acquires* a free or expired lease, which bumps its epoch; *renews* it
while it holds it; *releases* it when it lets the persona go. Every write transaction for the
persona may carry the epoch its writer holds (``check_held``), and commits only if the lease
still stands at that epoch: a worker that was paused or cut off past its lease, and so may
have been replaced, commits nothing more for that persona.

Why a lease row with an epoch, not an advisory lock: a session-level advisory lock lives as
long as its connection, so a worker whose process is stopped (SIGSTOP, a long GC pause, a
partition the server has not noticed yet) keeps the lock for as long as TCP keeps the
connection, and nobody else can take the persona; and a lock says nothing about the writes
already in flight on the worker's *other* connections. A row with an expiry in the server's
time frees the persona after a known delay whatever the owner does, and the epoch makes the
fencing check one comparison inside each write's own transaction, on any of its connections.

Why here, in ``storage``: a lease is a table and its queries, run on the store's connections
and — for the fencing check — inside the store's own write transactions, exactly as
``writes.py``'s are; ``writes.py`` and ``store.py`` call ``check_held``, and nothing in storage
may import upwards. The rule for who *should* own what is pure and lives in
``cluster/spread.py``; the worker that acquires and renews will live in ``cluster`` too.

Rules:
- Time is the database server's (``now()``), never the worker's clock: a worker whose clock
  is skewed can neither steal a live lease nor keep an expired one. ``now()`` is the start of
  the statement's transaction, so inside a long transaction it stands still.
- ``acquire`` grants a lease that has no row, was released (``owner`` NULL) or has expired,
  in one statement (an ``INSERT … ON CONFLICT DO UPDATE … WHERE``): of two workers racing
  for a persona exactly one wins, the other gets ``None``. Every grant bumps the epoch by
  one — also a grant to the same worker after its lease ran out, since writes it started
  under the old epoch must not land after the gap. A live lease is never granted, not even
  to its owner (it renews instead).
- The row is never deleted (``release`` clears the owner and keeps the epoch), so an epoch
  is never handed out twice for one persona: ``(persona, epoch)`` names one grant, and the
  fencing check needs only the epoch.
- ``renew`` extends a lease only while its owner holds it at its epoch and before it
  expired; otherwise it raises ``LeaseLost``: the worker must stop writing for the persona.
  ``renew_many`` does the same for all of a worker's leases in one statement, and says
  which were lost instead of raising.
- ``check_held`` runs inside the write's transaction and locks the lease row ``FOR SHARE``
  until that transaction ends. A grant to another worker is an ``UPDATE`` of that row, so it
  waits for every fenced write in flight to commit or roll back: a write at epoch N either
  commits before epoch N+1 exists, or does not commit. The lease must be live (not expired)
  at the transaction's start.
- Leases are PostgreSQL's: on a SQLite store (one process owns the file) there is no lease
  and a write carries no epoch; asking for either is ``InvalidInput``. With no epoch given,
  no write runs anything of this module.
- The functions take a connection (the store's ``PostgresSession``) and run in the caller's
  unit of work, as ``writes.py``'s do. A worker is better off renewing on a connection of its
  own, so a renewal never queues behind a long write.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TypeVar

import attrs

from ..errors import InvalidInput, LeaseLost
from .dialect import dialect_of

T = TypeVar("T")

Fence = Callable[[str], "int | None"]
"""Which epoch a persona's write carries: the epoch of the lease held for it (a cluster
worker's ``Worker.fence``, which raises ``LeaseLost`` once the lease is not held), or ``None``
— no lease, no check (``unfenced``: one process owns its store)."""


def unfenced(persona: str) -> None:
    """The ``Fence`` of a store one process owns: no write carries an epoch."""
    return None


MAX_LEASE_SECONDS = 3600.0
MAX_OWNER_CHARS = 200


@attrs.frozen
class Lease:
    """A grant: ``owner`` may write for ``persona`` at ``epoch`` until ``expires_at`` (server time)."""

    persona: str
    owner: str
    epoch: int
    expires_at: datetime


def acquire(conn: sqlite3.Connection, persona: str, owner: str, seconds: float) -> Lease | None:
    """Grant ``owner`` the lease of ``persona`` for ``seconds`` if it is free or expired, at the
    next epoch; ``None`` when another grant is live (this owner's own included).

    Raises:
        InvalidInput: a bad persona, owner or duration, or a SQLite store.
    """
    _check_postgres(conn)
    _check_names(persona, owner)
    found = conn.execute(
        "INSERT INTO persona_leases AS l (persona, owner, epoch, expires_at) "
        "VALUES (?, ?, 1, now() + make_interval(secs => ?)) "
        "ON CONFLICT (persona) DO UPDATE SET owner = excluded.owner, epoch = l.epoch + 1, "
        "expires_at = excluded.expires_at "
        "WHERE l.owner IS NULL OR l.expires_at <= now() "
        "RETURNING epoch, expires_at",
        (persona, owner, _check_seconds(seconds)),
    ).fetchone()
    if found is None:
        return None
    return Lease(persona, owner, int(found[0]), datetime.fromisoformat(found[1]))


def renew(conn: sqlite3.Connection, lease: Lease, seconds: float) -> Lease:
    """Extend ``lease`` to ``seconds`` from now (server time), if it is still held at its epoch
    and has not expired; the lease as renewed.

    Raises:
        LeaseLost: it expired, was released, or another worker holds the persona now.
        InvalidInput: a bad duration, or a SQLite store.
    """
    _check_postgres(conn)
    found = conn.execute(
        "UPDATE persona_leases SET expires_at = now() + make_interval(secs => ?) "
        "WHERE persona = ? AND owner = ? AND epoch = ? AND expires_at > now() RETURNING expires_at",
        (_check_seconds(seconds), lease.persona, lease.owner, lease.epoch),
    ).fetchone()
    if found is None:
        raise _lost(conn, lease.persona, lease.epoch)
    return attrs.evolve(lease, expires_at=datetime.fromisoformat(found[0]))


def renew_many(conn: sqlite3.Connection, held: Iterable[Lease], seconds: float) -> tuple[list[Lease], list[Lease]]:
    """``renew`` for all the leases one worker holds, in one statement (a worker's renewal
    round); ``(renewed, lost)``, each by persona. A lost lease is one ``renew`` would have
    raised ``LeaseLost`` for: the worker must stop writing for its persona.

    Raises:
        InvalidInput: leases of more than one owner, a bad duration, or a SQLite store.
    """
    _check_postgres(conn)
    held = sorted(held, key=lambda lease: lease.persona)
    if not held:
        return [], []
    owners = {lease.owner for lease in held}
    if len(owners) != 1:
        raise InvalidInput(f"renew_many renews one worker's leases; got owners {sorted(owners)!r}")
    found = conn.execute(
        "UPDATE persona_leases AS l SET expires_at = now() + make_interval(secs => ?) "
        "FROM unnest(?::text[], ?::bigint[]) AS h(persona, epoch) "
        "WHERE l.persona = h.persona AND l.epoch = h.epoch AND l.owner = ? AND l.expires_at > now() "
        "RETURNING l.persona, l.expires_at",
        (_check_seconds(seconds), [lease.persona for lease in held], [lease.epoch for lease in held], owners.pop()),
    ).fetchall()
    until = {r[0]: datetime.fromisoformat(r[1]) for r in found}
    renewed = [attrs.evolve(lease, expires_at=until[lease.persona]) for lease in held if lease.persona in until]
    return renewed, [lease for lease in held if lease.persona not in until]


def release(conn: sqlite3.Connection, lease: Lease) -> bool:
    """Let the persona go (its epoch stays, for the next grant to bump); whether ``lease`` was
    still held — ``False``: it had expired and been granted again, or was released already.

    A lease that ran out but was not granted to anyone since is released too.
    """
    _check_postgres(conn)
    return conn.execute(
        "UPDATE persona_leases SET owner = NULL, expires_at = now() "
        "WHERE persona = ? AND owner = ? AND epoch = ?",
        (lease.persona, lease.owner, lease.epoch),
    ).rowcount == 1


def held_by(conn: sqlite3.Connection, owner: str) -> list[Lease]:
    """The live leases ``owner`` holds, by persona."""
    _check_postgres(conn)
    _check_names("-", owner)
    return [
        Lease(r[0], owner, int(r[1]), datetime.fromisoformat(r[2]))
        for r in conn.execute(
            "SELECT persona, epoch, expires_at FROM persona_leases "
            "WHERE owner = ? AND expires_at > now() ORDER BY persona",
            (owner,),
        )
    ]


def check_held(conn: sqlite3.Connection, persona: str, epoch: int) -> None:
    """Inside a write transaction: go on only if ``persona``'s lease stands live at ``epoch``,
    and keep it so until the transaction ends (the row is locked ``FOR SHARE``).

    Raises:
        LeaseLost: the lease is at another epoch, released, expired, or was never granted;
            the caller's transaction must roll back (``Store.write`` does).
        InvalidInput: ``epoch`` is not a positive int, or the store is SQLite's.
    """
    _check_postgres(conn)
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        raise InvalidInput(f"epoch must be the positive int of a lease held, got {epoch!r}")
    found = conn.execute(
        "SELECT epoch, owner, expires_at > now() FROM persona_leases WHERE persona = ? FOR SHARE",
        (persona,),
    ).fetchone()
    if found is None or int(found[0]) != epoch or found[1] is None or not found[2]:
        raise _lost_from(persona, epoch, found)


def fenced(
    fn: Callable[[sqlite3.Connection], T], persona: str | None, epoch: int | None
) -> Callable[[sqlite3.Connection], T]:
    """``fn``, first checking in its transaction that ``persona``'s lease stands at ``epoch``
    (``check_held``); ``fn`` itself when no epoch is given."""
    if epoch is None:
        return fn

    def fenced(conn: sqlite3.Connection) -> T:
        check_held(conn, persona, epoch)
        return fn(conn)

    return fenced


def _lost(conn: sqlite3.Connection, persona: str, held: int) -> LeaseLost:
    found = conn.execute(
        "SELECT epoch, owner, expires_at > now() FROM persona_leases WHERE persona = ?", (persona,)
    ).fetchone()
    return _lost_from(persona, held, found)


def _lost_from(persona: str, held: int, found: object) -> LeaseLost:
    if found is None:
        return LeaseLost(persona, held, None, None)
    current, owner, live = int(found[0]), found[1], bool(found[2])
    return LeaseLost(persona, held, current, owner, expired=current == held and not live)


def _check_postgres(conn: object) -> None:
    if dialect_of(conn).name != "postgresql":
        raise InvalidInput(
            "persona leases and write epochs need a PostgreSQL store (storage.url = "
            "'postgresql://…'); a SQLite file is owned by one process: pass no epoch"
        )


def _check_names(persona: object, owner: object) -> None:
    for what, value in (("persona", persona), ("owner", owner)):
        if not isinstance(value, str) or not value or len(value) > MAX_OWNER_CHARS:
            raise InvalidInput(f"a lease's {what} must be a non-empty str of at most {MAX_OWNER_CHARS} characters, got {value!r}")


def _check_seconds(seconds: object) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) \
            or not 0 < seconds <= MAX_LEASE_SECONDS:
        raise InvalidInput(f"a lease lasts more than 0 and at most {MAX_LEASE_SECONDS:g} seconds, got {seconds!r}")
    return float(seconds)
