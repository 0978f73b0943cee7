"""Intake: room events taken one at a time, in the order they came, with no lock.

Rules:
- One task (``run``) takes the senders' events from a bounded channel and hands each to
  ``take`` — the supervisor's: check it against the room registry, record it, put it in the
  hearers' outboxes — before taking the next. So every actor sees a room's events in registry
  order, and the registry is never ahead of the actors.
- ``take`` never waits, so when no event is queued or being taken, the sender runs it itself,
  at once (``submit``) — the same order, without waking the intake task and waiting for it.
- A sender cancelled while waiting for a place in the channel changes nothing. Once its event
  was taken it waits (shielded) for the outcome: a taken event is handled in full and the
  cancellation is felt after.
- Whatever ``take`` raises goes back to the sender. When intake stops, the events still
  waiting are answered with ``MemoryClosed``.
"""

from __future__ import annotations

from typing import Callable, Generic, TypeVar

import attrs
import outcome
import trio

from ..errors import MemoryClosed
from ..messages import RoomEvent

T = TypeVar("T")


@attrs.define(eq=False)
class _Taken(Generic[T]):
    """An event waiting for the intake task, and where its outcome goes."""

    event: RoomEvent
    done: trio.Event = attrs.field(factory=trio.Event)
    result: list[outcome.Outcome] = attrs.field(factory=list)


class Intake(Generic[T]):
    """The ordered intake of room events. ``take(event)`` handles one (it must not wait) and
    returns what its sender gets back; ``check`` raises when no event is to be taken any more.
    The owner starts ``run`` in its nursery and calls ``close`` then ``wait_closed`` to stop."""

    def __init__(self, size: int, take: Callable[[RoomEvent], T], check: Callable[[], None]) -> None:
        self._take = take
        self._check = check
        self._send, self._receive = trio.open_memory_channel[_Taken[T]](size)
        self._pending = 0  # events handed to the channel and not yet taken
        self._done = trio.Event()

    async def submit(self, event: RoomEvent) -> T:
        """Have ``event`` taken in its turn; what ``take`` returned for it.

        Raises:
            MemoryClosed: intake is closed.
            Whatever ``take`` raised for the event.
        """
        if self._pending == 0:  # nothing ahead of it: taken here, in order
            await trio.lowlevel.checkpoint_if_cancelled()
            result = self._take(event)
            await trio.lowlevel.cancel_shielded_checkpoint()
            return result
        taken: _Taken[T] = _Taken(event)
        self._pending += 1
        try:
            await self._send.send(taken)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            self._pending -= 1
            raise MemoryClosed("the memory is closed; open it again with open_memory()") from None
        except BaseException:
            self._pending -= 1  # cancelled before it was sent: nothing changed
            raise
        with trio.CancelScope(shield=True):
            await taken.done.wait()
        return taken.result[0].unwrap()

    async def run(self) -> None:
        """The intake task: take each event in turn until ``close``."""
        try:
            async with self._receive:
                async for taken in self._receive:
                    try:
                        self._check()
                        result = self._take(taken.event)
                    except Exception as exc:  # the sender's to see
                        taken.result.append(outcome.Error(exc))
                    else:
                        taken.result.append(outcome.Value(result))
                    finally:  # cancelled mid-delivery, the sender still hears back
                        self._pending -= 1
                        if not taken.result:
                            taken.result.append(outcome.Error(MemoryClosed(
                                "the memory closed while this event was being delivered")))
                        taken.done.set()
        finally:
            self._done.set()
            while True:  # events still waiting when intake stopped: their senders hear back
                try:
                    taken = self._receive.receive_nowait()
                except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                    break
                taken.result.append(outcome.Error(MemoryClosed("the memory closed before this event was taken")))
                taken.done.set()

    def close(self) -> None:
        """Take no more events: those already waiting are taken, then ``run`` ends."""
        self._send.close()

    async def wait_closed(self) -> None:
        """Return once ``run`` has ended."""
        await self._done.wait()
