"""The values the store holds: a memory row and a human's controls.

Rules (design §1):
- A row's ``text`` is one standalone third-person sentence of at most 200 characters.
- ``kind`` is one of ``KINDS``; ``importance`` is an int 1..10.
- ``subject`` says whom the row is about (``u:42`` | ``self`` | ``world``); a ``self`` row names
  its ``counterpart`` (``u:42``), the human the promise or loop is with.
- ``witnessed`` is the set of user ids present when it formed — the audience.
- A row is open while ``valid_to`` is ``None``. A contradiction closes it (``valid_to``,
  ``closed_by``); the system never deletes one. Only the human deletes.
- ``valid_from`` is an ISO date, possibly partial (``2026``, ``2026-07``, ``2026-07-17``).
- ``embedding`` is int8 bytes with its ``embedding_scale``; ``embedder`` names the model that
  made it; the three come together or not at all. ``None`` means no vector: relevance 0. A
  stored vector that lacks its scale or model (a file written before schema 3) cannot be
  read, so ``from_row`` treats it as no vector; the bytes stay in the file.
- Every field is checked at construction; a bad one raises ``InvalidInput`` naming the field.
  ``attrs.evolve`` constructs, so it checks too.
- ``from_row`` trusts our own file and checks nothing again: every row in it went in through the
  constructor (and the table's CHECKs), and is read back as stored, its JSON and ISO text
  decoded. It and ``stored_as`` (a checked row copied with the id the database just gave it)
  are the only ways in that skip the checks; input from anywhere else — a caller, a model,
  another file — goes through the constructor. (No switch turns the checks off: rows are
  read on the SQLite worker threads while the event loop builds checked ones.)
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Sequence

import attrs

from . import ids
from .clock import as_utc
from .errors import InvalidInput
from .ids import check_unicode

KINDS = ("fact", "preference", "event", "promise", "open_loop", "relationship")
TEXT_LIMIT = 200
IMPORTANCE_LOWEST = 1
IMPORTANCE_HIGHEST = 10
NOTE_LIMIT = 400

# ASCII digits only, and written so JSON Schema and llama.cpp's grammar converter read it as
# Python does: the mind's answer schema (``minds.schema``) uses it as is.
PARTIAL_DATE = "[0-9]{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12][0-9]|3[01]))?)?"
_PARTIAL_DATE = re.compile(PARTIAL_DATE)


def check_partial_date(value: str | None, field: str) -> str | None:
    """``None`` or an ISO date that may stop at the year or month; else ``InvalidInput``."""
    if value is None:
        return None
    if not isinstance(value, str) or not _PARTIAL_DATE.fullmatch(value):
        raise InvalidInput(f"{field} must be an ISO date like 2026-07 or 2026-07-17, got {value!r}")
    return value


def check_note(note: object) -> str:
    """A memory note is free text of at most 400 characters (empty clears it)."""
    if not isinstance(note, str):
        raise InvalidInput(f"the memory note must be a string, got {type(note).__name__}")
    if len(note) > NOTE_LIMIT:
        raise InvalidInput(
            f"the memory note is {len(note)} characters; the limit is {NOTE_LIMIT}. "
            f"Shorten it by {len(note) - NOTE_LIMIT} and save again."
        )
    check_unicode(note, "the memory note")
    return note


def _utc(value: datetime | str | None, field: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise InvalidInput(f"{field} must be an ISO datetime with a timezone, got {value!r}") from None
    if not isinstance(value, datetime):
        raise InvalidInput(f"{field} must be a timezone-aware datetime, got {value!r}")
    if value.tzinfo is None:
        raise InvalidInput(f"{field} must be timezone-aware (UTC), got naive {value!r}")
    return as_utc(value)


def _created(value: datetime | str) -> datetime:
    converted = _utc(value, "created")
    if converted is None:
        raise InvalidInput("created must be a timezone-aware datetime, got None")
    return converted


def _last_recalled(value: datetime | str | None) -> datetime | None:
    return _utc(value, "last_recalled")


def _id_set(value: object) -> frozenset:
    if isinstance(value, (str, bytes)) or not _iterable(value):
        raise InvalidInput(f"witnessed must be a set of user ids like {{42, 17}}, got {value!r}")
    return frozenset(value)


def _id_tuple(value: object) -> tuple:
    if isinstance(value, (str, bytes)) or not _iterable(value):
        raise InvalidInput(f"evidence must be a list of transcript line ids, got {value!r}")
    return tuple(value)


def _iterable(value: object) -> bool:
    try:
        iter(value)  # type: ignore[call-overload]
    except TypeError:
        return False
    return True


def _positive_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _check_row(row: MemoryRow) -> None:
    ids.check_persona(row.persona)
    ids.check_subject(row.subject)
    if row.subject == ids.SELF:
        if ids.parse_user_ref(row.counterpart) is None:
            raise InvalidInput(f"a 'self' row needs a counterpart like 'u:42', got {row.counterpart!r}")
    elif row.counterpart is not None:
        raise InvalidInput(f"only 'self' rows have a counterpart, got counterpart {row.counterpart!r}")
    if row.kind not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}, got {row.kind!r}")
    if not isinstance(row.text, str) or not row.text.strip() or len(row.text) > TEXT_LIMIT:
        raise InvalidInput(f"text must be one sentence of 1..{TEXT_LIMIT} chars, got {row.text!r}")
    check_unicode(row.text, "text")
    if isinstance(row.importance, bool) or not isinstance(row.importance, int) or not IMPORTANCE_LOWEST <= row.importance <= IMPORTANCE_HIGHEST:
        raise InvalidInput(
            f"importance must be an int {IMPORTANCE_LOWEST}..{IMPORTANCE_HIGHEST}, got {row.importance!r}"
        )
    for uid in row.witnessed:
        ids.check_user_id(uid, "witnessed")
    for line_id in row.evidence:
        if not _positive_int(line_id):
            raise InvalidInput(f"evidence must hold transcript line ids (positive ints), got {line_id!r}")
    for field in ("id", "closed_by"):
        value = getattr(row, field)
        if value is not None and not _positive_int(value):
            raise InvalidInput(f"{field} must be a positive int row id or None, got {value!r}")
    if row.room_id is not None:
        ids.check_room_id(row.room_id)
        check_unicode(row.room_id, "room_id")
    if isinstance(row.recall_count, bool) or not isinstance(row.recall_count, int) or row.recall_count < 0:
        raise InvalidInput(f"recall_count must be an int >= 0, got {row.recall_count!r}")
    check_partial_date(row.valid_from, "valid_from")
    check_partial_date(row.valid_to, "valid_to")
    _check_embedding(row)


def _check_embedding(row: MemoryRow) -> None:
    given = (row.embedding is not None, row.embedding_scale is not None, row.embedder is not None)
    if any(given) and not all(given):
        raise InvalidInput(
            "embedding, embedding_scale and embedder go together: give all three or none, got "
            f"embedding={'set' if given[0] else None}, embedding_scale={row.embedding_scale!r}, "
            f"embedder={row.embedder!r}"
        )
    if not any(given):
        return
    if not isinstance(row.embedding, bytes) or not row.embedding:
        raise InvalidInput(f"embedding must be non-empty int8 bytes, got {type(row.embedding).__name__}")
    scale = row.embedding_scale
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale < 0:
        raise InvalidInput(f"embedding_scale must be a finite float >= 0, got {scale!r}")
    if not isinstance(row.embedder, str) or not row.embedder.strip():
        raise InvalidInput(f"embedder must name the model that made the embedding, got {row.embedder!r}")
    check_unicode(row.embedder, "embedder")


def _vector_repr(embedding: bytes | None) -> str:
    """A row's repr says how big its vector is, never its bytes."""
    return "None" if embedding is None else f"<{len(embedding)} bytes>"


