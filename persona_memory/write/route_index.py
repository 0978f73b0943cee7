"""What routing needs of a persona's open rows, prepared once and kept as the rows change. Pure.

Routing a slice asks three things of every candidate: is there an open row saying exactly this
about the same subject, which open rows of that subject are close to it, and which fill the
same slot. Asked of the rows themselves that is a pass over every row per candidate; asked of
this index it is a dictionary lookup, one matrix product per slice, and another lookup.

Rules:
- The index holds one persona's open rows at one row ``version`` of the store (``None``: not
  known to match any). It is a value: ``applied`` returns a new index, and the arrays and
  mappings it shares with the old one are never written to, so a reader holding the old one
  is safe. Its mappings are ``Layered``: a slice's few changes go in a small layer over the
  shared base (so ``applied`` costs what changed, not what is there), folded into a new base
  once the layer has grown past a sixteenth of it.
- ``texts``: per subject and counterpart, the normalised text of each open row (the key of an
  exact duplicate, ``validation.normalise_text``) → the ids of the open rows saying it,
  ascending.
- ``slots``: per subject and counterpart, each slot an open row fills → the ids of the open
  rows filling it, ascending. Self and world rows fill no slot. The slots are what the index's
  ``reader`` (``write.slot_reader``) reads in each row's text; ``neighbours`` looks a
  candidate's up with the same reader, so the two always agree.
- ``spaces``: per embedder, chunks of float32 unit vectors with their row ids and a code of
  each row's subject and counterpart. A chunk may still hold rows closed since it was made;
  their ids are in ``dead`` and they are skipped. ``applied`` adds a chunk for the new
  rows; when there are more than ``MAX_CHUNKS`` it merges them into one. A merged matrix lies
  in a buffer with room after it (``core.table.appended``): a merge writes the small chunks'
  open rows after the first chunk's, which keeps the rows it closed since (still ``dead``,
  still skipped), so a merge costs what the small chunks hold, not every vector. Only when
  more than ``1 / DEAD_SHARE`` of the first chunk's rows are closed is it copied, compacted.
  Either way the open rows lie in the order the chunks hold them, and a row's cosine does not
  depend on the rows around it in the matrix (routing takes its products with
  ``core.row_products``, which computes every row alike wherever it lies), so routing offers
  what it would over the compacted rows.
- ``from_rows`` decodes the vectors itself, in one batch per dimension; ``from_spaces`` takes
  vectors already decoded (the read path's table), without copying them. Making one reads every
  row's slots, the costly part, so the actor hands the write path a ``RouteSource`` — a
  snapshot of what the index is made from — whose ``build`` is pure and runs on a worker
  thread. The write path gives ``build`` the reader (its own, from the composition root);
  ``applied`` keeps the index's.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

import attrs
import numpy as np

from .. import ids
from ..core.table import GROWTH, Room, appended
from ..embedding.vectors import unit_rows
from ..rows import MemoryRow
from .slot_reader import SlotReader
from .validation import normalise_text

MAX_CHUNKS = 8
DEAD_SHARE = 8
"""A merge compacts the first chunk (drops its closed rows) when more than one in this many
of its rows are closed; below that they stay, skipped by ``dead``, and the merge copies only
the small chunks' rows. (Compacting writes the whole chunk into a fresh buffer, whose page
faults cost many times what appending the small chunks' rows does.)"""

Pair = tuple[str, str | None]

_MISSING = object()
_GONE = object()


class Layered(Mapping):
    """A read-only mapping: a shared ``base`` dict under a small layer of changes (a value,
    or ``_GONE`` for a key taken out). ``updated`` returns a new one; neither is changed."""

    __slots__ = ("_base", "_top")

    def __init__(self, base: dict | None = None, top: dict | None = None) -> None:
        self._base = base if base is not None else {}
        self._top = top if top is not None else {}

    def get(self, key, default=None):
        value = self._top.get(key, _MISSING)
        if value is _MISSING:
            return self._base.get(key, default)
        return default if value is _GONE else value

    def __getitem__(self, key):
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def __contains__(self, key) -> bool:
        return self.get(key, _MISSING) is not _MISSING

    def __iter__(self):
        top = self._top
        for key in self._base:
            if key not in top:
                yield key
        for key, value in top.items():
            if value is not _GONE:
                yield key

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def updated(self, changes: dict) -> Layered:
        """This mapping with ``changes`` (``_GONE`` takes a key out)."""
        if not changes:
            return self
        top = {**self._top, **changes}
        if len(top) * 16 <= len(self._base):
            return Layered(self._base, top)
        base = dict(self._base)
        for key, value in top.items():
            if value is _GONE:
                base.pop(key, None)
            else:
                base[key] = value
        return Layered(base, {})


