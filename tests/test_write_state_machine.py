"""The write path as a state machine: random room histories through the real facade, checked
against an independent model of who heard what.

Hypothesis draws a history — a list of operations (the machine's rules, below) — and one
``trio.run`` replays it through ``open_memory`` with a ``FakeMind`` that copies every line it is
shown into a candidate memory about the line's speaker (a human's line: a row about them; a
persona's line: a world row), citing that line and sometimes the first line of the request
too. A history is a plain list, so Hypothesis shrinks it to the shortest one that still fails;
a failure prints the operations that did something, in the words of the model.

Why a list replayed in one ``trio.run`` and not ``run_state_machine_as_test``: the machine is
synchronous and the memory lives in a trio nursery; drawing the whole history first keeps one
trio run per example and shrinks just as well.

The model (the oracle) is written from the rules in the design (§2, §4) and ``API.md``, never
from the package's helpers. Every line I post embeds a unique token (``token-17``), so lines,
rows and blocks are traced by token. For each line the model keeps who heard it (the humans
present and the speaker; the personas in the room), whether a kit was mounted, and whether it
was kept at all (an incognito room's lines are not: ``post_line`` returns 0).

The humans' switches are checked *conservatively*: the write path reads memory-on and mutes
when it runs, not when a line was said, and a switch can flip while a write is in flight. Each
switch change is logged with the sequence numbers at which its call started and returned; a
rule is broken only if the human was hidden from the persona at *every* moment the package
could have read the switches (for a request: from the post of its newest line to the moment
the mind was called; for a block: from the room event that built it to now, since a delete
rebuilds a block with the switches of its own moment).

Invariants, checked after every operation:

1. No extraction request holds a line said while its persona was not in the room, said with a
   kit mounted, said in a room that was not open, or said by a human certainly hidden from that
   persona (memory off, or muted it) when the request was made; no line reaches one persona
   twice; every request's ``present`` is non-empty, heard the slice and holds no human certainly
   hidden. (Incognito lines are not kept, so they cannot be shown.)
2. Every stored row's ``witnessed`` is the intersection of the humans present at its evidence
   lines; its evidence lines are lines its persona heard.
3. Every block holds only what §4 allows for the people present now: no token of a row about
   an absent human, of a human certainly hidden from the persona, of a row deleted by a human,
   of another persona's row; nothing personal in a group under the proven scope; nothing at
   all in an incognito room.
4. ``block()`` never waits once the room's latest event was handled. The first ``block()``
   after an open/join/leave may wait for its build, for at most ``PATIENCE`` seconds; from then
   on every ``block()`` of every open room, after every operation, returns without awaiting
   anything — checked under an already-cancelled ``trio.CancelScope``, where any checkpoint
   would raise ``Cancelled``. After a delete/undo raced a join/leave (one nursery, both tasks,
   the order and a few yields drawn), ``drain()`` is awaited — the event was handled and the
   edit's rebuilds done — and the newest generation's ``block()`` must then return at once the
   same way: a block that would wait there would wait until the room's next event, and the
   check says so immediately instead of sitting out a timeout (which would make shrinking a
   failure cost minutes).

At the end the rooms go quiet and the memory drains, and every human line a persona heard from
a human whose switches for it never changed after the line must have reached that persona's
mind exactly once (nothing heard is lost).

Time: trio's real clock. The memory's SQLite calls run on worker threads, and under
``autojump_clock`` a task waiting for one counts as blocked, so virtual time would jump to the
``fail_after`` deadline while a query is merely in flight (see ``conftest.py``). The "never
waits" check needs no clock at all (a cancelled scope), and ``PATIENCE`` is real seconds, so
long that only a build that never comes can miss it (a build takes milliseconds). The wall
clock of the rows is a ``ManualClock`` the history moves by hours.
"""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Awaitable, Callable

import attrs
import pytest
import trio
from hypothesis import HealthCheck, event, given, settings, target
from hypothesis import strategies as st

import persona_memory as pm
from persona_memory.embedding import HashingEmbedder
from persona_memory.minds.fake import FakeMind

PERSONAS = ("warren", "nolan", "ada")
HUMANS = (1, 2, 3, 4)
SLOTS = 3  # room ids r0..r2
START = datetime(2026, 8, 18, 12, 0, tzinfo=timezone.utc)
PATIENCE = 10.0  # real seconds the first block() of a generation may wait for its build
TOKEN = re.compile(r"\btoken-(\d+)\b")

# What people say (written for this file). A line is "token-N <sentence>.".
HUMAN_SENTENCES = (
    "I repaired a bicycle today",
    "my sister moved to Lisbon in the spring",
    "I am learning to play the cello",
    "we adopted a grey cat called Pepper",
    "I started night shifts at the bakery",
    "I ran my first half marathon on Sunday",
    "my landlord raised the rent again",
    "I planted tomatoes on the balcony",
    "I keep reading about volcanoes before bed",
    "my knee still hurts after the long hike",
    "I switched teams at work last month",
    "I bake sourdough bread every weekend",
)
PERSONA_SENTENCES = (
    "the ferry timetable changed this week",
    "a new museum opened down by the river",
    "the city library now lends telescopes",
    "the night market moved to the old station",
)


