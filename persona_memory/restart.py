"""When to restart a crashed writer, and when to give up: Erlang's intensity and period.

Rules:
- The k-th consecutive crash waits ``initial · 2^k`` seconds, capped at ``cap``.
- A run that lasted ``healthy_after`` seconds or more resets the count: the next crash waits
  ``initial`` again.
- More than ``max_restarts`` crashes within ``period`` seconds escalate: ``WriterCrashedTooOften``.

Pure: times are passed in (trio's clock in the supervisor, plain numbers in tests).
"""

from __future__ import annotations

from collections import deque

import attrs

from .errors import WriterCrashedTooOften


@attrs.define
class RestartPolicy:
    initial: float
    cap: float
    healthy_after: float
    max_restarts: int
    period: float
    _consecutive: int = 0
    _crash_times: deque[float] = attrs.field(factory=deque)

    def after_crash(self, *, crashed_at: float, ran_for: float, who: str = "writer") -> float:
        """Record a crash; return how long to wait before restarting.

        Raises:
            WriterCrashedTooOften: the crash exceeds the intensity (``max_restarts`` per
                ``period``).
        """
        if ran_for >= self.healthy_after:
            self._consecutive = 0
        self._crash_times.append(crashed_at)
        while self._crash_times and self._crash_times[0] <= crashed_at - self.period:
            self._crash_times.popleft()
        if len(self._crash_times) > self.max_restarts:
            raise WriterCrashedTooOften(
                f"{who} crashed {len(self._crash_times)} times within {self.period:g} s "
                f"(the limit is {self.max_restarts}); giving up on it"
            )
        delay = min(self.cap, self.initial * 2**self._consecutive)
        if delay < self.cap:
            self._consecutive += 1
        return delay
