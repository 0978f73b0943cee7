"""The notices (``notices``): what a persona told a user it noted, listed and undone — a
repository over the store's units of work (``units.py``). The SQL is ``writes.py``'s, which
the write path shares.

Rules:
- Undoing is the persona's write (its actor's): it deletes exactly the rows the notice
  announced and reopens what they closed, in one transaction, fenced by the lease's ``epoch``
  when one is given (``leases.fenced``).
"""

from __future__ import annotations

import sqlite3
from datetime import datetime

from ..errors import NotYourNotice
from . import writes
from .leases import fenced
from .units import Units


class Notices:
    """The notices of every persona to every user (``store.notices``)."""

    def __init__(self, units: Units) -> None:
        self._units = units

    async def of(self, user_id: int) -> list[writes.Notice]:
        """The user's notices not undone, newest first."""
        return await self._units.read(lambda conn: writes.notices(conn, user_id))

    async def persona_of(self, user_id: int, notice_id: int) -> str:
        """The persona whose notice to ``user_id`` this is (not undone).

        Raises:
            NotYourNotice: no such notice for this user, or it was undone.
        """
        return await self._units.read(lambda conn: writes.notice_persona(conn, user_id, notice_id))

    async def undo(
        self, user_id: int, notice_id: int, now: datetime, *, persona: str, epoch: int | None = None
    ) -> list[int]:
        """Undo one of ``persona``'s notices to the user: delete exactly the rows it announced,
        reopen what they closed, mark it undone (one transaction). Returns the ids deleted.
        With ``epoch``: only while ``persona``'s lease stands at it.

        Raises:
            NotYourNotice: no such notice of this persona to this user, or it was undone.
            LeaseLost: ``epoch`` is not the lease's any more. Nothing changes.
        """

        def undo(conn: sqlite3.Connection) -> list[int]:
            if writes.notice_persona(conn, user_id, notice_id) != persona:
                raise NotYourNotice(f"notice {notice_id} does not exist, is not u:{user_id}'s, or was undone")
            return writes.undo(conn, user_id, notice_id, now)

        return await self._units.write(fenced(undo, persona, epoch))