# ---- the rules of the machine (the operations a history is made of) ----------------------


@attrs.frozen
class Open:
    """Open room ``r<slot>`` (new, or reopened with this cast). A private chat keeps the first
    persona and the first human (human 1 if none was drawn)."""

    slot: int
    personas: tuple[int, ...]
    humans: tuple[int, ...]
    private: bool = False
    kit: bool = False
    incognito: bool = False
    topic: bool = False


@attrs.frozen
class Reopen:
    """Open the ``room``-th room id ever opened again with the cast it has (or had at its last
    open): people coming back to the same chat."""

    room: int


# ``room`` picks among the rooms open at the time (the ``room``-th, cyclically), so a history
# keeps doing something however the shrinker cuts it; with no such room the operation is a no-op.


@attrs.frozen
class Join:
    """The ``pick``-th absent human joins the ``room``-th open group room."""

    room: int
    pick: int


@attrs.frozen
class Leave:
    """The ``pick``-th present human leaves the ``room``-th open group room."""

    room: int
    pick: int


@attrs.frozen
class Say:
    """A line in the ``room``-th open room: by the ``pick``-th present human, or (``persona``,
    or nobody is present) the ``pick``-th persona of the room. ``outside``: said instead in a
    room id that is not open — by human or persona ``pick`` — where nobody hears it."""

    room: int
    pick: int
    persona: bool = False
    outside: bool = False


@attrs.frozen
class Quiet:
    room: int
    drain: bool = False


@attrs.frozen
class Archive:
    room: int


@attrs.frozen
class MemoryOn:
    """The ``pick``-th human present in the ``room``-th open room (human ``pick`` if that room
    has nobody) switches 'Personas remember me' to ``on``."""

    room: int
    pick: int
    on: bool


@attrs.frozen
class Mute:
    """The human picked as for ``MemoryOn`` mutes (or unmutes) the ``persona``-th persona of
    that room (of all personas if there is no open room)."""

    room: int
    pick: int
    persona: int
    muted: bool


@attrs.frozen
class Race:
    """A join (the human is absent) or leave (present) of human ``pick`` in the ``room``-th
    open group room where the edited human is present (any open group room if there is none),
    started in the same nursery as a human's edit, after ``checkpoints`` yields;
    ``edit_first``: the edit task starts first."""

    room: int
    pick: int
    checkpoints: int = 0
    edit_first: bool = True


@attrs.frozen
class Delete:
    """The human a row is about deletes it (``delete_memory``): the ``pick``-th of all rows
    about humans, by id."""

    pick: int
    race: Race | None = None


@attrs.frozen
class Undo:
    """A human undoes a notice (``undo``): the ``pick``-th of all notices not yet undone."""

    pick: int
    race: Race | None = None


@attrs.frozen
class Advance:
    """The wall clock moves ``hours`` (0: nothing happens — the shrinker's filler)."""

    hours: int


Op = Open | Reopen | Join | Leave | Say | Quiet | Archive | MemoryOn | Mute | Delete | Undo | Advance

_slots = st.integers(0, SLOTS - 1)
_rooms = st.integers(0, SLOTS - 1)
_picks = st.integers(0, 7)
_humans = st.sampled_from(HUMANS)
_persona_ix = st.integers(0, len(PERSONAS) - 1)
_rarely = st.sampled_from((False, False, False, False, False, True))


def _same(op: Op) -> Op:
    return op


_race = st.builds(Race, room=_rooms, pick=_picks, checkpoints=st.integers(0, 3), edit_first=st.booleans())
_races = st.one_of(st.none(), _race, _race.map(_same))  # two edits in three race a join/leave

