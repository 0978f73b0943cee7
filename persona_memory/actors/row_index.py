"""An actor's in-memory copy of its persona's rows, kept fresh by the store's version number.

Rules:
- The copy holds the persona's open rows, the closed rows they replaced (for arcs), and the
  table the read path builds from (``core.table.RowTable``), which keeps the one float32 copy
  of the unit vectors, decoded once per load in a batch.
- Every change to a persona's rows in the database bumps ``persona_versions`` (touches
  excepted); a copy whose version differs is reloaded before use. So rows written by anyone —
  the write path, the demo, a human's delete — show at the next build.
- Touches are the actor's own: it applies them to the copy after they commit.
- So are its writes: when a write committed at exactly the copy's version (nobody else changed
  the rows in between), ``apply_posted`` applies its new and closed rows and takes the version
  after it, without reading every row again; otherwise the next build reloads.
- The table takes a write's rows in when it is next read, or when the actor ``settle``s it
  (its writer has no room's write queued or under way): consecutive writes go in as one extension — the same
  table, built once instead of once per write — unless one closes a row an earlier one of
  them added, where they go in one by one.
- The write path's router reads the same rows through ``routing()``: the ``RouteIndex`` once
  there is one, else a ``RouteSource`` (the open rows and the table's decoded vectors, not
  copied) for the write path to build it from off the event loop; the actor ``adopt``s the
  index the write path built when it is at the copy's version. ``apply_posted`` keeps it up
  to date; a load drops it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Iterable, Mapping

import attrs
import numpy as np

from ..core.table import RowTable
from ..embedding.vectors import unit_rows
from ..rows import MemoryRow
from ..storage.stored_rows import LazyRows, StoredRows
from ..storage.writes import Posted
from ..write.route_index import RouteIndex, RouteSource


def decode_unit_rows(rows: list[MemoryRow], dim: int) -> np.ndarray:
    """The unit vectors of ``rows`` (each with a ``dim``-byte embedding), decoded in one batch.

    Row ``i`` equals ``unit_rows(dequantize(rows[i].embedding, rows[i].embedding_scale)[None])[0]``.
    """
    q = np.frombuffer(b"".join(r.embedding for r in rows), dtype=np.int8).reshape(len(rows), dim)  # type: ignore[misc]
    scales = np.array([r.embedding_scale for r in rows], dtype=np.float32)
    return unit_rows(q.astype(np.float32) * scales[:, None])


class RowIndex:
    """One persona's rows as the read path needs them."""

    def __init__(self) -> None:
        self.version: int | None = None
        self.open_rows: dict[int, MemoryRow] | LazyRows = {}
        self.replaced: dict[int, MemoryRow] = {}
        self._table = RowTable.from_rows((), {}, {})
        self._unextended: list[_Extension] = []  # writes applied to the rows, not yet to the table
        self._routing: RouteIndex | None = None

    @property
    def table(self) -> RowTable:
        """The read path's table of the open rows, with every applied write in it."""
        if self._unextended:
            self.settle()
        return self._table

    def settle(self) -> None:
        """Take the writes applied since the table was last read into it, as few extensions
        as give the same table."""
        pending, self._unextended = self._unextended, []
        group: list[_Extension] = []
        added: set[int] = set()
        for extension in pending:
            if group and added.intersection(extension.closed):
                self._extend(group)
                group, added = [], set()
            group.append(extension)
            added.update(r.id for r in extension.rows)  # type: ignore[misc]
        if group:
            self._extend(group)

    def _extend(self, group: list[_Extension]) -> None:
        if len(group) == 1:
            only = group[0]
            self._table = self._table.extended(only.rows, only.vectors, self.replaced, only.closed, only.said)
            return
        vectors: dict[int, np.ndarray] = {}
        said: dict[int, str] = {}
        for extension in group:
            vectors.update(extension.vectors)
            said.update(extension.said or {})
        self._table = self._table.extended(
            [r for e in group for r in e.rows], vectors, self.replaced, [i for e in group for i in e.closed], said
        )

    def routing(self) -> RouteIndex | RouteSource:
        """The rows as the router reads them at this copy's version: the index, or what to
        build it from (``RouteSource.build``) when it has not been built since the load."""
        if self._routing is not None and self._routing.version == self.version:
            return self._routing
        table = self.table
        row_ids = np.asarray(table.ids, dtype=np.int64)
        spaces = {name: (row_ids[positions], matrix) for name, (positions, matrix) in table.spaces.items()}
        return RouteSource(self.version, self.open_rows.copy(), spaces)  # decoded where it is built

    def adopt(self, routing: object) -> None:
        """Keep a route index the write path built, if it is at this copy's version."""
        if isinstance(routing, RouteIndex) and routing.version == self.version and self.version is not None:
            self._routing = routing

    def load(self, version: int, rows: Iterable[MemoryRow], said: Mapping[int, str] | None = None) -> None:
        """Replace the copy with ``rows`` read at ``version``; ``said``: what each row's
        transcript lines said (``store.memories.rows_said``), searched beside its text. Rows
        as the store read them (``StoredRows``) are decoded column by column for the table,
        and each open row only when it is read (``open_rows`` is then a ``LazyRows``)."""
        self.version = version
        self._routing = None
        self._unextended = []
        if isinstance(rows, StoredRows):  # as the store read them: decoded column by column
            self.open_rows = rows.open_rows()
            self.replaced = rows.replaced()
            self._table = RowTable.from_columns(rows.columns(), self.replaced, said)
            return
        self.open_rows = {}
        self.replaced = {}
        encoded: dict[int, list[MemoryRow]] = {}
        for row in rows:
            assert row.id is not None
            if row.valid_to is None:
                self.open_rows[row.id] = row
                if row.embedding is not None and row.embedding_scale is not None:
                    encoded.setdefault(len(row.embedding), []).append(row)
            elif row.closed_by is not None:
                self.replaced[row.closed_by] = row
        vectors: dict[int, np.ndarray] = {}
        for dim, batch in encoded.items():
            vectors.update(zip((r.id for r in batch), decode_unit_rows(batch, dim)))
        self._table = RowTable.from_rows(self.open_rows.values(), vectors, self.replaced, said)

    def apply_posted(self, posted: Posted) -> bool:
        """Apply a write of this persona's that began at this copy's version; ``False`` (and
        nothing changed) when it did not, so the next build reloads."""
        if posted.versions is None or posted.versions[0] != self.version:
            return False
        replaced: dict[int, MemoryRow] = {}
        closed_ids = []
        for closing in posted.closed:
            row = self.open_rows.pop(closing.row_id, None)
            if row is None:
                return self._forget()
            closed_ids.append(closing.row_id)
            if closing.closed_by is not None:
                replaced[closing.closed_by] = attrs.evolve(
                    row, valid_to=closing.valid_to, closed_by=closing.closed_by
                )
        added = [r for r in posted.rows if r.valid_to is None]
        vectors = {}
        encoded: dict[int, list[MemoryRow]] = {}
        for row in added:
            assert row.id is not None
            self.open_rows[row.id] = row
            if row.embedding is not None and row.embedding_scale is not None:
                encoded.setdefault(len(row.embedding), []).append(row)
        for dim, batch in encoded.items():
            vectors.update(zip((r.id for r in batch), decode_unit_rows(batch, dim)))
        self.replaced.update(replaced)
        self._unextended.append(_Extension(added, vectors, closed_ids, posted.said))
        self.version = posted.versions[1]
        if self._routing is not None:
            self._routing = self._routing.applied(added, closed_ids, self.version, vectors)
        return True

    def _forget(self) -> bool:
        """The copy no longer matches anything known: the next build reloads it."""
        self.version = None
        self._routing = None
        return False

    def apply_touches(self, stamps: Mapping[int, tuple[datetime, int]]) -> None:
        """Reflect committed touches: ``{row id: (last_recalled, times loaded)}``."""
        changed = {}
        for row_id, (when, count) in stamps.items():
            row = self.open_rows.get(row_id)
            if row is not None and (row.last_recalled is None or row.last_recalled < when):
                self.open_rows[row_id] = attrs.evolve(
                    row, last_recalled=when, recall_count=row.recall_count + count
                )
                changed[row_id] = when
        if changed:
            self._table = self.table.touched(changed)


@attrs.frozen
class _Extension:
    """One write's change to the table: its new open rows (with their unit vectors by id),
    the row ids it closed, and what the new rows' lines said."""

    rows: list[MemoryRow]
    vectors: Mapping[int, np.ndarray]
    closed: list[int]
    said: Mapping[int, str] | None