@attrs.frozen(eq=False)
class Chunk:
    """Unit vectors of one embedder (``matrix``, n × d float32), their row ids and pair codes;
    ``room``: the buffer a merged matrix lies in (``None`` for any other)."""

    ids: np.ndarray
    pairs: np.ndarray
    matrix: np.ndarray
    room: Room | None = None
    memo: dict = attrs.field(factory=dict, repr=False)  # what ``open_mask`` sorts, once

    def open_mask(self, dead: np.ndarray) -> np.ndarray:
        """``np.isin(self.ids, dead, invert=True)`` (a chunk's ids are distinct): a chunk is
        read by many slices, so its ids are sorted once and each slice looks up its few
        ``dead`` ids instead of testing every row."""
        known = self.memo.get("sorted")
        if known is None:
            order = np.argsort(self.ids, kind="stable")
            known = self.memo["sorted"] = (order, self.ids[order])
        order, ascending = known
        mask = np.ones(len(self.ids), dtype=bool)
        if dead.size and len(ascending):
            at = np.minimum(np.searchsorted(ascending, dead), len(ascending) - 1)
            mask[order[at[ascending[at] == dead]]] = False
        return mask


@attrs.frozen(eq=False)
class RouteIndex:
    """One persona's open rows as routing reads them (see the module rules)."""

    version: int | None
    rows: Layered  # row id -> open MemoryRow
    texts: Layered  # (subject, counterpart, normalised text) -> row ids, ascending
    slots: Layered  # (subject, counterpart, slot) -> row ids, ascending
    spaces: Mapping[str, tuple[Chunk, ...]]
    pairs: Mapping[Pair, int]
    reader: SlotReader  # what ``slots`` was read with, and a candidate's slots are read with
    dead: np.ndarray = attrs.field(factory=lambda: np.zeros(0, dtype=np.int64))  # ids in chunks, closed

    @classmethod
    def empty(cls, version: int | None = None, *, reader: SlotReader) -> RouteIndex:
        return cls(version, Layered(), Layered(), Layered(), {}, {}, reader)

    @classmethod
    def from_rows(cls, version: int | None, rows: Iterable[MemoryRow], *, reader: SlotReader) -> RouteIndex:
        """The index of the open ones of ``rows`` (with ids), their vectors decoded here, their
        slots read by ``reader``."""
        open_rows = [r for r in rows if r.valid_to is None and r.id is not None]
        return cls.empty(version, reader=reader)._with(open_rows, _decoded(open_rows), ())

    @classmethod
    def from_spaces(
        cls,
        version: int | None,
        rows: Mapping[int, MemoryRow],
        spaces: Mapping[str, tuple[Sequence[int], np.ndarray]],
        *,
        reader: SlotReader,
    ) -> RouteIndex:
        """The index of the open ``rows`` (by id), with their unit vectors already decoded:
        per embedder, the row id of each line of a float32 matrix. Ids not in ``rows`` (rows
        closed since) are kept in the chunk and skipped when read. The rows' slots are read
        by ``reader``."""
        pairs: dict[Pair, int] = {}
        chunks: dict[str, tuple[Chunk, ...]] = {}
        for name, (row_ids, matrix) in spaces.items():
            id_array = np.asarray(row_ids, dtype=np.int64)
            codes = np.fromiter(
                (_code(pairs, rows[i]) if i in rows else -1 for i in id_array.tolist()), np.int64, len(id_array)
            )
            chunks[name] = (Chunk(id_array, codes, matrix),)
        in_chunks = np.concatenate([c.ids for cs in chunks.values() for c in cs] or [np.zeros(0, np.int64)])
        dead = np.unique(in_chunks[np.fromiter((i not in rows for i in in_chunks.tolist()), bool, len(in_chunks))])
        index = cls(version, Layered(), Layered(), Layered(), chunks, pairs, reader, dead)
        return index._with(list(rows.values()), {}, (), vectors_known=True)

    def applied(
        self,
        added: Sequence[MemoryRow],
        closed: Iterable[int],
        version: int | None,
        unit_vectors: Mapping[int, np.ndarray] | None = None,
    ) -> RouteIndex:
        """This index with ``added`` (new open rows, with ids and their stored vectors) and
        without the ``closed`` row ids, at ``version``; ``unit_vectors``: the rows' vectors
        already decoded (by id, as ``_decoded`` gives them: the actor's table decoded them),
        so they are not decoded twice."""
        added = [r for r in added if r.valid_to is None and r.id is not None]
        vectors = _decoded(added) if unit_vectors is None else _stacked(added, unit_vectors)
        return attrs.evolve(self._with(added, vectors, tuple(closed)), version=version)

    def _with(
        self,
        added: Sequence[MemoryRow],
        vectors: Mapping[str, tuple[np.ndarray, np.ndarray]],
        closed: Sequence[int],
        *,
        vectors_known: bool = False,
    ) -> RouteIndex:
        row_changes: dict = {}
        text_changes: dict = {}
        slot_changes: dict = {}
        for row_id in closed:
            row = self.rows.get(row_id)
            if row is None or row_changes.get(row_id) is _GONE:
                continue
            row_changes[row_id] = _GONE
            _drop(self.texts, text_changes, _text_key(row), row_id)
            for slot in self._slots_of(row):
                _drop(self.slots, slot_changes, (row.subject, row.counterpart, slot), row_id)
        for row in sorted(added, key=lambda r: r.id):  # type: ignore[arg-type, return-value]
            assert row.id is not None
            row_changes[row.id] = row
            _add(self.texts, text_changes, _text_key(row), row.id)
            for slot in self._slots_of(row):
                _add(self.slots, slot_changes, (row.subject, row.counterpart, slot), row.id)
        rows = self.rows.updated(row_changes)
        texts = self.texts.updated(text_changes)
        slots = self.slots.updated(slot_changes)
        gone = [i for i, v in row_changes.items() if v is _GONE]
        dead = np.union1d(self.dead, np.asarray(gone, dtype=np.int64)) if gone else self.dead
        pairs = dict(self.pairs) if vectors else self.pairs
        spaces = dict(self.spaces)
        if not vectors_known:
            for name, (row_ids, matrix) in vectors.items():
                codes = np.fromiter((_code(pairs, rows[i]) for i in row_ids.tolist()), np.int64, len(row_ids))
                chunks = (*spaces.get(name, ()), Chunk(row_ids, codes, matrix))
                if len(chunks) > MAX_CHUNKS and len({c.matrix.shape[1] for c in chunks}) == 1:
                    chunks = (_merged(chunks, dead),)
                spaces[name] = chunks
        if dead.size and any(len(spaces[name]) == 1 and len(self.spaces.get(name, ())) > 1 for name in vectors):
            held = np.concatenate([c.ids for cs in spaces.values() for c in cs])
            dead = dead[np.isin(dead, held)]  # a merge dropped the closed rows it held
        return RouteIndex(self.version, rows, texts, slots, spaces, pairs, self.reader, dead)

    def pair_code(self, subject: str, counterpart: str | None) -> int | None:
        return self.pairs.get((subject, counterpart))

    def slots_of(self, subject: str, text: str) -> tuple[Hashable, ...]:
        """The slots a sentence about ``subject`` fills, as this index reads them: none for
        a self or world row, else what its ``reader`` reads in ``text``."""
        if subject in (ids.SELF, ids.WORLD):
            return ()
        return self.reader.slots(text)

    def _slots_of(self, row: MemoryRow) -> tuple[Hashable, ...]:
        return self.slots_of(row.subject, row.text)


