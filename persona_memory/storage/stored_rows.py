"""A persona's rows as the store read them, decoded column by column for the read path.

An actor's first load reads every row of its persona, but its first block needs only a few
columns of each (``core.table.RowColumns``); a ``MemoryRow`` per row — twenty fields set one
by one — is most of a load's cost and is needed only for the few rows a write or a touch
changes. So the rows stay as the tuples the database gave until one is asked for.

Rules:
- ``StoredRows`` is a sequence of ``MemoryRow`` (the same values ``MemoryRow.from_rows`` gives,
  in the same order); each is decoded the first time it is read, and kept.
- ``columns()`` decodes the open rows' columns in bulk, with the very values the rows would
  give: times through numpy when they are ``to_params``'s UTC text (else one by one, as
  ``from_row`` reads them); witness lists once per distinct text; every vector of one
  embedder with one ``np.frombuffer`` over its rows' joined bytes.
- ``open_rows()`` is the open rows by id as a mutable mapping whose values are decoded when
  read (``LazyRows``), so a copy of it costs a dict copy, not a decode.
"""

from __future__ import annotations

from typing import Any, Iterator, MutableMapping, Sequence, overload

import numpy as np

from ..core.table import RowColumns
from ..embedding.vectors import unit_rows
from ..rows import MemoryRow, stored_ids, stored_plan, stored_row, stored_time

UTC_SUFFIX = "+00:00"


class StoredRows(Sequence[MemoryRow]):
    """The rows of one ``SELECT *`` on ``persona_memory``, decoded when read (see the module)."""

    def __init__(self, names: Sequence[str], values: list[tuple[Any, ...]]) -> None:
        self._plan = stored_plan(names)
        self._at = {name: i for i, name in enumerate(names)}
        self._values = values
        self._rows: list[MemoryRow | None] = [None] * len(values)
        self._open_at: list[int] | None = None

    def __len__(self) -> int:
        return len(self._values)

    @overload
    def __getitem__(self, i: int) -> MemoryRow: ...
    @overload
    def __getitem__(self, i: slice) -> list[MemoryRow]: ...
    def __getitem__(self, i: int | slice) -> MemoryRow | list[MemoryRow]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        row = self._rows[i]
        if row is None:
            row = self._rows[i] = stored_row(self._values[i], self._plan)
        return row

    def __iter__(self) -> Iterator[MemoryRow]:
        return (self[i] for i in range(len(self)))

    def column(self, name: str) -> list[Any]:
        at = self._at[name]
        return [values[at] for values in self._values]

    def _open(self) -> list[int]:
        """Where the open rows are (``valid_to`` is null), in order."""
        if self._open_at is None:
            self._open_at = [i for i, gone in enumerate(self.column("valid_to")) if gone is None]
        return self._open_at

    def open_rows(self) -> LazyRows:
        """The open rows by id, each decoded when first read."""
        at = self._at["id"]
        return LazyRows({self._values[i][at]: self._values[i] for i in self._open()}, self._plan)

    def replaced(self) -> dict[int, MemoryRow]:
        """For an open row's id, the closed row it replaced (``closed_by``), decoded."""
        valid_to, closed_by = self.column("valid_to"), self.column("closed_by")
        return {by: self[i] for i, (gone, by) in enumerate(zip(valid_to, closed_by)) if gone is not None and by is not None}

    def evidence(self) -> list[tuple[int, tuple[int, ...]]]:
        """Each open row's id and the transcript lines it cites, for the rows that cite any."""
        ids, cited = self.column("id"), self.column("evidence")
        return [(ids[i], tuple(stored_ids(cited[i]))) for i in self._open() if cited[i] and cited[i] != "[]"]

    def columns(self) -> RowColumns:
        """The open rows as ``RowColumns``, the same values as ``RowColumns.from_rows`` of
        their ``MemoryRow`` values and decoded vectors."""
        keep = self._open()
        values = self._values
        if len(keep) != len(values):
            values = [values[i] for i in keep]
        at = self._at
        cols = list(zip(*values)) if values else [()] * len(at)
        ids = list(cols[at["id"]])
        witnessed: dict[str, frozenset[int]] = {}
        seen = []
        for text in cols[at["witnessed"]]:
            found = witnessed.get(text)
            if found is None:
                found = witnessed[text] = frozenset(stored_ids(text))
            seen.append(found)
        stamps = _stamps([last or made for last, made in zip(cols[at["last_recalled"]], cols[at["created"]])])
        return RowColumns(
            ids=ids,
            subjects=list(cols[at["subject"]]),
            counterparts=list(cols[at["counterpart"]]),
            witnessed=seen,
            kinds=list(cols[at["kind"]]),
            texts=list(cols[at["text"]]),
            valid_from=list(cols[at["valid_from"]]),
            importance=np.array(cols[at["importance"]], dtype=np.int64),
            stamps=stamps,
            vectors=_vectors(cols[at["embedding"]], cols[at["embedding_scale"]], cols[at["embedder"]]),
        )


