"""One persona's open rows as columns: what a block build needs, prepared once per load.

A block is built at every open, join and leave, but a persona's rows change far less often.
Everything that depends on a row alone is therefore computed here once, when the actor loads
its rows, so that a build only does the work that depends on the room. Pure: no I/O.

Rules:
- Only open rows enter the table; positions follow the order the rows were given, so ranking
  ties keep that order.
- Per row, once: whom it concerns (a user id, ``None`` for the world), its rendered line
  (``render_line``, with its ``confidence`` tag and the arc it replaced), that line's length,
  where its confidence tag starts and its length without it (``bare_lengths``: a private
  chat shows the line bare, ``shown_lines``), ``importance / 10``, the POSIX time recency
  counts from (``last_recalled``, else ``created``), its unit vector, stacked with the others
  of the same embedder, and the BM25 terms of its text and of what its transcript lines said
  (``searched``; ``lexical``).
- A table is prepared from its rows as columns (``RowColumns``): made from ``MemoryRow``
  values (``from_rows``), or by the store straight from what it read (``from_columns``;
  ``storage.stored_rows``), so a load of ten thousand rows builds no value per row. The work
  is per column where it can be: every text quoted in one pass (``render.quote_all``), lines
  without a tag written without a call, whom a row concerns worked out once per distinct
  subject and counterpart, the BM25 terms counted at once (``LexicalIndex.from_texts``).
- What the lines said is searched, never shown: the line the block renders is the row's
  text. A sentence is the speaker's words cut to one fact in the third person — "u:42
  watched a film about lighthouses" — and a question asks in the speaker's words ("the
  documentary with the storms?"), so the words of the line find the row its text alone
  would not. Rows whose lines are gone (or a table built without them) are searched by
  their text alone.
- A touch changes only where recency counts from: ``touched`` returns a table with new stamps.
- Each embedder's vectors are stacked group by group (whom the row concerns; rows of no group
  last), each group's span kept, so a room's product multiplies only the groups it may see;
  the rows ``extended`` appends form a tail after the groups, which every product reads.
- For a matryoshka embedder (``MATRYOSHKA``: its vectors' leading columns are an embedding of
  their own, as the bundled WordLlama's are), each matrix of more than ``HEAD_DIMS`` columns
  and at least ``HEADS_FROM`` rows also keeps its leading ``HEAD_DIMS`` columns as a contiguous
  matrix, each row scaled to unit norm there (``heads``; a smaller table never has enough
  candidates for two stages): the recall note's first stage reads a quarter of the bytes
  (``core.recall``). Other embedders' leading columns are no embedding of their own and say
  too little (a hashing embedder's two-stage note often differs from the exact one), so they
  get no head.
- A table never changes after it is made, so what it derives for a set of groups (``among``:
  their rows, their shortest line, BM25's counts and the importance term over them) is
  remembered on it; a load or a write starts a table with nothing remembered, a touch keeps
  what was (none of it depends on the stamps).
- The actor's own write changes a few rows: ``extended`` returns a table with the new rows
  appended (prepared as above) and the closed ones taken out of every group, without
  preparing the others again. Its matrices grow in place (``appended``): a table's matrix is
  a view of the first rows of a larger buffer, and the rows after them are written once, by
  the first table extended from it; so no table's rows ever change, and a write does not copy
  every vector. So do its per-row columns of objects (``ids``, ``kinds``, ``lines``,
  ``lengths``: tuples after a load, object arrays grown the same way after a write), so a
  write neither copies nor frees a reference per row. A closed row keeps its position until
  the next full load: it belongs to no group, so no build sees it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable, Iterable, Mapping, Sequence

import attrs
import numpy as np

from .. import ids
from ..rows import KINDS, MemoryRow
from .audience import NOBODY, row_key
from .blas import one_thread
from .lexical import Counted, LexicalIndex
from .ranking import Topic, normalise
from .selection import ALWAYS_RIDE
from .render import CONFIDENCE_TAG, TAGGED, quote_all, render_fields, without_confidence

EMPTY = np.zeros(0, dtype=np.int64)


def searched(row: MemoryRow, said: Mapping[int, str] | None) -> str:
    """What BM25 reads for ``row``: its text, then what its transcript lines said."""
    return _searched(row.text, said.get(row.id) if said and row.id is not None else None)


def _searched(text: str, heard: str | None) -> str:
    return f"{text}\n{heard}" if heard else text


@attrs.frozen(eq=False)
class RowColumns:
    """Open rows as columns, in the table's order: what ``RowTable.from_columns`` prepares.

    ``witnessed[i]`` is row ``i``'s witnesses; ``stamps[i]`` the POSIX time its recency counts
    from (``last_recalled``, else ``created``); ``vectors[embedder]`` is ``(positions,
    matrix)``: the rows with a vector of that embedder, ascending, and their unit vectors as
    rows of a float32 matrix. ``from_rows`` makes them from ``MemoryRow`` values; the store
    makes them straight from its columns (``storage.stored_rows``), without one.
    """

    ids: Sequence[int]
    subjects: Sequence[str]
    counterparts: Sequence[str | None]
    witnessed: Sequence[frozenset[int]]
    kinds: Sequence[str]
    texts: Sequence[str]
    valid_from: Sequence[str | None]
    importance: np.ndarray
    stamps: np.ndarray
    vectors: Mapping[str, tuple[np.ndarray, np.ndarray]]

    @classmethod
    def from_rows(cls, rows: Sequence[MemoryRow], vectors: Mapping[int, np.ndarray]) -> RowColumns:
        """``rows`` (all open, with ids) as columns; ``vectors``: unit vectors by row id (a row
        with none, or with no embedder, has no vector)."""
        spaces: dict[str, tuple[list[int], list[np.ndarray]]] = {}
        for pos, row in enumerate(rows):
            vector = vectors.get(row.id)  # type: ignore[arg-type]
            if vector is not None and row.embedder is not None:
                positions, stack = spaces.setdefault(row.embedder, ([], []))
                positions.append(pos)
                stack.append(vector)
        return cls(
            ids=[r.id for r in rows],  # type: ignore[misc]
            subjects=[r.subject for r in rows],
            counterparts=[r.counterpart for r in rows],
            witnessed=[r.witnessed for r in rows],
            kinds=[r.kind for r in rows],
            texts=[r.text for r in rows],
            valid_from=[r.valid_from for r in rows],
            importance=np.fromiter((r.importance for r in rows), np.int64, len(rows)),
            stamps=np.fromiter(((r.last_recalled or r.created).timestamp() for r in rows), np.float64, len(rows)),
            vectors={
                name: (np.asarray(p, dtype=np.int64), np.stack(v).astype(np.float32, copy=False))
                for name, (p, v) in spaces.items()
            },
        )


KIND_CODES = {kind: code for code, kind in enumerate(KINDS)}
SPLIT_FROM = 4096
"""A product over fewer vectors than this is one product over all of them: reading a few
hundred vectors more costs less than a product and a scatter per group. (Products over the
spans of a room's groups save little on a repeated open, but the first open after a write,
whose plan of spans is new, pays more for making it than it saves; and a span's product can
round a row's sum differently in the last bit.)"""
MEMO_LIMIT = 64
"""How many sets of groups a table remembers its rows for (``among``) before forgetting all."""
HEAD_DIMS = 64
"""The leading dimensions a head keeps (the recall note's first stage)."""
HEADS_FROM = 4096
"""Tables with fewer of an embedder's vectors keep no head for them (``core.recall`` ranks
exactly below this many candidates)."""
MATRYOSHKA = ("wordllama-",)
"""Name prefixes of the embedders whose vectors' leading ``HEAD_DIMS`` columns are an
embedding of their own (WordLlama's table is matryoshka-trained: ``embedding.wordllama``)."""


@attrs.frozen(eq=False)
class Among:
    """The rows of some groups of a table (``RowTable.among``): their positions ascending, the
    group of each (its index in the keys asked for), the shortest line among them, what BM25
    counts over them, their importance term (``ranking.normalise`` over them), where each
    group's rows lie once sorted by group (``segments[i]``: ``(start, end)`` of ``keys[i]``),
    and the longest line among them."""

    keys: tuple[int | None, ...]
    positions: np.ndarray
    labels: np.ndarray
    shortest: int
    counted: Counted
    importance: np.ndarray
    segments: tuple[tuple[int, int], ...] = ()
    longest: int = 0
    grouped: np.ndarray = EMPTY
    plans: dict[str, Gather] = attrs.field(factory=dict, repr=False)
    bare_shortest: int = 0  # the same two without the confidence tags (a private chat's lines)
    bare_longest: int = 0

    def shortest_line(self, private: bool) -> int:
        return self.bare_shortest if private else self.shortest

    def longest_line(self, private: bool) -> int:
        return self.bare_longest if private else self.longest


@attrs.frozen(eq=False)
class Gather:
    """How one embedder's cosines reach a set of candidates (``RowTable.candidate_cosine``):
    the matrix spans to multiply (``RowTable.cosine_at``'s, for the same groups), and for each
    candidate where its value lands in those products laid end to end — or ``missing``, the
    candidates with no vector in that space (their cosine is 0)."""

    spans: tuple[tuple[int, int], ...]
    rows: int
    at: np.ndarray
    missing: np.ndarray | None
    matrix_rows: np.ndarray  # each candidate's row in the matrix (any row for a missing one)
    lost: np.ndarray  # whether each candidate is missing


@attrs.frozen(eq=False)
class RowTable:
    """Columns over a persona's open rows, indexed by position; build with ``from_rows``.

    ``lengths`` is a tuple for per-item lookups and ``length_array`` the same as an array, for
    the shortest line among a room's candidates. ``spaces[embedder]`` is ``(positions,
    matrix)``: row ``i`` of the matrix is the unit vector of the row at ``positions[i]``; the
    matrix rows are laid out group by group (``slices[embedder]``: each group's ``(start,
    end)``, and where the rows appended since the load begin), so a room's product reads only
    the vectors of the groups it may see.
    """

    ids: Sequence[int]  # each of these four: a tuple after a load, an object array after a write
    kinds: Sequence[str]
    lines: Sequence[str]
    lengths: Sequence[int]
    length_array: np.ndarray
    confided_at: np.ndarray  # where each line's confidence tag starts; -1: it has none
    bare_lengths: Sequence[int]  # each line's length without that tag (a tuple, then an object array)
    bare_length_array: np.ndarray
    importance: np.ndarray
    stamps: np.ndarray
    by_about: Mapping[int | None, np.ndarray]
    spaces: Mapping[str, tuple[np.ndarray, np.ndarray]]
    position: Mapping[int, int]
    lexical: LexicalIndex
    kind_codes: np.ndarray
    rides: np.ndarray
    slices: Mapping[str, tuple[Mapping[int | None, tuple[int, int]], int]]
    heads: Mapping[str, np.ndarray] = attrs.field(factory=dict)
    rows_of: Mapping[str, np.ndarray] = attrs.field(factory=dict)  # position → matrix row, -1: none
    rooms: Mapping[object, Room] = attrs.field(factory=dict, repr=False)  # where matrices grow
    memo: dict[tuple[int | None, ...], Among] = attrs.field(factory=dict, repr=False)

    @classmethod
    def from_rows(
        cls,
        rows: Iterable[MemoryRow],
        vectors: Mapping[int, np.ndarray],
        replaced: Mapping[int, MemoryRow],
        said: Mapping[int, str] | None = None,
    ) -> RowTable:
        """Prepare ``rows`` (closed ones are left out).

        Args:
            vectors: unit vectors by row id (rows without one have relevance 0).
            replaced: for a row id, the closed row it replaced (its arc may be shown).
            said: for a row id, what its transcript lines said (searched, never shown).
        """
        open_rows = [r for r in rows if r.valid_to is None and r.id is not None]
        return cls.from_columns(RowColumns.from_rows(open_rows, vectors), replaced, said)

    @classmethod
    def from_columns(
        cls, columns: RowColumns, replaced: Mapping[int, MemoryRow], said: Mapping[int, str] | None = None
    ) -> RowTable:
        """Prepare open rows given as columns (``from_rows``'s arguments otherwise)."""
        n = len(columns.ids)
        row_ids = columns.ids
        groups: dict[tuple[str, str | None], int | None] = {}  # ``row_key`` of each (subject, counterpart)
        keys = []
        for pair in zip(columns.subjects, columns.counterparts):
            if pair not in groups:
                groups[pair] = row_key(*pair)
            keys.append(groups[pair])
        confidence = [  # ``told_in_confidence``: about a human, witnessed by that human alone
            key is not None and key != NOBODY and subject != ids.SELF and len(seen) == 1 and key in seen
            for key, subject, seen in zip(keys, columns.subjects, columns.witnessed)
        ]
        arcs = [replaced.get(i) for i in row_ids] if replaced else [None] * n
        quoted_texts = quote_all(columns.texts)
        lines = tuple(
            render_fields(text, kind, since, told, arc, quoted)
            if told or since or arc is not None or kind in TAGGED
            else f"- {quoted}"  # what ``render_fields`` gives a line with no tag
            for text, kind, since, told, arc, quoted in zip(
                columns.texts, columns.kinds, columns.valid_from, confidence, arcs, quoted_texts
            )
        )
        confided_at = np.fromiter(  # the tag follows "- " and the quoted text
            (len(quoted) + 2 if told else -1 for quoted, told in zip(quoted_texts, confidence)), np.int64, n
        )
        about: dict[int | None, list[int]] = {}
        for pos, key in enumerate(keys):
            if key != NOBODY:
                about.setdefault(key, []).append(pos)
        grouped = {name: _by_group(p, m, about) for name, (p, m) in columns.vectors.items()}
        heads = {name: _head(matrix) for name, (_, matrix, _) in grouped.items() if _keeps_head(name, matrix)}
        lengths = tuple(map(len, lines))
        length_array = np.array(lengths, dtype=np.int64) if n else np.zeros(0, dtype=np.int64)
        bare_length_array = length_array - len(CONFIDENCE_TAG) * (confided_at >= 0)
        texts = list(map(_searched, columns.texts, map(said.get, row_ids))) if said else list(columns.texts)
        kinds = tuple(columns.kinds)
        return cls(
            ids=tuple(row_ids),
            kinds=kinds,
            lines=lines,
            lengths=lengths,
            length_array=length_array,
            confided_at=confided_at,
            bare_lengths=tuple(bare_length_array.tolist()),
            bare_length_array=bare_length_array,
            importance=np.asarray(columns.importance, dtype=np.int64) / 10.0,
            stamps=np.asarray(columns.stamps, dtype=np.float64),
            by_about={k: np.asarray(v, dtype=np.int64) for k, v in about.items()},
            spaces={name: (positions, matrix) for name, (positions, matrix, _) in grouped.items()},
            slices={name: (groups_, len(positions)) for name, (positions, _, groups_) in grouped.items()},
            position=dict(zip(row_ids, range(n))),
            lexical=LexicalIndex.from_texts(texts),
            kind_codes=np.fromiter(map(KIND_CODES.__getitem__, kinds), np.int64, n),
            rides=np.fromiter((kind in ALWAYS_RIDE for kind in kinds), bool, n),
            heads=heads,
            rows_of={name: _rows_of(positions, n) for name, (positions, _, _) in grouped.items()},
        )

    def __len__(self) -> int:
        return len(self.ids)

    def shown_lines(self, private: bool) -> Callable[[int], str]:
        """Each line by position as a room shows it: in a private chat without its confidence
        tag (no one but the person it is about is there to keep it from)."""
        if not private:
            return self.lines.__getitem__
        lines, confided_at = self.lines, self.confided_at

        def bare(pos: int) -> str:
            at = int(confided_at[pos])
            return lines[pos] if at < 0 else without_confidence(lines[pos], at)

        return bare

    def shown_lengths(self, private: bool) -> Sequence[int]:
        """The lengths of ``shown_lines``, by position."""
        return self.bare_lengths if private else self.lengths

    def shown_length_array(self, private: bool) -> np.ndarray:
        return self.bare_length_array if private else self.length_array

    def about(self, key: int | None) -> np.ndarray:
        """Positions of the rows about user ``key`` (or the world, ``None``), ascending."""
        return self.by_about.get(key, EMPTY)

    def cosine(self, topic: Topic | None) -> np.ndarray:
        """Cosine of every row's vector to ``topic``; 0 where they cannot be compared."""
        out = np.zeros(len(self.ids), dtype=np.float64)
        if topic is None:
            return out
        space = self.spaces.get(topic.embedder)
        if space is not None:
            positions, matrix = space
            with one_thread(len(positions)):
                out[positions] = matrix @ topic.vector
        return out

    def among(self, keys: tuple[int | None, ...]) -> Among:
        """The rows about ``keys`` (user ids, ``None`` for the world), remembered per ``keys``:
        a pure function of this table, which never changes (only a new table does)."""
        known = self.memo.get(keys)
        if known is None:
            if len(self.memo) >= MEMO_LIMIT:
                self.memo.clear()
            known = self.memo[keys] = self._among(keys)
        return known

    def _among(self, keys: tuple[int | None, ...]) -> Among:
        parts = [self.about(k) for k in keys]
        if not parts:
            return Among(keys, EMPTY, EMPTY, 0, self.lexical.over(EMPTY), np.zeros(0))
        # Each row belongs to one group: mark each position with its group's index in ``keys``,
        # then read the marked ones in order (ascending, as a sort of the joined groups gives,
        # without the sort: the first open after a write makes this anew).
        codes = np.full(len(self), -1, dtype=np.int64)
        for n, part in enumerate(parts):
            codes[part] = n
        positions = np.flatnonzero(codes >= 0)
        labels = codes[positions]
        lengths = self.length_array[positions]
        shortest = int(lengths.min()) if positions.size else 0
        longest = int(lengths.max()) if positions.size else 0
        bare = self.bare_length_array[positions]
        bare_shortest = int(bare.min()) if positions.size else 0
        bare_longest = int(bare.max()) if positions.size else 0
        importance = normalise(self.importance[positions])
        ends = np.cumsum([part.size for part in parts]).tolist()
        segments = tuple((ends[n - 1] if n else 0, end) for n, end in enumerate(ends))
        counted = self.lexical.over(positions)
        grouped = np.searchsorted(positions, np.concatenate(parts))
        return Among(keys, positions, labels, shortest, counted, importance, segments, longest, grouped,
                     bare_shortest=bare_shortest, bare_longest=bare_longest)

    def cosine_at(self, topic: Topic, positions: np.ndarray, keys: Iterable[int | None] | None = None) -> np.ndarray:
        """``cosine(topic)[positions]``; with ``keys`` (the groups ``positions`` come from),
        only those groups' vectors, and the rows appended since the load, are multiplied."""
        space = self.spaces.get(topic.embedder)
        if space is None:
            return np.zeros(positions.size, dtype=np.float64)
        where, matrix = space
        spans = [(0, len(where))]
        if keys is not None and len(where) >= SPLIT_FROM:
            groups, tail = self.slices[topic.embedder]
            spans = _merged([*(groups[k] for k in keys if k in groups), (tail, len(where))])
        out = np.zeros(len(self.ids), dtype=np.float64)
        with one_thread(sum(end - start for start, end in spans)):
            for start, end in spans:
                out[where[start:end]] = matrix[start:end] @ topic.vector
        return out[positions]

    def candidate_cosine(self, topic: Topic, among: Among) -> np.ndarray:
        """``cosine_at(topic, among.positions, among.keys)``, the same bits: the same products,
        whose values are then taken straight to the candidates by a plan made once per set of
        candidates and embedder (``Gather``)."""
        space = self.spaces.get(topic.embedder)
        if space is None:
            return np.zeros(among.positions.size, dtype=np.float64)
        matrix = space[1]
        plan = self._plan(topic.embedder, among)
        if not plan.rows:
            return np.zeros(among.positions.size, dtype=np.float64)
        with one_thread(plan.rows):
            if len(plan.spans) == 1:
                start, end = plan.spans[0]
                products = matrix[start:end] @ topic.vector
            else:
                products = np.concatenate([matrix[start:end] @ topic.vector for start, end in plan.spans])
        out = products[plan.at].astype(np.float64)
        if plan.missing is not None:
            out[plan.missing] = 0.0
        return out

    def _gather(self, embedder: str, among: Among) -> Gather:
        where = self.spaces[embedder][0]
        spans = [(0, len(where))]
        if len(where) >= SPLIT_FROM:
            groups, tail = self.slices[embedder]
            spans = _merged([*(groups[k] for k in among.keys if k in groups), (tail, len(where))])
        rows = self.rows_of[embedder][among.positions]  # every candidate's row lies in a span
        lost = rows < 0
        missing = np.flatnonzero(lost) if lost.any() else None
        if missing is not None:
            rows = np.where(lost, 0, rows)
        at = rows
        if spans != [(0, len(where))] and spans:
            # where each matrix row's product lands once the spans' products are laid end to end
            shift = np.zeros(len(where), dtype=np.int64)
            offset = 0
            for start, end in spans:
                shift[start:end] = offset - start
                offset += end - start
            at = rows + shift[rows]
            if missing is not None:
                at[missing] = 0
        size = sum(end - start for start, end in spans)
        return Gather(tuple(spans), size, at, missing, rows, lost)

    def candidate_head_cosine(self, topic: Topic, among: Among) -> np.ndarray | None:
        """Each candidate's cosine to ``topic`` over the leading ``HEAD_DIMS`` dimensions alone
        (both vectors cut there, each at its own norm; 0 where there is no vector), as
        ``float32``: a quarter of ``candidate_cosine``'s bytes, for a first stage that only
        picks a shortlist. ``None`` when this embedder's vectors have no head.

        The spans' products are written end to end into one buffer and read out in the
        candidates' order: no joined copy, no second precision."""
        matrix = self.heads.get(topic.embedder)
        if matrix is None:
            return None
        query = topic.vector[:HEAD_DIMS]
        norm = float(np.sqrt(query @ query))
        plan = self._plan(topic.embedder, among)
        if not plan.rows or norm == 0.0:
            return np.zeros(among.positions.size, dtype=np.float32)
        query = query / np.float32(norm)
        products = np.empty(plan.rows, dtype=np.float32)
        with one_thread(plan.rows):
            offset = 0
            for start, end in plan.spans:
                np.matmul(matrix[start:end], query, out=products[offset:offset + end - start])
                offset += end - start
        out = products[plan.at]
        if plan.missing is not None:
            out[plan.missing] = 0.0
        return out

    def candidate_cosine_of(self, topic: Topic, among: Among, picks: np.ndarray) -> np.ndarray:
        """``candidate_cosine(topic, among)[picks]`` for a few candidates (indexes into
        ``among.positions``), from their own vectors: the same values to float rounding (a
        product's sum may round differently from one matrix layout to another)."""
        space = self.spaces.get(topic.embedder)
        if space is None or not picks.size:
            return np.zeros(picks.size, dtype=np.float64)
        plan = self._plan(topic.embedder, among)
        out = (np.take(space[1], plan.matrix_rows[picks], axis=0) @ topic.vector).astype(np.float64)
        if plan.missing is not None:
            out[plan.lost[picks]] = 0.0
        return out

    def _plan(self, embedder: str, among: Among) -> Gather:
        plan = among.plans.get(embedder)
        if plan is None:
            plan = among.plans[embedder] = self._gather(embedder, among)
        return plan

    def extended(
        self,
        rows: Iterable[MemoryRow],
        vectors: Mapping[int, np.ndarray],
        replaced: Mapping[int, MemoryRow],
        closed: Iterable[int],
        said: Mapping[int, str] | None = None,
    ) -> RowTable:
        """This table with ``rows`` (new, open) appended and the ``closed`` row ids gone."""
        new = RowTable.from_rows(rows, vectors, replaced, said)
        base = len(self)
        gone = np.fromiter((self.position[i] for i in closed if i in self.position), np.int64)
        about: dict[int | None, np.ndarray] = {}
        stays = None
        if gone.size:
            stays = np.ones(base, dtype=bool)
            stays[gone] = False
        for key in set(self.by_about) | set(new.by_about):
            old = self.by_about.get(key, EMPTY)
            if stays is not None:
                old = old[stays[old]]
            about[key] = np.concatenate([old, new.by_about.get(key, EMPTY) + base])
        spaces = dict(self.spaces)
        slices = dict(self.slices)
        rooms = dict(self.rooms)
        for name, (positions, matrix) in new.spaces.items():
            if name in spaces:  # appended after the groups: the tail every product reads
                old_positions, old_matrix = spaces[name]
                grown, rooms[name] = appended(old_matrix, self.rooms.get(name), matrix)
                spaces[name] = (np.concatenate([old_positions, positions + base]), grown)
            else:
                spaces[name] = (positions + base, matrix)
                slices[name] = new.slices[name]
        heads = {}
        for name, (_, matrix) in spaces.items():
            old_head = self.heads.get(name)
            if old_head is not None:  # the new rows' head only
                if matrix.shape[0] > old_head.shape[0]:
                    heads[name], rooms[("head", name)] = appended(
                        old_head, self.rooms.get(("head", name)), _head(matrix[old_head.shape[0]:])
                    )
                else:
                    heads[name] = old_head
            elif _keeps_head(name, matrix):
                heads[name] = _head(matrix)
        position = dict(self.position)
        position.update((row_id, pos + base) for row_id, pos in new.position.items())
        columns: dict[str, np.ndarray] = {}
        for column in ("ids", "kinds", "lines", "lengths", "bare_lengths"):
            columns[column], rooms[("column", column)] = _grown(
                getattr(self, column), self.rooms.get(("column", column)), getattr(new, column)
            )
        return RowTable(
            **columns,
            length_array=np.concatenate([self.length_array, new.length_array]),
            confided_at=np.concatenate([self.confided_at, new.confided_at]),
            bare_length_array=np.concatenate([self.bare_length_array, new.bare_length_array]),
            importance=np.concatenate([self.importance, new.importance]),
            stamps=np.concatenate([self.stamps, new.stamps]),
            by_about=about,
            spaces=spaces,
            position=position,
            lexical=self.lexical.extended(new.lexical),
            kind_codes=np.concatenate([self.kind_codes, new.kind_codes]),
            rides=np.concatenate([self.rides, new.rides]),
            slices=slices,
            heads=heads,
            rows_of={name: _rows_of(positions, base + len(new)) for name, (positions, _) in spaces.items()},
            rooms=rooms,
        )

    def touched(self, stamps: Mapping[int, datetime]) -> RowTable:
        """This table with recency counting from ``stamps[row id]`` for the rows named."""
        new = self.stamps.copy()
        for row_id, when in stamps.items():
            pos = self.position.get(row_id)
            if pos is not None:
                new[pos] = when.timestamp()
        return attrs.evolve(self, stamps=new)  # shares the memo: nothing in it reads the stamps


def _by_group(
    positions: np.ndarray, matrix: np.ndarray, about: Mapping[int | None, list[int]]
) -> tuple[np.ndarray, np.ndarray, dict[int | None, tuple[int, int]]]:
    """One space's positions (ascending) and matrix (row ``i``: the vector at
    ``positions[i]``) laid out group by group (in ``about``'s order, each ascending; rows of
    no group last), and each group's ``(start, end)`` in that layout."""
    where = np.asarray(positions, dtype=np.int64)
    size = int(where[-1]) + 1 if where.size else 0
    group_at = np.full(size, len(about), dtype=np.int64)
    for n, members in enumerate(about.values()):
        inside = np.asarray(members, dtype=np.int64)
        group_at[inside[inside < size]] = n
    codes = group_at[where]
    order = np.argsort(codes, kind="stable")  # positions ascending within a group
    ends = np.cumsum(np.bincount(codes, minlength=len(about) + 1)).tolist()
    groups = {key: (ends[n - 1] if n else 0, ends[n]) for n, key in enumerate(about)}
    return where[order], matrix[order], groups


@attrs.define(eq=False)
class Room:
    """A buffer a matrix grows in (``appended``), and how many of its rows are written."""

    buffer: np.ndarray
    filled: int


GROWTH = 1.25


def appended(matrix: np.ndarray, room: Room | None, rows: np.ndarray) -> tuple[np.ndarray, Room]:
    """``np.concatenate([matrix, rows])`` (the same values) and the room it lies in: written
    after ``matrix`` in its room's buffer when ``matrix`` is that buffer's whole written part
    (the newest table's) and the rows fit, else into a new buffer with room for ``GROWTH``
    times as many rows."""
    n, k = matrix.shape[0], rows.shape[0]
    if room is not None and room.filled == n and n + k <= room.buffer.shape[0]:
        room.buffer[n : n + k] = rows
        room.filled = n + k
        return room.buffer[: n + k], room
    buffer = np.empty((max(int((n + k) * GROWTH), n + k + 64), *matrix.shape[1:]), dtype=matrix.dtype)
    buffer[:n] = matrix
    buffer[n : n + k] = rows
    return buffer[: n + k], Room(buffer, n + k)


def _grown(column: Sequence[object], room: Room | None, more: Sequence[object]) -> tuple[np.ndarray, Room]:
    """``appended`` for a column of objects (a tuple from a load becomes an object array)."""
    if not isinstance(column, np.ndarray):
        column, room = _objects(column), None
    return appended(column, room, _objects(more))


def _objects(items: Sequence[object]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _keeps_head(name: str, matrix: np.ndarray) -> bool:
    return matrix.shape[0] >= HEADS_FROM and matrix.shape[1] > HEAD_DIMS and name.startswith(MATRYOSHKA)


def _rows_of(positions: np.ndarray, size: int) -> np.ndarray:
    """For each of ``size`` positions, its row in a matrix whose row ``i`` is ``positions[i]``
    (-1: none)."""
    rows = np.full(size, -1, dtype=np.int64)
    rows[positions] = np.arange(positions.size, dtype=np.int64)
    return rows


def _head(matrix: np.ndarray) -> np.ndarray:
    """A matrix's leading ``HEAD_DIMS`` columns, contiguous, each row scaled to unit norm there
    (a row that is 0 there stays 0)."""
    head = np.ascontiguousarray(matrix[:, :HEAD_DIMS], dtype=np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", head, head))
    inverse = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    return head * inverse[:, None]


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` (``(start, end)``, any order) without empty ones, touching ones joined."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if end <= start:
            continue
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
