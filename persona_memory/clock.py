"""The wall clock: what time it is in the world, as opposed to trio's scheduling clock.

Memory rows carry calendar times (``created``, ``last_recalled``, ``valid_from``); recency decays
per calendar day. Tests fix or advance a ``ManualClock``; production uses ``SystemClock``.
Both return timezone-aware UTC datetimes.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Protocol

from .errors import InvalidInput


class WallClock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware, in UTC."""
        ...


class SystemClock:
    """The machine's clock."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)


class ManualClock:
    """A clock that moves only when told to. For tests and replays of dated transcripts."""

    def __init__(self, start: datetime) -> None:
        self._now = as_utc(start)

    def now(self) -> datetime:
        return self._now

    def set(self, when: datetime) -> None:
        self._now = as_utc(when)

    def advance(self, **delta: float) -> None:
        """``clock.advance(days=3)``: move forward by a ``timedelta(**delta)``."""
        self._now += timedelta(**delta)


EARLIEST = datetime(1970, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(2200, 1, 1, tzinfo=timezone.utc)


def as_utc(when: datetime) -> datetime:
    """Return ``when`` in UTC; a naive datetime is refused rather than guessed at, and so is
    one outside 1970..2199 (date arithmetic on it — "next Thursday" — must not overflow)."""
    if not isinstance(when, datetime):
        raise InvalidInput(f"times must be timezone-aware datetimes, got {when!r}")
    if when.tzinfo is None:
        raise InvalidInput(f"times must be timezone-aware (UTC), got naive {when!r}")
    try:
        utc = when.astimezone(timezone.utc)
    except OverflowError:
        raise InvalidInput(f"time {when!r} is out of range; use a date between 1970 and 2199") from None
    if not EARLIEST <= utc < LATEST:
        raise InvalidInput(f"time {when.isoformat()} is out of range; use a date between 1970 and 2199")
    return utc