@attrs.frozen
class MemoryRow:
    """One memory a persona holds. Build it with keywords; read one back with ``from_row``."""

    persona: str
    subject: str
    kind: str
    text: str
    importance: int
    created: datetime = attrs.field(converter=_created)
    id: int | None = None
    counterpart: str | None = None
    witnessed: frozenset[int] = attrs.field(default=frozenset(), converter=_id_set)
    room_id: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    closed_by: int | None = None
    evidence: tuple[int, ...] = attrs.field(default=(), converter=_id_tuple)
    last_recalled: datetime | None = attrs.field(default=None, converter=_last_recalled)
    recall_count: int = 0
    embedding: bytes | None = attrs.field(default=None, repr=_vector_repr)
    embedding_scale: float | None = None
    embedder: str | None = None

    def __attrs_post_init__(self) -> None:
        _check_row(self)

    @property
    def is_open(self) -> bool:
        return self.valid_to is None

    @property
    def about_user(self) -> int | None:
        """The human this row concerns: its subject, or a self row's counterpart."""
        if self.subject == ids.SELF:
            return ids.parse_user_ref(self.counterpart)
        return ids.parse_user_ref(self.subject)

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> MemoryRow:
        """The value of one ``persona_memory`` row (``SELECT *``) of our own file, unchecked."""
        return _stored(cls, row, _plan(row.keys()))

    @classmethod
    def from_rows(cls, cursor: sqlite3.Cursor) -> list[MemoryRow]:
        """The values of the ``persona_memory`` rows a ``SELECT *`` cursor yields, unchecked.

        The fields are set as stored (see the module's rules), each column found by its
        position, looked up once per query: a tenth of the checked constructor's cost, which
        matters when an actor loads ten thousand rows.
        """
        plan = _plan(d[0] for d in cursor.description)
        return [_stored(cls, row, plan) for row in cursor]

    def stored_as(self, row_id: int) -> MemoryRow:
        """This row as the store inserted it, under ``row_id``: a copy with the id set and
        nothing checked again — every other field was checked when this row was built, and the
        id is the positive one the database gave it (``attrs.evolve`` would check the whole
        row again: a third of inserting it, on the SQLite thread)."""
        value = object.__new__(MemoryRow)
        for name in _FIELDS:
            _set_field(value, name, getattr(self, name))
        _set_field(value, "id", row_id)
        return value

    def to_params(self) -> dict[str, object]:
        """The named parameters of an ``INSERT`` into ``persona_memory``."""
        return {
            "id": self.id,
            "persona": self.persona,
            "subject": self.subject,
            "counterpart": self.counterpart,
            "witnessed": ids_json(sorted(self.witnessed)),
            "room_id": self.room_id,
            "kind": self.kind,
            "text": self.text,
            "importance": self.importance,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "closed_by": self.closed_by,
            "evidence": ids_json(self.evidence),
            "created": self.created.isoformat(),
            "last_recalled": self.last_recalled.isoformat() if self.last_recalled else None,
            "recall_count": self.recall_count,
            "embedding": self.embedding,
            "embedding_scale": self.embedding_scale,
            "embedder": self.embedder,
        }


