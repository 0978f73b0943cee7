"""The write path (design §2): slice → extract → check → embed → route → plan → post.

Runs on a persona's writer lane (so one persona's writes are serialized), off the floor: nothing
here runs while a human waits for a reply.

Rules:
- A slice is the room's transcript past this persona's cursor, with line ids kept, holding only
  the lines this persona heard: said while it was in the room, not incognito, no kit mounted
  (each line records its presence). Lines of a human who has memory off, or who muted this
  persona, are never sent to this persona's mind; when no human it may remember heard the
  slice (a private chat with such a human) it makes no model call at all and only moves the
  cursor.
- A slice holds at most ``write.max_slice_lines`` lines and ``write.max_slice_chars``
  characters; a longer backlog is written as consecutive slices, each committed with its
  cursor. A slice the provider refuses as too long is split in two, each half on its own.
- The mind's ``present`` and the rows it may produce are about writable humans who heard the
  slice. A row's ``witnessed`` is who was present at every one of its evidence lines.
- The mind is told the room's situation: private or group, its topic, the kits mounted
  before or after the slice's lines (``kits_around``; the last kit before the cursor is read
  with the cursor), and how many humans' lines were withheld.
- Few round trips per slice: the cursor, the last kit, the backlog, the hearers' switches, the
  row version and the day's count for the cap are one read (``read_backlog``); the names a
  row may mention are one more, unless they are found without it (below); the plan is one
  write. A backlog shorter than a slice is the whole of it: no read after it to find nothing
  (a line posted meanwhile comes with its own quiet).
- While there are at most ``NAMES_AHEAD`` known display names, the backlog's read also brings
  every one of them (``writes.names_if_few``): the first slice of the backlog then picks from
  them the names whose first word is a word of its candidates, as the read would (the same
  rows, in the order that read's index gives them). A later slice of the same backlog (after
  a split), or one whose day is not the day the count was read for, reads the names itself.
- Routing reads the persona's open rows from a ``RouteIndex``: the actor's own (``routing_index``,
  asked for when a slice is routed) when it is at the row version the store has — built on a
  worker thread from the actor's snapshot when the actor has none yet — else one loaded from
  the store; a later slice of the same run reads the index with what the slices before it
  posted taken in, and the report carries the last one (``routing``) for the actor to keep —
  except the actor's own index with only this run's posts left to take in: the actor takes
  them in itself as it applies the report (each post is taken in once). An index the write
  path builds reads its rows' slots with ``slots`` (``slot_reader``), which the composition
  root picks.
- The mind's answers are checked in code (``validation``, ``guards``, ``routing``) before
  anything is stored; every dropped candidate is logged with its reason and counted in the
  report. The extraction check is pure: given ``offload`` (``workers.Workers``: the offline
  reader's worker processes) it runs there when they choose it (up, and other slices under way), beside the
  event loop's core — the same check, the same answer — and the kept candidates are embedded
  in the same job when the embedder has a ``portable`` twin (``offloaded``). When the mind
  can read in a worker too (``portable_extract``) and the names the check needs can be found
  there (every known name came with the backlog, or the store is a SQLite file the worker
  reads), the reading, the names, the check and the embedding are one job
  (``offloaded.read_checked_and_embedded``): a slice then costs three hops — the backlog,
  that job, the plan's commit.
- Everything a slice produces — rows, closings, the cursor move, notices — commits in one
  transaction (``storage.writes.post_plan``). A failure before the commit leaves nothing and
  the next run redoes the slice; a replay after the commit adds nothing.
- A provider that fails (``ProviderError``) parks the slice with its error and a retry time
  (doubling backoff); the sweep retries it. Never skipped silently. Other errors propagate:
  the writer crashes and the supervisor restarts it (and parks the job if it keeps failing).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone

import attrs
import trio

from ..clock import WallClock
from ..core.audience import may_write_about
from ..embedding import Embedder
from ..errors import ProviderError, ProviderInputTooLong, ProviderNonsense
from ..ids import parse_user_ref
from ..minds.port import ExtractionRequest, Line, Mind, Neighbour, Person, RoutingRequest
from ..rooms import RoomState
from ..rows import UserControls
from ..settings import WriteSettings
from ..storage import leases, writes
from ..storage.queries import TranscriptLine, controls_of, lines_after, names_among, persona_version
from ..storage.store import Store
from ..storage.file_names import FileNames
from .offloaded import Embedded, HeldNames, Read, checked_and_embedded, read_checked_and_embedded, words_of
from .plan import Vector, WritePlan, make_plan
from .quantized import quantize_rows
from .route_index import RouteIndex, RouteSource
from .routing import Decision, Event, RoutingRefused, exact_duplicate, interpret, neighbours
from .slot_reader import SlotReader
from .validation import Candidate, Dropped, SliceFacts, check_candidates
from .workers import Workers

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
    routing: RouteIndex | None = None


class WritePipeline:
    """The write path as the actors call it: ``await pipeline(persona, room, archiving=...)``.

    ``slots`` reads which slots a row fills, for the route indexes it builds (the composition
    root's ``make_slot_reader``); ``offload``: worker processes for the slice's pure steps.
    """

    def __init__(
        self,
        store: Store,
        mind: Mind,
        embedder: Embedder,
        clock: WallClock,
        settings: WriteSettings,
        *,
        slots: SlotReader,
        on_report: Callable[[WriteReport], None] | None = None,
        fence: leases.Fence = leases.unfenced,
        offload: Workers | None = None,
    ) -> None:
        self._store = store
        self._slots = slots
        self._offload = offload
        self._fence = fence
        self._mind = mind
        self._embedder = embedder
        self._clock = clock
        self._settings = settings
        self._on_report = on_report

    async def __call__(
        self,
        persona: str,
        room: RoomState,
        *,
        archiving: bool = False,
        block: str = "",
        routing_index: Callable[[], RouteIndex | RouteSource | None] | None = None,
    ) -> WriteReport:
        """Write what ``persona`` heard in ``room`` since its cursor.

        ``routing_index`` gives the actor's route index when asked (``None`` if it has none);
        it is used only while it matches the store's row version.
        """
        store = self._store
        s = self._settings
        limit = s.max_slice_lines
        since = _day_start(self._clock.now())
        backlog = await store.read(lambda conn: read_backlog(conn, persona, room.room_id, limit, since=since))
        known = _Known(backlog.version, routing_index)
        reports: list[WriteReport] = []
        while backlog.lines:
            chunk = _within_chars(backlog.lines, persona, s.max_slice_chars)
            done = await self._slices(
                persona, room, backlog.start, chunk, block, backlog.kit, backlog.controls, known, backlog.ahead
            )
            reports.extend(done)
            if any(r.parked for r in done):
                break
            if len(chunk) == len(backlog.lines) < limit:
                break  # that was the whole backlog; a line posted since comes with its own quiet
            start, kit, since = chunk[-1].id, _last_kit(chunk) or backlog.kit, _day_start(self._clock.now())
            backlog = await store.read(
                lambda conn: read_backlog(conn, persona, room.room_id, limit, start=start, kit=kit, since=since)
            )
        report = attrs.evolve(_merged(persona, room.room_id, reports), routing=known.settled())
        if self._on_report is not None:
            for one in reports or [report]:
                self._on_report(one)
        return report

    async def _slices(
        self, persona: str, room: RoomState, start: int, chunk: Sequence[TranscriptLine], block: str,
        kit: str | None, controls: Mapping[int, UserControls], known: _Known, ahead: Ahead | None = None,
    ) -> list[WriteReport]:
        """Write ``chunk`` as one slice; split it while the provider says it is too long.
        ``kit``: the last kit mounted in the room before ``chunk``, if any; ``controls``: the
        switches of (at least) every human who heard a line of it; ``ahead``: what the
        backlog's read brought for its first slice."""
        now = self._clock.now()
        try:
            return [await self._write(persona, room, start, chunk, now, block, kit, controls, known, ahead)]
        except ProviderInputTooLong as exc:
            heard = [i for i, line in enumerate(chunk) if line.heard_by(persona)]
            if len(heard) < 2:
                return [await self._park(persona, room, len(chunk), exc, now)]
            cut = heard[len(heard) // 2]
            log.info("%s, room %r: a slice of %d lines was too long; splitting it", persona, room.room_id, len(chunk))
            first = await self._slices(persona, room, start, chunk[:cut], block, kit, controls, known)
            if any(r.parked for r in first):
                return first
            return first + await self._slices(
                persona, room, chunk[cut - 1].id, chunk[cut:], block, _last_kit(chunk[:cut]) or kit,
                controls, known,
            )
        except ProviderError as exc:
            return [await self._park(persona, room, len(chunk), exc, now)]

    async def _write(
        self,
        persona: str,
        room: RoomState,
        start: int,
        chunk: Sequence[TranscriptLine],
        now: datetime,
        block: str,
        kit: str | None,
        controls: Mapping[int, UserControls],
        known: _Known,
        ahead: Ahead | None = None,
    ) -> WriteReport:
        store = self._store
        heard = [line for line in chunk if line.heard_by(persona)]
        hearers = frozenset().union(*(line.humans for line in heard)) if heard else frozenset()
        writable = frozenset(u for u in hearers if may_write_about(persona, u, controls))
        lines = [line for line in heard if _may_read(line, writable)]
        present = frozenset().union(*(line.humans for line in lines)) & writable if lines else frozenset()
        if not present:
            # Nobody here may be remembered (or nothing was heard): no model call, only the
            # cursor moves past what this persona may not read.
            plan = make_plan(
                (), persona=persona, room_id=room.room_id, cursor_from=start, cursor_to=chunk[-1].id,
                now=now, heard={}, vectors={}, written_today={}, daily_cap=self._settings.daily_cap_per_human,
            )
            epoch = self._fence(persona)
            posted = await store.write(lambda conn: _post(conn, plan, now, epoch))
            known.took(posted)
            return WriteReport(persona, room.room_id, 0, plan=plan, posted=posted)
        kit_earlier, kit_later = kits_around(chunk, lines, kit, room.kit)
        request = ExtractionRequest(
            persona=persona,
            lines=tuple(Line(l.id, l.speaker, l.text, l.at) for l in lines),
            present=tuple(Person(u, room.names.get(u)) for u in sorted(present)),
            block=block,
            today=now.date(),
            private=room.private,
            personas=room.personas,
            topic=room.topic,
            kit_earlier=kit_earlier,
            kit_later=kit_later,
            withheld=len(hearers - writable),
        )
        day_start = _day_start(now)
        taken = ahead.take(day_start) if ahead is not None else None
        facts = SliceFacts(
            persona=persona,
            line_speakers={l.id: l.speaker for l in lines},
            writable=present,
            names={u: n for u, n in room.names.items() if u in present},
            known_names=dict(room.names),  # the names the candidates' words bring go in front
            line_texts={l.id: l.text for l in lines},
            importance_min=self._settings.importance_min,
        )
        done = await self._in_one_job(request, facts, taken)
        if done is not None:
            if done.refused is not None:
                raise ProviderNonsense(f"the extraction answer could not be read: {done.refused}")
            candidates, dropped, embedded = done.kept, done.dropped, done.embedded
            if taken is not None:
                written_today = taken.written
            else:
                written_today = await store.read(lambda conn: writes.written_since(conn, persona, day_start))
        else:
            answer = await self._mind.extract(request)
            words = words_of(answer)
            if taken is None:  # the names and the day's count, one read
                names, written_today = await store.read(
                    lambda conn: (names_among(conn, words), writes.written_since(conn, persona, day_start))
                )
            else:
                held = taken.names_among(words)
                names = held if held is not None else await store.read(lambda conn: names_among(conn, words))
                written_today = taken.written
            facts = attrs.evolve(facts, known_names={**names, **room.names})
            candidates, dropped, embedded = await self._checked(answer, facts)
        decisions, refused, vectors = await self._route(persona, candidates, known, embedded)
        dropped = [*dropped, *refused]
        for item in dropped:
            log.info("%s, room %r: dropped a candidate: %s", persona, room.room_id, item.reason)
        plan = make_plan(
            decisions,
            persona=persona,
            room_id=room.room_id,
            cursor_from=start,
            cursor_to=chunk[-1].id,
            now=now,
            heard={l.id: l.humans for l in lines},
            vectors=vectors,
            written_today=written_today,
            daily_cap=self._settings.daily_cap_per_human,
        )
        for candidate in plan.over_cap:
            log.info("%s: over the daily cap, dropped %r", persona, candidate.text)
        epoch = self._fence(persona)
        posted = await store.write(lambda conn: _post(conn, plan, now, epoch))
        known.took(posted)
        return WriteReport(
            persona, room.room_id, len(lines), tuple(decisions), tuple(dropped), plan, posted
        )

    async def _in_one_job(self, request: ExtractionRequest, facts: SliceFacts, taken: Ahead | None) -> Read | None:
        """The slice read, checked and embedded in one job on the reader's worker process
        (``offloaded``), when the mind can read there, the names can be found there and the
        workers take the job; else ``None`` (the steps run one by one)."""
        offload, portable = self._offload, getattr(self._mind, "portable_extract", None)
        if offload is None or portable is None:
            return None
        held = taken.names if taken is not None else None
        sqlite_path = getattr(self._store, "sqlite_path", None)
        names = held if held is not None else FileNames(sqlite_path) if sqlite_path else None
        if names is None:
            return None
        with offload.chosen() as to_workers:
            if not to_workers:
                return None
            embedding = getattr(self._embedder, "portable", None)
            return await offload.run(read_checked_and_embedded, portable(request), facts, names, embedding)

    async def _checked(self, answer: object, facts: SliceFacts) -> tuple[list[Candidate], list[Dropped], Embedded | None]:
        """The extraction check of ``answer`` — on the reader's worker process with the
        embedding of what it kept, when it takes the job — or ``ProviderNonsense``."""
        try:
            offload = self._offload
            if offload is not None:
                with offload.chosen() as to_workers:
                    if to_workers:
                        return await offload.run(
                            checked_and_embedded, answer, facts, getattr(self._embedder, "portable", None)
                        )
            kept, dropped = check_candidates(answer, facts)
            return kept, dropped, None
        except ProviderError:  # the worker process died on it: park the slice
            raise
        except Exception as exc:  # the mind's answer, not our bug: nonsense from a provider
            raise ProviderNonsense(f"the extraction answer could not be read: {type(exc).__name__}: {exc}") from exc

    async def _route(
        self, persona: str, candidates: Sequence[Candidate], known: _Known, embedded: Embedded | None = None
    ) -> tuple[list[Decision], list[Dropped], dict[int, Vector]]:
        """Route ``candidates`` (``embedded``: their vectors when embedded with the check)."""
        if not candidates:
            return [], [], {}
        embedder = self._embedder
        if embedded is None:
            matrix = await embedder.embed([c.text for c in candidates])
            quantized = quantize_rows(matrix)
        else:
            matrix, quantized = embedded.matrix, embedded.quantized
        vectors = {i: Vector(blob, scale, embedder.name) for i, (blob, scale) in enumerate(quantized)}
        index = known.current()
        if index is None and known.source is not None:
            index = known.loaded(await trio.to_thread.run_sync(known.source.build, self._slots))
        if index is None:
            version, rows = await self._store.memories.rows(persona)
            index = known.loaded(
                await trio.to_thread.run_sync(functools.partial(RouteIndex.from_rows, version, rows, reader=self._slots))
            )
        near = neighbours(
            candidates,
            matrix,
            embedder.name,
            index,
            limit=self._settings.neighbours,
            min_cosine=self._settings.neighbour_min_cosine,
        )
        decisions: list[Decision] = []
        refused: list[Dropped] = []
        for i, candidate in enumerate(candidates):
            if exact_duplicate(candidate, index) is not None:
                decisions.append(Decision(candidate, Event.NONE, why="exact duplicate"))
                continue
            offered = near[i]
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
            except Exception as exc:  # an answer no rule foresaw is the mind's nonsense
                raise ProviderNonsense(
                    f"the routing answer could not be read: {type(exc).__name__}: {exc}"
                ) from exc
        return decisions, refused, vectors

    async def _park(
        self, persona: str, room: RoomState, n_lines: int, exc: ProviderError, now: datetime
    ) -> WriteReport:
        s = self._settings
        attempts = await self._store.read(lambda conn: writes.parked_attempts(conn, persona, room.room_id))
        delay = min(s.park_backoff_max_seconds, s.park_backoff_initial_seconds * 2**attempts)
        retry_at = now + timedelta(seconds=delay)
        error = f"{type(exc).__name__}: {exc}"
        epoch = self._fence(persona)
        await self._store.write(lambda conn: writes.park(conn, persona, room.room_id, error, retry_at, epoch=epoch))
        log.warning(
            "%s, room %r: the write path failed (%s); slice of %d lines parked until %s",
            persona,
            room.room_id,
            error,
            n_lines,
            retry_at.isoformat(),
        )
        return WriteReport(persona, room.room_id, n_lines, parked=error)


def kits_around(
    chunk: Sequence[TranscriptLine],
    lines: Sequence[TranscriptLine],
    before: str | None,
    now: str | None,
) -> tuple[str | None, str | None]:
    """The kits mounted around a slice's ``lines`` (read from ``chunk``), as
    ``(earlier, later)``: ``earlier`` was mounted before some line of the slice (``before``:
    the last one before the chunk), ``later`` after its last line (``now``: the room's kit
    as it stands, mounted after every line the slice holds)."""
    earlier, later = before, None
    last = lines[-1].id
    for line in chunk:
        p = line.presence
        if p is None or p.kit is None:
            continue
        if line.id < last:
            earlier = p.kit
        else:
            later = p.kit
    return earlier, later or now


def _last_kit(chunk: Sequence[TranscriptLine]) -> str | None:
    for line in reversed(chunk):
        if line.presence is not None and line.presence.kit is not None:
            return line.presence.kit
    return None


NAMES_AHEAD = 256
"""At most this many known display names are read whole with a backlog (``Ahead``); with more,
a slice reads the few its candidates may mention, as before."""


@attrs.define(eq=False)
class Ahead:
    """What a backlog's read brought for its first slice: the day's count for the cap (rows
    written since ``since``) and every known display name (``None``: more than
    ``NAMES_AHEAD``). Taken once."""

    since: datetime
    written: dict[int, int]
    names: HeldNames | None
    taken: bool = False

    def take(self, since: datetime) -> Ahead | None:
        """This, for the first slice that asks, if it counts from ``since``."""
        if self.taken or since != self.since:
            return None
        self.taken = True
        return self

    def names_among(self, words: set[str]) -> dict[int, str] | None:
        """``store.names.among`` over ``words`` from the names held (``None``: not held)."""
        return self.names(words) if self.names is not None else None


@attrs.frozen
class Backlog:
    """Lines past ``start`` (at most a slice's worth), the last kit mounted at or before
    ``start``, and the switches of every human who was in the room for one of the lines."""

    start: int
    kit: str | None
    lines: Sequence[TranscriptLine]
    controls: Mapping[int, UserControls]
    version: int | None = None  # the persona's row version, read with the first backlog
    ahead: Ahead | None = None


def read_backlog(
    conn, persona: str, room_id: str, limit: int, *, start: int | None = None, kit: str | None = None,
    since: datetime | None = None,
) -> Backlog:
    """The next backlog of ``persona`` in ``room_id``, read in one unit: from its cursor (and
    the last kit before it) when ``start`` is ``None``, else past ``start`` (``kit`` known);
    with ``since``, what its first slice would read next (``Ahead``)."""
    version = None
    if start is None:
        start = writes.cursor(conn, persona, room_id)
        kit = writes.last_kit(conn, room_id, start) if start else None
        version = persona_version(conn, persona)
    lines = lines_after(conn, room_id, start, limit)
    humans = {u for line in lines if line.heard_by(persona) for u in line.humans}
    ahead = None
    if since is not None and lines:
        few = writes.names_if_few(conn, NAMES_AHEAD)
        ahead = Ahead(since, writes.written_since(conn, persona, since), HeldNames(tuple(few)) if few is not None else None)
    return Backlog(start, kit, lines, controls_of(conn, humans), version, ahead)


def _day_start(now: datetime) -> datetime:
    """Midnight (UTC) of ``now``'s day: where the daily cap counts from."""
    return datetime.combine(now.date(), datetime.min.time(), tzinfo=timezone.utc)


@attrs.define
class _Known:
    """The route index one run of the write path reads, and the row version it must be at."""

    version: int | None
    fetch: Callable[[], RouteIndex | RouteSource | None] | None
    index: RouteIndex | None = None
    unapplied: list[writes.Posted] = attrs.field(factory=list)
    source: RouteSource | None = None
    actors: bool = False  # ``index`` is the actor's own, as it offered it

    def current(self) -> RouteIndex | None:
        """Ours if it is at the version, else the actor's if that is, else ``None`` (with
        ``source`` set when the actor offered what to build it from)."""
        self.source = None
        if self.version is None:
            return None
        for posted in self.unapplied:  # taken in only when a later slice needs them
            assert posted.versions is not None
            if self.index is not None and self.index.version == posted.versions[0]:
                closed = [c.row_id for c in posted.closed]
                self.index = self.index.applied(posted.rows, closed, posted.versions[1])
                self.actors = False
        self.unapplied.clear()
        if self.index is not None and self.index.version == self.version:
            return self.index
        offered = self.fetch() if self.fetch is not None else None
        if isinstance(offered, RouteSource) and offered.version == self.version:
            self.source = offered
        elif isinstance(offered, RouteIndex) and offered.version == self.version:
            self.index, self.actors = offered, True
            return offered
        return None

    def settled(self) -> RouteIndex | None:
        """The index at the last version this run saw, with every post taken in (``None`` when
        it has none, or when it is the actor's own with only this run's posts to take in: the
        actor takes them into it as it applies them to its rows, so they are not taken in
        twice)."""
        if self.index is None or self.version is None or (self.actors and self.unapplied):
            return None
        index = self.current()
        return index if index is self.index else None

    def loaded(self, index: RouteIndex) -> RouteIndex:
        """Take an index just read from the store (its version is the store's)."""
        self.index, self.version, self.actors = index, index.version, False
        return index

    def took(self, posted: writes.Posted) -> None:
        """Follow what a slice committed: the index takes it in when it began at its version."""
        if posted.versions is None:  # a replay: someone else posted; read afresh next time
            self.index, self.version, self.actors = None, None, False
            self.unapplied.clear()
            return
        if posted.versions[0] != posted.versions[1]:
            self.unapplied.append(posted)
        self.version = posted.versions[1]


def _post(conn, plan: WritePlan, now: datetime, epoch: int | None) -> writes.Posted:
    posted = writes.post_plan(conn, plan, now, epoch=epoch)
    writes.unpark(conn, plan.persona, plan.room_id)
    return posted


def _may_read(line: TranscriptLine, writable: frozenset[int]) -> bool:
    """A persona's own or another persona's line, or a line of a human it may remember."""
    uid = parse_user_ref(line.speaker)
    return uid is None or uid in writable


def _within_chars(backlog: Sequence[TranscriptLine], persona: str, limit: int) -> Sequence[TranscriptLine]:
    """The longest prefix of ``backlog`` whose lines this persona heard fit in ``limit``
    characters (at least one line, so a backlog always moves)."""
    used = 0
    for i, line in enumerate(backlog):
        if line.heard_by(persona):
            used += len(line.text)
            if used > limit and i > 0:
                return backlog[:i]
    return backlog


def _merged(persona: str, room_id: str, reports: Sequence[WriteReport]) -> WriteReport:
    """One report for consecutive slices of a room."""
    if len(reports) == 1:
        return reports[0]
    rows = tuple(row for r in reports if r.posted for row in r.posted.rows)
    notices = tuple(n for r in reports if r.posted for n in r.posted.notice_ids)
    closed = tuple(c for r in reports if r.posted for c in r.posted.closed)
    return WriteReport(
        persona,
        room_id,
        sum(r.lines for r in reports),
        tuple(d for r in reports for d in r.decisions),
        tuple(d for r in reports for d in r.dropped),
        reports[-1].plan if reports else None,
        writes.Posted(rows, notices, closed=closed, versions=_chained(reports),
                      said={k: v for r in reports if r.posted for k, v in r.posted.said.items()})
        if reports else None,
        next((r.parked for r in reports if r.parked), None),
    )


def _chained(reports: Sequence[WriteReport]) -> tuple[int, int] | None:
    """The version before the first slice's rows and after the last's, when each slice began
    where the one before ended (nobody else changed the rows between); else ``None``."""
    spans = [r.posted.versions for r in reports if r.posted is not None and r.posted.versions is not None]
    if not spans or len(spans) != sum(r.posted is not None and not r.posted.replay for r in reports):
        return None
    if any(a[1] != b[0] for a, b in zip(spans, spans[1:])):
        return None
    return spans[0][0], spans[-1][1]
