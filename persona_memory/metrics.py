"""What ``/metrics`` exposes, in Prometheus text format (``prometheus_client``), per open memory.

Rules:
- Each open memory has its own registry (two memories in one process never mix counts).
- No label holds a persona, a user, a room or any text: the label values are closed sets
  (routing events, drop reasons, call names, error classes), so cardinality stays fixed and
  nothing personal leaves through the metrics.
- Latencies are ``LatencyHistogram``s: Prometheus's histogram format, with an ``observe`` cheap
  enough for the read path (a room's open times its build and its topic's embedding).
- Model and embedder calls are timed by wrapping the adapters (``TimedMind``,
  ``TimedEmbedder``) where ``open_memory`` composes them; what the write path did is counted
  from its reports (``observe_report``); the supervisor's live state (restarts, parked jobs,
  mailbox depth, live actors) is read at scrape time.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING, Any

import numpy as np
from prometheus_client import CollectorRegistry, Counter, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

if TYPE_CHECKING:
    from .embedding import Embedder
    from .minds.port import ExtractionRequest, Mind, RoutingRequest
    from .supervisor import Supervisor
    from .write.pipeline import WriteReport

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Why a candidate was dropped: the start of its reason (write.validation, write.guards,
# write.pipeline) and the label it is counted under. Anything else counts as "other".
DROP_REASONS = (
    ("secret", "secret"),
    ("order or authority claim", "order"),
    ("link or domain", "link"),
    ("role-play", "role_play"),
    ("names another user", "names_another_user"),
    ("third party's sensitive fact", "third_party_sensitive"),
    ("unsupported by its evidence", "unsupported"),
    ("no evidence line was said by", "not_said_by_subject"),
    ("evidence not said by or to", "not_said_to_subject"),
    ("a self memory", "self_source"),
    ("a candidate must be", "malformed_candidate"),
    ("routing refused", "routing_refused"),
    ("repeats another candidate", "duplicate_in_answer"),
    ("the answer was not", "malformed_answer"),
    ("importance", "importance"),
    ("evidence", "evidence"),
    ("subject", "subject"),
    ("kind", "kind"),
    ("text", "text"),
    ("valid_from", "valid_from"),
)
_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def drop_reason(reason: str) -> str:
    """The closed label for a drop's free-text reason."""
    lowered = reason.lower()
    for prefix, label in DROP_REASONS:
        if lowered.startswith(prefix):
            return label
    return "other"


class LatencySeries:
    """One histogram series: how many observations fell in each bucket, and their sum."""

    __slots__ = ("_bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self._bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last one: above every bound (+Inf)
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(self._bounds, seconds)] += 1  # a bucket holds what is <= its bound
        self.sum += seconds

    def time(self) -> _Stopwatch:
        """``with histogram.time():`` observes how long the block took."""
        return _Stopwatch(self.observe)


class LatencyHistogram(Collector):
    """A latency histogram in Prometheus's format (``_bucket``, ``_count``, ``_sum``), whose
    ``observe`` is a bisect and two additions.

    prometheus_client's ``Histogram`` takes a lock for its sum and another for the bucket,
    a visible share of a cold open's cost, as a cold open times several steps (its build and
    its topic's embedding): every observation here is made on the memory's event-loop thread,
    so there is nothing to lock against. A scrape reads the counts as they stand.
    """

    def __init__(
        self, name: str, documentation: str, labelnames: Sequence[str] = (), *,
        buckets: Sequence[float], registry: CollectorRegistry,
    ) -> None:
        self._name = name
        self._documentation = documentation
        self._labelnames = tuple(labelnames)
        self._bounds = tuple(sorted(float(b) for b in buckets))
        self._series: dict[tuple[str, ...], LatencySeries] = {}
        if not self._labelnames:
            self._series[()] = LatencySeries(self._bounds)
        registry.register(self)

    def labels(self, *values: str) -> LatencySeries:
        """The series of these label values (one per label name), made on first use."""
        if len(values) != len(self._labelnames):
            raise ValueError(f"{self._name} takes labels {self._labelnames}, got {values!r}")
        series = self._series.get(values)
        if series is None:
            series = self._series[values] = LatencySeries(self._bounds)
        return series

    def observe(self, seconds: float) -> None:
        """Observe on the histogram without labels."""
        self._series[()].observe(seconds)

    def time(self) -> _Stopwatch:
        return self._series[()].time()

    def describe(self) -> Iterator[HistogramMetricFamily]:
        yield HistogramMetricFamily(self._name, self._documentation, labels=self._labelnames)

    def collect(self) -> Iterator[HistogramMetricFamily]:
        family = HistogramMetricFamily(self._name, self._documentation, labels=self._labelnames)
        bounds = [floatToGoString(b) for b in self._bounds] + ["+Inf"]
        for values, series in list(self._series.items()):
            family.add_metric(list(values), list(zip(bounds, accumulate(series.counts))), series.sum)
        yield family


class _Stopwatch:
    def __init__(self, observe: Callable[[float], None]) -> None:
        self._observe = observe
        self._started = 0.0

    def __enter__(self) -> None:
        self._started = time.perf_counter()

    def __exit__(self, *_exc: object) -> None:
        self._observe(time.perf_counter() - self._started)


