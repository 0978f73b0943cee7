"""A sentence that goes on about what the sentence before it said.

Chat tells one thing over several sentences: "I watched a film about lighthouses. It was all
storms and night rescues." The second sentence holds the detail a persona may be asked about
later, but alone it points at nothing ("It was all storms…"), so no row can be made of it. When
the sentence straight before it, in the same line, gave a row, the second joins that row as a
clause — its pointing word now has its referent beside it: "u:42 watched a film about
lighthouses; it was all storms and night rescues."

Rules:
- A sentence continues only when it gave no row of its own, and it *points back*: it opens on
  a pointing word (it, its, they, their, them, this, that, these, those, he, she, his, her, and
  their contractions), or its turned text has a pointing word with no referent in it
  (``references.dangling``), or it says what made "it" so ("All the noise made it hard to
  sleep": the nouns before "made it" are not what "it" is). A dummy "it" ("It's hard to…")
  points at nothing, a reaction ("That photo looks great", "It sounds fun")
  is about what the listener showed or said, and a fragment led by a gerund ("Definitely
  adding it to my list") has no subject to join with: none of them continues.
- Across a question: when the listener's line just before asks about the speaker's row by a
  pronoun ("I adopted two rabbits." — "What do they eat?"), or opens on a reaction to it by a
  pointer ("Here's the rug I wove!" — "That looks so warm!"), the first sentence of the answer
  may continue that row, the one from the speaker's line just before the question: "u:42
  adopted two rabbits; they eat mostly hay and carrots", and the answer's line is evidence too.
  The pronouns must agree: "they" needs a plural in the row ("two paintings"), "it" a thing
  after an article; "he" and "she" are never carried across. When that row has taken its
  clause already, an answer that opens on "they" to a question by "they" is a row of its own,
  its "they" named by the one plural the speaker's line named ("…left a mark on my nephews."
  — "How did they take it?" — "They were quiet." → "u:42's nephews were quiet.").
- A bare verdict on the row's thing ("It was really gripping.") joins nothing and says
  nothing, and leaves the row open: the sentence after it may still go on about the row.
- Otherwise it joins only the row made from the sentence straight before it in the same line, once: a
  row takes one continuing clause, and none when it holds a follow-up ("…and will report back"
  ends a row). A third sentence about the same thing is left out: one clause keeps more
  answers in the block than chains do (a chain's row crowds out other rows), and reads
  better.
- Not a question, not chatter, no words to the listener (any "you" — in chat "your dreams"
  is as often the listener as anyone), no wish or hypothetical, no display name.
- It must say something: at least two specific words (not stop words, not vague ones) —
  "It was awesome!" adds nothing a reader could use — and rate at least the importance bar on
  its own, so small talk ("can't wait to hear about it") never rides along.
- The joined row must not dangle (``references.dangling``): the pointing word needs a thing
  named in the row ("a film", "Dune", "their kayak"), not a whole clause ("u:42 applied to
  three agencies; it's a big decision" is left as its first half).
- The joined row stays within the row limit (``shape.LIMIT``); a sentence that would push it
  over joins with its first clause alone when that fits and still says something ("…; it was
  part of their summers for 15 years", not the "and it's so strange to think…" after it), and
  is left out otherwise.
- The clause is the sentence in the third person about its speaker (already named by the row),
  joined after a semicolon; its opening capital is lowered when it opens on a common word
  (``sentence_case``), and kept for a name or a title.
"""

from __future__ import annotations

import re

from ...text.folded import Folded
from .lexicon import STOPWORDS, VAGUE
from .references import dangling, opens_on_dummy_it
from .shape import LIMIT

_POINTS_BACK = re.compile(
    r"^(?:it|it's|its|they|they're|they've|they'd|their|them|this|that|that's|these|those|"
    r"he|he's|his|she|she's|her)\b",
    re.IGNORECASE,
)
_REACTION = re.compile(
    r"^(?:\w+\s+){1,3}(?:looks?|looked|sounds?|sounded|seems?|seemed)\b", re.IGNORECASE
)
_FRAGMENT = re.compile(r"^(?:[A-Za-z]+ly\s+)?[A-Za-z]+ing\b(?!\s+(?:is|was|has|makes|made)\b)")
# "All the laughter made it special": what was made so is no word of the sentence's own
_MADE_IT = re.compile(
    r"\b(?:made|makes|make|making)\s+it\s+(?!(?:to|through|home|out|up|back|happen|work|a point|clear|big)\b)",
    re.IGNORECASE,
)
_WISH = Folded(r"\b(?:I wish|if (?:I|we|only)|would have|imagine)\b", re.IGNORECASE)
_WORD = re.compile(r"u:\d+|[A-Za-z0-9]+(?:'[A-Za-z]+)?")

MIN_SPECIFIC = 2
"""Specific words a continuing sentence must carry (see the rules)."""


def points_back(sentence: str, turned: str) -> bool:
    """Whether ``sentence`` (as said) refers to something said before it: it opens on a
    pointing word, or its third-person form ``turned`` dangles — and it is neither a dummy
    "it" nor a reaction to what was shown."""
    said = sentence.lstrip(" \"'")
    if opens_on_dummy_it(said) or _REACTION.match(said) or _FRAGMENT.match(said):
        return False
    return bool(_POINTS_BACK.match(said)) or dangling(turned) or bool(_MADE_IT.search(said))


def may_continue(sentence: str) -> bool:
    """Whether ``sentence`` is the kind that can continue a row: no wish, enough to say."""
    if sentence.rstrip().endswith("?") or _WISH.search(sentence):
        return False
    return specific_words(sentence) >= MIN_SPECIFIC


def specific_words(text: str) -> int:
    words = [w.lower() for w in _WORD.findall(text) if not w.startswith("u:")]
    return sum(1 for w in words if w not in STOPWORDS and w not in VAGUE and not w.isdigit())


_CLAUSE_BREAK = re.compile(
    r"(?:,\s*|\s+)(?:and|but|so)\s+(?=(?:it|it's|its|they|they're|he|he's|she|she's|u:\d+|i|i'm|we|we're)\b)"
    r"|\s*;\s*|\s+-\s+",
    re.IGNORECASE,
)


def first_clause(clause: str) -> str | None:
    """``clause`` up to where a second clause of its own begins ("it was part of their summers
    for 15 years and it's strange to…" → "it was part of their summers for 15 years."), or
    ``None`` when it has no second clause."""
    cut = _CLAUSE_BREAK.search(clause)
    if cut is None or cut.start() == 0:
        return None
    return clause[: cut.start()].rstrip(" ,") + "."


def joined(row_text: str, clause: str) -> str | None:
    """``row_text`` with ``clause`` after a semicolon, or ``None`` when the result would not
    fit the row limit. ``clause`` is the turned sentence, end marks and all."""
    clause = clause.strip().rstrip(" .!;,")
    if not clause:
        return None
    if sentence_case(clause.split(" ", 1)[0]):
        clause = clause[0].lower() + clause[1:]
    text = f"{row_text.rstrip(' .!;,')}; {clause}."
    return text if len(text) <= LIMIT else None


def sentence_case(word: str) -> bool:
    """Whether an opening ``word`` has its capital only because it opens a sentence: a common
    word (a stop word, a vague word, an adverb in -ly, a gerund). A name or a title keeps it."""
    lowered = word.lower().split("'", 1)[0]  # "She's" opens on "she"
    if not word[:1].isupper() or word[1:2].isupper():
        return False
    return lowered in STOPWORDS or lowered in VAGUE or lowered.endswith(("ly", "ing"))
