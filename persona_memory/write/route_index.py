"""What routing needs of a persona's open rows, prepared once and kept as the rows change. Pure.

Routing a slice asks three things of every candidate: is there an open row saying exactly this
about the same subject, which open rows of that subject are close to it, and which fill the
same slot. Asked of the rows themselves that is a pass over every row per candidate; asked of
this index it is a dictionary lookup, one matrix product per slice, and another lookup.

Rules:
- The index holds one persona's open rows at one row ``version`` of the store (``None``: not
  known to match any). It is a value: ``applied`` returns a new index, and the arrays it
  shares with the old one are never written to, so a reader holding the old one is safe.
- ``texts``: per subject and counterpart, the normalised text of each open row (the key of an
  exact duplicate, ``validation.normalise_text``) → the ids of the open rows saying it,
  ascending.
- ``slots``: per subject and counterpart, each slot an open row fills (``write.slots``) → the
  ids of the open rows filling it, ascending. Self and world rows fill no slot.
- ``spaces``: per embedder, chunks of float32 unit vectors with their row ids and a code of
  each row's subject and counterpart. A chunk may still hold rows closed since it was made;
  they are skipped by id (only ids in ``rows`` count). ``applied`` adds a chunk for the new
  rows; when there are more than ``MAX_CHUNKS`` it merges them into one, without closed rows.
- ``from_rows`` decodes the vectors itself, in one batch per dimension; ``from_spaces`` takes
  vectors already decoded (the read path's table), without copying them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import attrs
import numpy as np

from .. import ids
from ..embedding.vectors import unit_rows
from ..rows import MemoryRow
from .slots import Slot, readings
from .validation import normalise_text

MAX_CHUNKS = 8

Pair = tuple[str, str | None]


@attrs.frozen(eq=False)
class Chunk:
    """Unit vectors of one embedder (``matrix``, n × d float32), their row ids and pair codes."""

    ids: np.ndarray
    pairs: np.ndarray
    matrix: np.ndarray


@attrs.frozen(eq=False)
class RouteIndex:
    """One persona's open rows as routing reads them (see the module rules)."""

    version: int | None
    rows: Mapping[int, MemoryRow]
    texts: Mapping[tuple[str, str | None, str], tuple[int, ...]]
    slots: Mapping[tuple[str, str | None, Slot], tuple[int, ...]]
    spaces: Mapping[str, tuple[Chunk, ...]]
    pairs: Mapping[Pair, int]

    @classmethod
    def empty(cls, version: int | None = None) -> RouteIndex:
        return cls(version, {}, {}, {}, {}, {})

    @classmethod
    def from_rows(cls, version: int | None, rows: Iterable[MemoryRow]) -> RouteIndex:
        """The index of the open ones of ``rows`` (with ids), their vectors decoded here."""
        open_rows = [r for r in rows if r.valid_to is None and r.id is not None]
        return cls.empty(version)._with(open_rows, _decoded(open_rows), ())

    @classmethod
    def from_spaces(
        cls,
        version: int | None,
        rows: Mapping[int, MemoryRow],
        spaces: Mapping[str, tuple[Sequence[int], np.ndarray]],
    ) -> RouteIndex:
        """The index of the open ``rows`` (by id), with their unit vectors already decoded:
        per embedder, the row id of each line of a float32 matrix. Ids not in ``rows`` (rows
        closed since) are kept in the chunk and skipped when read."""
        pairs: dict[Pair, int] = {}
        chunks: dict[str, tuple[Chunk, ...]] = {}
        for name, (row_ids, matrix) in spaces.items():
            id_array = np.asarray(row_ids, dtype=np.int64)
            codes = np.fromiter(
                (_code(pairs, rows[i]) if i in rows else -1 for i in id_array.tolist()), np.int64, len(id_array)
            )
            chunks[name] = (Chunk(id_array, codes, matrix),)
        index = cls(version, {}, {}, {}, chunks, pairs)
        return index._with(list(rows.values()), {}, (), vectors_known=True)

    def applied(self, added: Sequence[MemoryRow], closed: Iterable[int], version: int | None) -> RouteIndex:
        """This index with ``added`` (new open rows, with ids and their stored vectors) and
        without the ``closed`` row ids, at ``version``."""
        added = [r for r in added if r.valid_to is None and r.id is not None]
        return attrs.evolve(self._with(added, _decoded(added), tuple(closed)), version=version)

    def _with(
        self,
        added: Sequence[MemoryRow],
        vectors: Mapping[str, tuple[np.ndarray, np.ndarray]],
        closed: Sequence[int],
        *,
        vectors_known: bool = False,
    ) -> RouteIndex:
        rows = dict(self.rows)
        texts = dict(self.texts)
        slots = dict(self.slots)
        for row_id in closed:
            row = rows.pop(row_id, None)
            if row is None:
                continue
            _drop(texts, _text_key(row), row_id)
            for slot in _slots_of(row):
                _drop(slots, (row.subject, row.counterpart, slot), row_id)
        for row in sorted(added, key=lambda r: r.id):  # type: ignore[arg-type, return-value]
            assert row.id is not None
            rows[row.id] = row
            key = _text_key(row)
            texts[key] = (*texts.get(key, ()), row.id)
            for slot in _slots_of(row):
                key3 = (row.subject, row.counterpart, slot)
                slots[key3] = (*slots.get(key3, ()), row.id)
        pairs = dict(self.pairs) if vectors else self.pairs
        spaces = dict(self.spaces)
        if not vectors_known:
            for name, (row_ids, matrix) in vectors.items():
                codes = np.fromiter((_code(pairs, rows[i]) for i in row_ids.tolist()), np.int64, len(row_ids))
                chunks = (*spaces.get(name, ()), Chunk(row_ids, codes, matrix))
                if len(chunks) > MAX_CHUNKS and len({c.matrix.shape[1] for c in chunks}) == 1:
                    chunks = (_merged(chunks, rows),)
                spaces[name] = chunks
        return RouteIndex(self.version, rows, texts, slots, spaces, pairs)

    def pair_code(self, subject: str, counterpart: str | None) -> int | None:
        return self.pairs.get((subject, counterpart))


def _drop(mapping: dict, key: object, row_id: int) -> None:
    held = tuple(i for i in mapping.get(key, ()) if i != row_id)
    if held:
        mapping[key] = held
    else:
        mapping.pop(key, None)


def _text_key(row: MemoryRow) -> tuple[str, str | None, str]:
    return (row.subject, row.counterpart, normalise_text(row.text))


def _slots_of(row: MemoryRow) -> tuple[Slot, ...]:
    if row.subject in (ids.SELF, ids.WORLD):
        return ()
    found: list[Slot] = []
    for reading in readings(row.text):
        if reading.slot not in found:
            found.append(reading.slot)
    return tuple(found)


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


def _merged(chunks: Sequence[Chunk], rows: Mapping[int, MemoryRow]) -> Chunk:
    """One chunk of the rows of ``chunks`` (all of one dimension) still open."""
    same = chunks
    row_ids = np.concatenate([c.ids for c in same])
    keep = np.fromiter((i in rows for i in row_ids.tolist()), bool, len(row_ids))
    return Chunk(
        row_ids[keep],
        np.concatenate([c.pairs for c in same])[keep],
        np.concatenate([c.matrix for c in same])[keep],
    )
