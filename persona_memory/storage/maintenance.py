"""The operator's two commands on a store file: ``doctor`` (read only) and ``backup``.

Rules:
- Both open the file read-only (``mode=ro``) and never migrate, write or repair it; they work
  while ``persona-memory serve`` runs on the same file (WAL readers do not block the writer).
- ``doctor`` reports: whether the file is ours and its schema version against this code's; a
  full ``integrity_check``; the (persona, room) pairs whose cursor is behind the room's last
  line (writes not yet made: normal while a room is live, a problem if it stays); the parked
  slices with their errors and attempts; and the personas escalated — those with a parked
  slice, whose writer failed ``supervisor.max_restarts`` times on one job. Healthy means: ours,
  known schema, integrity ok, nothing parked.
- ``backup`` copies the file with SQLite's online backup API — a consistent snapshot even while
  it is written — to a path that must not exist yet, then checks the copy's integrity. It never
  overwrites: a backup that silently replaced the last good one would be no backup.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import attrs

from ..errors import ForeignDatabase, InvalidInput, StorageError
from .schema import LATEST, check_ours
from .writes import rooms_behind


@attrs.frozen
class Parked:
    persona: str
    room_id: str
    error: str
    attempts: int
    retry_at: str


@attrs.frozen
class Checkup:
    """What ``doctor`` found in one file."""

    path: str
    schema_version: int
    integrity: tuple[str, ...]
    behind: tuple[tuple[str, str], ...]
    parked: tuple[Parked, ...]

    @property
    def healthy(self) -> bool:
        return self.integrity == ("ok",) and not self.parked and self.schema_version == LATEST

    @property
    def escalated(self) -> tuple[str, ...]:
        return tuple(sorted({p.persona for p in self.parked}))

    def report(self) -> str:
        lines = [
            f"store: {self.path}",
            f"schema: version {self.schema_version} (this persona-memory writes {LATEST})"
            + ("" if self.schema_version == LATEST else " — the next open migrates it"),
            "integrity: ok" if self.integrity == ("ok",) else f"integrity: {len(self.integrity)} problem(s): "
            + "; ".join(self.integrity[:5]),
            f"behind: {len(self.behind)} (persona, room) with lines past the cursor"
            + "".join(f"\n  {persona} in {json.dumps(room)}" for persona, room in self.behind[:20]),
            f"parked: {len(self.parked)} slice(s)"
            + "".join(f"\n  {p.persona} in {json.dumps(p.room_id)}: {p.attempts} attempts, retry at "
                      f"{p.retry_at}: {p.error}" for p in self.parked),
            f"escalated personas: {', '.join(self.escalated) or 'none'}",
            "verdict: healthy" if self.healthy else "verdict: needs attention",
        ]
        return "\n".join(lines)


def _open_read_only(path: str) -> sqlite3.Connection:
    if not Path(path).is_file():
        raise InvalidInput(f"there is no SQLite store file at {path}; pass --db FILE or set storage.path to the file")
    conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def doctor(path: str) -> Checkup:
    """Check the store at ``path`` without changing it.

    Raises:
        InvalidInput: there is no file at ``path``.
        ForeignDatabase: the file is not a persona-memory store.
    """
    conn = _open_read_only(path)
    try:
        version = check_ours(conn, path)
        if version == 0:
            raise ForeignDatabase(f"{path} is an empty SQLite file, not a persona-memory store yet")
        integrity = tuple(str(r[0]) for r in conn.execute("PRAGMA integrity_check").fetchall())
        behind = tuple((b.persona, b.room.room_id) for b in rooms_behind(conn))
        parked = tuple(
            Parked(r["persona"], r["room_id"], r["error"], r["attempts"], r["retry_at"])
            for r in conn.execute("SELECT * FROM parked_slices ORDER BY persona, room_id")
        )
    except sqlite3.Error as exc:
        raise StorageError(f"could not read {path}: {exc}") from exc
    finally:
        conn.close()
    return Checkup(path, version, integrity, behind, parked)


def backup(path: str, target: str) -> int:
    """Copy the store at ``path`` to the new file ``target``, consistently, while it may be in
    use; return the copy's size in bytes.

    Raises:
        InvalidInput: no store at ``path``, or ``target`` exists already.
        ForeignDatabase: the file is not a persona-memory store.
        StorageError: the copy failed or is not intact (the partial copy is removed).
    """
    out = Path(target)
    if out.exists():
        raise InvalidInput(f"{target} exists already; a backup never overwrites — choose a new path")
    if not out.parent.is_dir():
        raise InvalidInput(f"the folder {out.parent} does not exist; create it or choose another path")
    source = _open_read_only(path)
    try:
        if check_ours(source, path) == 0:
            raise ForeignDatabase(f"{path} is an empty SQLite file, not a persona-memory store yet")
        copy = sqlite3.connect(out)
        try:
            source.backup(copy)
            problems = [str(r[0]) for r in copy.execute("PRAGMA integrity_check").fetchall()]
        finally:
            copy.close()
        if problems != ["ok"]:
            raise StorageError(f"the copy at {target} is not intact: {problems[:3]}")
    except (sqlite3.Error, StorageError) as exc:
        out.unlink(missing_ok=True)
        if isinstance(exc, StorageError):
            raise
        raise StorageError(f"could not back up {path} to {target}: {exc}") from exc
    finally:
        source.close()
    return out.stat().st_size
