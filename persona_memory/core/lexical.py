"""Lexical relevance: Okapi BM25 over the rows a room may show. Pure: no I/O.

Dense cosine finds rows that mean the same thing in other words; it is weak where the words
themselves matter — a name of a place, a pet, a product, a number. BM25 scores exactly those
shared words, so the read path uses both (``ranking`` fuses them).

Rules:
- Terms: the text lower-cased, split into ``[a-z0-9]+`` runs; ``u:`` ids, words of one
  letter and common function words (``STOP_WORDS``) are dropped; the rest are cut to a light
  stem (``stem``), so "interviews", "interviewed" and "interviewing" are one term; an
  irregular form of a common verb is read as its base first ("ran" → "run", "bought" → "buy").
- A row's terms are counted once, when its table is prepared (``LexicalIndex.from_texts``),
  from its text and what its transcript lines said (``table.searched``). The texts are cut
  into words all at once (``_words``: one byte table over the joined, lower-cased texts gives
  exactly the words ``terms`` finds in each), each distinct word is turned into a term once
  per process (``Vocabulary``), and the postings are counted with numpy, stored as one table
  of every term's rows (``Postings``) — no per-word Python work on a persona's load.
- BM25 (Robertson & Zaragoza 2009) with ``k1 = 1.2``, ``b = 0.75`` and the non-negative idf
  ``ln(1 + (N - df + 0.5) / (df + 0.5))``. ``N``, ``df`` and the average length are counted
  over the candidates only — the rows this room may show — so a row the room may not see
  never changes how the others score.
- A query's repeated terms count once; a term no candidate has scores nothing.
- What a term adds to each candidate depends on the candidates alone, not on the query it is in
  (its df and idf, the length terms): it is worked out once per set of candidates and term
  (``Counted.weighed``) and summed per query in the query's term order, so a cached term and a
  fresh one give the same bits.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from itertools import repeat
from typing import Iterable, Iterator, Mapping, Sequence

import attrs
import numpy as np

K1 = 1.2
B = 0.75

_WORD = re.compile(r"u:\d+|[a-z0-9]+")

STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself
    yourselves also get got ever really much many
    """.split()
)
"""English function words: articles, pronouns, prepositions, auxiliaries, conjunctions and a
few fillers. They say nothing about what a row is about."""

_SUFFIXES = ("ings", "ing", "ies", "ied", "ed", "es", "s")

_IRREGULAR = {
    form: base
    for base, forms in {
        "go": "went gone", "take": "took taken", "see": "saw seen", "make": "made", "come": "came",
        "give": "gave given", "find": "found", "feel": "felt", "leave": "left", "meet": "met",
        "buy": "bought", "sell": "sold", "tell": "told", "think": "thought", "know": "knew known",
        "run": "ran", "begin": "began begun", "write": "wrote written", "say": "said", "keep": "kept",
        "lose": "lost", "win": "won", "spend": "spent", "send": "sent", "build": "built", "pay": "paid",
        "bring": "brought", "teach": "taught", "catch": "caught", "fight": "fought", "hear": "heard",
        "hold": "held", "stand": "stood", "sit": "sat", "sleep": "slept", "drive": "drove driven",
        "ride": "rode ridden", "fly": "flew flown", "grow": "grew grown", "throw": "threw thrown",
        "draw": "drew drawn", "eat": "ate eaten", "drink": "drank drunk", "swim": "swam swum",
        "sing": "sang sung", "break": "broke broken", "choose": "chose chosen", "speak": "spoke spoken",
        "wake": "woke woken", "wear": "wore worn", "forget": "forgot forgotten", "become": "became",
        "fall": "fell fallen", "lend": "lent", "mean": "meant", "lead": "led", "feed": "fed",
        "dig": "dug", "hang": "hung", "shoot": "shot", "shake": "shook shaken", "steal": "stole stolen",
        "hide": "hid hidden", "child": "children", "man": "men", "woman": "women",
        # one word spelt two ways, or cut short in chat
        "favorite": "favourite favourites fave faves fav favs", "color": "colour colours",
        "neighbor": "neighbour neighbours", "center": "centre centres", "theater": "theatre theatres",
    }.items()
    for form in forms.split()
}
"""Irregular forms of common English verbs (and plurals), read as their base form, so "ran"
meets "run" and "bought" meets "buy": the stemmer only takes endings off. A word spelt the
British way or cut short in chat is read as one spelling, so "favourite" and "fave" meet
"favorite"."""