# Each rule with its weight: how many branches of ``one_of`` draw it. Hypothesis caches equal
# ``builds`` calls as one object and ``one_of`` folds repeats, so each branch gets its own
# ``.map``. The first branch's simplest value, ``Advance(0)``, is the no-op the shrinker fills a
# history with.
RULES: tuple[tuple[int, Callable[[], st.SearchStrategy[Op]]], ...] = (
    (1, lambda: st.builds(Advance, hours=st.integers(0, 30))),
    (5, lambda: st.builds(
        Open,
        slot=_slots,
        personas=st.lists(_persona_ix, min_size=1, max_size=3, unique=True).map(tuple),
        humans=st.lists(_humans, max_size=4, unique=True).map(tuple),
        private=st.booleans(),
        kit=_rarely,
        incognito=_rarely,
        topic=st.booleans(),
    )),
    (4, lambda: st.builds(Reopen, room=_rooms)),
    (3, lambda: st.builds(Join, room=_rooms, pick=_picks)),
    (3, lambda: st.builds(Leave, room=_rooms, pick=_picks)),
    (8, lambda: st.builds(Say, room=_rooms, pick=_picks, persona=_rarely)),
    (1, lambda: st.builds(Say, room=_rooms, pick=_picks, persona=st.booleans(), outside=st.just(True))),
    (4, lambda: st.builds(Quiet, room=_rooms, drain=st.sampled_from((True, True, False)))),
    (1, lambda: st.builds(Archive, room=_rooms)),
    (2, lambda: st.builds(MemoryOn, room=_rooms, pick=_picks, on=st.sampled_from((False, False, True)))),
    (2, lambda: st.builds(Mute, room=_rooms, pick=_picks, persona=_persona_ix, muted=st.sampled_from((True, True, False)))),
    (3, lambda: st.builds(Delete, pick=_picks, race=_races)),
    (2, lambda: st.builds(Undo, pick=_picks, race=_races)),
)
OPS = st.one_of(*(make().map(_same) for weight, make in RULES for _ in range(weight)))
_opens = RULES[1][1]()
# A history opens a room first, then 10..29 more operations (about 20: Hypothesis aims lists at
# twice their minimum), which the shrinker may cut down to 10.
HISTORIES = st.tuples(_opens, st.lists(OPS, min_size=10, max_size=29)).map(lambda t: [t[0], *t[1]])


# ---- the model ----------------------------------------------------------------------------


@attrs.frozen
class SaidLine:
    """A kept transcript line as the model knows it."""

    id: int
    token: int
    room_id: str
    speaker: str
    text: str
    humans: frozenset[int]  # who heard it (present humans, the speaker among them)
    personas: tuple[str, ...] | None  # personas in the room; None: the room was not open
    kit: bool
    seq: int  # model time at which post_line was called

    @property
    def human(self) -> int | None:
        return int(self.speaker[2:]) if self.speaker.startswith("u:") else None

    def heard_by(self, persona: str) -> bool:
        return self.personas is not None and persona in self.personas and not self.kit


@attrs.define
class OpenRoomModel:
    room_id: str
    personas: tuple[str, ...]
    present: frozenset[int]
    private: bool
    kit: bool
    incognito: bool
    since: int  # model time of the open/join/leave that its blocks are built for


@attrs.define
class Switch:
    """One call that changed a human's switch: memory on/off (``persona`` None) or a mute."""

    user: int
    persona: str | None
    value: bool
    start: int
    end: float = float("inf")  # inf while the call is in flight


class Broken(AssertionError):
    """The memory did something the model says it must not."""


