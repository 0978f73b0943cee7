"""View models: what the pages and the API show, computed from plain values. No I/O.

Rules:
- Lines are grouped by the persona that holds them; personas are listed by name, each with its
  open lines (newest first) and then its closed ones (greyed on the page, with their arc).
- A line's date is the day it was noted; ``since`` is when it became true, if that was said.
- A closed line's arc runs from when it became true (else when it was noted) to when it
  stopped: ``2026-07 → 2026-11``; the line that replaced it is named when it is still there.
- Memory text is passed through as text. Escaping is the template engine's job (autoescape);
  nothing here builds markup, links or images from it.
- The JSON shapes of the API live here too, so the page and the API say the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import attrs

from ..ids import parse_user_ref, persona_name, user_ref
from ..rows import NOTE_LIMIT, MemoryRow, UserControls

KIND_LABELS = {
    "fact": "fact",
    "preference": "preference",
    "event": "event",
    "promise": "promise",
    "open_loop": "open loop",
    "relationship": "relationship",
}

DONE_MESSAGES = {
    "deleted": "The line is deleted. Personas will not have it from the next time a chat opens.",
    "undone": "Undone: the lines that notice announced are deleted.",
    "cleared": "Cleared. Those lines are deleted for good.",
    "note": "Your note is saved. Every persona reads it from the next time a chat opens.",
    "note-cleared": "Your note is cleared.",
    "memory-on": "Personas remember you again, from the next time a chat opens.",
    "memory-off": "Memory is off: no persona reads or writes anything about you from the next chat on.",
    "muted": "That persona forgets you from the next chat on: it neither reads nor writes lines about you.",
    "unmuted": "That persona may remember you again from the next chat on.",
}


def day(when: datetime) -> str:
    """``2026-11-29``."""
    return when.strftime("%Y-%m-%d")


def moment(when: datetime) -> str:
    """``2026-11-29 09:14 UTC``."""
    return when.strftime("%Y-%m-%d %H:%M UTC")


def arc(row: MemoryRow) -> str | None:
    """A closed line's span, ``2026-07 → 2026-11``; ``None`` while the line is open."""
    if row.valid_to is None:
        return None
    start = row.valid_from or row.created.strftime("%Y-%m")
    return f"{start} → {row.valid_to}"


@attrs.frozen
class LineView:
    """One memory line as the page shows it."""

    id: int
    text: str
    kind: str
    noted: str
    since: str | None
    room_id: str | None
    evidence_count: int
    closed: bool
    arc: str | None
    replaced_by: str | None


def line_view(row: MemoryRow, by_id: Mapping[int, MemoryRow]) -> LineView:
    """The view of ``row``; ``by_id`` lets a closed line name the line that replaced it."""
    assert row.id is not None
    successor = by_id.get(row.closed_by) if row.closed_by is not None else None
    return LineView(
        id=row.id,
        text=row.text,
        kind=KIND_LABELS.get(row.kind, row.kind),
        noted=day(row.created),
        since=row.valid_from,
        room_id=row.room_id,
        evidence_count=len(row.evidence),
        closed=not row.is_open,
        arc=arc(row),
        replaced_by=successor.text if successor is not None else None,
    )


@attrs.frozen
class Meter:
    """How much of its character limit a persona's block for a private chat uses."""

    used: int
    limit: int

    @property
    def percent(self) -> int:
        return min(100, round(100 * self.used / self.limit)) if self.limit else 0


@attrs.frozen
class PersonaView:
    """One persona's section of the page."""

    slug: str
    name: str
    open_lines: tuple[LineView, ...]
    closed_lines: tuple[LineView, ...]
    meter: Meter | None
    muted: bool

    @property
    def count(self) -> int:
        return len(self.open_lines) + len(self.closed_lines)


def persona_views(
    rows: Iterable[MemoryRow],
    *,
    personas: Iterable[str] = (),
    meters: Mapping[str, tuple[int, int]] | None = None,
    muted: Iterable[str] = (),
) -> list[PersonaView]:
    """Group ``rows`` by persona, sorted by name; ``personas`` adds sections with no lines yet.

    Within a persona: open lines newest first, then closed lines newest first.
    """
    rows = list(rows)
    by_id = {r.id: r for r in rows if r.id is not None}
    muted = frozenset(muted)
    meters = meters or {}
    grouped: dict[str, list[MemoryRow]] = {p: [] for p in personas}
    for row in rows:
        grouped.setdefault(row.persona, []).append(row)
    views = []
    for slug in sorted(grouped, key=lambda s: (persona_name(s), s)):
        held = sorted(grouped[slug], key=lambda r: (r.created, r.id or 0), reverse=True)
        meter = meters.get(slug)
        views.append(
            PersonaView(
                slug=slug,
                name=persona_name(slug),
                open_lines=tuple(line_view(r, by_id) for r in held if r.is_open),
                closed_lines=tuple(line_view(r, by_id) for r in held if not r.is_open),
                meter=Meter(*meter) if meter is not None else None,
                muted=slug in muted,
            )
        )
    return views


