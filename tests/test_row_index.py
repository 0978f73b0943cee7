"""The actor's row index applies its persona's own writes instead of reading every row again."""

from __future__ import annotations

import attrs
import numpy as np
from rowfactory import EMBEDDER, NOW, make_row

import persona_memory as pm
import persona_memory.core.table as table_module
from persona_memory.actors.row_index import RowIndex
from persona_memory.compose import make_slot_reader
from persona_memory.core.audience import Audience
from persona_memory.core.block import BlockRules, build_from_table
from persona_memory.core.ranking import Topic
from persona_memory.storage.writes import Closed, Posted
from persona_memory.write.route_index import RouteSource

DAN, CARA = 42, 17


def blocks(index: RowIndex) -> list[str]:
    topic = Topic.of("the new job at the clinic", np.array([1.0, 0.0, 0.0]), EMBEDDER)
    out = []
    for audience in (Audience(frozenset({DAN}), private=True), Audience(frozenset({DAN, CARA}))):
        for t in (None, topic):
            built = build_from_table(
                "warren", audience, index.table, controls={}, topic=t, names={}, now=NOW,
                rules=BlockRules(v1_proven=False),
            )
            out.append(built.text)
    return out


def test_a_write_applied_to_the_index_gives_the_blocks_a_full_reload_gives() -> None:
    old_job = make_row(text="Dan works at a bakery.", vector=[0.2, 1.0, 0.0], valid_from="2025")
    rows = [old_job, make_row(subject="u:17", text="Cara runs marathons.", vector=[0.0, 0.0, 1.0]),
            make_row(subject="world", kind="event", text="The clinic opened a new wing.", vector=[1.0, 0.0, 0.2])]
    new_job = make_row(text="Dan started a new job at the clinic.", vector=[1.0, 0.1, 0.0], valid_from="2026-08")
    loop = make_row(kind="open_loop", text="Dan waits to hear about the clinic's night shifts.", vector=[0.9, 0.0, 0.1])
    index = RowIndex()
    index.load(7, rows)
    applied = index.apply_posted(
        Posted((new_job, loop), (), closed=(Closed(old_job.id, "2026-08", new_job.id),), versions=(7, 10))
    )
    assert applied and index.version == 10
    closed_old = attrs.evolve(old_job, valid_to="2026-08", closed_by=new_job.id)
    fresh = RowIndex()
    fresh.load(10, [closed_old, *rows[1:], new_job, loop])
    assert blocks(index) == blocks(fresh)
    assert all("bakery" not in text.split("was:")[0] for text in blocks(index))  # closed: only its arc shows
    assert any('was: "Dan works at a bakery."' in text for text in blocks(index))


def test_a_write_applied_to_the_index_is_searched_by_what_its_lines_said_as_a_reload_is() -> None:
    kept = make_row(text="Dan keeps bees.")
    new = make_row(text="Dan adopted a greyhound.")
    said = {new.id: "We brought Pepper home from the rescue on Sunday!"}
    index = RowIndex()
    index.load(3, [kept], {kept.id: "I keep bees on the allotment."})
    assert index.apply_posted(Posted((new,), (), versions=(3, 4), said=said))
    fresh = RowIndex()
    fresh.load(4, [kept, new], {kept.id: "I keep bees on the allotment.", **said})
    every = np.arange(2, dtype=np.int64)
    for table in (index.table, fresh.table):
        assert table.lexical.scores(["pepper", "rescu"], every)[1] > 0  # only its line said them
        assert table.lexical.scores(["allotment"], every)[0] > 0
    assert index.table.lexical.scores(["pepper"], every).tolist() == fresh.table.lexical.scores(["pepper"], every).tolist()