class Machine:
    """Replays a history on a memory and checks every invariant after every operation."""

    def __init__(
        self, memory: pm.Memory, mind: FakeMind, clock: pm.ManualClock, v1_proven: bool, path: Path | None = None
    ) -> None:
        self.memory = memory
        self.path = path
        self.mind = mind
        self.clock = clock
        self.v1_proven = v1_proven
        self.seq = 0
        self.rooms: dict[str, OpenRoomModel] = {}
        self.incognito: dict[str, bool] = {}  # fixed per room id at its first open
        self.casts: dict[str, Open] = {}  # each room id's last accepted open
        self.lines: dict[int, SaidLine] = {}
        self.by_token: dict[int, SaidLine] = {}
        self.switches: list[Switch] = []
        self.deleted: set[tuple[str, int]] = set()  # (persona, token) of rows a human deleted
        self.observed: list[int] = []  # model time of each extraction request, by index
        self.checked = 0  # extraction requests checked so far
        self.shown: dict[str, set[int]] = {p: set() for p in PERSONAS}
        self.trace: list[str] = []
        self.tokens = 0
        self.stats = {
            "requests": 0,
            "rows": 0,
            "block_tokens": 0,
            "hidden_lines": 0,  # lines by a human hidden from a persona that heard them with others
            "edits": 0,
            "races": 0,
            "refused_reopens": 0,
        }

    def tick(self) -> int:
        self.seq += 1
        return self.seq

    # -- the mind's handlers: copy every line; record when each request was made --

    def extract(self, request) -> dict:
        self.observed.append(self.tick())
        first = request.lines[0]
        memories = []
        for line in request.lines:
            found = TOKEN.search(line.text)
            token = int(found.group(1)) if found else 0
            human = line.speaker.startswith("u:")
            evidence = [line.id] if token % 2 or line.id == first.id else [line.id, first.id]
            memories.append(
                {
                    "subject": line.speaker if human else "world",
                    "kind": "fact",
                    "text": f"{line.speaker} {'said' if human else 'remarked'}: {line.text}",
                    "importance": 6,
                    "evidence": evidence,
                }
            )
        return {"memories": memories}

    @staticmethod
    def route(request) -> dict:
        found = TOKEN.search(request.text)
        if found and int(found.group(1)) % 3 == 0:
            return {"event": "UPDATE", "old_id": "0"}  # closes its nearest neighbour
        return {"event": "ADD"}

    # -- the switches, conservatively --

    def _hidden_states(self, user: int, persona: str, a: float, b: float) -> set[bool]:
        """Every value "hidden from ``persona``" could have had for ``user`` between model
        times ``a`` and ``b``: the value settled before ``a``, and the value after each change
        whose call overlapped the window."""
        on, muted = True, False
        settled = False
        possible: set[bool] = set()
        for s in self.switches:
            if s.user != user or s.persona not in (None, persona):
                continue
            if s.persona is None:
                on = s.value
            else:
                muted = s.value
            hidden = (not on) or muted
            if s.end < a:
                settled = hidden
            elif s.start <= b:
                possible.add(hidden)
        return possible | {settled}

    def certainly_hidden(self, user: int, persona: str, a: float, b: float) -> bool:
        return self._hidden_states(user, persona, a, b) == {True}

    def stably_writable(self, user: int, persona: str, since: int) -> bool:
        """No switch of ``user`` for ``persona`` changed from ``since`` on, and it is writable."""
        return self._hidden_states(user, persona, since, float("inf")) == {False} and not any(
            s.user == user and s.persona in (None, persona) and s.end >= since for s in self.switches
        )

    # -- running --

    def fail(self, problem: str) -> None:
        raise Broken(problem + "\n\nhistory (operations that did something):\n  " + "\n  ".join(self.trace))

    async def run(self, history: list[Op]) -> None:
        for op in history:
            done = len(self.trace)
            await self.step(op)
            if len(self.trace) > done:  # an operation that did nothing changes nothing to check
                await self.check()
        for room in list(self.rooms.values()):
            self.trace.append(f"(end) quiet {room.room_id}")
            await self.memory.send(pm.RoomWentQuiet(room_id=room.room_id))
        await self.memory.drain()
        await self.check()
        self.check_nothing_heard_was_lost()

    async def step(self, op: Op) -> None:
        match op:
            case Open():
                await self.open(op)
            case Reopen(room=pick):
                if self.casts:
                    known = sorted(self.casts)
                    room_id = known[pick % len(known)]
                    cast, room = self.casts[room_id], self.rooms.get(room_id)
                    if room is not None:
                        cast = attrs.evolve(cast, humans=tuple(sorted(room.present)))
                    await self.open(cast)
            case Join() | Leave():
                room = self.pick_room(op.room, group=True)
                if room is None:
                    return
                pool = sorted(set(HUMANS) - room.present) if isinstance(op, Join) else sorted(room.present)
                if not pool:
                    return
                await self.member(room, pool[op.pick % len(pool)])
                await self.first_blocks(room)
            case Say():
                await self.say(op)
            case Quiet(room=pick, drain=drain):
                room = self.pick_room(pick)
                if room is None:
                    with pytest.raises(pm.UnknownRoom):
                        await self.memory.send(pm.RoomWentQuiet(room_id=f"r{pick}"))
                    return
                room_id = room.room_id
                self.trace.append(f"quiet {room_id}" + (" + drain" if drain else ""))
                await self.memory.send(pm.RoomWentQuiet(room_id=room_id))
                if drain:
                    await self.memory.drain()
            case Archive(room=pick):
                room = self.pick_room(pick)
                if room is not None:
                    self.trace.append(f"archive {room.room_id}")
                    await self.memory.send(pm.RoomArchived(room_id=room.room_id))
                    del self.rooms[room.room_id]
            case MemoryOn(room=pick_room, pick=pick, on=on):
                human, _ = self.someone(pick_room, pick, 0)
                self.trace.append(f"u:{human} sets memory {'on' if on else 'off'}")
                await self.switch(Switch(human, None, on, 0), self.memory.set_memory_on(human, on))
            case Mute(room=pick_room, pick=pick, persona=ix, muted=muted):
                human, persona = self.someone(pick_room, pick, ix)
                self.trace.append(f"u:{human} {'mutes' if muted else 'unmutes'} {persona}")
                await self.switch(Switch(human, persona, muted, 0), self.memory.set_muted(human, persona, muted))
            case Delete() | Undo():
                await self.edit(op)
            case Advance(hours=hours):
                if hours:
                    self.trace.append(f"clock +{hours} h")
                    self.clock.advance(hours=hours)
            case _:
                raise AssertionError(op)

    def someone(self, pick_room: int, pick: int, persona: int) -> tuple[int, str]:
        """A human and a persona for a switch: in a room, when one is open with a human."""
        room = self.pick_room(pick_room)
        if room is None or not room.present:
            return HUMANS[pick % len(HUMANS)], PERSONAS[persona % len(PERSONAS)]
        return sorted(room.present)[pick % len(room.present)], room.personas[persona % len(room.personas)]

    def pick_room(self, pick: int, *, group: bool = False) -> OpenRoomModel | None:
        rooms = [r for _, r in sorted(self.rooms.items()) if not (group and r.private)]
        return rooms[pick % len(rooms)] if rooms else None

    async def open(self, op: Open) -> None:
        room_id = f"r{op.slot}"
        personas = tuple(PERSONAS[i] for i in op.personas)
        humans = frozenset(op.humans)
        if op.private:
            personas, humans = personas[:1], frozenset({op.humans[0] if op.humans else HUMANS[0]})
        event = pm.RoomOpened(
            room_id=room_id,
            personas=personas,
            humans=humans,
            private=op.private,
            incognito=op.incognito,
            kit="pirate ship" if op.kit else None,
            topic="hobbies and weekend plans" if op.topic else None,
        )
        shape = (
            f"{'private' if op.private else 'group'} {'+'.join(personas)} with {sorted(humans)}"
            + (" kit" if op.kit else "") + (" incognito" if op.incognito else "")
        )
        known = self.incognito.get(room_id)
        if known is not None and known != op.incognito:
            # A room id keeps the incognito it was created with: refused, nothing changes.
            self.trace.append(f"open {room_id} {shape} -> refused (incognito is fixed)")
            self.stats["refused_reopens"] += 1
            room = self.rooms.get(room_id)
            before = {p: await self.block_now(p, room) for p in room.personas} if room else {}
            with pytest.raises(pm.InvalidInput):
                await self.memory.send(event)
            if room is None:
                with pytest.raises(pm.UnknownRoom):
                    await self.memory.block(personas[0], room_id)
            elif {p: await self.block_now(p, room) for p in room.personas} != before:
                self.fail(f"a refused reopen of {room_id} changed its blocks")
            return
        self.trace.append(f"open {room_id} {shape}")
        since = self.tick()
        await self.memory.send(event)
        self.incognito.setdefault(room_id, op.incognito)
        room = OpenRoomModel(room_id, personas, humans, op.private, op.kit, op.incognito, since)
        self.rooms[room_id] = room
        self.casts[room_id] = attrs.evolve(op, personas=tuple(PERSONAS.index(p) for p in personas),
                                           humans=tuple(sorted(humans)))
        await self.first_blocks(room)

    async def member(self, room: OpenRoomModel, human: int) -> None:
        """``human`` joins the room if absent, leaves it if present (the model follows)."""
        joining = human not in room.present
        event = (pm.MemberJoined if joining else pm.MemberLeft)(room_id=room.room_id, user_id=human)
        self.trace.append(f"u:{human} {'joins' if joining else 'leaves'} {room.room_id}")
        since = self.tick()
        await self.memory.send(event)
        room.present = room.present | {human} if joining else room.present - {human}
        room.since = since

    async def first_blocks(self, room: OpenRoomModel) -> None:
        """The first ``block()`` of a new generation may wait for its build (not forever)."""
        for persona in room.personas:
            try:
                with trio.fail_after(PATIENCE):
                    await self.memory.block(persona, room.room_id)
            except trio.TooSlowError:
                self.fail(f"block({persona!r}, {room.room_id!r}) never came after its room event")

    async def block_now(self, persona: str, room: OpenRoomModel, after: str = "") -> str:
        """``block()`` once its build is done: it must return without awaiting anything. Under
        an already-cancelled scope any checkpoint — waiting for a build, a database read —
        raises ``Cancelled`` (which the scope catches), so only a call that awaits nothing
        comes back with a text."""
        text = None
        with trio.CancelScope() as scope:
            scope.cancel()
            text = await self.memory.block(persona, room.room_id)
        if scope.cancelled_caught or text is None:
            self.fail(
                f"block({persona!r}, {room.room_id!r}) would wait, though its room's last event was handled"
                + (f" and drain() returned after {after}" if after else "")
            )
        return text

    async def say(self, op: Say) -> None:
        room = None if op.outside else self.pick_room(op.room)
        closed = [f"r{i}" for i in range(SLOTS) if f"r{i}" not in self.rooms]
        if room is None and not closed:
            return
        room_id = room.room_id if room is not None else closed[op.pick % len(closed)]
        if room is not None and (op.persona or not room.present):
            speaker = room.personas[op.pick % len(room.personas)]
        elif room is not None:
            speaker = f"u:{sorted(room.present)[op.pick % len(room.present)]}"
        else:
            speaker = PERSONAS[op.pick % 3] if op.persona else f"u:{HUMANS[op.pick % 4]}"
        self.tokens += 1
        token = self.tokens
        pool = HUMAN_SENTENCES if speaker.startswith("u:") else PERSONA_SENTENCES
        text = f"token-{token} {pool[token % len(pool)]}."
        seq = self.tick()
        line_id = await self.memory.post_line(room_id, speaker, text)
        where = "" if room is not None else " (room not open)"
        self.trace.append(f"{speaker} in {room_id}{where}: {text!r} -> line {line_id}")
        if self.incognito.get(room_id, False):
            if line_id != 0:
                self.fail(f"a line said in incognito room {room_id} was kept as line {line_id}")
            return
        if line_id <= 0 or line_id in self.lines:
            self.fail(f"post_line returned {line_id} for a line that must be kept")
        line = SaidLine(
            id=line_id,
            token=token,
            room_id=room_id,
            speaker=speaker,
            text=text,
            humans=room.present if room is not None else frozenset(),
            personas=room.personas if room is not None else None,
            kit=room.kit if room is not None else False,
            seq=seq,
        )
        self.lines[line_id] = line
        self.by_token[token] = line
        if line.human is not None and len(line.humans) > 1 and not line.kit:
            others = line.humans - {line.human}
            for persona in line.personas or ():
                if self.certainly_hidden(line.human, persona, seq, seq) and any(
                    not self.certainly_hidden(o, persona, seq, seq) for o in others
                ):
                    self.stats["hidden_lines"] += 1

    async def switch(self, change: Switch, call: Awaitable[None]) -> None:
        change.start = self.tick()
        self.switches.append(change)
        await call
        change.end = self.tick()

    async def edit(self, op: Delete | Undo) -> None:
        if isinstance(op, Delete):
            rows = sorted([r for h in HUMANS for r in await self.memory.memories_about(h)], key=lambda r: r.id)
            if not rows:
                return
            row = rows[op.pick % len(rows)]
            human = int(row.subject[2:])
            what = f"u:{human} deletes {row.persona}'s row {row.id} {row.text!r}"
            doomed = {row.id: row}

            async def do_edit() -> None:
                await self.memory.delete_memory(human, row.id)
                self.forget(doomed, [row.id])
        else:
            notices = sorted([n for h in HUMANS for n in await self.memory.notices(h)], key=lambda n: n.id)
            if not notices:
                return
            notice = notices[op.pick % len(notices)]
            human = notice.user_id
            what = f"u:{human} undoes notice {notice.id} {notice.text!r}"
            doomed = {r.id: r for r in await self.memory.memories_about(human)}

            async def do_edit() -> None:
                self.forget(doomed, await self.memory.undo(human, notice.id))

        self.stats["edits"] += 1
        race = op.race
        room = None
        if race is not None:
            groups = [r for _, r in sorted(self.rooms.items()) if not r.private]
            near = [r for r in groups if human in r.present] or groups
            room = near[race.room % len(near)] if near else None
        if race is None or room is None:
            self.trace.append(what)
            await do_edit()
            return
        mover = HUMANS[race.pick % len(HUMANS)]
        self.trace.append(f"{what}, racing (edit {'first' if race.edit_first else 'second'}, "
                          f"{race.checkpoints} yields):")
        self.stats["races"] += 1

        async def later(fn: Callable[[], Awaitable[None]]) -> None:
            for _ in range(race.checkpoints):
                await trio.lowlevel.checkpoint()
            await fn()

        async with trio.open_nursery() as nursery:
            if race.edit_first:
                nursery.start_soon(do_edit)
                nursery.start_soon(later, lambda: self.member(room, mover))
            else:
                nursery.start_soon(self.member, room, mover)
                nursery.start_soon(later, do_edit)
        # Once drain() returned, the join/leave was handled and the edit's rebuilds are done, so
        # the newest generation's block must be there: a block() that would wait now would wait
        # until the room's next event. Checked at once, without a timeout.
        await self.memory.drain()
        for persona in room.personas:
            await self.block_now(persona, room, after="the race; its build for the newest generation is lost")

    def forget(self, rows: dict[int, pm.MemoryRow], deleted: list[int]) -> None:
        for row_id in deleted:
            row = rows.get(row_id)
            if row is None:
                self.fail(f"the human's edit deleted row {row_id}, which was not about them")
            found = TOKEN.search(row.text)
            if found:
                self.deleted.add((row.persona, int(found.group(1))))

    # -- the invariants --

    async def check(self) -> None:
        self.check_requests()
        blocks = {}
        for room in self.rooms.values():
            for persona in room.personas:
                blocks[(persona, room.room_id)] = await self.block_now(persona, room)
        rows = await self.check_rows()
        for (persona, room_id), text in blocks.items():
            self.check_block(persona, self.rooms[room_id], text, rows)

    def check_requests(self) -> None:
        """Invariant 1, for the requests made since the last check."""
        requests = self.mind.extractions
        for i in range(self.checked, len(requests)):
            request, asked = requests[i], self.observed[i]
            persona = request.persona
            self.stats["requests"] += 1
            what = f"extraction request #{i} for {persona}"
            if not request.present:
                self.fail(f"{what} has nobody present: a slice with no rememberable human makes no call")
            lines = []
            for shown in request.lines:
                line = self.lines.get(shown.id)
                if line is None or line.text != shown.text:
                    self.fail(f"{what} holds line {shown.id} {shown.text!r}, which was never kept")
                lines.append(line)
            newest = max(line.seq for line in lines)
            hearers = frozenset().union(*(line.humans for line in lines))
            for line in lines:
                about = f"{what} holds line {line.id} {line.text!r} ({line.speaker} in {line.room_id})"
                if line.personas is None:
                    self.fail(f"{about}, said while the room was not open")
                if persona not in line.personas:
                    self.fail(f"{about}, said while {persona} was not in the room")
                if line.kit:
                    self.fail(f"{about}, said with a kit mounted")
                if line.human is not None and self.certainly_hidden(line.human, persona, newest, asked):
                    self.fail(f"{about}, by a human who had memory off or muted {persona}")
                if line.id in self.shown[persona]:
                    self.fail(f"{about}, which {persona}'s mind was already shown")
                self.shown[persona].add(line.id)
            for person in request.present:
                uid = person.user_id
                if uid not in hearers:
                    self.fail(f"{what} names u:{uid} present, who heard none of its lines")
                if self.certainly_hidden(uid, persona, newest, asked):
                    self.fail(f"{what} names u:{uid} present, who had memory off or muted {persona}")
        self.checked = len(requests)

    def world_rows(self) -> list[pm.MemoryRow]:
        """The world rows, which no facade call lists: read from the file on a connection of
        our own (SQLite in WAL mode lets it read beside the memory's writer)."""
        conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        try:
            found = conn.execute(
                "SELECT id, persona, text, witnessed, evidence FROM persona_memory WHERE subject = 'world'"
            ).fetchall()
        finally:
            conn.close()
        return [
            pm.MemoryRow(
                id=row_id, persona=persona, subject="world", kind="fact", text=text, importance=6,
                witnessed=json.loads(witnessed or "[]"), evidence=json.loads(evidence or "[]"), created=START,
            )
            for row_id, persona, text, witnessed, evidence in found
        ]

    async def check_rows(self) -> dict[tuple[str, int], pm.MemoryRow]:
        """Invariant 2; returns every row by (persona, token)."""
        rows: dict[int, pm.MemoryRow] = {}
        for human in HUMANS:
            for row in await self.memory.memories_about(human):
                if row.subject != f"u:{human}":
                    self.fail(f"memories_about({human}) returned {row!r}")
                rows[row.id] = row
        rows.update((r.id, r) for r in self.world_rows())
        out = {}
        for row in rows.values():
            found = TOKEN.search(row.text)
            line = self.by_token.get(int(found.group(1))) if found else None
            if line is None or line.text not in row.text:
                self.fail(f"row {row.id} {row.text!r} does not copy a line that was kept")
            if row.subject != (line.speaker if line.human is not None else "world"):
                self.fail(f"row {row.id} {row.text!r} is about {row.subject}, not its speaker")
            if line.id not in row.evidence:
                self.fail(f"row {row.id} {row.text!r} does not cite its line {line.id}")
            evidence = []
            for line_id in row.evidence:
                cited = self.lines.get(line_id)
                if cited is None or not cited.heard_by(row.persona):
                    self.fail(f"row {row.id} of {row.persona} cites line {line_id}, which it did not hear")
                evidence.append(cited)
            expected = frozenset.intersection(*(c.humans for c in evidence))
            if row.witnessed != expected:
                self.fail(
                    f"row {row.id} {row.text!r} of {row.persona} says witnessed {sorted(row.witnessed)}; "
                    f"the humans present at every one of its evidence lines {list(row.evidence)} "
                    f"are {sorted(expected)}"
                )
            out[(row.persona, line.token)] = row
        self.stats["rows"] = max(self.stats["rows"], len(out))
        return out

    def check_block(
        self, persona: str, room: OpenRoomModel, text: str, rows: dict[tuple[str, int], pm.MemoryRow]
    ) -> None:
        """Invariant 3."""
        where = f"{persona}'s block in {room.room_id} (present {sorted(room.present)})"
        if room.incognito and text != "":
            self.fail(f"{where} is not empty, though the room is incognito:\n{text}")
        for found in TOKEN.finditer(text):
            token = int(found.group(1))
            self.stats["block_tokens"] += 1
            if (persona, token) in self.deleted:
                self.fail(f"{where} still shows token-{token}, deleted by a human:\n{text}")
            row = rows.get((persona, token))
            if row is None:
                self.fail(f"{where} shows token-{token}, which is in no row of {persona}:\n{text}")
            if not row.subject.startswith("u:"):
                continue
            uid = int(row.subject[2:])
            if uid not in room.present:
                self.fail(f"{where} shows row {row.id} about u:{uid}, who is absent:\n{text}")
            if self.v1_proven and not room.private:
                self.fail(f"{where} shows row {row.id} about u:{uid} in a group under the proven scope:\n{text}")
            if self.certainly_hidden(uid, persona, room.since, self.seq):
                self.fail(f"{where} shows row {row.id} about u:{uid}, who had memory off or muted {persona}:\n{text}")

    def check_nothing_heard_was_lost(self) -> None:
        for line in self.lines.values():
            if line.human is None:
                continue
            for persona in PERSONAS:
                if line.heard_by(persona) and self.stably_writable(line.human, persona, line.seq):
                    if line.id not in self.shown[persona]:
                        self.fail(
                            f"{persona} heard line {line.id} {line.text!r} from {line.speaker}, who "
                            "always let it remember them, but its mind was never shown the line"
                        )


