"""Routing: exact duplicates, neighbours (by cosine and by slot), and the router's numbers
mapped back to rows."""

from __future__ import annotations

from datetime import datetime, timezone

import attrs
import numpy as np
import pytest

from persona_memory.compose import make_slot_reader
from persona_memory.embedding import quantize
from persona_memory.rows import MemoryRow
from persona_memory.write.route_index import RouteIndex
from persona_memory.write.routing import (
    Event,
    RoutingRefused,
    exact_duplicate,
    interpret,
    neighbours,
)
from persona_memory.write.validation import Candidate

T0 = datetime(2026, 8, 1, tzinfo=timezone.utc)
SLOTS = make_slot_reader()  # the one every mind's rows are routed with


def row(id, text, subject="u:42", embedder="e1", valid_to=None, counterpart=None, kind="fact"):
    return MemoryRow(
        id=id,
        persona="warren",
        subject=subject,
        counterpart=counterpart,
        kind=kind,
        text=text,
        importance=5,
        created=T0,
        valid_to=valid_to,
        embedding=b"\x01" if embedder else None,
        embedding_scale=1.0 if embedder else None,
        embedder=embedder,
    )


def unit(*xs):
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def index_of(rows, vectors=None):
    """The route index of ``rows``, their vectors given by id (as the read path's table has them)."""
    vectors = vectors or {}
    spaces = {}
    for r in rows:
        if r.valid_to is None and r.id in vectors and r.embedder:
            spaces.setdefault(r.embedder, []).append(r.id)
    return RouteIndex.from_spaces(
        7,
        {r.id: r for r in rows if r.valid_to is None},
        {name: (ids, np.stack([vectors[i] for i in ids])) for name, ids in spaces.items()},
        reader=SLOTS,
    )


def from_rows(version, rows):
    """The route index of ``rows``, their vectors decoded from the rows."""
    return RouteIndex.from_rows(version, rows, reader=SLOTS)


def near(candidate, query, rows, vectors, **kw):
    kw = {"limit": 5, "min_cosine": 0.6, **kw}
    return [r.id for r in neighbours([candidate], query[None, :], "e1", index_of(rows, vectors), **kw)[0]]


CANDIDATE = Candidate(subject="u:42", kind="event", text="u:42 sold the flat in Xuhui.", importance=7, evidence=(1,))


def test_exact_duplicate_ignores_case_spacing_and_final_punctuation():
    rows = [row(3, "U:42  sold the flat in Xuhui"), row(1, "u:42 sold the flat in Xuhui!")]
    assert exact_duplicate(CANDIDATE, index_of(rows)).id == 1


def test_a_closed_row_or_another_subject_is_not_a_duplicate():
    assert exact_duplicate(CANDIDATE, index_of([row(1, CANDIDATE.text, valid_to="2026-09")])) is None
    assert exact_duplicate(CANDIDATE, index_of([row(2, CANDIDATE.text, subject="u:17")])) is None


def test_neighbours_are_same_subject_same_embedder_above_the_cosine_bar_best_first():
    rows = [
        row(1, "owns a flat", embedder="e1"),
        row(2, "likes flats", embedder="e1"),
        row(3, "far away", embedder="e1"),
        row(4, "other model", embedder="e2"),
        row(5, "other person", subject="u:17"),
        row(6, "closed", valid_to="2026-07"),
        row(7, "no vector", embedder=None),
    ]
    query = unit(1, 0, 0)
    vectors = {
        1: unit(0.9, 0.1, 0),  # cos ~0.99
        2: unit(0.7, 0.7, 0),  # cos ~0.71
        3: unit(0, 1, 0),  # cos 0
        4: unit(1, 0, 0),  # same direction, but another model's space
        5: unit(1, 0, 0),
        6: unit(1, 0, 0),
    }
    assert near(CANDIDATE, query, rows, vectors) == [1, 2]
    assert near(CANDIDATE, query, rows, vectors, limit=1) == [1]