def test_writes_applied_before_the_table_is_read_give_the_table_of_writes_read_one_by_one() -> None:
    """Three writes in a row reach the table together when it is next read — the third
    closes a row the first added, so that one goes in on its own — and the blocks are those
    of the table that read each write as it came, and of a reload."""
    old_home = make_row(text="Dan lives in a flat by the harbour.", vector=[0.1, 1.0, 0.0], valid_from="2024")
    hobby = make_row(subject="u:17", text="Cara restores old radios.", vector=[0.0, 0.3, 1.0])
    new_home = make_row(text="Dan moved to a cottage outside town.", vector=[0.2, 0.9, 0.1], valid_from="2026-05")
    plan = make_row(kind="open_loop", text="Dan plans to paint the cottage blue.", vector=[0.5, 0.5, 0.0])
    race = make_row(subject="u:17", text="Cara entered the autumn half marathon.", vector=[0.0, 0.1, 1.0])
    painted = make_row(kind="event", text="Dan painted the cottage green instead.", vector=[0.6, 0.4, 0.0])
    said = {race.id: "Signed up for the autumn half, wish me luck!"}
    posts = [
        Posted((new_home, plan), (), closed=(Closed(old_home.id, "2026-05", new_home.id),), versions=(5, 6)),
        Posted((race,), (), versions=(6, 7), said=said),
        Posted((painted,), (), closed=(Closed(plan.id, "2026-06", painted.id),), versions=(7, 8)),
    ]
    together, one_by_one = RowIndex(), RowIndex()
    for index in (together, one_by_one):
        index.load(5, [old_home, hobby])
    for posted in posts:
        assert together.apply_posted(posted)
        assert one_by_one.apply_posted(posted)
        one_by_one.table  # read after each write
    closed_home = attrs.evolve(old_home, valid_to="2026-05", closed_by=new_home.id)
    closed_plan = attrs.evolve(plan, valid_to="2026-06", closed_by=painted.id)
    fresh = RowIndex()
    fresh.load(8, [closed_home, hobby, new_home, closed_plan, race, painted], said)
    assert together.version == one_by_one.version == 8
    assert blocks(together) == blocks(one_by_one) == blocks(fresh)
    assert any("painted the cottage green" in text for text in blocks(together))
    assert not any("paint the cottage blue" in text.split("was:")[0] for text in blocks(together))
    every = np.arange(len(together.table), dtype=np.int64)
    assert together.table.lexical.scores(["wish", "luck"], every).tolist() == \
        one_by_one.table.lexical.scores(["wish", "luck"], every).tolist()


def test_a_write_from_another_version_is_not_applied() -> None:
    index = RowIndex()
    index.load(3, [make_row(text="Dan keeps bees.")])
    before = index.table
    assert not index.apply_posted(Posted((make_row(text="Dan sold the hives."),), (), versions=(4, 5)))
    assert index.version == 3 and index.table is before


def count_row_reads(memory: pm.Memory) -> list[str]:
    """The personas whose rows the store reads from now on, one entry per read."""
    store = memory._store
    reads: list[str] = []

    def counting(real):
        async def counted(persona: str):
            reads.append(persona)
            return await real(persona)

        return counted

    store.memories.rows = counting(store.memories.rows)  # type: ignore[method-assign]
    store.memories.rows_said = counting(store.memories.rows_said)  # type: ignore[method-assign]
    return reads


async def test_the_open_after_the_personas_own_write_reads_no_rows(open_test_memory) -> None:
    async with open_test_memory() as memory:
        reads = count_row_reads(memory)
        await memory.send(pm.RoomOpened(room_id="r1", personas=("warren",), humans={DAN}, private=True))
        await memory.block("warren", "r1")
        assert reads == ["warren"]  # the first open loads every row
        await memory.post_line("r1", "u:42", "I started a new job as a nurse at the city clinic.")
        await memory.send(pm.RoomWentQuiet(room_id="r1"))
        await memory.drain()
        await memory.send(pm.RoomOpened(room_id="r2", personas=("warren",), humans={DAN}, private=True))
        text = await memory.block("warren", "r2")
        assert "nurse" in text
        assert reads == ["warren"]  # the write was applied, not read back


def route_view(index: RowIndex) -> tuple:
    """What the router reads: the duplicates' keys, the slots, and the neighbours of a move."""
    from persona_memory.write.routing import neighbours
    from persona_memory.write.validation import Candidate

    routing = index.routing()
    if isinstance(routing, RouteSource):  # not built since the load: build it, as the write path does
        routing = routing.build(make_slot_reader())
        index.adopt(routing)
        assert index.routing() is routing
    moved = Candidate(subject="u:42", kind="event", text="u:42 moved to Porto.", importance=6, evidence=(1,))
    near = neighbours([moved], np.array([[1.0, 0.0, 0.0]]), EMBEDDER, routing, limit=5, min_cosine=0.6)
    return (
        routing.version,
        sorted((k, v) for k, v in routing.texts.items()),
        sorted((str(k), v) for k, v in routing.slots.items()),
        [r.id for r in near[0]],
    )


