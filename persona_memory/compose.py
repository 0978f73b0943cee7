"""The composition root: the one place that turns settings into adapters."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

import attrs
import trio

from .core.block import BlockRules
from .core.ranking import Weights
from .core.recall import RecallRules
from .embedding import Embedder, HashingEmbedder, WordLlamaEmbedder
from .embedding.http import HttpEmbedder
from .embedding.wordllama import BundledWordLlama
from .minds.http import HttpMind
from .minds.offline import OfflineMind
from .minds.offline.processes import ReaderProcesses
from .minds.offline.slots import EnglishSlots
from .minds.port import Mind
from .providers import JsonEndpoint, RetryPolicy
from .settings import Settings
from .write.slot_reader import SlotReader

log = logging.getLogger(__name__)


def make_limiter(settings: Settings) -> trio.CapacityLimiter:
    """The one gate on HTTP requests in flight, shared by the mind, the embedder and all actors."""
    return trio.CapacityLimiter(settings.http.max_concurrent_requests)


def make_embedder(settings: Settings, limiter: trio.CapacityLimiter | None = None) -> Embedder:
    """The embedder ``[embedder]`` names: the bundled WordLlama (the process's one copy of its
    table), feature hashing, or HTTP."""
    e = settings.embedder
    match e.kind:
        case "wordllama":
            return WordLlamaEmbedder.shared(dim=e.dim)
        case "hashing":
            return HashingEmbedder(dim=e.dim)
        case "http":
            return HttpEmbedder(embedder_endpoint(settings, limiter), e.model, e.dim)
        case other:
            raise AssertionError(f"settings let through embedder kind {other!r}")


def make_mind(settings: Settings, limiter: trio.CapacityLimiter | None = None) -> Mind:
    """The mind ``[mind]`` names: the bundled offline reader, or any OpenAI-compatible model."""
    m = settings.mind
    match m.kind:
        case "offline":
            processes = None
            if m.offline_processes and ReaderProcesses.supported():
                processes = ReaderProcesses(m.offline_processes, warm=_worker_warm(settings))
            elif m.offline_processes:
                log.warning("mind.offline_processes = %d: worker processes need POSIX; the offline "
                            "mind reads on a thread", m.offline_processes)
            return OfflineMind(
                pronouns=m.pronouns, importance_min=settings.write.importance_min, processes=processes
            )
        case "http":
            return HttpMind(mind_endpoint(settings, limiter), m.model, m.response_format)
        case other:
            raise AssertionError(f"settings let through mind kind {other!r}")


def make_slot_reader() -> SlotReader:
    """What routing reads a row's slots with (where someone works, lives, …), whatever the
    mind: the offline reader's English grammar. An HTTP model's rows are English sentences
    too, and the rows a persona already holds were read with it."""
    return EnglishSlots()


def embedder_endpoint(
    settings: Settings, limiter: trio.CapacityLimiter | None = None, **kwargs: Any
) -> JsonEndpoint:
    """The http embedder's endpoint: ``[embedder]``'s URL and key, ``[http]``'s numbers.
    ``kwargs`` go to ``JsonEndpoint`` (a test's ``transport``)."""
    e = settings.embedder
    return JsonEndpoint.from_settings(
        e.base_url, e.api_key_env, settings.http, limiter or make_limiter(settings), **kwargs
    )


def mind_endpoint(
    settings: Settings, limiter: trio.CapacityLimiter | None = None, **kwargs: Any
) -> JsonEndpoint:
    """The http mind's endpoint: ``[mind]``'s URL and key, ``[http]``'s retries and connect
    timeout, and the mind's own deadline per call (``mind.timeout_seconds``), long enough for
    a local model's first call, which loads its weights. ``kwargs`` go to ``JsonEndpoint``."""
    m = settings.mind
    policy = RetryPolicy.from_settings(
        settings.http, timeout_seconds=m.timeout_seconds, timeout_key="mind.timeout_seconds"
    )
    return JsonEndpoint.from_settings(
        m.base_url, m.api_key_env, settings.http, limiter or make_limiter(settings), policy=policy, **kwargs
    )


def _worker_warm(settings: Settings) -> tuple[Callable[[], object], ...]:
    """What the offline reader's workers load before their first job: the bundled embedder's
    table, when it is the embedder (the slices' check embeds there: ``write.offloaded``)."""
    e = settings.embedder
    if e.kind == "wordllama":
        return (functools.partial(BundledWordLlama(e.dim), []),)
    return ()


def block_rules(settings: Settings) -> BlockRules:
    """The read path's numbers from ``[block]``, ``[ranking]`` and ``[scope]``."""
    r, b = settings.ranking, settings.block
    weights = Weights(
        recency=r.recency_weight,
        importance=r.importance_weight,
        relevance=r.relevance_weight,
        decay_per_day=r.recency_decay_per_day,
        lexical_share=r.lexical_share,
    )
    return BlockRules(
        char_limit=b.char_limit,
        per_human=b.per_human,
        per_kind_first=b.per_kind_first,
        riders_per_human=b.riders_per_human,
        weights=weights,
        topic_per_human=b.topic_per_human,
        topic_per_kind_first=b.topic_per_kind_first,
        topic_riders_per_human=b.topic_riders_per_human,
        topic_weights=attrs.evolve(
            weights, recency=r.topic_recency_weight, importance=r.topic_importance_weight
        ),
        v1_proven=settings.scope.v1_proven,
    )


def recall_rules(settings: Settings) -> RecallRules:
    """The recall note's numbers from ``[recall]``."""
    c = settings.recall
    return RecallRules(limit=c.limit, char_limit=c.char_limit, min_score=c.min_score)
