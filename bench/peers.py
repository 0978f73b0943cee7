"""Our read path beside a peer's: mem0's local ``Memory.search``, same embedder, same texts.

Install the peer (an optional extra; the package never depends on it), then run::

    .venv/bin/pip install -e '.[peers]'
    .venv/bin/python bench/peers.py                        # 1,000 and 10,000 rows
    .venv/bin/python bench/peers.py --sizes 1000 --queries 500 --blas-threads 1

What it measures, per size, in one process:

- The texts are ``seed_rows.make_rows(N)``'s (one persona, eight humans, six kinds). Both sides
  get the same texts and the same vectors' source: the project's default embedder
  (``compose.make_embedder`` on the default settings: the bundled WordLlama, 256-d).
- Queries: ``--queries`` topics (default 200, seed ``--seed``), each two clauses of seeded texts
  joined by "and", without the people tokens — shaped like the room topic of
  ``block_bench.py``. The same queries, in the same order, go to both sides.
- **mem0**: ``Memory.search(query, filters={"agent_id": "warren"})`` with mem0's defaults
  (``top_k=20``, ``threshold=0.1``; mem0 refuses a search without a user, agent or run id), on
  each of two local vector stores that need no server (``--stores``): ``qdrant``, mem0's
  default, in Qdrant's local mode on a path, and ``faiss``, a flat index with
  ``distance_strategy="cosine"``; the history in SQLite; everything in a temporary directory.
  Its embedder is ours: mem0 has no hook for a custom embedder class (``EmbedderFactory`` and
  ``EmbedderConfig`` accept a fixed list of providers), so the memory is configured with the
  ``openai`` provider and a dummy key (its client is built, never called) and then
  ``memory.embedding_model`` is replaced by ``WordLlamaForMem0``, a subclass of mem0's
  ``EmbeddingBase`` that calls ``embed_sync``. The rows go in through
  ``Memory.add(messages, agent_id="warren", infer=False)`` — one call, no model — before any
  timing (see ``load_mem0`` for faiss).
- **ours**: what the read path does for a room whose topic is the query, in-process and pure
  (no SQLite, no actor, no trio): embed the topic (``embed_sync``: no thread hop) and
  ``core.block.build_from_table`` over the ``RowTable`` that ``RowIndex.load`` prepares from
  the same rows, int8-quantised as the store keeps them. The room is ``block_bench.py``'s group
  room: four of the eight humans present, ``scope.v1_proven = false`` so personal rows load.
  The build also admits rows by the audience rule, ranks by recency, importance and relevance,
  and renders a block of at most 1,200 characters.

Each query is timed on every side back to back (the order rotates), with
``time.perf_counter``, after ``--warmup`` untimed queries; so both see the same load. The topic
embedding alone is timed too: both sides pay it. Loading is timed once, for reference only.

Nothing leaves the machine: ``MEM0_TELEMETRY=False`` and ``MEM0_DIR`` (a temporary directory)
are set before mem0 is imported, and an audit hook refuses every IP socket connect (loopback
too) and DNS lookup; the run fails at the end if anything tried, even if mem0 swallowed the
error. Without spaCy (mem0's ``nlp`` extra) mem0 neither lemmatises the query nor boosts
entities; without fastembed its Qdrant store has no BM25 (both log a warning at the first add).
So the mem0 figure is its dense path only: with them each search would also run spaCy and a
BM25 query, and mem0 would download their models on first use. No timing here is asserted.
"""

from __future__ import annotations

import os
import sys

if "--blas-threads" in sys.argv[:-1]:  # must be set before numpy loads OpenBLAS
    _threads = sys.argv[sys.argv.index("--blas-threads") + 1]
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_var] = _threads

import argparse
import gc
import platform
import random
import re
import socket
import tempfile
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Callable

import attrs
import numpy as np

from persona_memory import MemoryRow, UserControls, load_settings
from persona_memory.actors.row_index import RowIndex
from persona_memory.compose import block_rules, make_embedder
from persona_memory.core import ranking
from persona_memory.core.audience import Audience
from persona_memory.core.block import build_from_table
from persona_memory.embedding import quantize