@attrs.frozen(eq=False)
class RouteSource:
    """What a ``RouteIndex`` at ``version`` is made from: the open rows (a copy) and, per
    embedder, the row ids and unit vectors of a decoded matrix (never written to)."""

    version: int | None
    rows: Mapping[int, MemoryRow]
    spaces: Mapping[str, tuple[np.ndarray, np.ndarray]]

    def build(self, reader: SlotReader) -> RouteIndex:
        """The index, its rows' slots read by ``reader`` (pure: safe on a worker thread)."""
        return RouteIndex.from_spaces(self.version, self.rows, self.spaces, reader=reader)


def _held(mapping: Layered, changes: dict, key: object) -> tuple[int, ...]:
    held = changes.get(key, _MISSING)
    if held is _MISSING:
        return mapping.get(key, ())
    return () if held is _GONE else held


def _drop(mapping: Layered, changes: dict, key: object, row_id: int) -> None:
    held = tuple(i for i in _held(mapping, changes, key) if i != row_id)
    changes[key] = held if held else _GONE


def _add(mapping: Layered, changes: dict, key: object, row_id: int) -> None:
    changes[key] = (*_held(mapping, changes, key), row_id)


def _text_key(row: MemoryRow) -> tuple[str, str | None, str]:
    return (row.subject, row.counterpart, normalise_text(row.text))


