"""A persona's writer lane: the jobs its actor hands its writer, and the reports that come back.

Rules:
- The supervisor creates the lane and the writer task; the persona's actor is the only one that
  submits jobs; one writer task takes them in order, one at a time — that is what serializes a
  persona's writes.
- Jobs are typed values the actor creates (a quiet room to write, touches to stamp, a flush).
  A human's edit is not a job: the actor runs it itself, so it never waits behind a model
  call. The writer does the I/O and never touches the actor's state: what it did comes back
  as a report (``Wrote``, ``Touched``) that the actor applies itself. What the writer reads of
  the actor's rows is a snapshot the actor publishes (``routing``), never the actor's index.
- Reports never wait: the writer appends them to ``reports`` and wakes the actor with a
  ``Wake`` in its mailbox if there is room (a full mailbox means the actor is awake anyway and
  takes the reports before its next envelope). So the writer never blocks on the actor.
- Queuing never waits either (``offer``): the queue holds ``actors.write_queue_size`` jobs,
  and past that a room's write joins the one already queued for its room — backpressure by
  merging, never loss (see ``WriteLane``).
- The job being performed stays in ``in_flight`` until it succeeded. If the writer crashes, the
  supervisor restarts it and it performs that job again before the queue: nothing queued or in
  flight is lost by a crash.
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
class FlushJob:
    """Set ``done`` once every job queued before this one has been performed."""

    done: trio.Event


WriteJob = TouchJob | QuietJob | FlushJob

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
class Touched:
    """These stamps committed (or, ``committed=False``, were given up with a failing job)."""

    stamps: dict[int, tuple[datetime, int]]
    committed: bool = True


Report = Wrote | Touched


class WriteLane:
    """The bounded queue of one persona's writes and the reports back. Created and closed by
    the supervisor; ``waker`` is a clone of the actor's mailbox that the writer closes last.

    The actor queues with ``offer``, which never waits: a mailbox loop that waited on its
    writer would keep a human's edit waiting behind a model call. The queue holds ``size``
    jobs; past that a room's write joins the one for the same room still queued (the write
    path reads from the cursor to the end of the transcript, so one run covers both), and
    only a room with nothing queued yet, or a flush, goes in beyond it — so the queue never
    holds more than ``size`` plus one job per open room plus the flushes callers wait on.
    Touches use ``submit_nowait``, which refuses past ``size`` (the actor keeps the stamps
    and tries later).
    """

    def __init__(self, size: int, waker: trio.MemorySendChannel | None = None) -> None:
        self.size = size
        self._queue: deque[WriteJob] = deque()
        self._more = trio.Event()
        self._closed = False
        self.in_flight: WriteJob | None = None
        self.submitted = 0
        self.performed = 0
        self.rooms_due = 0  # room writes (``QuietJob``) submitted and not yet performed
        self.reports: deque[Report] = deque()
        self.waker = waker
        self.routing: object = None  # the actor's route snapshot, published for the writer

    @property
    def idle(self) -> bool:
        """Every job submitted so far has been performed, and its report applied."""
        return self.submitted == self.performed and not self.reports

    @property
    def writing(self) -> bool:
        """A room's write is queued or under way (another ``Wrote`` is coming)."""
        return self.rooms_due > 0

    @property
    def queued(self) -> int:
        """Jobs waiting for the writer (the one under way not counted)."""
        return len(self._queue)

    def offer(self, job: WriteJob) -> None:
        """Queue ``job`` without waiting (past ``size``, a room's write joins the one queued
        for its room, if any).

        Raises:
            trio.ClosedResourceError: the lane was closed.
        """
        if self._closed:
            raise trio.ClosedResourceError("the writer lane is closed")
        if isinstance(job, QuietJob) and len(self._queue) >= self.size:
            for i in range(len(self._queue) - 1, -1, -1):
                queued = self._queue[i]
                if isinstance(queued, QuietJob) and queued.room.room_id == job.room.room_id:
                    self._queue[i] = QuietJob(job.room, archiving=queued.archiving or job.archiving, block=job.block)
                    return
        self._queue.append(job)
        self._count(job, 1)
        self._more.set()

    async def submit(self, job: WriteJob) -> None:
        """``offer``, then a checkpoint."""
        self.offer(job)
        await trio.lowlevel.checkpoint()

    def submit_nowait(self, job: WriteJob) -> bool:
        """Queue ``job`` unless the queue is full or closed; return whether it was queued."""
        if self._closed or len(self._queue) >= self.size:
            return False
        self.offer(job)
        return True

    async def take(self) -> WriteJob:
        """The writer's side: the next job, waiting for one.

        Raises:
            trio.EndOfChannel: the lane is closed and empty.
        """
        while not self._queue:
            if self._closed:
                raise trio.EndOfChannel
            more = self._more = trio.Event()
            await more.wait()
        return self._queue.popleft()

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
        self._closed = True
        self._more.set()


async def run_writer(lane: WriteLane, perform: Callable[[WriteJob], Awaitable[None]]) -> None:
    """Perform the lane's jobs in order until it is closed and empty, then close the waker.

    A job that raises propagates (the supervisor restarts this function); the job stays in
    ``lane.in_flight`` and is performed first on the next run.
    """
    while True:
        if lane.in_flight is None:
            try:
                lane.in_flight = await lane.take()
            except trio.EndOfChannel:
                if lane.waker is not None:
                    lane.waker.close()
                return
        await perform(lane.in_flight)
        lane.finished(lane.in_flight)
