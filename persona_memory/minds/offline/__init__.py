"""The offline mind: a deterministic, rule-based reader of transcripts (no network, no model).

Modules, one concept each:

- ``sentences`` — cutting a line into sentences; peeling greetings and addresses; chatter;
  lines that carry links or orders.
- ``person`` — first person to third ("I love hiking" → "u:42 loves hiking").
- ``dates`` — explicit and relative dates resolved against the line's time.
- ``kinds`` — plan, event, relationship, preference or fact, and importance 1..10.
- ``followups`` — "ask me how it went", "remind me to…".
- ``promises`` — the persona's own "I'll send you…".
- ``references`` — whether a row's "it", "this" or "there" points at something inside it;
  "those letters" → "the letters"; what a photo or the question before names.
- ``answers`` — a reply read with the line it answers: the thing it named, the question it asked.
- ``mentions`` — what a speaker's own line named (plurals, people) and a later "them",
  "her" or "there" named by it.
- ``identity`` — an answer whose "it" is named by what follows ("It's a map of…").
- ``shape`` — one sentence of at most 200 characters.
- ``stems`` — lexical likeness of two sentences.
- ``slots`` and ``states`` — which one-value slot a memory sentence fills (where someone works,
  lives, their relationship status, diet, …); ``slots.EnglishSlots`` is also the write path's
  slot reader (``write.slot_reader``), for every mind.
- ``lexicon`` — the closed word lists all of the above read English by.
- ``extract`` — call A; ``route`` — call B; ``mind`` — ``OfflineMind``, the port's adapter.
"""

from __future__ import annotations

from .extract import extract_memories
from .mind import OfflineMind
from .route import route_candidate

__all__ = ["OfflineMind", "extract_memories", "route_candidate"]
