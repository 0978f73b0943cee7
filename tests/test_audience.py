"""The audience rule (design §4) through ``visible_memories``: one case per row of the table;
then, on generated rooms, rows and switches, the read path's table take, the block, the recall
note and the write side checked against that one predicate.

Dan is ``u:42``, Cara ``u:17``; Warren and Nolan are personas. A row is "loaded" when it comes
back from ``visible_memories``; ``confidence`` says it was formed one-to-one.
"""

from __future__ import annotations

from datetime import timedelta

import attrs
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rowfactory import NOW, make_row

from persona_memory.core.audience import Audience, Visible, admitted, hears, may_write_about, visible_memories
from persona_memory.core.block import BlockRules, build_from_table, candidates
from persona_memory.core.ranking import Topic
from persona_memory.core.recall import RecallRules, recall_note
from persona_memory.core.table import RowTable
from persona_memory.rooms import Presence
from persona_memory.rows import UserControls
from persona_memory.storage.store import TranscriptLine

DAN, CARA = 42, 17

PRIVATE_WITH_DAN = Audience(present=frozenset({DAN}), private=True)
PRIVATE_WITH_CARA = Audience(present=frozenset({CARA}), private=True)
GROUP_DAN_CARA = Audience(present=frozenset({DAN, CARA}), private=False)

ONE_TO_ONE = make_row(text="Dan is interviewing at Tencent on Thursday.", witnessed={DAN})
IN_A_GROUP = make_row(text="Dan sold his Tesla shares in July.", witnessed={DAN, CARA}, kind="event")
PROMISE = make_row(
    subject="self",
    counterpart="u:42",
    kind="promise",
    text="Warren said he would send Dan the 1988 shareholder letter.",
    witnessed={DAN},
)
WORLD = make_row(subject="world", kind="event", text="Nolan's Odyssey opened 2026-07-17.", witnessed={DAN})
ABOUT_CARA = make_row(subject="u:17", text="Cara plays the cello.", witnessed={CARA})
ALL = [ONE_TO_ONE, IN_A_GROUP, PROMISE, WORLD, ABOUT_CARA]


def seen(persona: str, audience: Audience, rows=ALL, controls=None, **kw) -> dict[int, bool]:
    """``{row id: confidence}`` of what ``persona`` may see."""
    out = visible_memories(persona, audience, rows, controls or {}, **kw)
    return {v.row.id: v.confidence for v in out}


def test_about_dan_with_dan_present_formed_one_to_one_loads_in_confidence():
    assert seen("warren", PRIVATE_WITH_DAN)[ONE_TO_ONE.id] is True


def test_about_dan_with_dan_present_formed_in_a_group_loads_without_confidence():
    assert seen("warren", PRIVATE_WITH_DAN)[IN_A_GROUP.id] is False


def test_about_dan_with_dan_absent_does_not_exist_for_the_room():
    loaded = seen("warren", PRIVATE_WITH_CARA)
    assert ONE_TO_ONE.id not in loaded
    assert IN_A_GROUP.id not in loaded
    assert loaded == {ABOUT_CARA.id: True, WORLD.id: False}


def test_a_promise_to_dan_loads_when_dan_is_present_and_not_otherwise():
    assert seen("warren", PRIVATE_WITH_DAN)[PROMISE.id] is False
    assert PROMISE.id not in seen("warren", PRIVATE_WITH_CARA)


def test_a_world_fact_loads_for_any_audience_and_is_never_in_confidence():
    for audience in (PRIVATE_WITH_DAN, PRIVATE_WITH_CARA, GROUP_DAN_CARA, Audience(frozenset())):
        assert seen("warren", audience)[WORLD.id] is False


def test_a_private_chat_loads_exactly_the_rows_about_that_human_and_the_world():
    assert seen("warren", PRIVATE_WITH_DAN) == {
        ONE_TO_ONE.id: True,
        IN_A_GROUP.id: False,
        PROMISE.id: False,
        WORLD.id: False,
    }


def test_a_group_room_under_the_proven_scope_loads_world_facts_only():
    assert seen("warren", GROUP_DAN_CARA) == {WORLD.id: False}
    assert seen("warren", GROUP_DAN_CARA, v1_proven=True) == {WORLD.id: False}