@attrs.frozen
class NoticeView:
    """One toast as the Notices page shows it."""

    id: int
    persona: str
    text: str
    room_id: str | None
    when: str
    lines: int


def notice_views(notices: Iterable[Any], kept: Iterable[int] | None = None) -> list[NoticeView]:
    """Notices (``storage.writes.Notice``) in the order given, newest first by the facade.

    ``lines`` counts the announced lines still kept (``kept``: the ids of the person's rows),
    which is what undo would delete; without ``kept``, every line the notice announced.
    """
    still = None if kept is None else set(kept)
    return [
        NoticeView(
            id=n.id,
            persona=persona_name(n.persona),
            text=n.text,
            room_id=n.room_id,
            when=moment(n.created),
            lines=len(n.memory_ids) if still is None else len(set(n.memory_ids) & still),
        )
        for n in notices
    ]


@attrs.frozen
class SpokenLine:
    """A transcript line a memory cites, with its speaker said plainly."""

    speaker: str
    text: str
    when: str
    mine: bool


def speaker_label(speaker: str, user_id: int) -> str:
    """``u:42`` → ``You`` for the reader, another ``u:17`` stays an id, a slug → ``Warren``."""
    who = parse_user_ref(speaker)
    if who == user_id:
        return "You"
    if who is not None:
        return speaker
    return persona_name(speaker)


def spoken_lines(lines: Iterable[Any], user_id: int) -> list[SpokenLine]:
    """Transcript lines (``storage.store.TranscriptLine``) for the evidence page."""
    return [
        SpokenLine(
            speaker=speaker_label(line.speaker, user_id),
            text=line.text,
            when=moment(line.at),
            mine=parse_user_ref(line.speaker) == user_id,
        )
        for line in lines
    ]


@attrs.frozen
class NoteView:
    """The note form: its text and the counter."""

    text: str
    limit: int = NOTE_LIMIT

    @property
    def count(self) -> int:
        return len(self.text)

    @property
    def over(self) -> bool:
        return self.count > self.limit


def normalize_note(text: str) -> str:
    """Browsers send a textarea's line breaks as CRLF; count and store them as one char."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def done_message(code: str | None) -> str | None:
    """The fixed sentence for a ``?done=`` code; unknown codes say nothing (no reflection)."""
    return DONE_MESSAGES.get(code or "")


# ---- JSON shapes (the API and the export) --------------------------------------------------


def row_json(row: MemoryRow) -> dict[str, Any]:
    """A memory line as the API returns it (no vectors, no recall bookkeeping)."""
    return {
        "id": row.id,
        "persona": row.persona,
        "subject": row.subject,
        "counterpart": row.counterpart,
        "kind": row.kind,
        "text": row.text,
        "importance": row.importance,
        "created": row.created.isoformat(),
        "valid_from": row.valid_from,
        "valid_to": row.valid_to,
        "closed_by": row.closed_by,
        "open": row.is_open,
        "room_id": row.room_id,
        "evidence": list(row.evidence),
    }


def notice_json(notice: Any) -> dict[str, Any]:
    return {
        "id": notice.id,
        "persona": notice.persona,
        "room_id": notice.room_id,
        "text": notice.text,
        "memory_ids": list(notice.memory_ids),
        "created": notice.created.isoformat(),
    }


def line_json(line: Any) -> dict[str, Any]:
    return {
        "id": line.id,
        "room_id": line.room_id,
        "speaker": line.speaker,
        "text": line.text,
        "at": line.at.isoformat(),
    }


def controls_json(
    controls: UserControls,
    personas: Sequence[str],
    meters: Mapping[str, tuple[int, int]],
) -> dict[str, Any]:
    """The switches and the note, with each persona's mute and meter."""
    return {
        "user": user_ref(controls.user_id),
        "memory_on": controls.memory_on,
        "memory_note": controls.memory_note,
        "note_limit": NOTE_LIMIT,
        "personas": [
            {
                "persona": p,
                "muted": p in controls.muted,
                "meter": {"used": meters[p][0], "limit": meters[p][1]} if p in meters else None,
            }
            for p in personas
        ],
    }