def _stamps(texts: Sequence[str]) -> np.ndarray:
    """POSIX seconds of stored times, the very floats ``datetime.timestamp()`` gives: numpy
    reads ``to_params``'s UTC text (``…+00:00``) to the microsecond, and microseconds over
    10**6 round once, as ``timestamp()``'s integer division does."""
    if texts and all(t.endswith(UTC_SUFFIX) and len(t) in (25, 32) for t in texts):
        try:
            micros = np.array([t[:-6] for t in texts], dtype="datetime64[us]").astype(np.int64)
        except ValueError:
            pass
        else:
            return micros / 1e6
    return np.fromiter((stored_time(t).timestamp() for t in texts), np.float64, len(texts))


def _vectors(
    blobs: Sequence[bytes | None], scales: Sequence[float | None], embedders: Sequence[str | None]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per embedder, the positions of the rows with a whole vector (its bytes, scale and
    model; a row missing any has none, as ``from_row`` reads it) and their unit vectors."""
    names = _objects(embedders)
    whole = (_objects(blobs) != None) & (_objects(scales) != None) & (names != None)  # noqa: E711
    out = {}
    for name in dict.fromkeys(names[whole].tolist()):  # in the order they first occur
        positions = np.flatnonzero(whole & (names == name)).tolist()
        sizes = {len(blobs[p]) for p in positions}  # type: ignore[arg-type]
        if len(sizes) != 1:  # as a stack of the rows' vectors fails
            raise ValueError(f"the stored vectors of {name!r} differ in size: {sorted(sizes)}")
        q = np.frombuffer(b"".join([blobs[p] for p in positions]), dtype=np.int8)  # type: ignore[misc]
        scale = np.array([scales[p] for p in positions], dtype=np.float32)
        matrix = unit_rows(q.reshape(len(positions), -1).astype(np.float32) * scale[:, None])
        out[name] = (np.asarray(positions, dtype=np.int64), matrix)
    return out


def _objects(items: Sequence[object]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


class LazyRows(MutableMapping[int, MemoryRow]):
    """Rows by id, each kept as its stored tuple until read (then decoded, and kept)."""

    __slots__ = ("_items", "_plan")

    def __init__(self, items: dict[int, Any], plan: Any) -> None:
        self._items = items
        self._plan = plan

    def __getitem__(self, row_id: int) -> MemoryRow:
        item = self._items[row_id]
        if type(item) is tuple:
            item = self._items[row_id] = stored_row(item, self._plan)
        return item

    def __setitem__(self, row_id: int, row: MemoryRow) -> None:
        self._items[row_id] = row

    def __delitem__(self, row_id: int) -> None:
        del self._items[row_id]

    def __iter__(self) -> Iterator[int]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, row_id: object) -> bool:
        return row_id in self._items

    def keys(self):  # type: ignore[override]
        return self._items.keys()

    def copy(self) -> LazyRows:
        """A copy that decodes on its own (safe to hand to another thread)."""
        return LazyRows(dict(self._items), self._plan)