def test_the_routers_view_after_an_applied_write_is_a_full_reloads() -> None:
    home = make_row(text="u:42 lives in Lisbon.", vector=[0.0, 1.0, 0.0])
    rows = [home, make_row(text="u:42 has a dog.", vector=[1.0, 0.0, 0.1]),
            make_row(subject="u:17", text="u:17 lives in Rome.", vector=[1.0, 0.0, 0.0])]
    moved = make_row(text="u:42 moved to Gdansk.", vector=[0.9, 0.1, 0.0])
    index = RowIndex()
    index.load(4, rows)
    before = route_view(index)
    assert before[3] == [rows[1].id, home.id]  # the dog by cosine, the home by its slot
    assert index.apply_posted(Posted((moved,), (), closed=(Closed(home.id, "2026-08", moved.id),), versions=(4, 5)))
    fresh = RowIndex()
    fresh.load(5, [attrs.evolve(home, valid_to="2026-08", closed_by=moved.id), *rows[1:], moved])
    assert route_view(index) == route_view(fresh)
    assert route_view(index)[3] == [rows[1].id, moved.id]  # the new home is close by cosine too


async def test_the_write_path_routes_from_the_actors_index_without_reading_rows(open_test_memory) -> None:
    async with open_test_memory() as memory:
        reads = count_row_reads(memory)
        await memory.send(pm.RoomOpened(room_id="r1", personas=("warren",), humans={DAN}, private=True))
        for line in ("I live in Lisbon.", "I moved to Gdansk.", "I love sailing."):
            await memory.post_line("r1", "u:42", line)
            await memory.send(pm.RoomWentQuiet(room_id="r1"))
            await memory.drain()
        assert reads == ["warren"]  # the open's load only
        rows = await memory.memories_about(DAN)
        assert sorted((r.text, r.valid_to is None) for r in rows) == [
            ("u:42 lives in Lisbon.", False), ("u:42 loves sailing.", True), ("u:42 moved to Gdansk.", True),
        ]


async def test_the_route_index_is_built_once_per_load_off_the_event_loop(open_test_memory, monkeypatch) -> None:
    import threading

    builds = []
    real = RouteSource.build

    def counted(self, reader):
        builds.append(threading.current_thread() is threading.main_thread())
        return real(self, reader)

    monkeypatch.setattr(RouteSource, "build", counted)
    async with open_test_memory() as memory:
        await memory.send(pm.RoomOpened(room_id="r1", personas=("warren",), humans={DAN}, private=True))
        for line in ("I live in Lisbon.", "I moved to Gdansk.", "I love sailing.", "I have a cat."):
            await memory.post_line("r1", "u:42", line)
            await memory.send(pm.RoomWentQuiet(room_id="r1"))
            await memory.drain()
    assert builds == [False]  # once, on a worker thread; later writes kept it up to date


def test_a_rooms_product_reads_its_groups_and_the_rows_written_since_the_load(monkeypatch) -> None:
    monkeypatch.setattr(table_module, "SPLIT_FROM", 0)  # split however small the table
    rng = np.random.default_rng(3)
    subjects = ["u:42", "u:17", "u:99", "world"]
    rows = [make_row(subject=subjects[n % 4], text=f"Row number {n}.", vector=rng.normal(size=3)) for n in range(40)]
    index = RowIndex()
    index.load(1, rows)
    later = [make_row(subject=subjects[n % 3], text=f"Later row {n}.", vector=rng.normal(size=3)) for n in range(7)]
    assert index.apply_posted(Posted(tuple(later), (), closed=(Closed(rows[0].id, "2026-08-18", None),), versions=(1, 2)))
    table = index.table
    topic = Topic.of("anything", np.array([0.6, -0.8, 0.0]), EMBEDDER)
    for keys in ((42,), (17, None), (42, 17, 99, None), ()):
        among = table.among(keys)
        assert among.positions.size == sum(table.about(k).size for k in keys)
        np.testing.assert_array_equal(
            table.cosine_at(topic, among.positions, keys), table.cosine(topic)[among.positions]
        )