def test_self_rows_are_neighbours_only_with_the_same_counterpart():
    promise = Candidate(subject="self", counterpart="u:42", kind="promise", text="Warren said he would call u:42.", importance=6, evidence=(2,))
    rows = [row(1, "a", subject="self", counterpart="u:42"), row(2, "b", subject="self", counterpart="u:17")]
    vectors = {1: unit(1, 0), 2: unit(1, 0)}
    assert near(promise, unit(1, 0), rows, vectors) == [1]


def test_rows_filling_the_same_slot_are_offered_beside_the_cosine_neighbours():
    rows = [
        row(1, "u:42 lives in Berlin."),  # same slot, far by cosine
        row(2, "u:42 owns a flat in Xuhui."),  # close by cosine
        row(3, "u:42 lives near the sea in Porto."),  # same slot, newer
        row(4, "u:17 lives in Rome.", subject="u:17"),  # another person's home
        row(5, "u:42 lived in Oslo once.", valid_to="2026-01"),  # closed
        row(6, "u:42 plays chess on Sundays."),
    ]
    vectors = {1: unit(0, 1), 2: unit(1, 0.1), 3: unit(0, 1), 4: unit(0, 1), 6: unit(0, 1)}
    moved = Candidate(subject="u:42", kind="event", text="u:42 moved to Lisbon.", importance=6, evidence=(1,))
    assert near(moved, unit(1, 0), rows, vectors) == [2, 3, 1]
    assert near(moved, unit(1, 0), rows, vectors, limit=1) == [2, 3]
    # no cosine neighbour at all: the slot still offers its rows
    assert near(moved, unit(-1, 0), rows, vectors) == [3, 1]


def test_the_index_follows_what_a_write_posted():
    rows = [row(1, "u:42 lives in Berlin.", embedder=None), row(2, "u:42 has a dog.", embedder=None)]
    index = index_of(rows)
    blob, scale = quantize(np.array([1.0, 0.0], dtype=np.float32))
    new = MemoryRow(
        id=9, persona="warren", subject="u:42", kind="event", text="u:42 moved to Lisbon.", importance=6,
        created=T0, embedding=blob, embedding_scale=scale, embedder="e1",
    )
    after = index.applied([new], [1], version=8)
    assert after.version == 8 and index.version == 7
    moved = Candidate(subject="u:42", kind="event", text="u:42 moved to Lisbon.", importance=6, evidence=(1,))
    assert exact_duplicate(moved, after).id == 9 and exact_duplicate(moved, index) is None
    assert [r.id for r in neighbours([moved], unit(1, 0)[None, :], "e1", after, limit=5, min_cosine=0.6)[0]] == [9]
    assert [r.id for r in neighbours([moved], unit(1, 0)[None, :], "e1", index, limit=5, min_cosine=0.6)[0]] == [1]


OFFERED = [row(10, "u:42 owns a flat in Xuhui."), row(11, "u:42 rents a garage.")]


@pytest.mark.parametrize(
    ("answer", "event", "target"),
    [
        ({"event": "ADD"}, Event.ADD, None),
        ({"event": "none"}, Event.NONE, None),
        ({"event": "UPDATE", "old_id": "0"}, Event.UPDATE, 10),
        ({"event": "CLOSE", "old_id": 1}, Event.CLOSE, 11),
    ],
)
def test_every_router_outcome_maps_back_to_real_rows(answer, event, target):
    decision = interpret(answer, CANDIDATE, OFFERED)
    assert decision.event is event
    assert (decision.target.id if decision.target else None) == target


@pytest.mark.parametrize(
    "answer",
    [
        {"event": "UPDATE", "old_id": "2"},  # only "0" and "1" were offered
        {"event": "CLOSE", "old_id": "10"},  # a real row id, but not a number offered
        {"event": "UPDATE"},
        {"event": "UPDATE", "old_id": "-1"},
        {"event": "UPDATE", "old_id": True},
        {"event": "DELETE", "old_id": "0"},  # there is no delete
        {"event": None},
        ["ADD"],
    ],
)
def test_an_invented_or_malformed_answer_is_refused_never_guessed(answer):
    with pytest.raises(RoutingRefused):
        interpret(answer, CANDIDATE, OFFERED)


