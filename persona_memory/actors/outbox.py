"""Getting envelopes into a persona actor's mailbox: in order, bounded, never lost in silence.

Rules:
- Each running actor (``Running``) has a bounded mailbox and, before it, an outbox: the
  deliveries waiting for a place in the mailbox. ``deliver`` never waits — it puts the envelope
  straight in the mailbox when nothing is queued ahead of it and there is room, else at the
  end of the outbox, which the actor's feeder (``feed``) moves into the mailbox in order. So a
  persona whose mailbox is full delays its own envelopes only, never another persona's.
- The outbox is bounded by the senders: each waits (``wait_for_room``) until the persona has
  fewer than ``actors.mailbox_size`` deliveries queued before it records anything, so it holds
  at most that many plus one per sender that passed the check at once.
- An envelope that can never arrive (the actor stopped, the persona was escalated) is marked
  ``failed``; whoever waits for it (``delivered``) raises ``MemoryClosed`` or ``PersonaFailed``.
- A caller waiting for an actor's answer waits on the answer alone (``answer``); when the actor
  ends first, it wakes every such caller.
"""

from __future__ import annotations

from collections import deque
from typing import Iterable, Mapping

import attrs
import trio

from ..errors import MemoryClosed, PersonaFailed
from .envelopes import Envelope, FlushRequested
from .lane import WriteLane
from .persona import PersonaActor


@attrs.define(eq=False)
class Delivery:
    """An envelope on its way to an actor's mailbox; ``done`` once it is in (or never will be)."""

    envelope: Envelope
    done: trio.Event = attrs.field(factory=trio.Event)
    failed: bool = False


@attrs.define
class Running:
    """One persona's actor as the supervisor runs it: the actor (replaced when it restarts),
    its mailbox, its writer lane and its outbox (deliveries waiting for the mailbox)."""

    actor: PersonaActor
    mailbox: trio.MemorySendChannel[Envelope]
    lane: WriteLane
    outbox: deque[Delivery] = attrs.field(factory=deque)
    outbox_ready: trio.Event = attrs.field(factory=trio.Event)  # the feeder's wake-up
    room_freed: trio.Event = attrs.field(factory=trio.Event)  # a sender's wake-up
    outbox_closed: bool = False
    finished: trio.Event = attrs.field(factory=trio.Event)
    sent: int = 0
    closing: bool = False
    queued: int = 0  # deliveries in the outbox or in the feeder's hands
    parked_in_a_row: int = 0  # jobs parked since the writer last performed one
    callers: set[trio.Event] = attrs.field(factory=set)  # set when the actor ends, too
    scope: trio.CancelScope = attrs.field(factory=trio.CancelScope)  # cancelled to let it go

    @property
    def persona(self) -> str:
        return self.actor.persona

    @property
    def idle(self) -> bool:
        """Every envelope sent to it was handled and every job it queued was performed —
        counted, not guessed from queue lengths: an envelope handed to a waiting actor sits in
        no buffer until the actor wakes."""
        return self.sent == self.actor.handled and self.actor.idle


def undelivered(running: Running, failed: Mapping[str, PersonaFailed]) -> MemoryClosed | PersonaFailed:
    """The error for an envelope that will never reach ``running``'s mailbox."""
    persona = running.persona
    if persona in failed:
        return failed[persona]
    return MemoryClosed(f"the memory closed while an event for {persona} was being delivered")


def deliver(running: Running, envelope: Envelope, failed: Mapping[str, PersonaFailed]) -> Delivery:
    """Put ``envelope`` in ``running``'s outbox, in order, without waiting (see the rules).

    Raises:
        MemoryClosed, PersonaFailed: the outbox is closed (``undelivered``).
    """
    delivery = Delivery(envelope)
    if running.outbox_closed:
        raise undelivered(running, failed)
    if running.queued == 0:
        try:
            running.mailbox.send_nowait(envelope)
        except trio.WouldBlock:
            pass
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise undelivered(running, failed) from None
        else:
            running.sent += 1
            delivery.done.set()
            return delivery
    running.outbox.append(delivery)
    running.outbox_ready.set()
    running.queued += 1
    running.sent += 1
    return delivery


async def delivered(running: Running, delivery: Delivery, failed: Mapping[str, PersonaFailed]) -> None:
    """Wait until ``delivery`` is in the actor's mailbox.

    Raises:
        MemoryClosed: the actor stopped first.
        PersonaFailed: the persona was escalated first.
    """
    await first_of(delivery.done, running.finished)
    if delivery.failed or not delivery.done.is_set():
        raise undelivered(running, failed)


async def wait_for_room(actors: Mapping[str, Running], personas: Iterable[str], bound: int) -> None:
    """Backpressure: wait until each of these personas' actors has fewer than ``bound``
    deliveries waiting in its outbox. Changes nothing."""
    for persona in dict.fromkeys(personas):
        running = actors.get(persona)
        while running is not None and running.queued >= bound and not running.finished.is_set():
            if running.room_freed.is_set():
                running.room_freed = trio.Event()
            await first_of(running.room_freed, running.finished)
            running = actors.get(persona)


async def feed(running: Running) -> None:
    """Move the outbox into the bounded mailbox, in order; close the mailbox after it."""
    try:
        async with running.mailbox:
            while True:
                while not running.outbox:
                    if running.outbox_closed:
                        return
                    ready = running.outbox_ready = trio.Event()
                    await ready.wait()
                delivery = running.outbox.popleft()
                try:
                    await running.mailbox.send(delivery.envelope)
                except (trio.ClosedResourceError, trio.BrokenResourceError):
                    delivery.failed = True
                    running.sent -= 1
                finally:
                    running.queued -= 1
                    running.room_freed.set()
                delivery.done.set()
    finally:
        running.outbox_closed = True
        while running.outbox:  # what is left will never arrive: its senders hear back
            delivery = running.outbox.popleft()
            delivery.failed = True
            delivery.done.set()


async def drain(actors: Mapping[str, Running], failed: Mapping[str, PersonaFailed], bound: int) -> None:
    """Return when every actor has handled and written everything sent to it before the call.

    Only the actors with work get a flush: one that is idle has nothing to wait for, and one
    that is closing finishes on its own.

    Raises:
        MemoryClosed: the memory closed before those writes landed.
    """
    await wait_for_room(actors, list(actors), bound)
    waits = []
    for running in list(actors.values()):
        if running.closing or running.idle:
            continue  # retiring, or idle: it has nothing left to write
        done = trio.Event()
        deliver(running, FlushRequested(done), failed)
        waits.append((running, done))
    for running, done in waits:
        await first_of(done, running.finished)
        if not done.is_set() and running.persona in failed:
            continue  # escalated while it wrote: what it queued waits at its cursors
        if not done.is_set():
            raise MemoryClosed(f"the memory closed before {running.persona}'s queued writes landed")


async def answer(running: Running, done: trio.Event) -> None:
    """Wait until ``done`` is set — by the actor answering, or by its end (``callers``)."""
    if done.is_set() or running.finished.is_set():
        return
    running.callers.add(done)
    try:
        await done.wait()
    finally:
        running.callers.discard(done)


async def first_of(a: trio.Event, b: trio.Event) -> None:
    """Return as soon as either event is set."""
    if a.is_set() or b.is_set():
        return
    async with trio.open_nursery() as nursery:
        for event in (a, b):
            nursery.start_soon(_set_then_cancel, event, nursery.cancel_scope)


async def _set_then_cancel(event: trio.Event, scope: trio.CancelScope) -> None:
    await event.wait()
    scope.cancel()
