"""Pushing the outbox to webhooks: one POST per event, signed, retried until it lands.

Rules:
- At least once: a webhook's cursor (``outbox_cursors``, keyed by its name) moves past an
  event only after the webhook answered it 2xx. A process killed between the commit and the
  delivery, or during it, delivers the event again when it starts: the same body, the same id
  in ``EVENT_ID_HEADER`` (the idempotency key), signed afresh with the time of sending.
- In order: one event at a time per webhook, oldest first. A webhook that keeps failing holds
  its own queue back (retried after ``retry_initial · 2^k`` seconds, at most ``retry_max``);
  the other webhooks and the memory carry on.
- A webhook gets only the kinds it lists; the rest are skipped (its cursor moves past them).
  Its body holds ids and switches; text about a person (the toast's words, a memory's text, a
  note) only when its ``include_text`` is true, read from the store as it is when the event
  is sent — text deleted since goes nowhere.
- Workers sharing one PostgreSQL each run the deliverers and share each webhook's cursor: a
  worker reads it before each batch and each retry, so it skips what another delivered; an
  event sent by two workers at once reaches the webhook twice, with the same id.
- ``run_webhooks`` is a supervised task: a deliverer that fails on something other than its
  webhook (the store) is restarted after a capped backoff, and cancellation passes through.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from datetime import timedelta
from functools import partial

import attrs
import httpx
import trio

from ..clock import WallClock
from ..errors import ConfigError
from ..settings import EventsSettings, Webhook
from ..storage.outbox import Outbox
from .kinds import Delivered
from .signing import EVENT_ID_HEADER, KIND_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signature

log = logging.getLogger(__name__)

BATCH = 100


@attrs.frozen
class Target:
    """A webhook with its secret read from the environment."""

    hook: Webhook
    secret: bytes = attrs.field(repr=False)

    @classmethod
    def all_from_env(cls, events: EventsSettings, environ: Mapping[str, str] | None = None) -> tuple["Target", ...]:
        """Every webhook of ``[events]`` with its secret.

        Raises:
            ConfigError: a webhook's ``secret_env`` names a variable that is unset or empty.
        """
        environ = os.environ if environ is None else environ
        out = []
        for i, hook in enumerate(events.webhooks):
            secret = environ.get(hook.secret_env, "")
            if not secret:
                raise ConfigError(
                    f"events.webhooks[{i}] ({hook.url}): the environment variable {hook.secret_env} "
                    "holds no secret; set it to the secret the receiver checks signatures with"
                )
            out.append(cls(hook, secret.encode()))
        return tuple(out)


def backoff(events: EventsSettings, failures: int) -> float:
    """Seconds to wait after the ``failures``-th failure in a row (1, 2, …)."""
    return min(events.retry_max_seconds, events.retry_initial_seconds * 2 ** min(failures - 1, 62))


async def deliver(client: httpx.AsyncClient, target: Target, body: bytes, delivered: Delivered, now: float) -> str | None:
    """POST one event's ``body``; ``None`` when the webhook took it (2xx), else why not."""
    timestamp = int(now)
    headers = {
        "Content-Type": "application/json",
        EVENT_ID_HEADER: str(delivered.id),
        KIND_HEADER: delivered.kind,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: signature(target.secret, timestamp, body),
    }
    try:
        response = await client.post(target.hook.url, content=body, headers=headers)
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}"
    if 200 <= response.status_code < 300:
        return None
    return f"HTTP {response.status_code}"