def test_an_odd_router_label_is_refused_not_parsed():
    offered = [row(1, "u:42 lives in Berlin."), row(2, "u:42 lives in Porto.")]
    candidate = Candidate(subject="u:42", kind="fact", text="u:42 lives in Lisbon.", importance=5, evidence=(1,))
    for label in ("²", "١", " 1x", "01", "-1", 1.0, None, True):
        with pytest.raises(RoutingRefused):
            interpret({"event": "UPDATE", "old_id": label}, candidate, offered)
    assert interpret({"event": "UPDATE", "old_id": " 1 "}, candidate, offered).target is offered[1]
    assert interpret({"event": "CLOSE", "old_id": 0}, candidate, offered).target is offered[0]


def test_rows_closed_since_the_vectors_were_stacked_are_never_offered():
    # 40 rows all close to the query: the best ones are closed later, without a reload
    rows = []
    for i in range(1, 41):
        blob, scale = quantize(unit(1.0, i / 400.0, 0.0))
        rows.append(attrs.evolve(row(i, f"u:42 ran {i} laps on a track."), embedding=blob, embedding_scale=scale))
    index = from_rows(1, rows)
    lap = Candidate(subject="u:42", kind="event", text="u:42 ran 0 laps.", importance=4, evidence=(1,))
    query = unit(1.0, 0.0, 0.0)[None, :]
    assert [r.id for r in neighbours([lap], query, "e1", index, limit=3, min_cosine=0.6)[0]] == [1, 2, 3]
    later = index
    for closed in range(1, 31):
        later = later.applied([], [closed], version=1 + closed)
    assert [r.id for r in neighbours([lap], query, "e1", later, limit=3, min_cosine=0.6)[0]] == [31, 32, 33]
    assert [r.id for r in neighbours([lap], query, "e1", index, limit=3, min_cosine=0.6)[0]] == [1, 2, 3]
    assert len(later.rows) == 10 and 5 not in later.rows and 35 in later.rows
    assert sorted(later.rows) == list(range(31, 41))


def test_many_small_writes_keep_the_index_whole():
    index = from_rows(1, [row(1, "u:42 lives in Berlin.", embedder=None)])
    home = Candidate(subject="u:42", kind="event", text="u:42 moved to Lisbon.", importance=6, evidence=(1,))
    last = 1
    for n in range(2, 60):  # every write moves house: one row in, the last one out
        blob, scale = quantize(np.array([1.0, n / 100.0], dtype=np.float32))
        new = attrs.evolve(row(n, f"u:42 moved to town number {n}."), embedding=blob, embedding_scale=scale)
        index = index.applied([new], [last], version=n)
        last = n
    assert list(index.rows) == [59]
    found = neighbours([home], unit(1.0, 0.0)[None, :], "e1", index, limit=5, min_cosine=0.6)[0]
    assert [r.id for r in found] == [59]
    assert exact_duplicate(Candidate(subject="u:42", kind="event", text="u:42 moved to town number 59", importance=6, evidence=(1,)), index).id == 59
    assert len(index.spaces["e1"]) <= 9  # merged as it grew


def test_the_best_neighbours_are_offered_across_many_small_writes() -> None:
    # 30 rows loaded at once, then six writes of five rows each: the best by cosine (ties by
    # id) are offered wherever the rows were added
    def vector_row(n: int, slope: float) -> MemoryRow:
        blob, scale = quantize(unit(1.0, slope, 0.0))
        return attrs.evolve(row(n, f"u:42 swam {n} lengths at the lido."), embedding=blob, embedding_scale=scale)

    slopes = {n: ((n * 37) % 50) / 100.0 for n in range(1, 61)}
    index = from_rows(1, [vector_row(n, slopes[n]) for n in range(1, 31)])
    for write in range(6):
        new = [vector_row(n, slopes[n]) for n in range(31 + 5 * write, 36 + 5 * write)]
        index = index.applied(new, [], version=2 + write)
    assert len(index.spaces["e1"]) == 7
    swim = Candidate(subject="u:42", kind="event", text="u:42 swam 0 lengths.", importance=4, evidence=(1,))
    query = unit(1.0, 0.0, 0.0)
    for limit in (3, 5, 8):
        found = neighbours([swim], query[None, :], "e1", index, limit=limit, min_cosine=0.6)[0]
        rows = [index.rows[n] for n in index.rows]
        decoded = {r.id: np.frombuffer(r.embedding, dtype=np.int8).astype(np.float32) for r in rows}
        cosine = {n: float(v @ query / np.linalg.norm(v)) for n, v in decoded.items()}
        expected = sorted(cosine, key=lambda n: (-round(cosine[n], 5), n))[:limit]
        assert [r.id for r in found] == expected


