"""The demo: the design's story, played as conversations through the real actors, offline.

Dan (u:42) tells Warren about the flat in Xuhui, the Tesla shares and Thursday's interview;
Warren promises the 1988 shareholder letter. Weeks later Dan has sold the flat — the router
UPDATEs the old fact, which closes and keeps its arc. Then a group room with Dan and Cara
(u:17), and a private chat with Cara. Each quiet room runs the write path (the configured mind:
the bundled offline reader by default); the demo prints the routing decisions, the notices the
humans would see as toasts, and each block with its meter.

The story runs in its own room ids, dated from the wall clock's today. A file that already
holds the story is not played into again (the people would tell Warren the same things twice):
the demo then opens the rooms and prints the blocks as they stand.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import attrs

from .clock import ManualClock
from .memory import Memory, open_memory
from .messages import MemberJoined, MemberLeft, RoomOpened, RoomWentQuiet
from .settings import Settings
from .write.pipeline import WriteReport

DAN, CARA = 42, 17
NAMES = {DAN: "Dan", CARA: "Cara"}

FIRST_CHAT = [
    ("u:42", "Hi Warren! Big news: I bought a flat in Xuhui last month."),
    ("warren", "Congratulations, Dan. A home is a long-term holding; treat it like one."),
    ("u:42", "I also sold my Tesla shares in July, the valuation made me nervous."),
    ("u:42", "And I'm interviewing at Tencent on Thursday. Ask me how it went!"),
    ("warren", "I will. I'll send you the 1988 shareholder letter, it covers exactly this kind of decision."),
    ("u:42", "Thanks. I love reading those letters."),
    ("u:42", "I had noodles for lunch."),
]
LATER_CHAT = [
    ("u:42", "Update: I sold the flat in Xuhui this week, the commute was killing me."),
    ("warren", "Sometimes the best investment is the one you exit."),
]
GROUP_CHAT = [
    ("u:17", "Anyone seen a good film lately?"),
    ("u:42", "Not me, I've been busy."),
    ("u:17", "I'm training for the Shanghai marathon in April."),
]
CARA_CHAT = [
    ("u:17", "Warren, I prefer index funds to picking single stocks. Is that lazy?"),
    ("warren", "Not lazy at all. It is what I tell most people to do."),
]


def _print_report(report: WriteReport) -> None:
    if not report.lines:
        return
    print(f"  [{report.persona} read {report.lines} new lines of {report.room_id}]")
    for decision in report.decisions:
        target = f' (closes "{decision.target.text}")' if decision.target is not None else ""
        print(f"    {decision.event.value:<6} {decision.candidate.text}{target}  — {decision.why}")
    for dropped in report.dropped:
        print(f"    dropped: {dropped.reason}")
    if report.parked:
        print(f"    parked: {report.parked}")


async def _chat(memory: Memory, clock: ManualClock, room_id: str, lines: list[tuple[str, str]]) -> None:
    for speaker, text in lines:
        await memory.post_line(room_id, speaker, text, at=clock.now())
        clock.advance(minutes=1)


async def _spell(memory: Memory, clock: ManualClock, room_id: str, lines: list[tuple[str, str]]) -> None:
    """One quiet spell: the lines are said, the room goes quiet, the writes land."""
    await _chat(memory, clock, room_id, lines)
    await memory.send(RoomWentQuiet(room_id=room_id))
    await memory.drain()


async def _show(memory: Memory, title: str, persona: str, room_id: str) -> None:
    print(f"\n== {title} — {persona}'s block ==")
    print(await memory.block(persona, room_id) or "(empty: nothing this persona may bring here)")


async def _notices(memory: Memory, user_id: int) -> None:
    for notice in await memory.notices(user_id):
        print(f"  toast for {NAMES[user_id]}: {notice.text} · undo (rows {list(notice.memory_ids)})")


async def run_demo(settings: Settings) -> None:
    today = datetime.now(timezone.utc).replace(hour=9, minute=0, second=0, microsecond=0)
    clock = ManualClock(today - timedelta(days=40))
    settings = attrs.evolve(settings, events=attrs.evolve(settings.events, webhooks=()))  # made-up people
    async with open_memory(settings, clock=clock, on_report=_print_report) as memory:
        print(f"store: {settings.storage.path}; mind: {settings.mind.kind}; embedder: {settings.embedder.kind}")
        if await memory._store.transcript.lines("demo-dm-dan"):
            print("This file already holds the demo's story; here are the blocks as they stand.")
            print("(Run `make clean` or pass --db other.db to play it from the start.)")
            clock.set(today)
            for title, opened in (
                ("Dan's private chat", RoomOpened(room_id="demo-dm-dan", personas=("warren",), humans={DAN}, private=True, names=NAMES, topic="How did the interview go?")),
                ("The group room", RoomOpened(room_id="demo-group", personas=("warren", "nolan"), humans={DAN, CARA}, names=NAMES)),
                ("Cara's private chat", RoomOpened(room_id="demo-dm-cara", personas=("warren",), humans={CARA}, private=True, names=NAMES)),
            ):
                await memory.send(opened)
                for persona in opened.personas:
                    await _show(memory, title, persona, opened.room_id)
            return

        print(f"\n-- {clock.now():%Y-%m-%d}: Dan and Warren, a private chat --")
        dm = dict(room_id="demo-dm-dan", personas=("warren",), humans={DAN}, private=True, names=NAMES)
        await memory.send(RoomOpened(**dm, topic="Hi Warren!"))
        await _spell(memory, clock, "demo-dm-dan", FIRST_CHAT)
        await _notices(memory, DAN)

        clock.set(today - timedelta(days=3))
        print(f"\n-- {clock.now():%Y-%m-%d}: weeks later, Dan is back --")
        await memory.send(RoomOpened(**dm, topic="How is the new flat?"))
        await _show(memory, "Dan opens the chat again", "warren", "demo-dm-dan")
        await _spell(memory, clock, "demo-dm-dan", LATER_CHAT)

        clock.set(today)
        print(f"\n-- {clock.now():%Y-%m-%d}: a group room, Warren and Nolan with Dan and Cara --")
        group = dict(room_id="demo-group", personas=("warren", "nolan"), private=False, names=NAMES)
        await memory.send(RoomOpened(**group, humans={DAN, CARA}, topic="Anyone seen a good film lately?"))
        for persona in ("warren", "nolan"):
            await _show(memory, "The group room (proven scope: world facts only)", persona, "demo-group")
        await _spell(memory, clock, "demo-group", GROUP_CHAT)
        await memory.send(MemberLeft(room_id="demo-group", user_id=CARA))
        await memory.send(MemberJoined(room_id="demo-group", user_id=CARA))

        print(f"\n-- {clock.now():%Y-%m-%d}: Cara and Warren, a private chat --")
        cara = dict(room_id="demo-dm-cara", personas=("warren",), humans={CARA}, private=True, names=NAMES)
        await memory.send(RoomOpened(**cara, topic="Should I buy index funds?"))
        await _spell(memory, clock, "demo-dm-cara", CARA_CHAT)
        await memory.send(RoomOpened(**cara, topic="Should I buy index funds?"))
        await _show(memory, "Cara opens her chat again", "warren", "demo-dm-cara")

        await memory.send(RoomOpened(**dm, topic="How did the interview go?"))
        await _show(memory, "Dan opens his chat again (the flat's arc, the promise, the open loop)", "warren", "demo-dm-dan")
        print("\nWhat Dan sees on his page (open and closed lines, newest arc greyed):")
        for row in await memory.memories_about(DAN):
            state = f"closed {row.valid_from or '?'} → {row.valid_to}" if row.valid_to else "open"
            print(f"  #{row.id} {row.persona}: {row.text}  [{row.kind}, {state}]")
        await _notices(memory, DAN)
        await _notices(memory, CARA)
        print("\nUnder the proven scope (scope.v1_proven = true) a group room loads world facts only;")
        print("personal memories stay in the private chats where they were formed.")