def stem(word: str) -> str:
    """A light stemmer: one inflection off, then a final ``y`` → ``i`` and a final ``e`` off.

    So "party"/"parties", "movie"/"movies", "hike"/"hiked"/"hiking" and "run"/"running" each
    meet in one stem. A stem keeps at least three letters; ``-ss``, ``-us`` and ``-is`` words
    keep their s ("class"), ``-eed`` words their ending ("speed"); numbers are left alone.
    """
    if word.isdigit() or len(word) <= 3:
        return word
    for suffix in _SUFFIXES:
        if not word.endswith(suffix) or len(word) - len(suffix) < 3:
            continue
        if suffix == "s" and word.endswith(("ss", "us", "is")):
            break
        if suffix == "ed" and word.endswith("eed"):
            break
        base = word[: -len(suffix)]
        if suffix in ("ies", "ied"):
            base += "i"
        elif suffix in ("ing", "ings", "ed") and len(base) > 3 and base[-1] == base[-2] and base[-1] not in "aeiouls":
            base = base[:-1]  # "running" → "run", but "falling" → "fall"
        word = base
        break
    if len(word) > 3 and word[-1] == "y":
        return word[:-1] + "i"
    if len(word) > 3 and word[-1] == "e":
        return word[:-1]
    return word


STEMS_KEPT = 65536
"""How many words' terms ``terms`` remembers (``_term_of``) before forgetting them all: a
chat's vocabulary repeats, and a word's term is a pure function of the word."""

_term_of: dict[str, str | None] = {}


def terms(text: str) -> list[str]:
    """The BM25 terms of ``text``, in order, repeats kept."""
    out = []
    known = _term_of
    for word in _WORD.findall(text.lower()):
        term = known.get(word, "")
        if term == "":
            if len(known) >= STEMS_KEPT:
                known.clear()
            term = known[word] = _term(word)
        if term is not None:
            out.append(term)
    return out


def _term(word: str) -> str | None:
    """The term of one of ``_WORD``'s words (``None``: it is not searched)."""
    if len(word) < 2 or word in STOP_WORDS or word.startswith("u:"):
        return None
    return stem(_IRREGULAR.get(word, word))


_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789:")
_BREAK = "\x01"
_SEPARATE = bytes(c if c in _WORD_BYTES or c == ord(_BREAK) else ord(" ") for c in range(256))
"""Bytes of the lower-cased UTF-8 text: the word bytes and ``_BREAK`` kept, all else a space.
A word of ``_WORD`` never spans another byte (every byte of a non-ASCII character is above
0x7f), so splitting there gives the runs ``_WORD`` reads one by one."""
_UNICODE_DIGIT_AFTER_ID = re.compile(r"u:[0-9]*(?![0-9])\d")
"""Where ``_WORD``'s ``u:\\d+`` would read on past the ASCII bytes (a digit of another script):
texts with one are cut by ``terms`` itself."""
NO_TERM, ROW_BREAK, SEVERAL, UNKNOWN = -1, -2, -3, -4


