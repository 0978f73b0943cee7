"""The known display names, read straight from the SQLite file by another process.

The offline reader's worker process checks a slice's candidates (``write.offloaded``), and
the check needs the display names whose first word is a word of the candidates
(``store.names.among``) — which depend on what was read, so the event loop could only ask
for them between the reading and the check, one more hop each way. ``FileNames(path)`` asks
the file itself from the worker, with the same query on a read-only connection it opens
once per process and keeps.

Rules:
- The same names the store's own read gives at that moment: in WAL mode a reader sees every
  transaction committed before its statement, and never blocks the writer.
- Read-only (``mode=ro``): nothing is written through it. Only ``names_among`` runs on it.
- A file that cannot be read raises ``StorageError``, as the store's read would.
"""

from __future__ import annotations

import pathlib
import sqlite3
from collections.abc import Iterable

import attrs

from ..errors import StorageError
from .queries import names_among

_OPEN: dict[str, sqlite3.Connection] = {}  # per process: the connection to each file


@attrs.frozen
class FileNames:
    """``names_among`` over the SQLite file at ``path`` (absolute); pickles as the path."""

    path: str

    def __call__(self, words: Iterable[str]) -> dict[int, str]:
        try:
            return names_among(self._connection(), words)
        except sqlite3.Error as exc:
            _OPEN.pop(self.path, None)
            raise StorageError(f"SQLite (read from the reader's process): {exc}") from exc

    def _connection(self) -> sqlite3.Connection:
        conn = _OPEN.get(self.path)
        if conn is None:
            uri = pathlib.Path(self.path).as_uri() + "?mode=ro"
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA busy_timeout = 5000")
            _OPEN[self.path] = conn
        return conn