def test_merged_chunks_hold_the_open_rows_and_leave_earlier_indexes_as_they_were() -> None:
    # rows written one per write, some closed later: merges happen with and without a closed
    # row in the first chunk, and an index forked from an earlier one must not see the rows
    # the other fork wrote into the merged buffer
    def vector_row(n: int) -> MemoryRow:
        blob, scale = quantize(unit(1.0, ((n * 37) % 50) / 100.0, (n % 7) / 10.0))
        return attrs.evolve(row(n, f"u:42 swam {n} lengths at the lido."), embedding=blob, embedding_scale=scale)

    def offered(index: RouteIndex) -> list[int]:
        swim = Candidate(subject="u:42", kind="event", text="u:42 swam 0 lengths.", importance=4, evidence=(1,))
        return [r.id for r in neighbours([swim], unit(1.0, 0.0, 0.0)[None, :], "e1", index, limit=40, min_cosine=0.0)[0]]

    def expected(open_ids: set[int]) -> list[int]:
        return offered(from_rows(1, [vector_row(n) for n in sorted(open_ids)]))

    index = from_rows(1, [vector_row(n) for n in range(1, 21)])
    open_ids = set(range(1, 21))
    saved = None
    for n in range(21, 61):
        closed = [n - 20] if n % 5 == 0 else []  # now and then a row of the first chunk closes
        index = index.applied([vector_row(n)], closed, version=n)
        open_ids = (open_ids | {n}) - set(closed)
        if n == 40:
            saved, saved_open = index, set(open_ids)
        assert sorted(index.rows) == sorted(open_ids)
    assert len(index.spaces["e1"]) <= 9
    assert offered(index) == expected(open_ids)
    assert saved is not None
    fork = saved
    for n in range(61, 75):  # the other fork writes into what it shares with the first
        fork = fork.applied([vector_row(n)], [], version=n)
        saved_open.add(n)
    assert offered(fork) == expected(saved_open)
    assert offered(index) == expected(open_ids)


def test_vectors_the_actor_decoded_give_the_index_decoding_them_itself_gives() -> None:
    from persona_memory.actors.row_index import decode_unit_rows

    rows = []
    for n in range(1, 13):
        blob, scale = quantize(unit(1.0, n / 10.0, (n % 4) / 3.0))
        rows.append(attrs.evolve(row(n, f"u:42 planted {n} tulips.", embedder="e1" if n % 3 else "e2"),
                                 embedding=blob, embedding_scale=scale))
    decoded = dict(zip((r.id for r in rows), decode_unit_rows(rows, 3)))
    base = from_rows(1, [row(100, "u:42 lives in Berlin.", embedder=None)])
    itself = base.applied(rows, [], version=2)
    given = base.applied(rows, [], version=2, unit_vectors=decoded)
    for name in ("e1", "e2"):
        (a,), (b,) = itself.spaces[name], given.spaces[name]
        assert np.array_equal(a.ids, b.ids) and np.array_equal(a.pairs, b.pairs)
        assert a.matrix.dtype == b.matrix.dtype and np.array_equal(a.matrix, b.matrix)


def _lido_row(n: int) -> MemoryRow:
    blob, scale = quantize(unit(1.0, ((n * 37) % 50) / 100.0, (n % 7) / 10.0))
    return attrs.evolve(row(n, f"u:42 swam {n} lengths at the lido."), embedding=blob, embedding_scale=scale)