_set_field = object.__setattr__  # what attrs' own __init__ uses on a frozen class


def _plan(columns: Iterable[str]) -> list[tuple[str, int, Callable[[Any], Any] | None]]:
    """For each field: its column's position in a result row, and how to decode the column."""
    at = {name: i for i, name in enumerate(columns)}
    return [(name, at[name], _DECODE.get(name)) for name in _FIELDS]


def _stored(cls: type[MemoryRow], row: sqlite3.Row, plan) -> MemoryRow:
    """A ``MemoryRow`` set field by field from a row of our own file (``from_row``)."""
    value = object.__new__(cls)
    for name, position, decode in plan:
        stored = row[position]
        _set_field(value, name, stored if decode is None else decode(stored))
    if value.embedding is None or value.embedding_scale is None or value.embedder is None:
        for name in _VECTOR:  # a vector without its scale or model (before schema 3): none
            _set_field(value, name, None)
    return value


def stored_plan(columns: Iterable[str]) -> list[tuple[str, int, Callable[[Any], Any] | None]]:
    """How ``stored_row`` reads a result row whose columns are named ``columns``."""
    return _plan(columns)


def stored_row(values: Sequence[Any], plan: list[tuple[str, int, Callable[[Any], Any] | None]]) -> MemoryRow:
    """The ``MemoryRow`` of one result row (``values``, by position), as ``from_rows`` reads it."""
    return _stored(MemoryRow, values, plan)


def ids_json(values: Iterable[int]) -> str:
    """A list of ints (not bools: the rows' checks refuse them) as JSON text: the very text
    ``json.dumps(list(values))`` gives (``[12, 17]``; ``int.__repr__``, as the encoder writes
    an int) without the encoder's machinery — every row and notice stores one or two."""
    return "[" + ", ".join(map(int.__repr__, values)) + "]"


def stored_ids(text: str | None) -> list[int]:
    """A JSON list of ids as ``to_params`` stored it (``[12, 17]``), read without the JSON
    parser when it has that shape."""
    if not text or text == "[]":
        return []
    try:
        return [int(part) for part in text[1:-1].split(",")]
    except ValueError:
        return json.loads(text)


def stored_time(text: str) -> datetime:
    """A time as ``to_params`` stored it (ISO, UTC); one stored with another offset is moved."""
    when = datetime.fromisoformat(text)
    return when if when.tzinfo is timezone.utc else as_utc(when)


_FIELDS = tuple(field.name for field in attrs.fields(MemoryRow))
_VECTOR = ("embedding", "embedding_scale", "embedder")
_DECODE: dict[str, Callable[[Any], Any]] = {
    "created": stored_time,
    "last_recalled": lambda text: None if text is None else stored_time(text),
    "witnessed": lambda text: frozenset(stored_ids(text)),
    "evidence": lambda text: tuple(stored_ids(text)),
}


@attrs.frozen
class UserControls:
    """What one human has set: the switch, the note, and the personas they muted."""

    user_id: int
    memory_on: bool = True
    memory_note: str = ""
    muted: frozenset[str] = frozenset()

    def hides_from(self, persona: str) -> bool:
        """True when this human's memories must not load for (or be written by) ``persona``."""
        return not self.memory_on or persona in self.muted
