"""The room recorder: the one writer of the ``rooms`` table while a memory is open, kept off
the path to the block.

Rules:
- The supervisor's intake hands it every change the room registry accepted (``record``)
  without waiting — an open as the room's state (``rooms.RoomState``, what the table stores),
  an archive as its room id; its own task writes whatever is pending in one transaction
  (``store.rooms.record``). So ``send(RoomOpened)`` → ``block()`` never waits on a write, and a
  store that refuses writes still serves blocks from what the actors hold.
- What is pending is kept per room and per user, the latest winning: a reopen replaces the
  room's pending record, an archive marks it, and each user keeps the display name given
  last. So what waits is bounded by the rooms and users seen, however long storage refuses.
- ``incognito`` is fixed at a room id's first open; the registry refuses a flip before the
  open reaches the recorder (``rooms.RoomRegistry``). A record found in the file with the
  other flag when it comes to be written (another process opened it) is left as it is, and
  the refused open is logged.
- What is handed over is written ``GATHER_SECONDS`` later (at once when someone waits for it,
  or at close), in one transaction with whatever else arrived meanwhile. Handing over wakes
  no task: it sets the deadline of the recorder's idle wait, so an open's block is built
  before the recorder runs at all.
- A write that fails (read-only file, disk full) is logged, never raised into ``send``: what
  it carried stays pending and is tried again after a backoff (1 s, doubling to 60 s), or at
  once when someone waits for it (``flush``).
- ``flush`` returns once everything handed over before it is written, and raises
  ``StorageError`` when that write failed. ``aclose`` tries what is left once more and ends the
  task; what fails then is logged as lost.
"""

from __future__ import annotations

import logging
import math
from datetime import datetime

import attrs
import trio

from ..errors import MemoryClosed, StorageError
from ..messages import RoomArchived, RoomOpened
from ..rooms import Change, RoomState
from ..storage.store import Store

log = logging.getLogger(__name__)

GATHER_SECONDS = 0.05
"""How long what is handed over waits before it is written, unless someone waits for it: the
opens of a burst go in one transaction, after their blocks are built rather than beside them
(a write beside a build competes with it and slows it: ``bench/block_bench.py`` shows by how
much)."""
BACKOFF_FIRST = 1.0
BACKOFF_MAX = 60.0


@attrs.frozen
class PendingRoom:
    """What is still to be written for one room: the room as last opened (``None`` if it was
    only archived since the last write) and when; when it was archived after that, if it was."""

    room: RoomState | None
    opened: datetime | None
    archived: datetime | None = None


def then(older: PendingRoom | None, newer: PendingRoom) -> PendingRoom:
    """What to write for a room when ``newer`` happened after ``older``: an open replaces
    everything before it; an archive marks the open before it."""
    if older is None or newer.room is not None:
        return newer
    return attrs.evolve(older, archived=newer.archived)