# ---- the test -------------------------------------------------------------------------------


async def replay(path: Path, overrides: dict, history: list[Op]) -> Machine:
    settings_ = pm.load_settings(
        None, {"storage.path": str(path), "embedder.kind": "hashing", "embedder.dim": 64, **overrides}
    )
    clock = pm.ManualClock(START)
    holder: list[Machine] = []
    mind = FakeMind(extract=lambda r: holder[0].extract(r), route=Machine.route)
    async with pm.open_memory(settings_, clock=clock, embedder=HashingEmbedder(64), mind=mind) as memory:
        machine = Machine(memory, mind, clock, settings_.scope.v1_proven, path)
        holder.append(machine)
        await machine.run(history)
    return machine


@pytest.mark.parametrize("overrides", [{}, {"scope.v1_proven": False}], ids=["proven-scope", "groups-open"])
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(history=HISTORIES)
def test_random_histories_keep_the_write_path_audience_rule(
    tmp_path_factory: pytest.TempPathFactory, overrides: dict, history: list[Op]
) -> None:
    path = tmp_path_factory.mktemp("sm") / "memory.db"
    machine = trio.run(replay, path, overrides, history)
    for name, count in machine.stats.items():
        event(f"{name}: {'0' if not count else '1-4' if count < 5 else '5+'}")
    target(float(machine.stats["block_tokens"]), label="tokens checked in blocks")
    target(float(machine.stats["races"]), label="edits raced with a join or leave")
    target(float(machine.stats["hidden_lines"]), label="lines of hidden humans heard with others")