from seed_rows import PERSONA, PRESENT, make_rows

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
NAMES = {1: "Dan", 2: "Cara", 3: "Nolan", 4: "Mei"}
MEM0_TOP_K = 20  # mem0's default
AUDIENCE = Audience(present=PRESENT, private=False, incognito=False)
CONTROLS = {uid: UserControls(user_id=uid, memory_note=f"Call me {NAMES[uid]}. I'm vegetarian.") for uid in PRESENT}
QUERY_SOURCE_ROWS = 1000  # queries come from the first 1,000 seeded texts: the same at every size

EMBED = "topic embedding alone (both pay it)"
BUILD = "ours: block build alone"
OURS = "ours: embed + block build"
MEM0 = "mem0 ({store}): Memory.search"


# ---- no network ----------------------------------------------------------------------------


class NetworkAttempt(RuntimeError):
    """Something in the benchmark's process tried to reach the network; the figures are void."""


REFUSED: list[str] = []


def forbid_network() -> None:
    """Refuse internet socket connects and DNS lookups for the rest of the process.

    Each refusal raises ``NetworkAttempt`` where it happens and is kept in ``REFUSED``, so a
    caller that swallows the error is still found out.
    """

    def hook(event: str, args: tuple) -> None:
        if event == "socket.connect" and args[0].family in (socket.AF_INET, socket.AF_INET6):
            REFUSED.append(f"connect to {args[1]!r}")
        elif event in ("socket.getaddrinfo", "socket.gethostbyname"):
            REFUSED.append(f"DNS lookup of {args[0]!r}")
        else:
            return
        raise NetworkAttempt(f"refused a {REFUSED[-1]}")

    sys.addaudithook(hook)


# ---- the same texts and vectors on both sides ----------------------------------------------


def our_rows(count: int, embedder) -> list[MemoryRow]:
    """``make_rows(count)`` with ids and the default embedder's int8 vectors, as the store keeps them."""
    rows = make_rows(count, now=NOW, dim=embedder.dim)
    vectors = embedder.embed_sync([r.text for r in rows])
    out = []
    for n, (row, vector) in enumerate(zip(rows, vectors), start=1):
        blob, scale = quantize(vector)
        out.append(attrs.evolve(row, id=n, embedding=blob, embedding_scale=scale, embedder=embedder.name))
    return out


def make_queries(count: int, seed: int) -> list[str]:
    """``count`` room topics: two clauses of seeded texts joined by "and", no people tokens."""
    texts = [r.text for r in make_rows(QUERY_SOURCE_ROWS, now=NOW, dim=8)]
    rng = random.Random(seed)

    def clause(text: str) -> str:
        head = re.split(r",| according to", text.rstrip("."), maxsplit=1)[0]
        return re.sub(r"\s+", " ", re.sub(r"\bu:\d+\b", "", head)).strip()

    return [f"{clause(rng.choice(texts))} and {clause(rng.choice(texts))}" for _ in range(count)]


# ---- mem0 ----------------------------------------------------------------------------------


STORES = ("qdrant", "faiss")


def open_mem0(tmp: Path, store: str, embedder):
    """A local mem0 ``Memory`` on ``store`` (no server) that embeds with ``embedder``.

    ``qdrant`` is mem0's default: Qdrant's local mode on a path. ``faiss``: a flat
    inner-product index with ``distance_strategy="cosine"``. The history goes to SQLite.
    """
    from mem0 import Memory
    from mem0.embeddings.base import EmbeddingBase

    class WordLlamaForMem0(EmbeddingBase):
        """mem0's embedder interface over ours: a list of floats per text, no thread hop."""

        def __init__(self, inner) -> None:
            super().__init__()
            self.config.embedding_dims = inner.dim
            self.inner = inner

        def embed(self, text, memory_action=None):
            return self.inner.embed_sync([text])[0].tolist()

        def embed_batch(self, texts, memory_action="add"):
            return self.inner.embed_sync(list(texts)).tolist()

    place = {"collection_name": PERSONA, "path": str(tmp / store), "embedding_model_dims": embedder.dim}
    if store == "faiss":
        place["distance_strategy"] = "cosine"
    memory = Memory.from_config(
        {
            "vector_store": {"provider": store, "config": place},
            # Built, never called: the embedder is replaced below and infer=False needs no LLM.
            "embedder": {"provider": "openai", "config": {"api_key": "unused", "embedding_dims": embedder.dim}},
            "llm": {"provider": "openai", "config": {"api_key": "unused"}},
            "history_db_path": str(tmp / f"{store}-history.db"),
        }
    )
    memory.embedding_model = WordLlamaForMem0(embedder)
    return memory