class Vocabulary:
    """Each run of word bytes seen (``_SEPARATE``) and what it counts as, as an int: a term's
    id (``terms``), ``NO_TERM``, ``ROW_BREAK``, or ``SEVERAL`` for a run holding more than one
    word (``12:30``), whose term ids are in ``several``. Ids are never reused: a vocabulary
    that grows past ``TOKENS_KEPT`` is replaced by a new one, not cleared, so a count under
    way keeps the one it started with. New runs are added under a lock (loads may run on
    several threads at once); reads take none."""

    def __init__(self) -> None:
        self.codes: dict[bytes, int] = {_BREAK.encode(): ROW_BREAK}
        self.terms: list[str] = []
        self.several: dict[bytes, tuple[int, ...]] = {}
        self._term_ids: dict[str, int] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.codes)

    def learn(self, runs: Iterable[bytes]) -> None:
        with self._lock:
            for run in runs:
                if run in self.codes:
                    continue
                found = [t for w in _WORD.findall(run.decode("ascii")) if (t := _term(w)) is not None]
                ids = tuple(self._term_id(t) for t in found)
                if len(ids) > 1:
                    self.several[run] = ids
                self.codes[run] = ids[0] if len(ids) == 1 else (NO_TERM if not ids else SEVERAL)

    def _term_id(self, term: str) -> int:
        found = self._term_ids.get(term)
        if found is None:
            found = self._term_ids[term] = len(self.terms)
            self.terms.append(term)
        return found


TOKENS_KEPT = 1 << 18
"""How many runs of word bytes a ``Vocabulary`` holds before the next count starts a new one."""
_vocabulary = Vocabulary()