class Metrics:
    """The metrics of one open memory."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.routing = Counter("persona_memory_routing_outcomes", "Candidates routed, by event",
                               ["event"], registry=r)
        self.dropped = Counter("persona_memory_candidates_dropped", "Candidates dropped, by reason",
                               ["reason"], registry=r)
        self.notices = Counter("persona_memory_notices_posted", "Notices (toasts) posted", registry=r)
        self.slices = Counter("persona_memory_slices_written", "Write-path runs that wrote a slice", registry=r)
        self.parked = Counter("persona_memory_slices_parked", "Slices parked after their writer failed them",
                              registry=r)
        self.block_build = LatencyHistogram("persona_memory_block_build_seconds", "Building one block",
                                            buckets=_LATENCY_BUCKETS, registry=r)
        self.recall = LatencyHistogram("persona_memory_recall_seconds",
                                       "One recall note, from the call to the answer",
                                       buckets=_LATENCY_BUCKETS, registry=r)
        self.provider_seconds = LatencyHistogram("persona_memory_provider_call_seconds",
                                                 "Model and embedder calls", ["call"], buckets=_LATENCY_BUCKETS,
                                                 registry=r)
        self.provider_errors = Counter("persona_memory_provider_errors", "Model and embedder calls that failed",
                                       ["call", "error"], registry=r)
        self._supervisor: Supervisor | None = None
        r.register(_SupervisorCollector(lambda: self._supervisor))

    def watch(self, supervisor: Supervisor) -> None:
        """Read ``supervisor``'s live state at every scrape."""
        self._supervisor = supervisor

    def watch_cluster(self, owned: Callable[[], int], taken: Callable[[], int]) -> None:
        """A cluster worker's gauges, read at every scrape: the personas it owns now and the
        room events its inbox has taken since it started (``cluster/node.py``)."""
        self.registry.register(_ClusterCollector(owned, taken))

    def observe_report(self, report: WriteReport) -> None:
        for decision in report.decisions:
            self.routing.labels(decision.event.value).inc()
        for dropped in report.dropped:
            self.dropped.labels(drop_reason(dropped.reason)).inc()
        if report.posted is not None and not report.posted.replay:
            self.slices.inc()
            self.notices.inc(len(report.posted.notice_ids))
        if report.parked is not None:
            self.parked.inc()

    def timed(self, call: str) -> _Timed:
        return _Timed(self, call)

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _Timed:
    """``with metrics.timed("extract"):`` — the call's latency, and its error class if it fails."""

    def __init__(self, metrics: Metrics, call: str) -> None:
        self._metrics = metrics
        self._call = call
        self._started = 0.0

    def __enter__(self) -> None:
        self._started = time.perf_counter()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, _tb: Any) -> None:
        self._metrics.provider_seconds.labels(self._call).observe(time.perf_counter() - self._started)
        if kind is not None and issubclass(kind, Exception):
            self._metrics.provider_errors.labels(self._call, kind.__name__).inc()


class _SupervisorCollector(Collector):
    def __init__(self, supervisor: Callable[[], Supervisor | None]) -> None:
        self._supervisor = supervisor

    def collect(self) -> Iterator[GaugeMetricFamily]:
        supervisor = self._supervisor()
        if supervisor is None:
            return
        depths = supervisor.mailbox_depths()
        yield GaugeMetricFamily("persona_memory_live_actors", "Persona actors running", value=len(depths))
        yield GaugeMetricFamily("persona_memory_mailbox_depth", "Envelopes sent to actors and not yet handled",
                                value=sum(depths))
        yield GaugeMetricFamily("persona_memory_mailbox_depth_max", "The deepest actor mailbox",
                                value=max(depths, default=0))
        yield GaugeMetricFamily("persona_memory_writer_restarts", "Writer crashes restarted since open",
                                value=supervisor.restarts)
        yield GaugeMetricFamily("persona_memory_parked_jobs", "Poison jobs parked since open",
                                value=supervisor.parked_jobs)


class _ClusterCollector(Collector):
    def __init__(self, owned: Callable[[], int], taken: Callable[[], int]) -> None:
        self._owned = owned
        self._taken = taken

    def collect(self) -> Iterator[GaugeMetricFamily]:
        yield GaugeMetricFamily("persona_memory_cluster_owned_personas",
                                "Personas whose lease this worker holds now", value=self._owned())
        yield GaugeMetricFamily("persona_memory_cluster_events_taken",
                                "Room events this worker's inbox has taken since it started", value=self._taken())


class TimedMind:
    """A ``Mind`` whose calls are timed and counted (``extract``, ``route``)."""

    def __init__(self, mind: Mind, metrics: Metrics) -> None:
        self._mind = mind
        self._metrics = metrics

    async def extract(self, request: ExtractionRequest) -> Any:
        with self._metrics.timed("extract"):
            return await self._mind.extract(request)

    async def route(self, request: RoutingRequest) -> Any:
        with self._metrics.timed("route"):
            return await self._mind.route(request)

    @property
    def portable_extract(self) -> Callable[[ExtractionRequest], Callable[[], Any]] | None:
        """The wrapped mind's ``portable_extract`` (what runs in a worker is not timed here)."""
        return getattr(self._mind, "portable_extract", None)

    async def aclose(self) -> None:
        await self._mind.aclose()


class TimedEmbedder:
    """An ``Embedder`` whose calls are timed and counted (``embed``)."""

    def __init__(self, embedder: Embedder, metrics: Metrics) -> None:
        self._embedder = embedder
        self._metrics = metrics
        # The labelled series, found once: a room's topic and every recall note's message are
        # embedded on the read path.
        self._observe = metrics.provider_seconds.labels("embed").observe

    @property
    def name(self) -> str:
        return self._embedder.name

    @property
    def dim(self) -> int:
        return self._embedder.dim

    @property
    def portable(self) -> object | None:
        """The wrapped embedder's ``portable`` twin (its calls in a worker are not timed here)."""
        return getattr(self._embedder, "portable", None)

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        started = time.perf_counter()
        try:
            return await self._embedder.embed(texts)
        except Exception as exc:
            self._metrics.provider_errors.labels("embed", type(exc).__name__).inc()
            raise
        finally:
            self._observe(time.perf_counter() - started)

    async def aclose(self) -> None:
        await self._embedder.aclose()
