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
  made it. ``None`` means no vector: relevance 0.
"""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime

import attrs

from . import ids
from .clock import as_utc
from .errors import InvalidInput

KINDS = ("fact", "preference", "event", "promise", "open_loop", "relationship")
TEXT_LIMIT = 200
NOTE_LIMIT = 400

_PARTIAL_DATE = re.compile(r"\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?")


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
    return note


def _utc(value: datetime | str | None) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return as_utc(value)


def _utc_required(value: datetime | str) -> datetime:
    converted = _utc(value)
    if converted is None:
        raise InvalidInput("created must be a timezone-aware datetime")
    return converted


def _check_row(row: MemoryRow) -> None:
    ids.check_persona(row.persona)
    ids.check_subject(row.subject)
    if row.subject == ids.SELF:
        if ids.parse_user_ref(row.counterpart) is None:
            raise InvalidInput(f"a 'self' row needs a counterpart like 'u:42', got {row.counterpart!r}")
    elif row.counterpart is not None:
        raise InvalidInput("only 'self' rows have a counterpart")
    if row.kind not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}, got {row.kind!r}")
    if not isinstance(row.text, str) or not row.text.strip() or len(row.text) > TEXT_LIMIT:
        raise InvalidInput(f"text must be one sentence of 1..{TEXT_LIMIT} chars, got {row.text!r}")
    if isinstance(row.importance, bool) or not isinstance(row.importance, int) or not 1 <= row.importance <= 10:
        raise InvalidInput(f"importance must be an int 1..10, got {row.importance!r}")
    for uid in row.witnessed:
        ids.check_user_id(uid, "witnessed")
    check_partial_date(row.valid_from, "valid_from")
    check_partial_date(row.valid_to, "valid_to")
    if (row.embedding is None) != (row.embedder is None):
        raise InvalidInput("an embedding needs the name of its embedder, and only then")


@attrs.frozen
class MemoryRow:
    """One memory a persona holds. Build it with keywords; read one back with ``from_row``."""

    persona: str
    subject: str
    kind: str
    text: str
    importance: int
    created: datetime = attrs.field(converter=_utc_required)
    id: int | None = None
    counterpart: str | None = None
    witnessed: frozenset[int] = attrs.field(default=frozenset(), converter=frozenset)
    room_id: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    closed_by: int | None = None
    evidence: tuple[int, ...] = attrs.field(default=(), converter=tuple)
    last_recalled: datetime | None = attrs.field(default=None, converter=_utc)
    recall_count: int = 0
    embedding: bytes | None = None
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
        """Build a value from a ``persona_memory`` row (``SELECT *``)."""
        return cls(
            id=row["id"],
            persona=row["persona"],
            subject=row["subject"],
            counterpart=row["counterpart"],
            witnessed=json.loads(row["witnessed"] or "[]"),
            room_id=row["room_id"],
            kind=row["kind"],
            text=row["text"],
            importance=row["importance"],
            valid_from=row["valid_from"],
            valid_to=row["valid_to"],
            closed_by=row["closed_by"],
            evidence=json.loads(row["evidence"] or "[]"),
            created=row["created"],
            last_recalled=row["last_recalled"],
            recall_count=row["recall_count"],
            embedding=row["embedding"],
            embedding_scale=row["embedding_scale"],
            embedder=row["embedder"],
        )

    def to_params(self) -> dict[str, object]:
        """The named parameters of an ``INSERT`` into ``persona_memory``."""
        return {
            "id": self.id,
            "persona": self.persona,
            "subject": self.subject,
            "counterpart": self.counterpart,
            "witnessed": json.dumps(sorted(self.witnessed)),
            "room_id": self.room_id,
            "kind": self.kind,
            "text": self.text,
            "importance": self.importance,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "closed_by": self.closed_by,
            "evidence": json.dumps(list(self.evidence)),
            "created": self.created.isoformat(),
            "last_recalled": self.last_recalled.isoformat() if self.last_recalled else None,
            "recall_count": self.recall_count,
            "embedding": self.embedding,
            "embedding_scale": self.embedding_scale,
            "embedder": self.embedder,
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