def test_a_rooms_rows_and_the_plan_of_its_product_over_the_spans_match_the_direct_reading(monkeypatch) -> None:
    """``among`` marks each group's rows instead of sorting them, and the gather plan shifts each
    span's products into place: the positions (ascending), each one's group, and every
    candidate's cosine are the ones a sort of the joined groups and the direct product give —
    rows without a vector included, before and after a write closes one and adds some."""
    monkeypatch.setattr(table_module, "SPLIT_FROM", 0)  # split however small the table
    rng = np.random.default_rng(8)
    subjects = ["u:42", "u:17", "u:99", "world", "u:5"]
    rows = []
    for n in range(60):
        extra = {"vector": rng.normal(size=3)} if n % 7 else {}  # every seventh row has none
        rows.append(make_row(subject=subjects[(n * 3) % 5], text=f"Row number {n}.", **extra))
    index = RowIndex()
    index.load(1, rows)
    later = [make_row(subject=subjects[n % 5], text=f"Later row {n}.", vector=rng.normal(size=3)) for n in range(9)]
    before = index.table
    assert index.apply_posted(Posted(tuple(later), (), closed=(Closed(rows[1].id, "2026-08-18", None),), versions=(1, 2)))
    topic = Topic.of("anything", np.array([0.6, -0.8, 0.0]), EMBEDDER)
    for table in (before, index.table):
        for keys in ((42,), (None, 17), (5, 42, 99), (42, 17, 99, None, 5)):
            among = table.among(keys)
            joined = [table.about(k) for k in keys]
            np.testing.assert_array_equal(among.positions, np.sort(np.concatenate(joined)))
            for n, part in enumerate(joined):
                np.testing.assert_array_equal(among.positions[among.labels == n], part)
            np.testing.assert_array_equal(
                table.candidate_cosine(topic, among), table.cosine_at(topic, among.positions, keys)
            )


def test_a_touch_changes_recency_only_and_keeps_the_rows_each_audience_sees() -> None:
    rows = [make_row(text="Dan bakes bread."), make_row(subject="u:17", text="Cara paints."), make_row(text="Dan sails.")]
    index = RowIndex()
    index.load(1, rows)
    before = index.table.among((DAN,))
    index.apply_touches({rows[2].id: (NOW, 1)})
    after = index.table.among((DAN,))
    assert after is before  # remembered across the touch
    np.testing.assert_array_equal(after.positions, [0, 2])
    assert index.table.stamps[2] == NOW.timestamp() and index.table.stamps[0] != NOW.timestamp()


def test_tables_extended_from_one_table_each_keep_their_own_rows() -> None:
    """A write grows the table's columns in place, after the rows of the newest table: a table
    extended from an older one (a fork) gets its own copy, and neither sees the other's rows."""
    from persona_memory.core.table import RowTable

    def written(text: str) -> pm.MemoryRow:
        return make_row(text=text, vector=[1.0, 0.2, 0.0])

    def columns(table: RowTable) -> tuple[list, ...]:
        return list(table.ids), list(table.kinds), list(table.lines), list(table.lengths)

    loaded = [written(f"u:42 walked {n} miles by the canal.") for n in range(1, 6)]
    kettle, hallway, bicycle = (
        written("u:42 bought a blue kettle."), written("u:42 repainted the hallway green."),
        written("u:42 sold the old bicycle."),
    )
    base = RowTable.from_rows(loaded, {}, {})
    one = base.extended([kettle], {}, {}, [])
    two = one.extended([hallway], {}, {}, [])
    fork = one.extended([bicycle], {}, {}, [loaded[0].id])  # a closed row keeps its place
    assert columns(base) == columns(RowTable.from_rows(loaded, {}, {}))
    assert columns(one) == columns(RowTable.from_rows([*loaded, kettle], {}, {}))
    assert columns(two) == columns(RowTable.from_rows([*loaded, kettle, hallway], {}, {}))
    assert columns(fork) == columns(RowTable.from_rows([*loaded, kettle, bicycle], {}, {}))
    assert len(base) == 5 and len(one) == 6 and len(two) == len(fork) == 7
