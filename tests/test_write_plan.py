"""The plan: ADD / UPDATE / CLOSE / NONE arcs, the daily cap, and coalesced notices."""

from __future__ import annotations

from datetime import datetime, timezone

import attrs

from persona_memory.rows import MemoryRow
from persona_memory.plans import notice_text
from persona_memory.write.plan import Vector, make_plan
from persona_memory.write.routing import Decision, Event
from persona_memory.write.validation import Candidate

NOW = datetime(2026, 11, 20, 15, 0, tzinfo=timezone.utc)
FLAT = MemoryRow(id=5, persona="warren", subject="u:42", kind="fact", text="u:42 owns a flat in Xuhui.", importance=6, created=datetime(2026, 7, 20, tzinfo=timezone.utc), valid_from="2026-07")


def cand(text, subject="u:42", importance=6, valid_from=None, counterpart=None, kind="fact"):
    return Candidate(subject=subject, counterpart=counterpart, kind=kind, text=text, importance=importance, evidence=(3,), valid_from=valid_from)


def plan(decisions, written_today=None, cap=12):
    return make_plan(
        decisions,
        persona="warren",
        room_id="r1",
        cursor_from=2,
        cursor_to=9,
        now=NOW,
        heard={3: frozenset({42, 17}), 4: frozenset({42})},
        vectors={i: Vector(b"\x01\x02", 0.5, "e1") for i in range(len(decisions))},
        written_today=written_today or {},
        daily_cap=cap,
    )


def test_add_inserts_a_row_with_its_provenance():
    p = plan([Decision(cand("u:42 has a dog named Biscuit."), Event.ADD)])
    (new,) = p.inserts
    assert (new.persona, new.subject, new.room_id, new.evidence, new.witnessed) == ("warren", "u:42", "r1", (3,), {42, 17})
    assert new.created == NOW and new.valid_to is None
    assert (new.embedding, new.embedding_scale, new.embedder) == (b"\x01\x02", 0.5, "e1")
    assert p.closings == ()
    assert (p.cursor_from, p.cursor_to) == (2, 9)


def test_witnessed_is_who_was_present_at_every_evidence_line():
    both = attrs.evolve(cand("u:42 has a dog named Biscuit."), evidence=(3, 4))
    (new,) = plan([Decision(both, Event.ADD)]).inserts
    assert new.witnessed == {42}
    unknown = attrs.evolve(cand("u:42 has a cat named Pepper."), evidence=(3, 99))
    (new,) = plan([Decision(unknown, Event.ADD)]).inserts
    assert new.witnessed == frozenset()


def test_update_closes_the_neighbour_at_the_new_valid_from_and_links_it():
    p = plan([Decision(cand("u:42 sold the flat in Xuhui.", valid_from="2026-11"), Event.UPDATE, FLAT)])
    assert [r.text for r in p.inserts] == ["u:42 sold the flat in Xuhui."]
    (closing,) = p.closings
    assert (closing.row_id, closing.valid_to, closing.by_insert) == (5, "2026-11", 0)


def test_update_without_a_stated_time_closes_the_neighbour_today():
    p = plan([Decision(cand("u:42 sold the flat in Xuhui."), Event.UPDATE, FLAT)])
    assert p.closings[0].valid_to == "2026-11-20"


def test_close_ends_the_neighbour_with_nothing_replacing_it():
    p = plan([Decision(cand("u:42 no longer owns the flat."), Event.CLOSE, FLAT)])
    assert p.inserts == ()
    (closing,) = p.closings
    assert (closing.row_id, closing.by_insert) == (5, None)
    assert p.notices == ()


def test_none_does_nothing():
    p = plan([Decision(cand("u:42 owns a flat in Xuhui."), Event.NONE)])
    assert (p.inserts, p.closings, p.notices) == ((), (), ())
    assert p.cursor_to == 9  # the slice was still read: the cursor moves


def test_a_neighbour_is_closed_once_even_if_two_candidates_update_it():
    p = plan([
        Decision(cand("u:42 sold the flat in Xuhui."), Event.UPDATE, FLAT),
        Decision(cand("u:42 moved to Pudong."), Event.UPDATE, FLAT),
    ])
    assert len(p.inserts) == 2
    assert [c.row_id for c in p.closings] == [5]


def test_the_daily_cap_keeps_the_most_important_and_counts_todays_rows():
    decisions = [Decision(cand(f"u:42 fact number {i}.", importance=3 + i % 7), Event.ADD) for i in range(6)]
    p = plan(decisions, written_today={42: 9}, cap=12)
    assert len(p.inserts) == 3
    assert sorted(r.importance for r in p.inserts) == [6, 7, 8]  # of 3, 4, 5, 6, 7, 8
    assert len(p.over_cap) == 3


def test_past_the_cap_of_equally_important_rows_those_that_say_least_go_first():
    decisions = [
        Decision(cand("u:42 is busy.", importance=4), Event.ADD),
        Decision(cand("u:42 repairs vintage typewriters for a museum in Leeds.", importance=4), Event.ADD),
        Decision(cand("u:42 had fun.", importance=4), Event.ADD),
        Decision(cand("u:42 keeps bees on an allotment beside the canal.", importance=4), Event.ADD),
    ]
    p = plan(decisions, written_today={42: 10}, cap=12)
    assert [r.text for r in p.inserts] == [
        "u:42 repairs vintage typewriters for a museum in Leeds.",
        "u:42 keeps bees on an allotment beside the canal.",
    ]
    assert [c.text for c in p.over_cap] == ["u:42 is busy.", "u:42 had fun."]


def test_world_rows_do_not_count_against_a_humans_cap():
    decisions = [Decision(cand("Odyssey opened in July.", subject="world"), Event.ADD)]
    assert len(plan(decisions, written_today={42: 12}).inserts) == 1


def test_one_notice_per_human_per_plan_naming_exactly_its_rows():
    p = plan([
        Decision(cand("u:42 owns a flat in Xuhui."), Event.ADD),
        Decision(cand("u:17 runs marathons.", subject="u:17"), Event.ADD),
        Decision(cand("u:42 has an interview on Thursday.", kind="open_loop"), Event.ADD),
        Decision(cand("Warren said he would send u:42 the 1988 shareholder letter.", subject="self", counterpart="u:42", kind="promise"), Event.ADD),
        Decision(cand("Odyssey opened in July.", subject="world"), Event.ADD),
    ])
    by_user = {n.user_id: n for n in p.notices}
    assert set(by_user) == {17, 42}
    assert by_user[42].inserts == (0, 2, 3)
    assert by_user[42].text == (
        "Warren noted: owns a flat in Xuhui · has an interview on Thursday · "
        "said he would send you the 1988 shareholder letter"
    )
    assert by_user[17].text == "Warren noted: runs marathons"


def test_notice_text_is_bounded():
    rows = [MemoryRow(persona="warren", subject="u:42", kind="fact", text="u:42 " + "x" * 190 + ".", importance=5, created=NOW)] * 5
    assert len(notice_text("warren", 42, rows)) == 500