def load_mem0(memory, store: str, texts: list[str]) -> None:
    """Store ``texts`` through ``Memory.add(..., infer=False)``: one call, no model.

    mem0's faiss store rewrites its whole index and JSON docstore after every insert, which is
    quadratic in the rows; the save is deferred to one at the end (loading is not timed).
    """
    messages = [{"role": "user", "content": t} for t in texts]
    if store == "faiss":
        vs = memory.vector_store
        vs._save = lambda: None
        try:
            added = memory.add(messages, agent_id=PERSONA, infer=False)
        finally:
            del vs._save
        vs._save()
    else:
        added = memory.add(messages, agent_id=PERSONA, infer=False)
    assert len(added["results"]) == len(texts), f"mem0 stored {len(added['results'])} of {len(texts)} rows"


# ---- measuring -----------------------------------------------------------------------------


@attrs.define
class SizeResult:
    rows: int
    loads: dict[str, float] = attrs.field(factory=dict)
    samples: dict[str, list[float]] = attrs.field(factory=dict)
    returned: dict[str, tuple[list[int], list[int]]] = attrs.field(factory=dict)


def once(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def measure(
    size: int, embedder, rules, queries: list[str], warmup: int, stores: list[str], tmp: Path
) -> SizeResult:
    """Load ``size`` rows on each side, then time every query on each, back to back."""
    result = SizeResult(rows=size)
    rows = our_rows(size, embedder)

    index = RowIndex()
    result.loads["ours: RowIndex.load"], _ = once(lambda: index.load(1, rows))
    table = index.table

    def topic_of(query: str) -> ranking.Topic:
        return ranking.Topic(vector=embedder.embed_sync([query])[0], embedder=embedder.name)

    def build(topic: ranking.Topic):
        return build_from_table(
            PERSONA, AUDIENCE, table, controls=CONTROLS, topic=topic, names=NAMES, now=NOW, rules=rules
        )

    def ours(query: str) -> tuple[int, int]:
        block = build(topic_of(query))
        return len(block.loaded_ids), block.used

    sides: dict[str, Callable[[str], tuple[int, int]]] = {OURS: ours}
    memories = []
    for store in stores:
        memory = open_mem0(tmp / f"mem0-{size}", store, embedder)
        memories.append(memory)
        result.loads[f"mem0 ({store}): Memory.add(infer=False)"], _ = once(
            lambda: load_mem0(memory, store, [r.text for r in rows])
        )

        def search(query: str, memory=memory) -> tuple[int, int]:
            hits = memory.search(query, top_k=MEM0_TOP_K, filters={"agent_id": PERSONA})["results"]
            return len(hits), sum(len(h["memory"]) for h in hits)

        sides[MEM0.format(store=store)] = search

    for query in queries[:warmup]:
        for side in sides.values():
            side(query)

    result.samples = {EMBED: [], BUILD: [], **{name: [] for name in sides}}
    result.returned = {name: ([], []) for name in sides}
    names = list(sides)
    gc.collect()
    for i, query in enumerate(queries[warmup:]):
        topic = topic_of(query)
        result.samples[EMBED].append(once(lambda: topic_of(query))[0])
        result.samples[BUILD].append(once(lambda: build(topic))[0])
        for name in names[i % len(names) :] + names[: i % len(names)]:
            seconds, (items, chars) = once(lambda: sides[name](query))
            result.samples[name].append(seconds)
            result.returned[name][0].append(items)
            result.returned[name][1].append(chars)
    for memory in memories:
        memory.close()
    return result


# ---- reporting -----------------------------------------------------------------------------


def pct(samples: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples), q))


