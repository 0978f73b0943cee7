"""The demo: the design's example rows, three rooms, and what each audience may know.

It seeds the design's §1 rows (once per database file) through the storage layer, opens a
private chat with Dan (u:42), a group room with Dan and Cara (u:17), and a private chat with
Cara, and prints each block with its meter. Offline: the bundled embedder, a local SQLite file.
"""

from __future__ import annotations

from datetime import datetime, timezone

from .embedding import Embedder, quantize
from .memory import Memory, open_memory
from .messages import MemberLeft, RoomOpened
from .rows import MemoryRow
from .settings import Settings

DAN, CARA = 42, 17
NAMES = {DAN: "Dan", CARA: "Cara"}

#: (persona, subject, counterpart, witnessed, kind, text, importance, valid_from, created)
EXAMPLE_ROWS = (
    ("warren", "u:42", None, [42], "fact", "u:42 owns a flat in Xuhui, bought Jul 2026.", 6, "2026-07", "2026-07-20"),
    ("warren", "u:42", None, [42, 17], "event", "u:42 sold his Tesla shares in July.", 5, "2026-07", "2026-08-02"),
    ("warren", "self", "u:42", [42], "promise", "Warren said he would send u:42 the 1988 shareholder letter.", 7, None, "2026-08-10"),
    ("warren", "u:42", None, [42], "open_loop", "u:42 had a job interview on Thu 2026-08-13 and asked to be asked how it went.", 8, "2026-08-13", "2026-08-10"),
    ("warren", "world", None, [17], "event", "Nolan's Odyssey opened 2026-07-17.", 4, "2026-07-17", "2026-07-18"),
    ("warren", "u:17", None, [17], "preference", "u:17 prefers index funds to picking single stocks.", 4, None, "2026-09-01"),
    ("warren", "u:17", None, [17], "fact", "u:17 is training for the Shanghai marathon in April.", 6, None, "2026-09-01"),
    ("nolan", "u:42", None, [42, 17], "preference", "u:42 loves long films and watched Odyssey twice.", 4, None, "2026-07-25"),
)
#: The closed arc: the flat row above is closed by this one (design §1, "sold the flat").
SOLD_FLAT = ("warren", "u:42", None, [42], "event", "u:42 sold the flat in Xuhui in November 2026.", 7, "2026-11", "2026-11-20")


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


async def _row(embedder: Embedder, spec: tuple) -> MemoryRow:
    persona, subject, counterpart, witnessed, kind, text, importance, valid_from, created = spec
    blob, scale = quantize((await embedder.embed([text]))[0])
    return MemoryRow(
        persona=persona,
        subject=subject,
        counterpart=counterpart,
        witnessed=witnessed,
        room_id="demo-seed",
        kind=kind,
        text=text,
        importance=importance,
        valid_from=valid_from,
        created=_day(created),
        embedding=blob,
        embedding_scale=scale,
        embedder=embedder.name,
    )


async def seed(memory: Memory, embedder: Embedder) -> bool:
    """Put the example rows in, unless this file already has them. Returns whether it did."""
    if any(r.room_id == "demo-seed" for r in await memory.memories_about(DAN)):
        return False
    rows = await memory.store.insert_memories([await _row(embedder, spec) for spec in EXAMPLE_ROWS])
    flat = next(r for r in rows if "owns a flat" in r.text)
    sold = (await memory.store.insert_memories([await _row(embedder, SOLD_FLAT)]))[0]
    await memory.store.write(
        lambda conn: conn.execute(
            "UPDATE persona_memory SET valid_to = ?, closed_by = ? WHERE id = ?",
            (SOLD_FLAT[7], sold.id, flat.id),
        )
    )
    await memory.set_memory_note(DAN, "Call me Dan. I'm vegetarian, and I'd rather talk markets than films.")
    return True


async def run_demo(settings: Settings) -> None:
    from .compose import make_embedder

    embedder = make_embedder(settings)
    async with open_memory(settings, embedder=embedder) as memory:
        seeded = await seed(memory, embedder)
        print(f"store: {settings.storage.path} ({'seeded the design' + chr(39) + 's example rows' if seeded else 'example rows already there'})")
        print(f"embedder: {embedder.name}\n")
        rooms = [
            ("A private chat: Warren and Dan", RoomOpened(
                room_id="demo-dm-dan", personas=("warren",), humans={DAN}, private=True,
                topic="How did the interview go?", names=NAMES)),
            ("A group room: Warren and Nolan with Dan and Cara", RoomOpened(
                room_id="demo-group", personas=("warren", "nolan"), humans={DAN, CARA},
                topic="Anyone seen a good film lately?", names=NAMES)),
            ("A private chat: Warren and Cara", RoomOpened(
                room_id="demo-dm-cara", personas=("warren",), humans={CARA}, private=True,
                topic="Should I buy index funds?", names=NAMES)),
        ]
        for title, opened in rooms:
            await memory.send(opened)
            for persona in opened.personas:
                print(f"== {title} — {persona}'s block ==")
                print(await memory.block(persona, opened.room_id) or "(empty: nothing this persona may bring here)")
                print()
        await memory.send(MemberLeft(room_id="demo-group", user_id=CARA))
        print("== The group room after Cara leaves — warren's block (rebuilt on leave) ==")
        print(await memory.block("warren", "demo-group") or "(empty)")
        print()
        print("Under the proven scope (scope.v1_proven = true) a group room loads world facts only;")
        print("personal memories stay in the private chat where they were formed.")
        await memory.drain()
