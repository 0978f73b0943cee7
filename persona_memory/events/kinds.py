"""What happened, as the runtime and the webhooks hear it: a closed family of frozen events.

Rules:
- Each event is a fact in the past tense about one change that committed: a memory noted (the
  toast), a memory closed, memories deleted, a notice undone, a person's controls changed.
  ``KINDS`` maps each wire name (``"memory.noted"``…) to its class, and nothing else is an event.
- An event carries ids and switches, never text about a person: no memory's text, no notice's
  text, no note. A subscriber that is configured for text reads it from the store when it is
  delivered (``webhooks.py``), so a memory deleted since is not sent anywhere.
- ``user_id`` is the person the event is about (``None`` for a closed row about the world);
  ``persona`` the persona whose memory changed (``None`` for the memory switch and the note).
- Pure: values and their JSON shape, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar, Literal, Union

import attrs


@attrs.frozen
class MemoryNoted:
    """A persona noted memories about a person and a toast announces them (a notice)."""

    kind: ClassVar[str] = "memory.noted"
    notice_id: int
    user_id: int
    persona: str
    room_id: str | None
    memory_ids: tuple[int, ...] = attrs.field(converter=tuple)


@attrs.frozen
class MemoryClosed:
    """A row stopped being true (``valid_to``), replaced by ``closed_by`` or by nothing."""

    kind: ClassVar[str] = "memory.closed"
    memory_id: int
    user_id: int | None
    persona: str
    closed_by: int | None
    valid_to: str


@attrs.frozen
class MemoryDeleted:
    """Rows about a person were deleted physically: one by the person (``"deleted"``), those a
    notice announced (``"undone"``), or every row a persona kept about them (``"cleared"``)."""

    kind: ClassVar[str] = "memory.deleted"
    user_id: int
    persona: str
    memory_ids: tuple[int, ...] = attrs.field(converter=tuple)
    cause: Literal["deleted", "undone", "cleared"] = attrs.field(
        validator=attrs.validators.in_(("deleted", "undone", "cleared"))
    )


@attrs.frozen
class NoticeUndone:
    """A toast no longer stands: the person undid it, or cleared what it announced."""

    kind: ClassVar[str] = "notice.undone"
    notice_id: int
    user_id: int
    persona: str


@attrs.frozen
class ControlsChanged:
    """A person changed a control: the note (``value`` ``None``: the note is text), the memory
    switch (``value`` on/off), or a persona's mute (``persona`` and ``value`` muted/not)."""

    kind: ClassVar[str] = "controls.changed"
    user_id: int
    control: Literal["note", "memory_on", "muted"] = attrs.field(
        validator=attrs.validators.in_(("note", "memory_on", "muted"))
    )
    value: bool | None = None
    persona: str | None = None


Event = Union[MemoryNoted, MemoryClosed, MemoryDeleted, NoticeUndone, ControlsChanged]

KINDS: Mapping[str, type] = {
    cls.kind: cls for cls in (MemoryNoted, MemoryClosed, MemoryDeleted, NoticeUndone, ControlsChanged)
}
"""Every event's wire name and class: the closed set."""


def data_of(event: Event) -> dict[str, Any]:
    """The event's fields as JSON-ready values (tuples as lists)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.asdict(event, recurse=False).items()}


def event_of(kind: str, data: Mapping[str, Any]) -> Event:
    """The event a stored ``kind`` and ``data`` describe (the outbox's rows are ours: trusted)."""
    return KINDS[kind](**data)


@attrs.frozen
class Delivered:
    """An event as the outbox keeps it: its id (increasing with every event written), when it
    was written, and the event itself. ``body`` is what a subscriber receives."""

    id: int
    at: datetime
    event: Event

    @property
    def kind(self) -> str:
        return self.event.kind

    def message(self, texts: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The JSON object a subscriber gets: ``id``, ``kind``, ``at``, ``data`` (and ``text``
        when the subscriber takes text and there is some: see ``webhooks.texts_for``)."""
        out: dict[str, Any] = {"id": self.id, "kind": self.kind, "at": self.at.isoformat(), "data": data_of(self.event)}
        if texts:
            out["text"] = dict(texts)
        return out

    def body(self, texts: Mapping[str, Any] | None = None) -> bytes:
        """``message`` as compact UTF-8 JSON: the exact bytes that are signed and sent."""
        return json.dumps(self.message(texts), separators=(",", ":"), ensure_ascii=False).encode()


def check_kinds(kinds: object, where: str) -> frozenset[str]:
    """``kinds`` as a set of known event kinds, or a ``ValueError`` naming what to fix."""
    if isinstance(kinds, str) or not isinstance(kinds, (list, tuple, set, frozenset)):
        raise ValueError(f"{where} must be a list of event kinds ({', '.join(KINDS)}), got {kinds!r}")
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"{where}: unknown event kind {unknown[0]!r}; the kinds are {', '.join(KINDS)}")
    return frozenset(kinds)