def fmt(seconds: float) -> str:
    if seconds >= 1.0:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.0f} µs"


def version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def report(results: list[SizeResult], args: argparse.Namespace, embedder_name: str) -> None:
    print("persona-memory read path beside mem0's local search (issue 8)")
    print(
        f"machine : {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, numpy {np.__version__}, "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'default')}; "
        f"load average {os.getloadavg()[0]:.2f} at the end"
    )
    print(
        f"peer    : mem0ai {version('mem0ai')}, qdrant-client {version('qdrant-client')}, "
        f"faiss-cpu {version('faiss-cpu')}; spaCy {version('spacy')}, fastembed {version('fastembed')}; "
        "telemetry off, network refused"
    )
    print(f"embedder: {embedder_name} on both sides (the project's default configuration)")
    print(
        f"queries : {args.queries} room topics (seed {args.seed}) after {args.warmup} untimed; "
        "each timed on every side back to back, the order rotating"
    )
    print(f"command : {' '.join([Path(sys.executable).name, *sys.argv])}")
    print()
    print("  ours = embed the topic + core.block.build_from_table over the prepared RowTable: audience")
    print("         rule, recency·importance·relevance ranking, diversity, take, render (≤ 1,200 chars)")
    print(f"  mem0 = Memory.search(query, top_k={MEM0_TOP_K}, filters={{'agent_id': ...}}): embed, vector")
    print("         search with the payload filter, threshold, scoring, a MemoryItem dict per hit")
    for r in results:
        ours50, ours95 = pct(r.samples[OURS], 50), pct(r.samples[OURS], 95)
        print()
        print(f"{r.rows:,} rows")
        print("  load, once (not in the figures): " + "; ".join(f"{k} {fmt(v)}" for k, v in r.loads.items()))
        for name, (items, chars) in r.returned.items():
            print(f"  returns: {name:<36} {np.mean(items):5.1f} items, {np.mean(chars):5.0f} chars on average")
        print(f"  {'per search':<40} {'p50':>9} {'p95':>9} {'p50 ÷ ours':>11} {'p95 ÷ ours':>11}")
        for name, samples in r.samples.items():
            p50, p95 = pct(samples, 50), pct(samples, 95)
            print(f"  {name:<40} {fmt(p50):>9} {fmt(p95):>9} {p50 / ours50:>10.2f}× {p95 / ours95:>10.2f}×")


# ---- main ----------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000], help="rows per run")
    parser.add_argument("--queries", type=int, default=200, help="timed queries per size (default 200)")
    parser.add_argument("--warmup", type=int, default=10, help="untimed queries first (default 10)")
    parser.add_argument("--seed", type=int, default=8, help="seed of the query draw (default 8)")
    parser.add_argument(
        "--stores", nargs="+", choices=STORES, default=list(STORES), help="mem0 vector stores (default both)"
    )
    parser.add_argument(
        "--blas-threads",
        metavar="N",
        help="set OPENBLAS_NUM_THREADS (and OMP/MKL) to N before numpy loads; default: leave as is",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    settings = load_settings(overrides={"scope.v1_proven": False})
    embedder = make_embedder(settings)
    rules = block_rules(settings)
    queries = make_queries(args.queries + args.warmup, args.seed)
    timed, warm = queries[args.warmup :], queries[: args.warmup]
    results = []
    with tempfile.TemporaryDirectory(prefix="pm-peers-") as tmp:
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ["MEM0_DIR"] = str(Path(tmp) / "mem0-home")
        forbid_network()
        for size in args.sizes:
            results.append(measure(size, embedder, rules, warm + timed, len(warm), args.stores, Path(tmp)))
            print(f"  done: {size:,} rows", file=sys.stderr)
    report(results, args, embedder.name)
    if REFUSED:
        raise NetworkAttempt(f"something tried to reach the network: {sorted(set(REFUSED))}")


if __name__ == "__main__":
    main()