# ---- the machine on fixed histories: it does what it says --------------------------------


def test_a_known_history_reaches_every_check(tmp_path: Path) -> None:
    """A group with two personas, a private chat, switches, a delete and an undo: the checks
    run on requests, rows and blocks (so a passing run above is not a vacuous one). No race
    here: this history is fixed, and a race's interleaving is not."""
    history: list[Op] = [
        Open(0, personas=(0, 1), humans=(1, 2)),
        Say(0, pick=0),
        Say(0, pick=1),
        Say(0, pick=0, persona=True),
        Leave(0, pick=1),
        Say(0, pick=0),
        Quiet(0, drain=True),
        Open(1, personas=(0,), humans=(1,), private=True),
        Say(1, pick=0),  # open rooms are r0, r1: the second is the private chat
        Quiet(1, drain=True),
        Archive(1),
        Open(1, personas=(0,), humans=(1,), private=True),
        Join(0, pick=0),  # u:2 comes back to r0 ...
        Mute(0, pick=1, persona=0, muted=True),  # ... and mutes warren
        Say(0, pick=1),
        Quiet(0, drain=True),
        Delete(pick=0),
        Undo(pick=0),
        Open(1, personas=(0,), humans=(1,), private=True, incognito=True),  # refused
        Say(0, pick=0, outside=True),  # in r2, never opened: nobody hears it
        Advance(hours=5),
    ]
    for overrides in ({}, {"scope.v1_proven": False}):
        machine = trio.run(replay, tmp_path / f"known-{len(overrides)}.db", overrides, history)
        assert machine.stats["requests"] >= 3
        assert machine.stats["rows"] >= 4
        assert machine.stats["block_tokens"] >= 1
        assert machine.stats["refused_reopens"] == 1
        assert machine.deleted


