"""The slot reader port (``write.slot_reader``): routing offers the rows that fill a slot the
candidate fills as the reader it was given reads them — the English one the composition root
gives every mind, a model's too — and the fake reads what a test names."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest

import persona_memory as pm
from persona_memory.compose import make_slot_reader
from persona_memory.errors import InvalidInput
from persona_memory.minds.fake import FakeMind
from persona_memory.minds.offline.slots import EnglishSlots, Slot
from persona_memory.rows import MemoryRow
from persona_memory.write.route_index import RouteIndex
from persona_memory.write.routing import neighbours
from persona_memory.write.slot_reader import SlotsGiven
from persona_memory.write.validation import Candidate

T0 = datetime(2026, 8, 1, tzinfo=timezone.utc)
DAN = 42


def row(id: int, text: str, subject: str = "u:42", counterpart: str | None = None) -> MemoryRow:
    return MemoryRow(
        id=id, persona="warren", subject=subject, counterpart=counterpart, kind="fact", text=text,
        importance=5, created=T0,
    )


def offered(index: RouteIndex, text: str, subject: str = "u:42", counterpart: str | None = None) -> list[int]:
    """The rows routing offers for a candidate saying ``text`` (no vectors: by slot alone)."""
    candidate = Candidate(subject=subject, counterpart=counterpart, kind="fact", text=text, importance=6, evidence=(1,))
    return [r.id for r in neighbours([candidate], np.zeros((1, 2), np.float32), "e1", index, limit=5, min_cosine=0.6)[0]]


def test_the_composition_root_reads_english_slots() -> None:
    reader = make_slot_reader()
    assert isinstance(reader, EnglishSlots)
    assert reader.slots("u:42 now works at Globex.") == (Slot("employer"),)
    # two values of one slot: the slot once
    assert reader.slots("u:42 works at Acme, and they work at Globex on weekends.") == (Slot("employer"),)
    assert reader.slots("u:42 moved to Porto and got engaged.") == (Slot("home"), Slot("relationship"))
    assert reader.slots("u:42's sister lives in Berlin.") == ()


def test_routing_offers_what_the_indexs_reader_reads() -> None:
    rows = [row(1, "u:42 trains at the lido."), row(2, "u:42 has a dog."), row(3, "u:17 trains at the lido.", subject="u:17")]
    pool = SlotsGiven({"u:42 trains at the lido.": ["pool"], "u:17 trains at the lido.": ["pool"],
                       "u:42 swims at Sandy Cove now.": ["pool"]})
    by_pool = RouteIndex.from_rows(1, rows, reader=pool)
    assert offered(by_pool, "u:42 swims at Sandy Cove now.") == [1]  # the same person's only
    assert offered(RouteIndex.from_rows(1, rows, reader=make_slot_reader()), "u:42 swims at Sandy Cove now.") == []
    assert offered(RouteIndex.from_rows(1, rows, reader=SlotsGiven()), "u:42 swims at Sandy Cove now.") == []
    # a row applied later is read by the index's own reader
    later = by_pool.applied([row(9, "u:42 swims at Sandy Cove now.")], [1], version=2)
    assert offered(later, "u:42 swims at Sandy Cove now.") == [9]


def test_self_and_world_rows_fill_no_slot_whatever_the_reader_says() -> None:
    says = SlotsGiven({"Warren said he would call u:42.": ["call"], "The lido opens at nine.": ["hours"]})
    index = RouteIndex.from_rows(
        1, [row(1, "Warren said he would call u:42.", subject="self", counterpart="u:42"),
            row(2, "The lido opens at nine.", subject="world")], reader=says,
    )
    assert dict(index.slots) == {}
    assert offered(index, "Warren said he would call u:42.", subject="self", counterpart="u:42") == []
    assert offered(index, "The lido opens at nine.", subject="world") == []


def test_the_fake_names_each_slot_once_and_refuses_a_string() -> None:
    assert SlotsGiven({"a": ["home", "home", ("habit", "smok")]}).slots("a") == ("home", ("habit", "smok"))
    assert SlotsGiven({"a": ["home"]}).slots("b") == ()
    with pytest.raises(InvalidInput, match=r"the slots of 'a' are a sequence of slots; got the string 'home' \(write \('home',\)"):
        SlotsGiven({"a": "home"})
    with pytest.raises(InvalidInput, match=r"a slot is a hashable value; 'a' has \['home'\]"):
        SlotsGiven({"a": [["home"]]})


async def test_a_model_is_offered_the_row_its_candidate_replaces_by_slot(open_test_memory) -> None:
    """Through ``open_memory`` with a model's mind (not the offline reader): the old employer is
    offered by its slot alone (no cosine is near enough), and the model's UPDATE closes it."""
    said = iter(["u:42 works at Brightline.", "u:42 now works at Northwind."])

    def extract(request):
        return {"memories": [{"subject": "u:42", "kind": "fact", "text": next(said), "importance": 6,
                              "evidence": [request.lines[0].id]}]}

    def route(request):
        return {"event": "UPDATE", "old_id": "0"}

    mind = FakeMind(extract=extract, route=route)
    async with open_test_memory({"write.neighbour_min_cosine": 1.0}, mind=mind) as memory:
        await memory.send(pm.RoomOpened(room_id="dm", personas=("warren",), humans={DAN}, private=True))
        for line in ("I work at Brightline.", "I just started at Northwind."):
            await memory.post_line("dm", "u:42", line)
            await memory.send(pm.RoomWentQuiet(room_id="dm"))
            await memory.drain()
        rows = await memory.memories_about(DAN)
    assert [[n.text for n in r.neighbours] for r in mind.routings] == [["u:42 works at Brightline."]]
    assert sorted((r.text, r.valid_to is None) for r in rows) == [
        ("u:42 now works at Northwind.", True), ("u:42 works at Brightline.", False),
    ]
