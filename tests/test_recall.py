"""The recall note (design §3, retrieval on demand): what a persona is handed for a message.

The pure note first — every row of §4's audience table, "not already in the block", the
limits, the threshold, the rendering — then ``memory.recall`` end to end: the touch, the
incognito room, the cached block left alone, bad input. Rows here carry no vector of the
message's embedder, so the note ranks by their words alone (BM25), which the tests can
reason about. Dan is ``u:42``, Cara ``u:17``; Warren is the persona.
"""

from __future__ import annotations

import random
from datetime import timedelta

import attrs
import numpy as np
import pytest
from conftest import NOW
from rowfactory import EMBEDDER, make_row

from persona_memory import InvalidInput, MemberJoined, MemberLeft, NotInRoom, RoomOpened, UnknownRoom
from persona_memory.core.audience import Audience, Visible, told_in_confidence
from persona_memory.core.block import BlockRules, relevance_at
from persona_memory.core.ranking import Topic
from persona_memory.core.recall import RecallRules, header, recall_note
from persona_memory.core.render import render_line
from persona_memory.core.table import RowTable
from persona_memory.rows import MemoryRow, UserControls

DAN, CARA = 42, 17
QUERY = "How is the garden doing?"

ONE_TO_ONE = make_row(text="Dan planted tomatoes in his garden.", witnessed={DAN})
IN_A_GROUP = make_row(text="Dan showed everyone photos of the garden.", kind="event", witnessed={DAN, CARA})
PROMISE = make_row(subject="self", text="Warren said he would bring Dan seeds for the garden.")
WORLD = make_row(subject="world", kind="event", text="The city garden show opens in May.")
ABOUT_CARA = make_row(subject="u:17", text="Cara keeps bees at the bottom of her garden.")
UNRELATED = make_row(text="Dan drives a red van.")
CAST = [ONE_TO_ONE, IN_A_GROUP, PROMISE, WORLD, ABOUT_CARA, UNRELATED]

PRIVATE_WITH_DAN = Audience(present=frozenset({DAN}), private=True)
PRIVATE_WITH_CARA = Audience(present=frozenset({CARA}), private=True)
GROUP_DAN_CARA = Audience(present=frozenset({DAN, CARA}))


def note(
    audience: Audience,
    rows: list[MemoryRow] = CAST,
    *,
    text: str = QUERY,
    controls: dict[int, UserControls] | None = None,
    shown: tuple[int, ...] = (),
    rules: BlockRules = BlockRules(),
    recall: RecallRules = RecallRules(min_score=0.05),
):
    return recall_note(
        "warren",
        audience,
        RowTable.from_rows(rows, {}, {}),
        controls=controls or {},
        query=Topic.of(text, np.zeros(3), EMBEDDER),
        shown=shown,
        rules=rules,
        recall=recall,
    )


def recalled(got) -> set[str]:
    return {row.text for row in CAST if row.id in got.ids}


def test_a_private_chat_recalls_what_the_audience_rule_admits_and_nothing_unrelated() -> None:
    got = note(PRIVATE_WITH_DAN)
    # Dan's rows (formed 1:1 or in a group), Warren's promise to him, the world; never Cara's.
    assert recalled(got) == {ONE_TO_ONE.text, IN_A_GROUP.text, PROMISE.text, WORLD.text}
    lines = got.text.split("\n")
    assert lines[0] == header("warren")
    # Lines render exactly as in the block: in a private chat bare of the confidence tag, the
    # promise tagged.
    by_id = {r.id: r for r in CAST}
    assert lines[1:] == [render_line(Visible(by_id[i], False)) for i in got.ids]
    assert f'- "{ONE_TO_ONE.text}"' in lines
    assert any(line.endswith("· promise") for line in lines)


def test_the_absent_are_not_recalled() -> None:
    # Private with Cara: her row and the world; nothing about Dan, nor the promise to him.
    assert recalled(note(PRIVATE_WITH_CARA)) == {ABOUT_CARA.text, WORLD.text}


def test_memory_off_and_mute_hide_a_human_from_the_note() -> None:
    off = {DAN: UserControls(DAN, memory_on=False)}
    muted = {DAN: UserControls(DAN, muted=frozenset({"warren"}))}
    other_muted = {DAN: UserControls(DAN, muted=frozenset({"ada"}))}
    assert recalled(note(PRIVATE_WITH_DAN, controls=off)) == {WORLD.text}
    assert recalled(note(PRIVATE_WITH_DAN, controls=muted)) == {WORLD.text}
    assert PROMISE.text in recalled(note(PRIVATE_WITH_DAN, controls=other_muted))


