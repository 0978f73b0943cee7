"""Synthetic memory rows for the read-path benchmark: one persona, eight humans, six kinds.

Rules:
- Deterministic: the same ``seed`` and ``count`` give the same rows on every machine.
- Subjects: about 70 % are about one of ``HUMANS`` (u:1..u:8; the benchmark seats the first
  four), 15 % are the persona's own promises and open loops (``self``, with a counterpart
  among the eight), 15 % are ``world`` facts. Every one of the six kinds occurs.
- Importance is uniform over 1..10; ``created`` is uniform over the last ``DAYS`` days before
  ``now``; about a third of the rows were recalled since they were created.
- About 40 % of the rows about a human were witnessed by that human alone (they render with
  the ``confidence`` tag); the rest had one to three other witnesses.
- Texts are sentences of 40..200 characters over a small vocabulary, so the topic shares
  words with some rows and relevance varies.
- Vectors come from the ``embedder`` given (default ``HashingEmbedder(dim)``; the benchmark
  passes the bundled WordLlama), embedded in batches and stored int8-quantised, as the product
  stores them.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from persona_memory import MemoryRow
from persona_memory.embedding import HashingEmbedder, quantize

BATCH = 1000

PERSONA = "warren"
HUMANS = tuple(range(1, 9))
PRESENT = frozenset(HUMANS[:4])
DAYS = 180
TOPIC = "planning the weekend trip to Hangzhou and the job interview at Tencent"

_PERSONAL_KINDS = ("fact", "preference", "event", "relationship")
_SELF_KINDS = ("promise", "open_loop")
_WORLD_KINDS = ("fact", "event")

_SUBJECT_CLAUSES = (
    "{who} is interviewing at {place} for a backend role",
    "{who} prefers green tea over coffee in the morning",
    "{who} owns a flat in {place} near the river",
    "{who} runs along the lake every weekend before work",
    "{who} adopted a grey cat called Miso last spring",
    "{who} is learning to cook vegetarian dishes from {place}",
    "{who} and their sister are planning a trip to {place}",
    "{who} dislikes loud bars and prefers quiet tea houses",
    "{who} works night shifts at a hospital in {place}",
    "{who} is saving money for a wedding next autumn",
)
_SELF_CLAUSES = (
    "Warren promised {who} to send the recipe for the dumplings",
    "Warren still owes {who} an answer about the trip to {place}",
    "Warren promised to ask {who} how the interview at {place} went",
    "Warren and {who} left the chess game unfinished at move twenty",
)
_WORLD_CLAUSES = (
    "The tea festival in {place} opens on the first weekend of May",
    "Trains between Shanghai and {place} take about an hour",
    "The group agreed that Friday evenings are for board games",
    "Tencent interviews usually include a system design round",
)
_PLACES = ("Hangzhou", "Xuhui", "Suzhou", "Chengdu", "Tencent", "Lisbon", "Kyoto", "Berlin")
_TAILS = (
    "",
    ", and mentioned it twice",
    ", which matters a lot to them",
    " according to what was said in the group",
    ", and it came up again after the holidays when everyone was comparing plans for the summer",
)


def _text(rng: random.Random, clauses: tuple[str, ...], who: str) -> str:
    text = rng.choice(clauses).format(who=who, place=rng.choice(_PLACES)) + rng.choice(_TAILS) + "."
    return text[:200]


def make_rows(count: int, *, now: datetime, dim: int = 256, seed: int = 2, embedder=None) -> list[MemoryRow]:
    """``count`` open rows of ``PERSONA`` (see the module rules), with quantised vectors.

    ``embedder`` has ``embed_sync`` and ``name`` (``HashingEmbedder(dim)`` if ``None``).
    """
    rng = random.Random(seed)
    specs = []
    for n in range(count):
        roll = rng.random()
        uid = rng.choice(HUMANS)
        created = now - timedelta(seconds=rng.uniform(0, DAYS * 86400))
        recalled = None
        if rng.random() < 1 / 3:
            recalled = created + (now - created) * rng.random()
        spec = {
            "persona": PERSONA,
            "importance": rng.randint(1, 10),
            "created": created,
            "last_recalled": recalled,
            "recall_count": 0 if recalled is None else rng.randint(1, 5),
            "room_id": f"seed-{n % 50}",
        }
        if roll < 0.70:
            others = rng.sample([h for h in HUMANS if h != uid], k=rng.randint(1, 3))
            spec |= {
                "subject": f"u:{uid}",
                "kind": rng.choice(_PERSONAL_KINDS),
                "text": _text(rng, _SUBJECT_CLAUSES, f"u:{uid}"),
                "witnessed": {uid} if rng.random() < 0.4 else {uid, *others},
                "valid_from": rng.choice((None, None, "2025", "2025-11", "2026-02-14")),
            }
        elif roll < 0.85:
            spec |= {
                "subject": "self",
                "counterpart": f"u:{uid}",
                "kind": rng.choice(_SELF_KINDS),
                "text": _text(rng, _SELF_CLAUSES, f"u:{uid}"),
                "witnessed": {uid},
            }
        else:
            spec |= {
                "subject": "world",
                "kind": rng.choice(_WORLD_KINDS),
                "text": _text(rng, _WORLD_CLAUSES, "everyone"),
                "witnessed": set(rng.sample(HUMANS, k=rng.randint(1, 4))),
            }
        specs.append(spec)

    embedder = embedder or HashingEmbedder(dim)
    texts = [s["text"] for s in specs]
    vectors = [v for i in range(0, len(texts), BATCH) for v in embedder.embed_sync(texts[i : i + BATCH])]
    rows = []
    for spec, vector in zip(specs, vectors):
        blob, scale = quantize(vector)
        rows.append(MemoryRow(**spec, embedding=blob, embedding_scale=scale, embedder=embedder.name))
    return rows