def _offered_swims(index: RouteIndex, limit: int = 200) -> list[int]:
    swim = Candidate(subject="u:42", kind="event", text="u:42 swam 0 lengths.", importance=4, evidence=(1,))
    return [r.id for r in neighbours([swim], unit(1.0, 0.0, 0.0)[None, :], "e1", index, limit=limit, min_cosine=0.0)[0]]


def test_a_merge_keeps_a_few_closed_rows_in_place_and_never_offers_them() -> None:
    from persona_memory.write.route_index import DEAD_SHARE, MAX_CHUNKS

    # 160 rows loaded, then writes of one row each that also close one old row: a few closed
    # rows stay in the merged matrix (no copy of it), skipped, as long as they are few
    index = from_rows(1, [_lido_row(n) for n in range(1, 161)])
    open_ids = set(range(1, 161))
    closed_so_far: list[int] = []
    merged_before = None
    for n in range(161, 161 + 2 * (MAX_CHUNKS + 1)):  # two merges, 16 rows closed of 160
        closing = [n - 160]
        index = index.applied([_lido_row(n)], closing, version=n)
        open_ids = (open_ids | {n}) - set(closing)
        closed_so_far += closing
        chunks = index.spaces["e1"]
        if len(chunks) == 1:  # just merged
            (merged,) = chunks
            assert len(closed_so_far) * DEAD_SHARE <= 160
            assert set(closed_so_far) <= set(merged.ids.tolist())  # kept in place ...
            assert set(closed_so_far) <= set(index.dead.tolist())  # ... and known dead
            if merged_before is not None:  # the rows were written after the last merge's, not copied
                assert np.shares_memory(merged.matrix, merged_before.matrix)
            merged_before = merged
        offered = _offered_swims(index)
        assert not set(offered) & set(closed_so_far)
        assert offered == _offered_swims(from_rows(1, [_lido_row(n) for n in sorted(open_ids)]))
    assert merged_before is not None and len(closed_so_far) * DEAD_SHARE <= 160
    assert sorted(index.rows) == sorted(open_ids)


def test_a_merge_compacts_once_closed_rows_pass_their_share() -> None:
    from persona_memory.write.route_index import DEAD_SHARE, MAX_CHUNKS

    index = from_rows(1, [_lido_row(n) for n in range(1, 81)])
    too_many = list(range(1, 80 // DEAD_SHARE + 2))  # one more than the share allows
    index = index.applied([], too_many, version=2)
    for n in range(81, 81 + MAX_CHUNKS):
        index = index.applied([_lido_row(n)], [], version=n)
    (merged,) = index.spaces["e1"]
    assert not set(too_many) & set(merged.ids.tolist())  # compacted: the closed rows are gone
    assert index.dead.size == 0
    open_ids = set(range(1, 81 + MAX_CHUNKS)) - set(too_many)
    assert sorted(merged.ids.tolist()) == sorted(open_ids) == sorted(index.rows)
    assert _offered_swims(index) == _offered_swims(from_rows(1, [_lido_row(n) for n in sorted(open_ids)]))


@pytest.mark.parametrize(("rows", "vectors"), [(6000, 12), (6000, 1), (777, 40), (130, 17), (97, 3)])
def test_a_rows_cosine_does_not_depend_on_the_closed_rows_left_around_it(rows: int, vectors: int) -> None:
    # what a merge that keeps closed rows in place relies on: the product over the matrix with
    # them gives each open row the very bits the compacted matrix gives it (routing's ties and
    # its cosine bar read those bits)
    from persona_memory.core.row_products import row_products

    rng = np.random.default_rng(11)
    matrix = rng.standard_normal((rows, 256)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    query = matrix[rng.choice(rows, vectors, replace=False)] + np.float32(0.01)
    for share in (0.01, 0.05, 0.12, 0.3):
        keep = rng.random(rows) > share
        kept_in_place = row_products(matrix, query)[keep]
        compacted = row_products(matrix[keep], query)
        assert kept_in_place.tobytes() == compacted.tobytes()
        np.testing.assert_allclose(compacted, matrix[keep] @ query.T, rtol=0, atol=1e-5)  # the product it stands for
