"""The few places where the store's SQL differs between SQLite and PostgreSQL.

The store is one set of query functions (``store.py``, ``writes.py``, ``humans.py``,
``line_batch.py``), each a function of a connection, shared by both backends. Most of their
SQL is the same text on both; the PostgreSQL connection (``postgres_session.py``) takes it as
written — ``?`` and ``:name`` placeholders, rows readable by position and by name, instants as
ISO text and JSON as text — so a query is written once. What cannot be one text is here, as a
``Dialect`` the query picks with ``dialect_of(conn)``:

- a new row's id: SQLite's ``cursor.lastrowid``; PostgreSQL's ``RETURNING id``. Several new
  rows' ids (``insert_ids``): SQLite inserts them one by one (in process, a statement costs
  microseconds); PostgreSQL sends them as one ``executemany`` in pipeline mode — one round trip
  to the server for all of them instead of one each, their ids in the order given;
- a JSON list's items: SQLite's ``json_each``; PostgreSQL's ``jsonb_array_elements_text`` and
  ``@>`` (containment) for "this list holds this id".

Rules:
- SQL shared by both is written in the subset both speak: ``ON CONFLICT … DO NOTHING`` (not
  ``INSERT OR IGNORE``), flags compared as truth values (``WHERE incognito``, ``NOT
  r.incognito``) and passed as ``bool``, no ``LIMIT -1``.
- ``dialect_of`` is a plain attribute read: a connection without a ``dialect`` (``sqlite3``'s,
  or a test's stand-in) is SQLite's, so the SQLite path pays nothing for the choice.
- Pure: building SQL text and reading a cursor, nothing else.
"""

from __future__ import annotations

from typing import Any, Sequence

import attrs


@attrs.frozen
class Dialect:
    name: str
    returning_id: bool  # ``RETURNING id`` (PostgreSQL) rather than ``cursor.lastrowid`` (SQLite)
    list_items: str  # a table function of a JSON list column, yielding its items as ``value``
    list_holds: str  # a condition: the JSON list column ``{column}`` holds the id ``?``

    def insert_id(self, conn: Any, sql: str, params: Sequence[object] | dict) -> int:
        """Run the ``INSERT`` ``sql`` and return the id of the row it made."""
        if self.returning_id:
            return int(conn.execute(sql + " RETURNING id", params).fetchone()[0])
        return int(conn.execute(sql, params).lastrowid)

    def insert_ids(self, conn: Any, sql: str, params: Sequence[Sequence[object] | dict]) -> list[int]:
        """Run the ``INSERT`` ``sql`` once per item of ``params``, in order; return the new ids."""
        if not self.returning_id or len(params) < 2:
            return [self.insert_id(conn, sql, one) for one in params]
        cursor = conn.executemany(sql + " RETURNING id", params, returning=True)
        ids = []
        while True:
            ids.append(int(cursor.fetchone()[0]))
            if not cursor.nextset():
                break
        if len(ids) != len(params):
            raise AssertionError(f"{len(params)} rows inserted, {len(ids)} ids returned")
        return ids

    def items_of(self, column: str, alias: str) -> str:
        """``FROM``-clause text: the items of the JSON list ``column``, as ``alias.value``."""
        return self.list_items.format(column=column, alias=alias)

    def holds(self, column: str) -> str:
        """A condition: the JSON list ``column`` holds the integer parameter ``?``."""
        return self.list_holds.format(column=column)


SQLITE = Dialect(
    name="sqlite",
    returning_id=False,
    list_items="json_each({column}) AS {alias}",
    list_holds="EXISTS (SELECT 1 FROM json_each({column}) AS item WHERE item.value = ?)",
)

POSTGRES = Dialect(
    name="postgresql",
    returning_id=True,
    list_items="jsonb_array_elements_text({column}) AS {alias}(value)",
    list_holds="{column} @> jsonb_build_array(?::bigint)",
)


def dialect_of(conn: object) -> Dialect:
    """The dialect of ``conn``: its ``dialect`` attribute, else SQLite's."""
    return getattr(conn, "dialect", SQLITE)