def test_a_group_recalls_world_rows_only_under_the_proven_scope() -> None:
    assert recalled(note(GROUP_DAN_CARA)) == {WORLD.text}
    open_scope = note(GROUP_DAN_CARA, rules=BlockRules(v1_proven=False))
    assert recalled(open_scope) == {ONE_TO_ONE.text, IN_A_GROUP.text, PROMISE.text, WORLD.text, ABOUT_CARA.text}
    # Where others may hear, a line told one-to-one carries its confidence tag.
    by_id = {r.id: r for r in CAST}
    lines = open_scope.text.split("\n")[1:]
    assert lines == [render_line(Visible(by_id[i], told_in_confidence(by_id[i]))) for i in open_scope.ids]
    assert f'- "{ONE_TO_ONE.text}" · confidence' in lines


def test_an_incognito_room_recalls_nothing() -> None:
    got = note(Audience(present=frozenset({DAN}), private=True, incognito=True))
    assert got.text == "" and got.ids == ()


def test_rows_already_in_the_block_are_left_out() -> None:
    got = note(PRIVATE_WITH_DAN, shown=(ONE_TO_ONE.id, WORLD.id))
    assert recalled(got) == {IN_A_GROUP.text, PROMISE.text}
    assert "tomatoes" not in got.text


def test_the_most_relevant_come_first_within_the_line_and_character_limits() -> None:
    garden_twice = make_row(text="Dan weeded the garden; the garden is thriving.")
    rows = [*CAST, garden_twice]
    full = note(PRIVATE_WITH_DAN, rows)
    assert full.ids[0] == garden_twice.id  # the term twice in a short row scores highest
    assert len(note(PRIVATE_WITH_DAN, rows, recall=RecallRules(limit=2, min_score=0.05)).ids) == 2
    # A budget that holds the shortest line only: the longer ones are passed over.
    lengths = {r.id: len(render_line(Visible(r, False))) + 1 for r in rows if r.id in full.ids}  # private: bare
    shortest = min(lengths, key=lengths.get)
    tight = note(PRIVATE_WITH_DAN, rows, recall=RecallRules(char_limit=lengths[shortest], min_score=0.05))
    assert tight.ids == (shortest,)
    assert note(PRIVATE_WITH_DAN, rows, recall=RecallRules(char_limit=lengths[shortest] - 1, min_score=0.05)).text == ""


def test_nothing_above_the_threshold_is_an_empty_note() -> None:
    assert note(PRIVATE_WITH_DAN, text="Any plans for the weekend?").text == ""
    assert note(PRIVATE_WITH_DAN, recall=RecallRules(min_score=1.0)).text == ""


# ---- memory.recall end to end -----------------------------------------------------------


def about(user_id: int, text: str) -> MemoryRow:
    return make_row(id=None, subject=f"u:{user_id}", text=text, created=NOW - timedelta(days=2))


def private(room_id: str, human: int = DAN, **changes: object) -> RoomOpened:
    return RoomOpened(room_id=room_id, personas=("warren",), humans={human}, private=True, **changes)


async def test_recall_leaves_out_the_block_touches_what_it_returns_and_keeps_the_block(
    open_test_memory, clock
) -> None:
    async with open_test_memory({"block.per_human": 1, "recall.min_score": 0.05}) as memory:
        stored = await memory._store.memories.insert(
            [
                about(DAN, "Dan is learning the cello."),
                about(DAN, "Dan grows chillies in a small garden."),
                about(DAN, "Dan's garden floods every spring."),
                about(CARA, "Cara has a garden on her roof."),
            ]
        )
        await memory.send(private("r1"))
        block = await memory.block("warren", "r1")
        in_block = [r for r in stored if f'"{r.text}"' in block]
        assert len(in_block) == 1
        clock.advance(hours=1)
        text = await memory.recall("warren", "r1", "What is new in your garden?")
        assert text.startswith(header("warren"))
        garden_rows = {r.text for r in stored[1:3]} - {r.text for r in in_block}
        assert {t for t in garden_rows if f'"{t}"' in text} == garden_rows
        assert "cello" not in text and "Cara" not in text
        assert await memory.block("warren", "r1") == block  # the cached block is unchanged
        await memory.drain()
        rows = {r.id: r for r in await memory.memories_about(DAN)}
        for row in stored[:3]:
            if f'"{row.text}"' in text:
                assert rows[row.id].last_recalled == clock.now() and rows[row.id].recall_count == 1
            elif row not in in_block:
                assert rows[row.id].last_recalled is None
        assert await memory.recall("warren", "r1", "   ") == ""