class RoomRecorder:
    """Records rooms in the background. Start it with ``run_room_recorder``; the supervisor
    calls ``record`` for each room event the registry accepts, and ``aclose`` last."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._rooms: dict[str, PendingRoom] = {}
        self._names: dict[int, tuple[str, datetime]] = {}
        self._handed = 0  # events handed over so far
        self._written = 0  # how many of them are in the file
        self._tried = 0  # how many of them the last finished write carried
        self._error: StorageError | None = None
        self._idle: trio.CancelScope | None = None  # the recorder's wait while nothing is pending
        self._gathering = False  # something was handed over since the last write began
        self._due = -math.inf  # trio time what is pending is to be written
        self._hurry = trio.Event()  # someone waits: cut the backoff short
        self._attempt = trio.Event()  # set when a write finishes, then replaced
        self._closed = False
        self._done = trio.Event()

    def record(self, change: Change, when: datetime) -> None:
        """Hand over an accepted change, to be written soon; other events than an open or an
        archive are ignored."""
        match change.event:
            case RoomOpened():
                room = change.room
                self._put(room.room_id, PendingRoom(room, when))
                for uid, name in room.names.items():
                    self._names[uid] = (name, when)
            case RoomArchived(room_id=room_id):
                self._put(room_id, PendingRoom(None, None, archived=when))
            case _:
                return
        self._handed += 1
        if not self._gathering:  # the first since the last write began: due in GATHER_SECONDS
            self._gathering = True
            self._due = trio.current_time() + GATHER_SECONDS
            if self._idle is not None:
                self._idle.deadline = self._due  # the recorder wakes then, not now

    def _put(self, room_id: str, pending: PendingRoom) -> None:
        self._rooms[room_id] = then(self._rooms.get(room_id), pending)

    async def flush(self) -> None:
        """Return once every event handed over before this call is written.

        Raises:
            StorageError: the write failed (it stays pending and is tried again).
            MemoryClosed: the recorder stopped first.
        """
        target = self._handed
        while self._written < target:
            if self._done.is_set():
                raise MemoryClosed("the memory closed before the rooms opened were recorded")
            attempt = self._attempt
            self._hurry.set()
            await attempt.wait()
            if self._written < target and self._tried >= target and self._error is not None:
                raise StorageError(f"the rooms opened could not be recorded: {self._error}") from self._error

    async def aclose(self) -> None:
        """Write what is pending (one try), then end the task."""
        self._closed = True
        self._hurry.set()
        await self._done.wait()

    async def run(self) -> None:
        """Write what is handed over until closed (``run_room_recorder`` runs it)."""
        backoff = BACKOFF_FIRST
        try:
            while True:
                if self._written == self._handed:
                    if self._closed:
                        return
                    with trio.CancelScope() as self._idle:  # ``record`` sets its deadline
                        await self._hurry.wait()
                    self._idle = None
                    continue
                if not (self._closed or self._hurry.is_set()):
                    with trio.move_on_at(self._due):  # let the blocks build first
                        await self._hurry.wait()
                if await self._write_pending():
                    self._hurry = trio.Event()
                    backoff = BACKOFF_FIRST
                    continue
                if self._closed:
                    log.error(
                        "%d room event(s) were not recorded before the memory closed: %s",
                        self._handed - self._written, self._error,
                    )
                    return
                with trio.move_on_after(backoff):
                    await self._hurry.wait()
                self._hurry = trio.Event()
                backoff = min(backoff * 2, BACKOFF_MAX)
        finally:
            self._done.set()
            self._attempt.set()

    async def _write_pending(self) -> bool:
        """One write of everything pending; whether it landed. A failure puts it all back."""
        rooms, names, upto = self._rooms, self._names, self._handed
        self._rooms, self._names = {}, {}
        self._gathering = False
        opened = [
            (p.room, p.opened) for p in rooms.values() if p.room is not None and p.opened is not None
        ]
        archived = [(room_id, p.archived) for room_id, p in rooms.items() if p.archived is not None]
        try:
            refused = await self._store.rooms.record(opened, archived, names)
        except StorageError as exc:
            for room_id, pending in rooms.items():
                newer = self._rooms.get(room_id)
                self._rooms[room_id] = pending if newer is None else then(pending, newer)
            self._names = {**names, **self._names}
            self._error = exc
            log.error(
                "could not record %d room(s) (%s); blocks are still served, and the write is "
                "tried again", len(rooms), exc,
            )
            return False
        else:
            self._written = upto
            self._error = None
            for room_id in refused:
                log.error(
                    "room %r is stored with the other incognito (another process opened it); "
                    "its record was left as it is", room_id,
                )
            return True
        finally:
            self._tried = upto
            self._attempt.set()
            self._attempt = trio.Event()


async def run_room_recorder(store: Store, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
    """Report the recorder with ``task_status.started``, and run it until it is closed (or
    cancelled)."""
    recorder = RoomRecorder(store)
    task_status.started(recorder)
    await recorder.run()