def test_with_the_proven_scope_off_a_group_loads_personal_rows_of_the_humans_present():
    loaded = seen("warren", GROUP_DAN_CARA, v1_proven=False)
    assert loaded == {
        ONE_TO_ONE.id: True,
        IN_A_GROUP.id: False,
        PROMISE.id: False,
        WORLD.id: False,
        ABOUT_CARA.id: True,
    }
    only_cara = Audience(present=frozenset({CARA, 99}), private=False)
    assert seen("warren", only_cara, v1_proven=False) == {WORLD.id: False, ABOUT_CARA.id: True}


def test_an_incognito_room_loads_nothing_whatever_the_scope():
    for private in (True, False):
        room = Audience(present=frozenset({DAN}), private=private, incognito=True)
        assert seen("warren", room) == {}
        assert seen("warren", room, v1_proven=False) == {}


def test_closed_rows_never_load_even_world_ones():
    closed = [
        make_row(text="Dan owned a flat in Jing'an.", valid_from="2026-01", valid_to="2026-07", closed_by=1),
        make_row(subject="world", text="The old bridge was open.", valid_to="2026-08"),
        make_row(subject="self", text="Warren would call Dan.", valid_to="2026-08-01"),
    ]
    assert seen("warren", PRIVATE_WITH_DAN, rows=closed) == {}
    assert seen("warren", GROUP_DAN_CARA, rows=closed, v1_proven=False) == {}


def test_memory_off_hides_everything_about_that_human_promises_included():
    controls = {DAN: UserControls(DAN, memory_on=False), CARA: UserControls(CARA)}
    assert seen("warren", PRIVATE_WITH_DAN, controls=controls) == {WORLD.id: False}
    assert seen("warren", GROUP_DAN_CARA, controls=controls, v1_proven=False) == {
        WORLD.id: False,
        ABOUT_CARA.id: True,
    }


def test_a_muted_persona_forgets_that_human_while_another_persona_still_remembers():
    nolan_row = make_row(persona="nolan", text="Dan likes long takes in films.", witnessed={DAN})
    controls = {DAN: UserControls(DAN, muted=frozenset({"warren"}))}
    assert seen("warren", PRIVATE_WITH_DAN, controls=controls) == {WORLD.id: False}
    assert seen("nolan", PRIVATE_WITH_DAN, rows=[nolan_row], controls=controls) == {nolan_row.id: True}


def test_a_human_without_controls_has_the_defaults():
    assert seen("warren", PRIVATE_WITH_DAN, controls={}) == seen(
        "warren", PRIVATE_WITH_DAN, controls={DAN: UserControls(DAN)}
    )


def test_the_rows_keep_the_order_they_came_in():
    out = visible_memories("warren", PRIVATE_WITH_DAN, list(reversed(ALL)), {})
    assert [v.row.id for v in out] == [WORLD.id, PROMISE.id, IN_A_GROUP.id, ONE_TO_ONE.id]
    assert all(isinstance(v, Visible) for v in out)


def test_confidence_needs_that_human_alone_as_witness():
    nobody = make_row(witnessed=set())
    someone_else = make_row(witnessed={CARA})
    both = make_row(witnessed={DAN, CARA})
    assert seen("warren", PRIVATE_WITH_DAN, rows=[nobody, someone_else, both]) == {
        nobody.id: False,
        someone_else.id: False,
        both.id: False,
    }


def test_the_write_side_twin_refuses_exactly_the_humans_the_read_side_hides():
    controls = {
        DAN: UserControls(DAN, memory_on=False),
        CARA: UserControls(CARA, muted=frozenset({"warren"})),
    }
    assert may_write_about("warren", DAN, controls) is False
    assert may_write_about("warren", CARA, controls) is False
    assert may_write_about("nolan", CARA, controls) is True
    assert may_write_about("warren", 7, controls) is True


# ---- one predicate: the read path, recall and the write side agree with visible_memories -----

