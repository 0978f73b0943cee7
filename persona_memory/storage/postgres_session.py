"""A PostgreSQL connection that speaks the store's SQL as the SQLite connection does.

The store's query functions are written once, against the part of ``sqlite3.Connection``
they use: ``execute(sql, params)`` and ``executemany`` with ``?`` or ``:name`` placeholders,
rows read by position or by column name, instants as ISO-8601 text and JSON as its text.
``PostgresSession`` gives a psycopg 3 connection that face, so the same function runs on
either; where the SQL itself must differ, the function asks ``dialect.dialect_of(conn)``.

Rules:
- Placeholders: ``?`` becomes ``%s`` and ``:name`` becomes ``%(name)s``; a literal ``%``
  becomes ``%%``; text inside quotes and PostgreSQL's ``::`` casts are left alone. Each
  distinct statement is translated once (cached).
- Values come back as SQLite's would: ``timestamptz`` as the UTC instant's ``isoformat()``
  (what ``as_utc(t).isoformat()`` stored in SQLite), ``jsonb`` as its text, ``boolean`` as
  ``bool`` (an ``int`` in SQLite; the store reads flags through ``bool()``), ``bytea`` as
  ``bytes``. Values go in as they go to SQLite: ISO text and JSON text are sent untyped, so
  PostgreSQL reads them as the column's type.
- A session's clock is UTC (``SET TimeZone``), so an instant never comes back in another offset.
- A statement waits at most ``lock_timeout_ms`` for a lock (``storage.busy_timeout_ms``, as
  SQLite's ``busy_timeout``), then fails with ``StorageError`` instead of waiting forever.
- Readers run their transactions at ``REPEATABLE READ``: a unit that reads in ``BEGIN`` …
  ``COMMIT`` (``queries.persona_rows``) sees one snapshot, as SQLite's WAL reader does. The
  writer runs at PostgreSQL's default, ``READ COMMITTED``: a write that must not be replayed
  checks and moves its cursor with one ``UPDATE … WHERE last_line_id = <expected>`` (see
  ``writes.post_plan``), which locks the cursor row as ``SELECT … FOR UPDATE`` would; a
  second writer of that row waits, then finds the cursor moved and writes nothing.
- The face is only what the store uses; everything else (``info``, ``broken``, ``close``) is
  the psycopg connection's own, for ``postgres_connection``'s worker.
"""

from __future__ import annotations

import functools
import re
from datetime import timezone
from typing import Any, Callable, Iterable, Iterator, Sequence

import psycopg
from psycopg.types.datetime import TimestamptzLoader
from psycopg.types.string import TextLoader

from . import postgres_schema
from .dialect import POSTGRES
from .postgres_connection import Connect, connect_to


class _IsoInstantLoader(TimestamptzLoader):
    """``timestamptz`` as the ISO text SQLite keeps."""

    def load(self, data: Any) -> str:
        return super().load(data).astimezone(timezone.utc).isoformat()


class Row:
    """One result row, read by position (``r[0]``) or by column name (``r["id"]``)."""

    __slots__ = ("_values", "_names")

    def __init__(self, values: Sequence[Any], names: dict[str, int]) -> None:
        self._values = values
        self._names = names

    def __getitem__(self, key: int | str | slice) -> Any:
        if isinstance(key, str):
            return self._values[self._names[key]]
        return self._values[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def keys(self) -> list[str]:
        return list(self._names)

    def __repr__(self) -> str:
        return f"Row({dict(zip(self._names, self._values))!r})"


def _rows(cursor: psycopg.Cursor) -> Callable[[Sequence[Any]], Row]:
    names = {column.name: i for i, column in enumerate(cursor.description or ())}
    return lambda values: Row(values, names)


_TOKEN = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"|::|\?|:([A-Za-z_]\w*)|%")


@functools.lru_cache(maxsize=512)
def translated(sql: str) -> str:
    """``sql`` with SQLite's placeholders written as psycopg's (see the rules)."""

    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "?":
            return "%s"
        if token == "%":
            return "%%"
        if match.group(1):
            return f"%({match.group(1)})s"
        return token  # a quoted text, or a cast

    return _TOKEN.sub(one, sql)


class PostgresSession:
    """A psycopg connection with the store's face (see the module docstring)."""

    dialect = POSTGRES

    def __init__(self, raw: psycopg.Connection) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[object] | dict | None = None) -> psycopg.Cursor:
        cursor = self.raw.cursor(row_factory=_rows)
        if params is None or (not params and not isinstance(params, dict)):
            return cursor.execute(sql)
        return cursor.execute(translated(sql), params)

    def executemany(
        self, sql: str, params: Iterable[Sequence[object] | dict], *, returning: bool = False
    ) -> psycopg.Cursor:
        cursor = self.raw.cursor(row_factory=_rows)
        cursor.executemany(translated(sql), list(params), returning=returning)
        return cursor

    @property
    def info(self) -> psycopg.ConnectionInfo:
        return self.raw.info

    @property
    def broken(self) -> bool:
        return self.raw.broken

    @property
    def closed(self) -> bool:
        return self.raw.closed

    def close(self) -> None:
        self.raw.close()


def session_of(url: str, *, migrate: bool, name: str, lock_timeout_ms: int = 5000) -> Connect:
    """A connect function for one worker thread: connect, check (the writer: migrate), set up.

    The database is checked before anything is written, so a foreign one is refused untouched
    (``ForeignDatabase``, from ``postgres_schema``).
    """
    connect = connect_to(url, application_name=f"persona-memory {name}")

    def open_session() -> PostgresSession:
        raw = connect()
        try:
            if migrate:
                postgres_schema.migrate(raw)
            else:
                postgres_schema.check_ours(raw)
            raw.execute("SET TimeZone TO 'UTC'")
            raw.execute(f"SET lock_timeout TO {int(lock_timeout_ms)}")
            if not migrate:
                raw.execute("SET default_transaction_isolation TO 'repeatable read'")
            raw.adapters.register_loader("timestamptz", _IsoInstantLoader)
            raw.adapters.register_loader("jsonb", TextLoader)
        except BaseException:
            raw.close()
            raise
        return PostgresSession(raw)

    return open_session  # type: ignore[return-value]
