"""The write path (design §2): slice → extract → check → embed → route → plan → post.

Runs on a persona's writer lane (so one persona's writes are serialized), off the floor: nothing
here runs while a human waits for a reply.

Rules:
- The slice is the room's transcript past this persona's cursor, with line ids kept.
- Incognito rooms and rooms with a kit are never read (the actor does not even call this).
  Humans with memory off, or who muted this persona, are not offered to the mind as present,
  and a candidate about them is dropped by validation.
- The mind's answers are checked in code (``validation``, ``routing``) before anything is
  stored; every dropped candidate is logged with its reason and counted in the report.
- Everything the slice produces — rows, closings, the cursor move, notices — commits in one
  transaction (``storage.writes.post_plan``). A failure before the commit leaves nothing and
  the next run redoes the slice; a replay after the commit adds nothing.
- A provider that fails (``ProviderError``) parks the slice with its error and a retry time
  (doubling backoff); the sweep retries it. Never skipped silently. Other errors propagate:
  the writer crashes and the supervisor restarts it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone

import attrs
import numpy as np

from ..clock import WallClock
from ..core.audience import may_write_about
from ..embedding import Embedder, quantize
from ..embedding.vectors import dequantize, unit_rows
from ..errors import ProviderError
from ..ids import parse_user_ref
from ..minds.port import ExtractionRequest, Line, Mind, Neighbour, Person, RoutingRequest
from ..rooms import RoomState
from ..rows import MemoryRow
from ..settings import WriteSettings
from ..storage import writes
from ..storage.store import Store, TranscriptLine
from .plan import Vector, WritePlan, make_plan
from .routing import Decision, Event, RoutingRefused, exact_duplicate, interpret, neighbours
from .validation import Candidate, Dropped, SliceFacts, check_candidates

log = logging.getLogger(__name__)


@attrs.frozen
class WriteReport:
    """What one run of the write path did, for logs, the demo and the benchmarks."""

    persona: str
    room_id: str
    lines: int
    decisions: tuple[Decision, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    plan: WritePlan | None = None
    posted: writes.Posted | None = None
    parked: str | None = None


class WritePipeline:
    """The write path as the actors call it: ``await pipeline(persona, room, archiving=...)``."""

    def __init__(
        self,
        store: Store,
        mind: Mind,
        embedder: Embedder,
        clock: WallClock,
        settings: WriteSettings,
        *,
        on_report: Callable[[WriteReport], None] | None = None,
    ) -> None:
        self._store = store
        self._mind = mind
        self._embedder = embedder
        self._clock = clock
        self._settings = settings
        self._on_report = on_report

    async def __call__(self, persona: str, room: RoomState, *, archiving: bool = False, block: str = "") -> WriteReport:
        store = self._store
        start = await store.read(lambda conn: writes.cursor(conn, persona, room.room_id))
        lines = await store.lines(room.room_id, after_id=start)
        if not lines:
            report = WriteReport(persona, room.room_id, 0)
        else:
            now = self._clock.now()
            try:
                report = await self._write(persona, room, start, lines, now, block)
            except ProviderError as exc:
                report = await self._park(persona, room, len(lines), exc, now)
        if self._on_report is not None:
            self._on_report(report)
        return report

    async def _write(
        self,
        persona: str,
        room: RoomState,
        start: int,
        lines: Sequence[TranscriptLine],
        now: datetime,
        block: str,
    ) -> WriteReport:
        store = self._store
        speakers = {parse_user_ref(line.speaker) for line in lines} - {None}
        controls = await store.user_controls(room.present | speakers)
        writable = frozenset(u for u in room.present if may_write_about(persona, u, controls))
        request = ExtractionRequest(
            persona=persona,
            lines=tuple(Line(l.id, l.speaker, l.text, l.at) for l in lines),
            present=tuple(Person(u, room.names.get(u)) for u in sorted(writable)),
            block=block,
            today=now.date(),
            private=room.private,
            personas=room.personas,
        )
        answer = await self._mind.extract(request)
        facts = SliceFacts(
            persona=persona,
            line_speakers={l.id: l.speaker for l in lines},
            writable=writable,
            names=room.names,
            importance_min=self._settings.importance_min,
        )
        candidates, dropped = check_candidates(answer, facts)
        decisions, refused, vectors = await self._route(persona, candidates)
        dropped = [*dropped, *refused]
        for item in dropped:
            log.info("%s, room %r: dropped a candidate: %s", persona, room.room_id, item.reason)
        day_start = datetime.combine(now.date(), datetime.min.time(), tzinfo=timezone.utc)
        written_today = await store.read(lambda conn: writes.written_since(conn, persona, day_start))
        plan = make_plan(
            decisions,
            persona=persona,
            room_id=room.room_id,
            cursor_from=start,
            cursor_to=lines[-1].id,
            now=now,
            witnessed=room.present,
            vectors=vectors,
            written_today=written_today,
            daily_cap=self._settings.daily_cap_per_human,
        )
        for candidate in plan.over_cap:
            log.info("%s: over the daily cap, dropped %r", persona, candidate.text)

        def post(conn) -> writes.Posted:
            posted = writes.post_plan(conn, plan, now)
            writes.unpark(conn, persona, room.room_id)
            return posted

        posted = await store.write(post)
        return WriteReport(
            persona, room.room_id, len(lines), tuple(decisions), tuple(dropped), plan, posted
        )

    async def _route(
        self, persona: str, candidates: Sequence[Candidate]
    ) -> tuple[list[Decision], list[Dropped], dict[int, Vector]]:
        if not candidates:
            return [], [], {}
        embedder = self._embedder
        matrix = await embedder.embed([c.text for c in candidates])
        vectors = {}
        for i, vector in enumerate(matrix):
            blob, scale = quantize(vector)
            vectors[i] = Vector(blob, scale, embedder.name)
        existing = await self._store.read(
            lambda conn: writes.open_rows(conn, persona, {c.subject for c in candidates})
        )
        existing_vectors = _unit_vectors(existing, embedder.name)
        decisions: list[Decision] = []
        refused: list[Dropped] = []
        for i, candidate in enumerate(candidates):
            if exact_duplicate(candidate, existing) is not None:
                decisions.append(Decision(candidate, Event.NONE, why="exact duplicate"))
                continue
            offered = neighbours(
                candidate,
                matrix[i],
                embedder.name,
                existing,
                existing_vectors,
                limit=self._settings.neighbours,
                min_cosine=self._settings.neighbour_min_cosine,
            )
            if not offered:
                decisions.append(Decision(candidate, Event.ADD, why="no neighbour"))
                continue
            answer = await self._mind.route(
                RoutingRequest(
                    persona=persona,
                    subject=candidate.subject,
                    kind=candidate.kind,
                    text=candidate.text,
                    valid_from=candidate.valid_from,
                    neighbours=tuple(Neighbour(str(k), row.text) for k, row in enumerate(offered)),
                )
            )
            try:
                decisions.append(interpret(answer, candidate, offered))
            except RoutingRefused as exc:
                refused.append(Dropped(f"routing refused: {exc}", answer))
        return decisions, refused, vectors

    async def _park(
        self, persona: str, room: RoomState, n_lines: int, exc: ProviderError, now: datetime
    ) -> WriteReport:
        s = self._settings
        attempts = await self._store.read(lambda conn: writes.parked_attempts(conn, persona, room.room_id))
        delay = min(s.park_backoff_max_seconds, s.park_backoff_initial_seconds * 2**attempts)
        retry_at = now + timedelta(seconds=delay)
        error = f"{type(exc).__name__}: {exc}"
        await self._store.write(lambda conn: writes.park(conn, persona, room.room_id, error, retry_at))
        log.warning(
            "%s, room %r: the write path failed (%s); slice of %d lines parked until %s",
            persona,
            room.room_id,
            error,
            n_lines,
            retry_at.isoformat(),
        )
        return WriteReport(persona, room.room_id, n_lines, parked=error)


def _unit_vectors(rows: Sequence[MemoryRow], embedder: str) -> dict[int, np.ndarray]:
    out = {}
    for row in rows:
        if row.embedder == embedder and row.embedding is not None and row.embedding_scale is not None:
            out[row.id] = unit_rows(dequantize(row.embedding, row.embedding_scale)[None, :])[0]
    return out
