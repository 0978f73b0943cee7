"""View models: what the pages and the API show, computed from plain values. No I/O.

Rules:
- Lines are grouped by the persona that holds them; personas are listed by name, each with its
  open lines (newest first) and then its closed ones (greyed on the page, with their arc).
- A line reads to the signed-in person in the second person ("You sold the flat…"), everyone
  else by their display name (``wording``); a room by the title the runtime gave it, else "a
  private chat with Warren" or "a group chat" — never its id ("a chat" when it is not known).
- The memories page is one list in that order, filtered (words of the text as shown, persona,
  kind, current or closed) and cut into pages of ``PAGE_SIZE``; each page groups its slice by
  persona again. The query lives in the URL only (a GET form, links for pages): no script.
- An open line says whether it rides in its persona's block for a private chat right now (the
  ids ``Memory.private_block`` loads); a closed line never rides.
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
from urllib.parse import urlencode

import attrs

from ..errors import InvalidInput
from ..ids import check_persona, parse_user_ref, persona_name, user_ref
from ..rows import NOTE_LIMIT, MemoryRow, UserControls
from ..storage.rooms import RoomFacts
from .wording import base_form, second_person  # noqa: F401  (the wording of lines, with the views)

PAGE_SIZE = 50
MAX_SEARCH = 200

KIND_LABELS = {
    "fact": "fact",
    "preference": "preference",
    "event": "event",
    "promise": "promise",
    "open_loop": "open loop",
    "relationship": "relationship",
}

STATES = {"": "All lines", "current": "Current", "closed": "No longer true"}

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


def room_label(facts: RoomFacts | None) -> str:
    """What a room is called on the page: ``“Book club”`` (its title), ``a private chat with
    Warren``, ``a group chat``; ``a chat`` for a room never recorded."""
    if facts is None:
        return "a chat"
    if facts.title:
        return f"“{facts.title}”"
    if facts.private and facts.personas:
        return f"a private chat with {persona_name(facts.personas[0])}"
    return "a group chat"


@attrs.frozen
class Reader:
    """The signed-in person and what phrasing for them needs: display names by user id, the
    rooms lines came from, and the personas' names (any of them makes "they" ambiguous)."""

    user_id: int
    names: Mapping[int, str] = attrs.field(factory=dict)
    rooms: Mapping[str, RoomFacts] = attrs.field(factory=dict)
    personas: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """How the header names the reader: their display name, else ``user 42``."""
        return self.names.get(self.user_id) or f"user {self.user_id}"

    def text(self, row: MemoryRow) -> str:
        """The row's text as the reader reads it."""
        return self.phrase(row.text, about_reader=row.subject == user_ref(self.user_id))

    def phrase(self, text: str, *, about_reader: bool = False) -> str:
        others = {persona_name(p) for p in self.personas}
        others |= {n for uid, n in self.names.items() if uid != self.user_id}
        return second_person(text, self.user_id, names=self.names, about_reader=about_reader, others=others)

    def room(self, room_id: str | None) -> str | None:
        return None if room_id is None else room_label(self.rooms.get(room_id))

    def speaker(self, speaker: str) -> str:
        """``u:42`` → ``You`` for the reader, another user by name (else the id), a slug →
        ``Warren``."""
        who = parse_user_ref(speaker)
        if who == self.user_id:
            return "You"
        if who is not None:
            return self.names.get(who, speaker)
        return persona_name(speaker)


@attrs.frozen
class LineView:
    """One memory line as the page shows it."""

    id: int
    text: str
    kind: str
    noted: str
    since: str | None
    room: str | None
    evidence_count: int
    closed: bool
    arc: str | None
    replaced_by: str | None
    rides: bool = False