def test_the_oracle_catches_a_block_that_shows_an_absent_human() -> None:
    machine = Machine(None, FakeMind(), pm.ManualClock(START), v1_proven=False)  # type: ignore[arg-type]
    room = OpenRoomModel("r0", ("warren",), frozenset({1}), private=False, kit=False, incognito=False, since=0)
    line = SaidLine(5, 7, "r0", "u:2", "token-7 I bake.", frozenset({1, 2}), ("warren",), False, 1)
    machine.lines[5], machine.by_token[7] = line, line
    row = pm.MemoryRow(
        id=1, persona="warren", subject="u:2", witnessed={1, 2}, room_id="r0", kind="fact",
        text="u:2 said: token-7 I bake.", importance=6, evidence=(5,), created=START,
    )
    with pytest.raises(Broken, match="absent"):
        machine.check_block("warren", room, '- "u:2 said: token-7 I bake."', {("warren", 7): row})


def test_the_oracle_counts_a_switch_in_flight_as_either_value() -> None:
    machine = Machine(None, FakeMind(), pm.ManualClock(START), v1_proven=True)  # type: ignore[arg-type]
    machine.switches.append(Switch(1, None, False, start=3, end=5))  # memory off, call 3..5
    assert not machine.certainly_hidden(1, "warren", 4, 6)  # may have read it before the change
    assert machine.certainly_hidden(1, "warren", 6, 9)  # changed before the window
    assert not machine.certainly_hidden(1, "warren", 1, 2)
    machine.switches.append(Switch(1, "warren", True, start=7))  # a mute still in flight
    assert machine.certainly_hidden(1, "warren", 8, 9)
    assert not machine.stably_writable(1, "nolan", 2)