async def test_recall_sees_who_is_present_now(open_test_memory) -> None:
    async with open_test_memory({"scope.v1_proven": False, "recall.min_score": 0.05}) as memory:
        await memory._store.memories.insert(
            [about(DAN, "Dan sings in a choir on Tuesdays."), about(CARA, "Cara sings jazz at a bar downtown.")]
        )
        await memory.send(RoomOpened(room_id="g", personas=("warren",), humans={DAN}))
        before = await memory.block("warren", "g") + await memory.recall("warren", "g", "Who else sings?")
        await memory.send(MemberJoined(room_id="g", user_id=CARA))  # no wait: recall runs after it
        note = await memory.recall("warren", "g", "Who else sings?")
        block = await memory.block("warren", "g")
        await memory.send(MemberLeft(room_id="g", user_id=CARA))
        gone = await memory.recall("warren", "g", "Who sings jazz downtown?")
    assert "Cara" not in before
    assert "Cara sings jazz" in block and "Cara sings jazz" not in note  # in the block: not repeated
    assert "Cara" not in gone


async def test_an_incognito_room_has_no_note_and_bad_input_is_refused(open_test_memory) -> None:
    async with open_test_memory({"recall.min_score": 0.0}) as memory:
        await memory._store.memories.insert([about(DAN, "Dan collects stamps.")])
        await memory.send(private("secret", incognito=True))
        assert await memory.recall("warren", "secret", "Tell me about stamps") == ""
        await memory.send(private("r1"))
        with pytest.raises(InvalidInput, match="must be a str"):
            await memory.recall("warren", "r1", 42)  # type: ignore[arg-type]
        with pytest.raises(InvalidInput, match="at most"):
            await memory.recall("warren", "r1", "x" * 20_001)
        with pytest.raises(UnknownRoom):
            await memory.recall("warren", "nowhere", "stamps")
        with pytest.raises(NotInRoom):
            await memory.recall("ada", "r1", "stamps")


def test_a_closed_row_is_never_recalled_but_its_replacement_shows_its_arc() -> None:
    new = make_row(text="Dan moved his garden to the allotment.", valid_from="2026-08")
    old = make_row(text="Dan kept a garden behind his flat.", valid_from="2025", valid_to="2026-08", closed_by=new.id)
    got = recall_note(
        "warren", PRIVATE_WITH_DAN, RowTable.from_rows([old, new], {}, {new.id: old}), controls={},
        query=Topic.of(QUERY, np.zeros(3), EMBEDDER), shown=(), rules=BlockRules(),
        recall=RecallRules(min_score=0.05),
    )
    assert got.ids == (new.id,)
    assert 'was: "Dan kept a garden behind his flat." 2025 → 2026-08' in got.text


def test_many_rows_that_tie_are_recalled_in_table_order() -> None:
    rows = [make_row(text=f"Dan waters the garden tomatoes, bed {n}.") for n in range(150)]
    got = note(PRIVATE_WITH_DAN, rows, text="Who waters the garden tomatoes?")
    assert got.ids == tuple(r.id for r in rows[:5])


def test_a_long_pool_recalls_the_best_first_then_ties_in_table_order() -> None:
    filler = [make_row(text=f"Dan picked tomatoes on day {n}.") for n in range(120)]
    best = make_row(text="Dan grows tomatoes in the garden.")
    got = note(PRIVATE_WITH_DAN, [*filler, best], text="Tomatoes from the garden?", recall=RecallRules(min_score=0.0))
    assert got.ids == (best.id, *(r.id for r in filler[:4]))


