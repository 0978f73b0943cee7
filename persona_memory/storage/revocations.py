"""The web app's revocations: login links used up and sessions signed out, kept in the database.

A login link and a session cookie are signed and stamped, so their signature alone proves them
until they expire; what a signature cannot say is that a link was used already or that its
session was ended. That is kept here, so it holds after a restart of ``serve`` and on every
cluster worker sharing the database. Functions of a connection (either backend's: see
``store``), run inside the caller's unit of work; ``Revocations`` runs each as one (the
store's ``store.revocations``).

Rules:
- A row is one revoked secret: its ``kind`` (``"link"``: a login link's nonce; ``"session"``:
  a session id) and the SHA-256 of the secret, never the secret itself, until ``expires_at``
  — when the link or the session would have expired anyway, after which its signature check
  refuses it and the row says nothing more.
- ``revoke`` is one ``INSERT … ON CONFLICT DO NOTHING``: of two workers redeeming one link at
  the same moment exactly one inserts the row, and the other is told the link was used. It
  prunes the rows past their expiry in the same transaction, so the table holds only what
  still matters.
- Times are the caller's wall clock's (the web app's), as UTC instants.
"""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import datetime
from typing import Literal

from ..clock import as_utc
from ..errors import InvalidInput
from .units import Units

Kind = Literal["link", "session"]
KINDS: frozenset[str] = frozenset({"link", "session"})


def revoke(conn: sqlite3.Connection, kind: Kind, secret: str, expires_at: datetime, now: datetime) -> bool:
    """Revoke ``secret`` until ``expires_at``, pruning rows expired at ``now``; whether it was
    revoked by this call (``False``: it was revoked already).

    Raises:
        InvalidInput: an unknown ``kind``.
    """
    conn.execute("DELETE FROM web_revocations WHERE expires_at < ?", (as_utc(now).isoformat(),))
    inserted = conn.execute(
        "INSERT INTO web_revocations (kind, token, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        (_kind(kind), _digest(secret), as_utc(expires_at).isoformat()),
    ).rowcount
    return inserted == 1


def is_revoked(conn: sqlite3.Connection, kind: Kind, secret: str) -> bool:
    """Whether ``secret`` of ``kind`` was revoked (and its row not yet pruned)."""
    return conn.execute(
        "SELECT 1 FROM web_revocations WHERE kind = ? AND token = ?", (_kind(kind), _digest(secret))
    ).fetchone() is not None


class Revocations:
    """The revoked secrets (``store.revocations``): each call one unit of work, not counted in
    ``changes`` (nothing ``read_state`` reads)."""

    def __init__(self, units: Units) -> None:
        self._units = units

    async def revoke(self, kind: Kind, secret: str, expires_at: datetime, now: datetime) -> bool:
        """``revoke`` in its own transaction: record a used login link's nonce or an ended
        session's id until ``expires_at``; ``False`` when it was recorded already."""
        return await self._units.write_unread(lambda conn: revoke(conn, kind, secret, expires_at, now))

    async def is_revoked(self, kind: Kind, secret: str) -> bool:
        """Whether a login link's nonce was used or a session id ended (``is_revoked``)."""
        return await self._units.read(lambda conn: is_revoked(conn, kind, secret))


def _kind(kind: str) -> str:
    if kind not in KINDS:
        raise InvalidInput(f"a revocation is of kind 'link' or 'session', not {kind!r}")
    return kind


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()
