"""The webhook deliverer on virtual time, over a stand-in outbox and ``httpx.MockTransport``:
capped exponential backoff, and a deliverer that the store failed under starts again."""

from __future__ import annotations

from datetime import datetime, timezone

import attrs
import httpx
import pytest
import trio

from persona_memory import ManualClock, load_settings
from persona_memory.errors import StorageError
from persona_memory.events import ControlsChanged, Delivered
from persona_memory.events.webhooks import Target, run_webhooks
from persona_memory.settings import Webhook

NOW = datetime(2026, 8, 18, 12, 0, tzinfo=timezone.utc)
HOOK = Webhook("http://hooks.invalid/a", "UNUSED", frozenset({"controls.changed"}), name="a")
TARGET = Target(HOOK, b"secret")


@attrs.define
class OneEventOutbox:
    """The outbox as a deliverer sees it, holding one event; ``failures`` reads fail first."""

    failures: int = 0
    position: int = 0
    event: Delivered = Delivered(1, NOW, ControlsChanged(42, "memory_on", False))

    async def cursor(self, name: str) -> int:
        return self.position

    async def after(self, after: int, limit: int) -> list[Delivered]:
        if self.failures:
            self.failures -= 1
            raise StorageError("the database is restarting")
        return [self.event] if after < self.event.id else []

    async def delivered_up_to(self, name: str) -> int:
        return self.position

    async def advance(self, name: str, to_id: int) -> None:
        self.position = max(self.position, to_id)

    async def texts_of(self, event: object) -> None:
        return None

    async def prune(self, before: datetime, names: list[str]) -> int:
        return 0


def events_settings(**numbers: float):
    values = {"retry_initial_seconds": 1.0, "retry_max_seconds": 4.0, "poll_seconds": 0.5, **numbers}
    return load_settings(None, {f"events.{k}": v for k, v in values.items()}).events


async def deliver_until_taken(outbox: OneEventOutbox, answers: list[int], events) -> list[float]:
    """Run the deliverer until the webhook took the event; the virtual times of each POST."""
    times: list[float] = []
    taken = trio.Event()

    def answer(request: httpx.Request) -> httpx.Response:
        times.append(trio.current_time())
        status = answers.pop(0) if answers else 200
        if status == 200:
            taken.set()
        return httpx.Response(status)

    async with trio.open_nursery() as nursery:
        await nursery.start(lambda task_status: run_webhooks(
            outbox, events, ManualClock(NOW), targets=(TARGET,), transport=httpx.MockTransport(answer),
            task_status=task_status))
        await taken.wait()
        nursery.cancel_scope.cancel()
    return times


async def test_a_failing_webhook_is_retried_after_doubling_waits_that_stop_at_the_cap(autojump_clock):
    outbox = OneEventOutbox()
    start = trio.current_time()
    times = await deliver_until_taken(outbox, [500, 502, 503, 500, 500], events_settings())
    assert [t - start for t in times] == [0.0, 1.0, 3.0, 7.0, 11.0, 15.0]  # waits 1, 2, 4, 4, 4
    assert outbox.position == 1


async def test_a_deliverer_the_store_failed_under_starts_again_and_delivers(autojump_clock, caplog):
    outbox = OneEventOutbox(failures=2)
    start = trio.current_time()
    times = await deliver_until_taken(outbox, [], events_settings())
    assert [t - start for t in times] == [3.0]  # restarted after 1 s, then after 2 s
    assert outbox.position == 1
    assert [r.getMessage() for r in caplog.records] == [
        "the deliverer of webhook a failed; it starts again in 1.0 s",
        "the deliverer of webhook a failed; it starts again in 2.0 s"]


async def test_a_kind_the_webhook_did_not_ask_for_is_passed_over_without_a_request(autojump_clock):
    outbox = OneEventOutbox(event=Delivered(1, NOW, ControlsChanged(42, "note")))
    hook = attrs.evolve(HOOK, kinds=frozenset({"memory.noted"}))
    asked: list[httpx.Request] = []

    async with trio.open_nursery() as nursery:
        await nursery.start(lambda task_status: run_webhooks(
            outbox, events_settings(), ManualClock(NOW), targets=(Target(hook, b"secret"),),
            transport=httpx.MockTransport(lambda r: asked.append(r) or httpx.Response(200)), task_status=task_status))
        await trio.testing.wait_all_tasks_blocked()
        nursery.cancel_scope.cancel()
    assert asked == [] and outbox.position == 1


@pytest.mark.parametrize("missing", ["", None])
def test_a_webhook_secret_must_be_in_the_environment(missing):
    from persona_memory.errors import ConfigError

    settings = load_settings(None, {"events.webhooks": [{"url": "http://x/a", "secret_env": "PM_HOOK"}]}).events
    environ = {} if missing is None else {"PM_HOOK": missing}
    with pytest.raises(ConfigError, match="PM_HOOK"):
        Target.all_from_env(settings, environ)
    (target,) = Target.all_from_env(settings, {"PM_HOOK": "s3cret"})
    assert target.secret == b"s3cret" and "s3cret" not in repr(target)


async def test_an_event_another_worker_delivered_is_not_sent_again(autojump_clock):
    outbox = OneEventOutbox()
    asked: list[httpx.Request] = []

    async with trio.open_nursery() as nursery:
        await nursery.start(lambda task_status: run_webhooks(
            outbox, events_settings(), ManualClock(NOW), targets=(TARGET,),
            transport=httpx.MockTransport(lambda r: asked.append(r) or httpx.Response(500)), task_status=task_status))
        await trio.testing.wait_all_tasks_blocked()
        assert len(asked) == 1  # failed: waits 1 s before trying again
        outbox.position = 1  # meanwhile another worker sharing the store delivered it
        await trio.sleep(10)
        nursery.cancel_scope.cancel()
    assert len(asked) == 1  # no retry of what the webhook has
