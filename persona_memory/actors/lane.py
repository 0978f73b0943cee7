"""A persona's writer lane: the queue of its writes, and the write in flight.

Rules:
- The supervisor creates the lane and closes it; the persona's actor submits jobs; one writer
  task takes them in order, one at a time — that is what serializes a persona's writes.
- The job being performed stays in ``in_flight`` until it succeeded. If the writer crashes, the
  supervisor restarts it and it performs that job again before the queue: nothing queued or in
  flight is lost by a crash.
- The queue is bounded (``actors.write_queue_size``).
- The lane counts jobs submitted and jobs performed; it is idle exactly when the two agree. A
  job handed to a waiting writer is in neither the queue nor ``in_flight`` for a moment, so
  looking at those two alone could call a busy lane idle.
"""

from __future__ import annotations

from typing import Awaitable, Callable

import attrs
import trio

from ..rooms import RoomState


@attrs.frozen(eq=False)
class TouchJob:
    """Write the pending recall stamps of rows that loaded into a block."""


@attrs.frozen(eq=False)
class QuietJob:
    """Run the write path over a room's transcript since this persona's cursor.

    ``block`` is the persona's block for the room when it went quiet, so the mind extracts
    only what is new.
    """

    room: RoomState
    archiving: bool = False
    block: str = ""


@attrs.frozen(eq=False)
class EditJob:
    """A human's edit of this persona's rows (delete, undo), run in turn with its writes.

    ``edit`` runs on the lane; its outcome — a result or the caller's error — goes back
    through ``outcome`` and ``done``, and never crashes the writer.
    """

    edit: Callable[[], Awaitable[object]]
    done: trio.Event = attrs.field(factory=trio.Event)
    outcome: list = attrs.field(factory=list)


@attrs.frozen(eq=False)
class FlushJob:
    """Set ``done`` once every job queued before this one has been performed."""

    done: trio.Event


WriteJob = TouchJob | QuietJob | EditJob | FlushJob


class WriteLane:
    """The bounded queue of one persona's writes. Created and closed by the supervisor."""

    def __init__(self, size: int) -> None:
        self.send_channel, self.receive_channel = trio.open_memory_channel[WriteJob](size)
        self.in_flight: WriteJob | None = None
        self.submitted = 0
        self.performed = 0

    @property
    def idle(self) -> bool:
        """Every job submitted so far has been performed."""
        return self.submitted == self.performed

    async def submit(self, job: WriteJob) -> None:
        self.submitted += 1
        try:
            await self.send_channel.send(job)
        except BaseException:
            self.submitted -= 1
            raise

    def submit_nowait(self, job: WriteJob) -> bool:
        """Queue ``job`` unless the queue is full or closed; return whether it was queued."""
        try:
            self.send_channel.send_nowait(job)
        except (trio.WouldBlock, trio.ClosedResourceError):
            return False
        self.submitted += 1
        return True

    def close(self) -> None:
        """No more jobs: the writer finishes what is queued, then returns."""
        self.send_channel.close()


async def run_writer(lane: WriteLane, perform: Callable[[WriteJob], Awaitable[None]]) -> None:
    """Perform the lane's jobs in order until it is closed and empty.

    A job that raises propagates (the supervisor restarts this function); the job stays in
    ``lane.in_flight`` and is performed first on the next run.
    """
    while True:
        if lane.in_flight is None:
            try:
                lane.in_flight = await lane.receive_channel.receive()
            except trio.EndOfChannel:
                return
        await perform(lane.in_flight)
        lane.in_flight = None
        lane.performed += 1