def _code(pairs: dict[Pair, int], row: MemoryRow) -> int:
    return pairs.setdefault((row.subject, row.counterpart), len(pairs))


def _decoded(rows: Sequence[MemoryRow]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per embedder, the ids and unit vectors of ``rows`` that have a stored vector, decoded in
    one batch per embedder and dimension."""
    groups: dict[tuple[str, int], list[MemoryRow]] = {}
    for row in rows:
        if row.embedder is not None and row.embedding is not None and row.embedding_scale is not None:
            groups.setdefault((row.embedder, len(row.embedding)), []).append(row)
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for (name, dim), batch in groups.items():
        q = np.frombuffer(b"".join(r.embedding for r in batch), dtype=np.int8).reshape(len(batch), dim)  # type: ignore[misc]
        scales = np.array([r.embedding_scale for r in batch], dtype=np.float32)
        out[name] = (np.array([r.id for r in batch], dtype=np.int64), unit_rows(q.astype(np.float32) * scales[:, None]))
    return out


def _stacked(rows: Sequence[MemoryRow], unit_vectors: Mapping[int, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``_decoded(rows)`` from vectors decoded elsewhere (each row's unit vector by id; a
    row's normalisation does not depend on the rows decoded with it)."""
    groups: dict[tuple[str, int], list[MemoryRow]] = {}
    for row in rows:
        if row.embedder is not None and row.embedding is not None and row.embedding_scale is not None:
            groups.setdefault((row.embedder, len(row.embedding)), []).append(row)
    return {
        name: (np.array([r.id for r in batch], dtype=np.int64), np.stack([unit_vectors[r.id] for r in batch]))  # type: ignore[index]
        for (name, _), batch in groups.items()
    }


def _merged(chunks: Sequence[Chunk], dead: np.ndarray) -> Chunk:
    """One chunk of the rows of ``chunks`` (all of one dimension): the first chunk's rows, then
    the others' still open — those whose ids are not ``dead`` (the rows a chunk holds are open
    until closed, and then ``dead``); the first chunk's closed rows too are left out when they
    are more than ``1 / DEAD_SHARE`` of it."""
    row_ids = np.concatenate([c.ids for c in chunks])
    keep = np.isin(row_ids, dead, invert=True)
    first, size = chunks[0], len(chunks[0].ids)
    more = np.concatenate([c.matrix for c in chunks[1:]])[keep[size:]]
    if (size - int(np.count_nonzero(keep[:size]))) * DEAD_SHARE <= size:  # its closed rows stay, dead
        keep[:size] = True
        matrix, room = appended(first.matrix, first.room, more)
    else:  # compacted straight into a buffer with room after it
        kept = int(np.count_nonzero(keep[:size]))
        total = kept + len(more)
        buffer = np.empty((max(int(total * GROWTH), total + 64), first.matrix.shape[1]), dtype=first.matrix.dtype)
        np.compress(keep[:size], first.matrix, axis=0, out=buffer[:kept])
        buffer[kept:total] = more
        matrix, room = buffer[:total], Room(buffer, total)
    return Chunk(row_ids[keep], np.concatenate([c.pairs for c in chunks])[keep], matrix, room)