def test_the_note_is_the_greedy_walk_down_the_whole_ranking() -> None:
    rng = random.Random(7)
    words = ["garden", "tomatoes", "bees", "roses", "shed", "hose", "compost"]
    for case in range(30):
        rows = [
            make_row(text=" ".join(rng.choice(words) for _ in range(rng.randint(1, 4))) + "." + " x" * rng.randint(0, 40))
            for _ in range(rng.randint(70, 200))
        ]
        query = " ".join(rng.sample(words, 2))
        rules = RecallRules(limit=rng.randint(1, 8), char_limit=rng.randint(60, 600), min_score=0.0)
        table = RowTable.from_rows(rows, {}, {})
        got = note(PRIVATE_WITH_DAN, rows, text=query, recall=rules)
        fused = relevance_at(
            table, np.arange(len(rows)), Topic.of(query, np.zeros(3), EMBEDDER), BlockRules().topic_weights.lexical_share
        )
        expected, used = [], 0
        for pos in np.argsort(-fused, kind="stable").tolist():  # the whole ranking, ties in table order
            if len(expected) >= rules.limit:
                break
            length = table.shown_lengths(private=True)[pos]  # a private chat's line
            if fused[pos] >= rules.min_score and used + length + 1 <= rules.char_limit:
                expected.append(rows[pos].id)
                used += length + 1
        assert got.ids == tuple(expected), case


def test_past_many_candidates_the_shortlist_finds_what_the_exact_ranking_finds(monkeypatch) -> None:
    """Two stages: the first scores every candidate by its words (exact BM25) and the leading
    64 dimensions of its vector, the second ranks the shortlist by the whole vectors. Here the
    prefix alone would put the wrong row first, and one row is found by its words alone."""
    from persona_memory.core import recall as recall_module
    from persona_memory.core import table as table_module

    monkeypatch.setattr(recall_module, "SHORTLIST_FROM", 8)
    monkeypatch.setattr(table_module, "HEADS_FROM", 8)
    name = "wordllama-test-128"  # the table keeps a 64-d head for a matryoshka embedder's vectors

    def unit(head: list[float], tail: list[float]) -> np.ndarray:
        vector = np.zeros(128)
        vector[: len(head)] = head
        vector[64 : 64 + len(tail)] = tail
        return (vector / np.linalg.norm(vector)).astype(np.float32)

    vectors: dict[int, np.ndarray] = {}

    def row(text: str, vector: np.ndarray) -> MemoryRow:
        made = make_row(text=text, vector=vector, embedder=name)
        vectors[made.id] = vector
        return made

    query = unit([1.0], [1.0])  # the message: half in the prefix, half beyond it
    best = row("Dan repaired the old shed.", unit([0.2, 0.3], [1.0]))
    prefix_only = row("Dan paints in the evening.", unit([1.0], [0.0, 1.0]))
    worded = row("Dan keeps a boat called Wren.", unit([0.0, 1.0], [0.0, 0.0, 1.0]))
    rng = np.random.default_rng(5)
    filler = [
        row(f"Dan mentioned thing {n}.", unit(list(rng.normal(size=64) * 0.1), list(rng.normal(size=64))))
        for n in range(20)
    ]
    table = RowTable.from_rows([*filler, prefix_only, best, worded], vectors, {})
    topic = Topic.of("Is Wren still afloat?", query, name)

    def recall(shortlist: int | None) -> tuple[int, ...]:
        return recall_note(
            "warren", PRIVATE_WITH_DAN, table, controls={}, query=topic, shown=(), rules=BlockRules(),
            recall=RecallRules(limit=3, min_score=0.15), shortlist=shortlist,
        ).ids

    exact = recall(None)
    head = table.candidate_head_cosine(topic, table.among((DAN, None)))
    assert head is not None
    by_prefix = [table.ids[p] for p in table.among((DAN, None)).positions[np.argsort(-head, kind="stable")]]
    assert by_prefix[0] == prefix_only.id and exact[0] == best.id  # the prefix alone misjudges
    assert worded.id in exact  # found by its words: the first stage counts BM25 exactly
    assert recall(4) == exact
    assert recall(1) != exact  # a shortlist too short to hold the best row misses it
    # A write appends to the head as to the matrix: the same as a head made from scratch.
    more = row("Dan fixed the shed roof too.", unit([0.3], [1.0, 0.2]))
    grown = table.extended([more], {more.id: vectors[more.id]}, {}, [filler[0].id])
    matrix = grown.spaces[name][1]
    assert np.array_equal(grown.heads[name], table_module._head(matrix))
    assert grown.heads[name].shape == (matrix.shape[0], 64)