def _counted_terms(texts: list[str]) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The terms of every text at once: ``(terms, term, row, count, lengths)`` — each
    (term, text) pair that occurs, sorted by term, then text (``terms[term[i]]`` is in text
    ``row[i]`` ``count[i]`` times), and each text's number of terms; ``None`` when the texts
    must be cut one by one (one of them holds ``_BREAK``, or a digit ``_WORD`` reads
    differently in bytes)."""
    global _vocabulary
    n = len(texts)
    joined = f" {_BREAK} ".join(texts).lower()
    if joined.count(_BREAK) != n - 1:
        return None
    if not joined.isascii() and _UNICODE_DIGIT_AFTER_ID.search(joined):
        return None
    runs = joined.encode().translate(_SEPARATE).split()
    vocabulary = _vocabulary
    if len(vocabulary) >= TOKENS_KEPT:
        vocabulary = _vocabulary = Vocabulary()
    codes_of = vocabulary.codes
    found = list(map(codes_of.get, runs, repeat(UNKNOWN, len(runs))))
    if UNKNOWN in found:  # each distinct new run is learned once, then all are read again
        vocabulary.learn(set(runs))
        found = list(map(codes_of.get, runs))
    codes = np.array(found, dtype=np.int64)
    rows = np.cumsum(codes == ROW_BREAK)
    kept = codes >= 0
    term_ids, term_rows = codes[kept], rows[kept]
    several = np.flatnonzero(codes == SEVERAL)
    if several.size:
        extra = [(t, r) for at, r in zip(several.tolist(), rows[several].tolist()) for t in vocabulary.several[runs[at]]]
        term_ids = np.concatenate([term_ids, np.array([t for t, _ in extra], dtype=np.int64)])
        term_rows = np.concatenate([term_rows, np.array([r for _, r in extra], dtype=np.int64)])
    lengths = np.bincount(term_rows, minlength=n).astype(np.float64)
    if several.size or len(vocabulary.terms) > np.iinfo(np.uint16).max:
        keys, counts = np.unique(term_ids * n + term_rows, return_counts=True)
        term, row = np.divmod(keys, n)
        return vocabulary.terms, term, row, counts, lengths
    # The rows are ascending in word order: a stable sort by term alone (a radix sort, on
    # 16 bits) leaves each term's rows ascending, and equal neighbours are one (term, row).
    order = np.argsort(term_ids.astype(np.uint16), kind="stable")
    term, row = term_ids[order], term_rows[order]
    first = np.ones(term.size, dtype=bool)
    first[1:] = (term[1:] != term[:-1]) | (row[1:] != row[:-1])
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, term.size))
    return vocabulary.terms, term[starts], row[starts], counts, lengths


@attrs.frozen(eq=False)
class Weighed:
    """What one term adds over one set of candidates: the candidates that hold it (their
    positions in the index, ascending, and their slots in the candidates' order), the BM25
    weight it gives each of them, and what it adds to a query's ceiling (``relevance``)."""

    positions: np.ndarray
    slots: np.ndarray
    weights: np.ndarray
    ceiling: float


EMPTY_SLOTS = np.zeros(0, dtype=np.int64)
EMPTY_WEIGHTS = np.zeros(0, dtype=np.float64)
WEIGHED_LIMIT = 4096
"""How many terms a ``Counted`` remembers what they add before forgetting all of them."""


@attrs.frozen(eq=False)
class Counted:
    """What BM25 counts over one set of candidates, whatever the query: the candidates, which
    texts they are (a mask over the index), their average length, and each candidate's length
    term ``k1 · (1 - b + b · length / average)``, in the candidates' order (``norms``; only
    candidates are ever weighed). ``LexicalIndex.over``.

    ``weighed`` remembers, per term, what it adds over these candidates (``Weighed``; ``None``
    for a term none of them holds): it depends on nothing but the index and the candidates.
    """

    positions: np.ndarray
    inside: np.ndarray
    average: float
    norms: np.ndarray
    weighed: dict[str, Weighed | None] = attrs.field(factory=dict, repr=False)
    _slots: list[np.ndarray] = attrs.field(factory=list, repr=False)

    def slot_of(self, positions: np.ndarray) -> np.ndarray:
        """Where each of ``positions`` (all candidates) stands in the candidates' order."""
        if not self._slots:
            slots = np.zeros(self.inside.size, dtype=np.int64)
            slots[self.positions] = np.arange(self.positions.size, dtype=np.int64)
            self._slots.append(slots)
        return self._slots[0][positions]


class Postings(Mapping[str, tuple[np.ndarray, np.ndarray]]):
    """``postings[term]``: ``(positions, counts)``, the texts that hold the term (ascending)
    and how often each does (float64). Every term's pair lies in two arrays laid term after
    term (``starts``: where each term's begins), sliced when asked for; ``changed`` holds the
    pairs of the terms changed since (``LexicalIndex.extended``), which win."""

    __slots__ = ("_at", "_starts", "_positions", "_counts", "_changed")

    def __init__(
        self,
        at: Mapping[str, int],
        starts: Sequence[int],
        positions: np.ndarray,
        counts: np.ndarray,
        changed: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
    ) -> None:
        self._at, self._starts, self._positions, self._counts = at, starts, positions, counts
        self._changed = changed or {}

    def __getitem__(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        found = self._changed.get(term)
        if found is not None:
            return found
        k = self._at[term]
        start, end = self._starts[k], self._starts[k + 1]
        return self._positions[start:end], self._counts[start:end]

    def __iter__(self) -> Iterator[str]:
        yield from self._at
        yield from (term for term in self._changed if term not in self._at)

    def __len__(self) -> int:
        return len(self._at) + sum(1 for term in self._changed if term not in self._at)

    def __contains__(self, term: object) -> bool:
        return term in self._changed or term in self._at

    def changed(self, pairs: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> Postings:
        """These postings with ``pairs`` in place of the terms' own (the arrays shared)."""
        return Postings(self._at, self._starts, self._positions, self._counts, {**self._changed, **pairs})


@attrs.frozen(eq=False)
class LexicalIndex:
    """Term postings over a sequence of texts, indexed by position; build with ``from_texts``.

    ``postings[term]`` is ``(positions, counts)``: the texts that hold the term (ascending)
    and how often each does; ``lengths[i]`` is text ``i``'s number of terms.
    """

    postings: Mapping[str, tuple[np.ndarray, np.ndarray]]
    lengths: np.ndarray

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> LexicalIndex:
        texts = list(texts)
        counted = _counted_terms(texts) if texts else None
        if counted is None:
            return cls.from_texts_one_by_one(texts)
        vocabulary, term, row, counts, lengths = counted
        firsts = np.flatnonzero(np.diff(term, prepend=-1)) if term.size else np.zeros(0, dtype=np.int64)
        names = [vocabulary[t] for t in term[firsts].tolist()]
        return cls(
            postings=Postings(
                dict(zip(names, range(len(names)))),
                [*firsts.tolist(), int(term.size)],
                row,
                counts.astype(np.float64),
            ),
            lengths=lengths,
        )

    @classmethod
    def from_texts_one_by_one(cls, texts: Iterable[str]) -> LexicalIndex:
        """``from_texts``, each text cut by ``terms`` alone (what ``from_texts`` equals)."""
        found: dict[str, tuple[list[int], list[int]]] = {}
        lengths: list[int] = []
        for pos, text in enumerate(texts):
            counts = Counter(terms(text))
            lengths.append(sum(counts.values()))
            for term, count in counts.items():
                positions, tallies = found.setdefault(term, ([], []))
                positions.append(pos)
                tallies.append(count)
        return cls(
            postings={
                t: (np.asarray(p, dtype=np.int64), np.asarray(c, dtype=np.float64))
                for t, (p, c) in found.items()
            },
            lengths=np.asarray(lengths, dtype=np.float64),
        )

    def __len__(self) -> int:
        return int(self.lengths.size)

    def extended(self, more: LexicalIndex) -> LexicalIndex:
        """This index with ``more``'s texts appended after its own."""
        base = len(self)
        changed = {}
        for term, (positions, counts) in more.postings.items():
            old = self.postings.get(term)
            if old is None:
                changed[term] = (positions + base, counts)
            else:
                changed[term] = (np.concatenate([old[0], positions + base]), np.concatenate([old[1], counts]))
        if isinstance(self.postings, Postings):
            postings: Mapping[str, tuple[np.ndarray, np.ndarray]] = self.postings.changed(changed)
        else:
            postings = {**self.postings, **changed}
        return LexicalIndex(postings=postings, lengths=np.concatenate([self.lengths, more.lengths]))

    def over(self, candidates: np.ndarray) -> Counted:
        """What BM25 counts over ``candidates``, for any number of queries over them."""
        inside = np.zeros(len(self), dtype=bool)
        inside[candidates] = True
        lengths = self.lengths[candidates]
        average = (float(lengths.mean()) if candidates.size else 0.0) or 1.0
        return Counted(candidates, inside, average, K1 * (1.0 - B + B * lengths / average))

    def scores(self, query: Sequence[str], candidates: np.ndarray) -> np.ndarray:
        """BM25 of every text against the ``query`` terms, counted over ``candidates``.

        Args:
            query: terms (``terms(text)``); repeats count once.
            candidates: the positions that may be scored (ascending or not); the rest score 0
                and do not count toward ``N``, ``df`` or the average length.

        Returns:
            One score per text (``len(self)``), 0 outside ``candidates``.
        """
        return self._bm25(query, self.over(candidates))[0]

    def relevance(self, query: Sequence[str], candidates: np.ndarray | Counted) -> np.ndarray:
        """``scores`` divided by the most ``query`` could score over ``candidates``: in [0, 1].

        The ceiling is each query term that a candidate holds, at its idf times ``k1 + 1``
        (the limit of a term's BM25 as its count grows); terms no candidate holds add nothing,
        so a question's names and filler words do not dilute the words it shares with rows.
        """
        counted = candidates if isinstance(candidates, Counted) else self.over(candidates)
        out, ceiling = self._bm25(query, counted)
        return out / ceiling if ceiling > 0 else out

    def candidate_relevance(self, query: Sequence[str], counted: Counted) -> np.ndarray:
        """``relevance(query, counted)[counted.positions]``, the same bits: one value per
        candidate, in the candidates' order, without a value for every text."""
        found, ceiling = self._weighed(query, counted)
        n = int(counted.positions.size)
        if not found:
            return np.zeros(n, dtype=np.float64)
        if len(found) == 1:
            slots, weights = found[0].slots, found[0].weights
        else:
            slots = np.concatenate([w.slots for w in found])
            weights = np.concatenate([w.weights for w in found])
        out = np.bincount(slots, weights=weights, minlength=n)
        return out / ceiling if ceiling > 0 else out

    def candidate_hits(self, query: Sequence[str], counted: Counted) -> tuple[np.ndarray, np.ndarray, float]:
        """``candidate_relevance`` before it is summed: the slots (in the candidates' order) of
        every candidate that holds a query term, term after term, the BM25 weight each term
        gives it there, and the query's ceiling. For a caller that needs a few candidates'
        relevance: ``np.bincount`` of a subset of the weights, divided by the ceiling, gives
        those candidates' values, the same bits."""
        found, ceiling = self._weighed(query, counted)
        if not found:
            return EMPTY_SLOTS, EMPTY_WEIGHTS, 0.0
        if len(found) == 1:
            return found[0].slots, found[0].weights, ceiling
        return (np.concatenate([w.slots for w in found]), np.concatenate([w.weights for w in found]), ceiling)

    def _bm25(self, query: Sequence[str], counted: Counted) -> tuple[np.ndarray, float]:
        """The scores of every text and the query's ceiling (see ``relevance``): the weights
        of the query's terms laid end to end, term after term, and summed per text in that
        order (so a text's score adds its terms up in query order)."""
        found, ceiling = self._weighed(query, counted)
        if not found:
            return np.zeros(len(self), dtype=np.float64), 0.0
        if len(found) == 1:
            positions, weights = found[0].positions, found[0].weights
        else:
            positions = np.concatenate([w.positions for w in found])
            weights = np.concatenate([w.weights for w in found])
        return np.bincount(positions, weights=weights, minlength=len(self)), ceiling

    def _weighed(self, query: Sequence[str], counted: Counted) -> tuple[list[Weighed], float]:
        """What each term of ``query`` (repeats once, in order) adds over ``counted``, for the
        terms some candidate holds, and the query's ceiling."""
        if not counted.positions.size or not query:
            return [], 0.0
        known = counted.weighed
        unique = dict.fromkeys(query)
        new = [term for term in unique if term not in known]
        if new:
            if len(known) + len(new) > WEIGHED_LIMIT:
                known.clear()
                new = list(unique)
            known.update(self._weigh(new, counted))
        found: list[Weighed] = []
        ceiling = 0.0
        for term in unique:
            weighed = known[term]
            if weighed is not None:
                found.append(weighed)
                ceiling += weighed.ceiling
        return found, ceiling

    def _weigh(self, new: list[str], counted: Counted) -> dict[str, Weighed | None]:
        """BM25's weight of each term in ``new`` for each candidate that holds it (``None``:
        none does), all terms in one pass: their postings laid end to end, term after term."""
        out: dict[str, Weighed | None] = dict.fromkeys(new)
        held = [(t, p) for t in new if (p := self.postings.get(t)) is not None]
        if not held:
            return out
        positions = np.concatenate([p for _, (p, _) in held])
        counts = np.concatenate([c for _, (_, c) in held])
        term = np.repeat(np.arange(len(held)), [p.size for _, (p, _) in held])
        inside = counted.inside[positions]
        positions, counts, term = positions[inside], counts[inside], term[inside]
        n = int(counted.positions.size)
        df = np.bincount(term, minlength=len(held))
        idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
        slots = counted.slot_of(positions)
        weights = idf[term] * counts * (K1 + 1.0) / (counts + counted.norms[slots])
        ends = np.cumsum(df).tolist()
        for k, ((name, _), found_in, weight) in enumerate(zip(held, df.tolist(), idf.tolist())):
            if found_in:
                start = ends[k] - found_in
                out[name] = Weighed(
                    positions[start:ends[k]], slots[start:ends[k]], weights[start:ends[k]], weight * (K1 + 1.0)
                )
        return out