async def run_webhook(
    outbox: Outbox,
    target: Target,
    events: EventsSettings,
    clock: WallClock,
    client: httpx.AsyncClient,
    *,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Deliver the outbox to one webhook until cancelled; ``task_status`` gets its cursor."""
    hook = target.hook
    position = await outbox.cursor(hook.name)
    task_status.started(position)
    while True:
        position = max(position, await outbox.delivered_up_to(hook.name))  # another worker's progress
        batch = await outbox.after(position, BATCH)
        if not batch:
            await trio.sleep(events.poll_seconds)
            continue
        for one in batch:
            if one.kind in hook.kinds:
                texts = await outbox.texts_of(one.event) if hook.include_text else None
                body = one.body(texts)
                failures = 0
                while (why := await deliver(client, target, body, one, clock.now().timestamp())) is not None:
                    failures += 1
                    wait = backoff(events, failures)
                    log.warning("webhook %s did not take event %d (%s); trying again in %.1f s",
                                hook.name, one.id, why, wait)
                    await trio.sleep(wait)
                    if await outbox.delivered_up_to(hook.name) >= one.id:
                        break  # another worker delivered it meanwhile
            position = one.id
            if one.kind in hook.kinds or one is batch[-1]:
                await outbox.advance(hook.name, position)


async def run_webhooks(
    outbox: Outbox,
    events: EventsSettings,
    clock: WallClock,
    *,
    targets: tuple[Target, ...] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Deliver to every webhook of ``[events]`` until cancelled, each in its own supervised
    task, and every hour delete the delivered events older than ``keep_days`` (with no webhook,
    only that runs). Reports started once every webhook's cursor is in the store, so an event
    committed after that reaches it.

    Raises:
        ConfigError: a webhook's secret is missing from the environment (before anything runs).
    """
    targets = Target.all_from_env(events) if targets is None else targets
    names = [t.hook.name for t in targets]
    async with trio.open_nursery() as nursery:
        if targets:
            await nursery.start(partial(_deliver_to, outbox, targets, events, clock, transport))
        nursery.start_soon(_supervised, "the outbox's pruning", events,
                           lambda task_status: _prune(outbox, events, clock, names, task_status))
        task_status.started()


async def _deliver_to(
    outbox: Outbox,
    targets: tuple[Target, ...],
    events: EventsSettings,
    clock: WallClock,
    transport: httpx.AsyncBaseTransport | None,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """One supervised deliverer per webhook, sharing one HTTP client."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(events.timeout_seconds), transport=transport,
                                 follow_redirects=False) as client:
        async with trio.open_nursery() as nursery:
            for target in targets:
                await nursery.start(_supervised, f"the deliverer of webhook {target.hook.name}", events,
                                    lambda task_status, t=target: run_webhook(outbox, t, events, clock, client, task_status=task_status))
            task_status.started()


async def _prune(outbox: Outbox, events: EventsSettings, clock: WallClock, names: list[str], task_status: trio.TaskStatus) -> None:
    """Every hour, delete the events older than ``keep_days`` that every webhook has."""
    task_status.started()
    while True:
        gone = await outbox.prune(clock.now() - timedelta(days=events.keep_days), names)
        if gone:
            log.info("deleted %d delivered events older than %g days", gone, events.keep_days)
        await trio.sleep(3600)


async def _supervised(name: str, events: EventsSettings, run, *, task_status: trio.TaskStatus = trio.TASK_STATUS_IGNORED) -> None:  # type: ignore[no-untyped-def]
    """Run ``run(task_status=…)`` again and again: after a failure (an ``Exception``: the
    store broke) it waits ``backoff`` — reset once a run lasted ``retry_max_seconds`` — and
    starts it again. A failure before the first run started is raised (the memory does not
    open without its deliverers). Cancellation passes through."""
    failures = 0
    started = False
    while True:
        began = trio.current_time()
        try:
            if not started:
                async with trio.open_nursery() as nursery:
                    await nursery.start(run)
                    task_status.started()
                    started = True
            else:
                await run(task_status=trio.TASK_STATUS_IGNORED)
        except Exception:
            if not started:
                raise
            if trio.current_time() - began >= events.retry_max_seconds:
                failures = 0
            failures += 1
            wait = backoff(events, failures)
            log.exception("%s failed; it starts again in %.1f s", name, wait)
            await trio.sleep(wait)