HUMANS = (1, 2, 3)
PERSONAS = ("warren", "nolan")
KINDS = ("fact", "preference", "event", "promise", "open_loop", "relationship")


@st.composite
def generated_rows(draw):
    rows = []
    for n in range(draw(st.integers(0, 12))):
        who = draw(st.sampled_from(("world", "self", "user")))
        uid = draw(st.sampled_from(HUMANS))
        counterpart = f"u:{uid}" if who == "self" else None
        rows.append(make_row(
            id=1000 + n,
            persona="warren",
            subject={"world": "world", "self": "self", "user": f"u:{uid}"}[who],
            counterpart=counterpart,
            witnessed=frozenset(draw(st.sets(st.sampled_from(HUMANS)))),
            kind=draw(st.sampled_from(KINDS)),
            text=f"Memory {n} is about the garden.",
            importance=draw(st.integers(1, 10)),
            valid_to=draw(st.sampled_from((None, None, "2026-08-01"))),
            created=NOW - timedelta(days=draw(st.integers(0, 90))),
        ))
    return rows


controls_of_humans = st.fixed_dictionaries({
    uid: st.builds(
        lambda on, muted, uid=uid: UserControls(uid, memory_on=on, muted=frozenset(muted)),
        st.booleans(), st.sets(st.sampled_from(PERSONAS)),
    )
    for uid in HUMANS
})
audiences = st.builds(
    lambda present, private, incognito: Audience(present=frozenset(present), private=private, incognito=incognito),
    st.sets(st.sampled_from(HUMANS)), st.booleans(), st.booleans(),
)

EVERYTHING = BlockRules(char_limit=1_000_000, per_human=1000, riders_per_human=1000, per_kind_first=1000)


@settings(max_examples=300, deadline=None)
@given(rows=generated_rows(), audience=audiences, controls=controls_of_humans, v1_proven=st.booleans())
def test_the_read_path_and_the_recall_note_admit_exactly_what_visible_memories_allows(
    rows, audience, controls, v1_proven
):
    allowed = {v.row.id for v in visible_memories("warren", audience, rows, controls, v1_proven=v1_proven)}
    table = RowTable.from_rows([r for r in rows if r.valid_to is None], {}, {})
    taken = candidates("warren", audience, table, controls, v1_proven=v1_proven)
    assert {table.ids[p] for p in taken.positions} == allowed
    rules = attrs.evolve(EVERYTHING, v1_proven=v1_proven)
    block = build_from_table("warren", audience, table, controls=controls, topic=None, names={}, now=NOW, rules=rules)
    assert set(block.loaded_ids) == allowed
    note = recall_note(
        "warren", audience, table, controls=controls, query=Topic.of("the garden", np.zeros(1), ""),
        shown=(), rules=rules, recall=RecallRules(limit=1000, char_limit=1_000_000, min_score=0.0),
    )
    assert set(note.ids) <= allowed


@settings(max_examples=300, deadline=None)
@given(
    controls=controls_of_humans,
    humans=st.sets(st.sampled_from(HUMANS)),
    personas=st.sets(st.sampled_from(PERSONAS)),
    kit=st.sampled_from((None, "werewolf")),
    incognito=st.booleans(),
)
def test_the_write_side_reads_and_writes_exactly_whom_the_read_side_would_show(
    controls, humans, personas, kit, incognito
):
    presence = Presence(humans=frozenset(humans), personas=tuple(sorted(personas)), kit=kit, incognito=incognito)
    line = TranscriptLine(1, "r", "u:1", "I keep bees in the garden.", NOW, presence)
    for persona in PERSONAS:
        heard = line.heard_by(persona)
        assert heard == hears(persona, presence.personas, kit=kit, incognito=incognito)
        # a line of an incognito room is never read, as an incognito room never sees a row
        room = admitted(persona, Audience(present=frozenset(humans), private=True, incognito=incognito), controls)
        assert not heard or room.world
        for uid in HUMANS:
            row = make_row(subject=f"u:{uid}", witnessed={uid})
            shown = visible_memories(persona, Audience(present=frozenset({uid}), private=True), [row], controls)
            assert may_write_about(persona, uid, controls) == bool(shown)

