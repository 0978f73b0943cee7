"""A persona's writer lane: the jobs its actor hands its writer, and the reports that come back.

Rules:
- The supervisor creates the lane and the writer task; the persona's actor is the only one that
  submits jobs; one writer task takes them in order, one at a time — that is what serializes a
  persona's writes.
- Jobs are typed values the actor creates (a quiet room to write, a human's edit, touches to
  stamp, a flush). The writer does the I/O and never touches the actor's state: what it did
  comes back as a report (``Wrote``, ``Edited``, ``Touched``) that the actor applies itself.
- Reports never wait: the writer appends them to ``reports`` and wakes the actor with a
  ``Wake`` in its mailbox if there is room (a full mailbox means the actor is awake anyway and
  takes the reports before its next envelope). So the writer never blocks on the actor, and the
  actor can wait on a full lane without a deadlock.
- The job being performed stays in ``in_flight`` until it succeeded. If the writer crashes, the
  supervisor restarts it and it performs that job again before the queue: nothing queued or in
  flight is lost by a crash.
- The queue is bounded (``actors.write_queue_size``).
- The lane counts jobs submitted and jobs performed; it is idle exactly when the two agree and
  no report waits for the actor. It counts the room writes among them too: ``writing`` while
  one is queued or under way.
- When the lane is closed and empty the writer returns and closes its waker, which lets the
  actor's mailbox end.
"""

from __future__ import annotations

from collections import deque
from datetime import datetime
from typing import Awaitable, Callable

import attrs
import outcome
import trio

from ..rooms import RoomState
from .envelopes import Wake

# ---- jobs: what the actor asks of its writer ------------------------------------------------


@attrs.frozen(eq=False)
class TouchJob:
    """Stamp rows that loaded into blocks: ``{row id: (last loaded, times loaded)}``."""

    stamps: dict[int, tuple[datetime, int]] = attrs.field(factory=dict)


@attrs.frozen(eq=False)
class QuietJob:
    """Run the write path over a room's transcript since this persona's cursor.

    ``block`` is the persona's block for the room when it went quiet, so the mind extracts
    only what is new.
    """

    room: RoomState
    archiving: bool = False
    block: str = ""


@attrs.frozen
class DeleteMemory:
    """The human's delete of one row about them."""

    user_id: int
    memory_id: int


@attrs.frozen
class UndoNotice:
    """The human's undo of a toast: delete exactly the rows it announced."""

    user_id: int
    notice_id: int


@attrs.frozen
class ClearMemories:
    """The human's clear-all of what this persona keeps about them."""

    user_id: int


HumanEdit = DeleteMemory | UndoNotice | ClearMemories


@attrs.frozen(eq=False)
class Reply:
    """Where a caller waits for the outcome of its request."""

    done: trio.Event = attrs.field(factory=trio.Event)
    result: list[outcome.Outcome] = attrs.field(factory=list)

    def set(self, result: outcome.Outcome) -> None:
        if not self.result:
            self.result.append(result)
        self.done.set()


@attrs.frozen(eq=False)
class EditJob:
    """A human's edit of this persona's rows, run in turn with its writes."""

    edit: HumanEdit
    reply: Reply = attrs.field(factory=Reply)


@attrs.frozen(eq=False)
class FlushJob:
    """Set ``done`` once every job queued before this one has been performed."""

    done: trio.Event


WriteJob = TouchJob | QuietJob | EditJob | FlushJob

# ---- reports: what the writer did, for the actor to apply ------------------------------------


@attrs.frozen(eq=False)
class Wrote:
    """The write path ran for a room (rows may have been written). ``posted``: what it
    committed, when the write path says (a ``storage.writes.Posted``), for the actor to apply
    to its row index; ``routing``: the route index it ended with, for the row index to keep;
    ``changes``: the store's ``changes`` before and after it, when no one else wrote meanwhile."""

    room_id: str
    posted: object = None
    routing: object = None
    changes: tuple[int, int] | None = None


@attrs.frozen(eq=False)
class Edited:
    """A human's edit ran: its outcome (rows deleted, or the caller's error)."""

    job: EditJob
    result: outcome.Outcome


@attrs.frozen(eq=False)
class Touched:
    """These stamps committed (or, ``committed=False``, were given up with a failing job)."""

    stamps: dict[int, tuple[datetime, int]]
    committed: bool = True


Report = Wrote | Edited | Touched


class WriteLane:
    """The bounded queue of one persona's writes and the reports back. Created and closed by
    the supervisor; ``waker`` is a clone of the actor's mailbox that the writer closes last."""

    def __init__(self, size: int, waker: trio.MemorySendChannel | None = None) -> None:
        self.send_channel, self.receive_channel = trio.open_memory_channel[WriteJob](size)
        self.in_flight: WriteJob | None = None
        self.submitted = 0
        self.performed = 0
        self.rooms_due = 0  # room writes (``QuietJob``) submitted and not yet performed
        self.reports: deque[Report] = deque()
        self.waker = waker

    @property
    def idle(self) -> bool:
        """Every job submitted so far has been performed, and its report applied."""
        return self.submitted == self.performed and not self.reports

    @property
    def writing(self) -> bool:
        """A room's write is queued or under way (another ``Wrote`` is coming)."""
        return self.rooms_due > 0

    async def submit(self, job: WriteJob) -> None:
        self._count(job, 1)
        try:
            await self.send_channel.send(job)
        except BaseException:
            self._count(job, -1)
            raise

    def submit_nowait(self, job: WriteJob) -> bool:
        """Queue ``job`` unless the queue is full or closed; return whether it was queued."""
        try:
            self.send_channel.send_nowait(job)
        except (trio.WouldBlock, trio.ClosedResourceError):
            return False
        self._count(job, 1)
        return True

    def finished(self, job: WriteJob) -> None:
        """The writer is done with ``job`` (performed, or parked by the supervisor)."""
        self.in_flight = None
        self.performed += 1
        self._count(job, -1, submitted=False)

    def _count(self, job: WriteJob, n: int, *, submitted: bool = True) -> None:
        if submitted:
            self.submitted += n
        if isinstance(job, QuietJob):
            self.rooms_due += n

    def report(self, report: Report) -> None:
        """The writer's side: hand ``report`` to the actor without waiting."""
        self.reports.append(report)
        if self.waker is not None:
            try:
                self.waker.send_nowait(Wake())
            except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
                pass  # the mailbox is full (the actor is awake) or gone (nobody to tell)

    def close(self) -> None:
        """No more jobs: the writer finishes what is queued, then returns."""
        self.send_channel.close()


async def run_writer(lane: WriteLane, perform: Callable[[WriteJob], Awaitable[None]]) -> None:
    """Perform the lane's jobs in order until it is closed and empty, then close the waker.

    A job that raises propagates (the supervisor restarts this function); the job stays in
    ``lane.in_flight`` and is performed first on the next run.
    """
    while True:
        if lane.in_flight is None:
            try:
                lane.in_flight = await lane.receive_channel.receive()
            except trio.EndOfChannel:
                if lane.waker is not None:
                    lane.waker.close()
                return
        await perform(lane.in_flight)
        lane.finished(lane.in_flight)