def line_view(
    row: MemoryRow, by_id: Mapping[int, MemoryRow], reader: Reader, riding: Iterable[int] = ()
) -> LineView:
    """The view of ``row`` for ``reader``; ``by_id`` lets a closed line name the line that
    replaced it; ``riding``: the ids in the persona's private-chat block now."""
    assert row.id is not None
    successor = by_id.get(row.closed_by) if row.closed_by is not None else None
    return LineView(
        id=row.id,
        text=reader.text(row),
        kind=KIND_LABELS.get(row.kind, row.kind),
        noted=day(row.created),
        since=row.valid_from,
        room=reader.room(row.room_id),
        evidence_count=len(row.evidence),
        closed=not row.is_open,
        arc=arc(row),
        replaced_by=reader.text(successor) if successor is not None else None,
        rides=row.is_open and row.id in frozenset(riding),
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
    """One persona's section of the page: the lines shown here, and what holds for all of
    the persona's lines about the reader: ``kept``, ``current`` (open), and ``riding`` (open
    and in the block for a private chat now)."""

    slug: str
    name: str
    open_lines: tuple[LineView, ...]
    closed_lines: tuple[LineView, ...]
    meter: Meter | None
    muted: bool
    kept: int = 0
    current: int = 0
    riding: int = 0

    @property
    def count(self) -> int:
        return len(self.open_lines) + len(self.closed_lines)

    @property
    def lines(self) -> tuple[LineView, ...]:
        return self.open_lines + self.closed_lines


def persona_views(
    rows: Iterable[MemoryRow],
    reader: Reader,
    *,
    personas: Iterable[str] = (),
    meters: Mapping[str, tuple[int, int]] | None = None,
    muted: Iterable[str] = (),
    riding: Mapping[str, Iterable[int]] | None = None,
) -> list[PersonaView]:
    """Group ``rows`` by persona, sorted by name; ``personas`` adds sections with no lines yet.

    Within a persona: open lines newest first, then closed lines newest first.
    """
    rows = list(rows)
    by_id = {r.id: r for r in rows if r.id is not None}
    muted = frozenset(muted)
    meters = meters or {}
    riding = riding or {}
    grouped: dict[str, list[MemoryRow]] = {p: [] for p in personas}
    for row in rows:
        grouped.setdefault(row.persona, []).append(row)
    views = []
    for slug in sorted(grouped, key=lambda s: (persona_name(s), s)):
        held = sorted(grouped[slug], key=lambda r: (r.created, r.id or 0), reverse=True)
        rides = frozenset(riding.get(slug, ()))
        lines = [line_view(r, by_id, reader, rides) for r in held]
        meter = meters.get(slug)
        views.append(
            PersonaView(
                slug=slug,
                name=persona_name(slug),
                open_lines=tuple(v for v in lines if not v.closed),
                closed_lines=tuple(v for v in lines if v.closed),
                meter=Meter(*meter) if meter is not None else None,
                muted=slug in muted,
                kept=len(lines),
                current=sum(1 for v in lines if not v.closed),
                riding=sum(1 for v in lines if v.rides),
            )
        )
    return views


# ---- the memories page: search, filters, pages ---------------------------------------------


@attrs.frozen
class LineQuery:
    """What the memories page shows: the words to find (all of them, in the text as shown),
    one persona, one kind, current or closed lines, and the page. Empty means any."""

    text: str = ""
    persona: str = ""
    kind: str = ""
    state: str = ""
    page: int = 1

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> "LineQuery":
        """The query of the page's URL (``q``, ``persona``, ``kind``, ``state``, ``page``).

        Raises:
            InvalidInput: a value the form never sends, with what it should be.
        """
        text = " ".join(params.get("q", "").split())
        if len(text) > MAX_SEARCH:
            raise InvalidInput(f"Search for at most {MAX_SEARCH} characters (that was {len(text)}).")
        persona = params.get("persona", "")
        if persona:
            try:
                check_persona(persona)
            except InvalidInput:
                raise InvalidInput(f"There is no persona {persona!r}: choose one from the list.") from None
        kind = params.get("kind", "")
        if kind and kind not in KIND_LABELS:
            raise InvalidInput(f"There is no kind {kind!r}: choose one of {', '.join(KIND_LABELS)}.")
        state = params.get("state", "")
        if state not in STATES:
            raise InvalidInput("Show current lines (state=current), closed ones (state=closed), or both.")
        raw_page = params.get("page", "1") or "1"
        if not raw_page.isdigit() or not 1 <= int(raw_page) <= 10**6:
            raise InvalidInput(f"The page must be a whole number from 1, not {raw_page!r}.")
        return cls(text=text, persona=persona, kind=kind, state=state, page=int(raw_page))

    @property
    def filtered(self) -> bool:
        return bool(self.text or self.persona or self.kind or self.state)

    def href(self, page: int | None = None) -> str:
        """The page's URL for this query (at ``page``); the defaults are left out."""
        params = {"q": self.text, "persona": self.persona, "kind": self.kind, "state": self.state}
        query = {k: v for k, v in params.items() if v}
        number = self.page if page is None else page
        if number != 1:
            query["page"] = str(number)
        return "/?" + urlencode(query) if query else "/"

    def matches(self, slug: str, line: LineView) -> bool:
        if self.persona and slug != self.persona:
            return False
        if self.kind and line.kind != KIND_LABELS[self.kind]:
            return False
        if self.state == "current" and line.closed or self.state == "closed" and not line.closed:
            return False
        shown = line.text.casefold()
        return all(word in shown for word in self.text.casefold().split())


@attrs.frozen
class PageLink:
    number: int
    href: str
    current: bool


@attrs.frozen
class MemoriesPage:
    """One page of the memories list: its sections, and where it stands in the whole."""

    query: LineQuery
    groups: tuple[PersonaView, ...]
    empty: tuple[PersonaView, ...]
    total: int
    matched: int
    pages: int
    first: int
    last: int

    @property
    def previous(self) -> str | None:
        return self.query.href(self.query.page - 1) if 1 < self.query.page <= self.pages else None

    @property
    def next(self) -> str | None:
        return self.query.href(self.query.page + 1) if self.query.page < self.pages else None

    @property
    def links(self) -> tuple[PageLink | None, ...]:
        """Links to the pages: all of them up to 9, else the first, the last and two either
        side of this one, with ``None`` where pages are left out."""
        if self.pages <= 1:
            return ()
        here = self.query.page
        wanted = sorted(
            n for n in set(range(1, self.pages + 1))
            if self.pages <= 9 or n in (1, self.pages) or abs(n - here) <= 2
        )
        out: list[PageLink | None] = []
        for n in wanted:
            if out and out[-1] is not None and n - out[-1].number > 1:
                out.append(None)
            out.append(PageLink(n, self.query.href(n), n == here))
        return tuple(out)


def memories_page(groups: Sequence[PersonaView], query: LineQuery, size: int = PAGE_SIZE) -> MemoriesPage:
    """The page of ``groups`` (every line about the reader, as ``persona_views`` gives them)
    that ``query`` asks for. Personas that keep nothing are listed on the last page of the
    unfiltered list (or when the persona filter names them)."""
    found = [(g, line) for g in groups for line in g.lines if query.matches(g.slug, line)]
    pages = max(1, -(-len(found) // size))
    start = (query.page - 1) * size
    shown = found[start : start + size]
    sections: list[PersonaView] = []
    for group in groups:
        mine = [line for g, line in shown if g is group]
        if mine:
            sections.append(attrs.evolve(
                group,
                open_lines=tuple(v for v in mine if not v.closed),
                closed_lines=tuple(v for v in mine if v.closed),
            ))
    unfiltered = not (query.text or query.kind or query.state)
    empty = tuple(
        g for g in groups
        if g.kept == 0 and unfiltered and query.persona in ("", g.slug) and query.page == pages
    )
    return MemoriesPage(
        query=query,
        groups=tuple(sections),
        empty=empty,
        total=sum(g.kept for g in groups),
        matched=len(found),
        pages=pages,
        first=start + 1 if shown else 0,
        last=start + len(shown),
    )


@attrs.frozen
class NoticeView:
    """One toast as the Notices page shows it."""

    id: int
    persona: str
    text: str
    room: str | None
    when: str
    lines: int


def notice_views(notices: Iterable[Any], reader: Reader, kept: Iterable[int] | None = None) -> list[NoticeView]:
    """Notices (``storage.writes.Notice``) in the order given, newest first by the facade.

    ``lines`` counts the announced lines still kept (``kept``: the ids of the person's rows),
    which is what undo would delete; without ``kept``, every line the notice announced.
    """
    still = None if kept is None else set(kept)
    return [
        NoticeView(
            id=n.id,
            persona=persona_name(n.persona),
            text=reader.phrase(n.text),
            room=reader.room(n.room_id),
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


def spoken_lines(lines: Iterable[Any], reader: Reader) -> list[SpokenLine]:
    """Transcript lines (``storage.queries.TranscriptLine``) for the evidence page, each said by
    "You", a persona, or another person by name."""
    return [
        SpokenLine(
            speaker=reader.speaker(line.speaker),
            text=line.text,
            when=moment(line.at),
            mine=parse_user_ref(line.speaker) == reader.user_id,
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
