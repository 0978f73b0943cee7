"""The pure view models of the human's pages: grouping, arcs, dates, speakers, the note count,
how a line reads to its reader, rooms by name, the search, the filters and the pages."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import attrs
import pytest

from persona_memory.errors import InvalidInput
from persona_memory.storage.rooms import RoomFacts
from persona_memory.storage.queries import TranscriptLine
from persona_memory.storage.writes import Notice
from persona_memory.web import views
from rowfactory import NOW, make_row

DAN = views.Reader(42)


def test_lines_are_grouped_by_persona_sorted_by_name_open_newest_first_then_closed():
    sold = make_row(id=106, persona="warren", text="Dan sold the flat.", valid_from="2026-11", created=NOW)
    owned = make_row(id=105, persona="warren", text="Dan owns a flat.", valid_from="2026-07",
                     valid_to="2026-11", closed_by=106, created=NOW - timedelta(days=90))
    older = make_row(id=104, persona="warren", kind="open_loop", text="Dan has an interview.",
                     created=NOW - timedelta(days=30))
    nolans = make_row(id=107, persona="nolan", kind="preference", text="Dan likes noir.")
    groups = views.persona_views([owned, older, nolans, sold], DAN, personas=["ada"],
                                 meters={"warren": (605, 1200)}, muted={"nolan"}, riding={"warren": {106}})
    assert [(g.slug, g.name, g.muted) for g in groups] == [("ada", "Ada", False), ("nolan", "Nolan", True),
                                                           ("warren", "Warren", False)]
    ada, nolan, warren = groups
    assert ada.count == 0 and ada.meter is None
    assert [line.id for line in warren.open_lines] == [106, 104]
    assert [line.id for line in warren.closed_lines] == [105]
    assert warren.meter == views.Meter(605, 1200) and warren.meter.percent == 50
    assert (warren.kept, warren.current, warren.riding) == (3, 2, 1)
    assert [line.rides for line in warren.lines] == [True, False, False]
    assert nolan.open_lines[0].kind == "preference"
    assert warren.open_lines[1].kind == "open loop"


def test_a_closed_line_shows_its_arc_and_the_line_that_replaced_it():
    sold = make_row(id=206, text="Dan sold the flat.", valid_from="2026-11")
    owned = make_row(id=205, text="Dan owns a flat.", valid_from="2026-07", valid_to="2026-11", closed_by=206,
                     created=datetime(2026, 7, 3, 9, tzinfo=timezone.utc), room_id="dm", evidence=(3, 4))
    view = views.line_view(owned, {206: sold, 205: owned}, DAN, riding={205})
    assert view == views.LineView(id=205, text="Dan owns a flat.", kind="fact", noted="2026-07-03",
                                  since="2026-07", room="a chat", evidence_count=2, closed=True,
                                  arc="2026-07 → 2026-11", replaced_by="Dan sold the flat.", rides=False)
    assert views.line_view(owned, {205: owned}, DAN).replaced_by is None
    assert views.line_view(sold, {}, DAN).arc is None and not views.line_view(sold, {}, DAN).closed


def test_an_arc_without_a_stated_start_begins_the_month_the_line_was_noted():
    row = make_row(valid_to="2026-11", created=datetime(2026, 8, 2, tzinfo=timezone.utc))
    assert views.arc(row) == "2026-08 → 2026-11"


def test_memory_text_passes_through_untouched_escaping_is_the_templates_job():
    text = '<script>alert(1)</script> <img src=x onerror=alert(1)> javascript:alert(1)'
    (group,) = views.persona_views([make_row(text=text)], DAN)
    assert group.open_lines[0].text == text


def test_transcript_speakers_read_as_you_a_persona_name_or_another_persons_id():
    at = datetime(2026, 8, 18, 9, 5, tzinfo=timezone.utc)
    lines = [TranscriptLine(1, "dm", "u:42", "I bought a flat.", at),
             TranscriptLine(2, "dm", "mr_lee", "Congratulations.", at),
             TranscriptLine(3, "dm", "u:17", "Me too.", at)]
    spoken = views.spoken_lines(lines, DAN)
    assert [(s.speaker, s.mine) for s in spoken] == [("You", True), ("Mr Lee", False), ("u:17", False)]
    named = views.spoken_lines(lines, views.Reader(42, names={17: "Cara"}))
    assert [s.speaker for s in named] == ["You", "Mr Lee", "Cara"]
    assert spoken[0].when == "2026-08-18 09:05 UTC"


def test_notices_show_the_persona_by_name_and_how_many_lines_undo_removes():
    notice = Notice(id=3, user_id=42, persona="warren", room_id="dm", text="Warren noted: owns a flat",
                    memory_ids=(5, 6), created=datetime(2026, 8, 18, 9, 5, tzinfo=timezone.utc))
    reader = views.Reader(42, rooms={"dm": RoomFacts("dm", None, True, ("warren",))})
    assert views.notice_views([notice], reader) == [
        views.NoticeView(id=3, persona="Warren", text="Warren noted: owns a flat",
                         room="a private chat with Warren", when="2026-08-18 09:05 UTC", lines=2)
    ]
    assert views.notice_json(notice)["memory_ids"] == [5, 6]


def test_the_note_counts_a_line_break_once_whatever_the_browser_sent():
    typed = "Call me Dan.\r\nI'm vegetarian.\rThanks"
    assert views.normalize_note(typed) == "Call me Dan.\nI'm vegetarian.\nThanks"
    assert views.NoteView("x" * 400).over is False
    assert views.NoteView("x" * 401).over is True
    assert views.NoteView("x" * 401).count == 401


def test_done_messages_come_from_a_fixed_list_and_unknown_codes_say_nothing():
    assert views.done_message("deleted").startswith("The line is deleted")
    assert views.done_message("<script>") is None
    assert views.done_message(None) is None


def test_the_api_row_shape_has_no_vectors_and_says_whether_the_line_is_open():
    row = make_row(id=9, valid_to="2026-11", closed_by=10, vector=[1.0, 0.0, 0.5])
    shaped = views.row_json(row)
    assert shaped["open"] is False and shaped["closed_by"] == 10
    assert "embedding" not in shaped and shaped["text"] == row.text
    assert views.row_json(attrs.evolve(row, valid_to=None, closed_by=None))["open"] is True


# ---- how a line reads to the person it is about ----------------------------------------------


def about_dan(text: str, **kw) -> str:
    return views.second_person(text, 42, about_reader=True, **kw)


@pytest.mark.parametrize("row, shown", [
    ("u:42 bakes bread for the whole street.", "You bake bread for the whole street."),
    ("u:42 has a brother in Leeds.", "You have a brother in Leeds."),
    ("u:42 is a night nurse.", "You are a night nurse."),
    ("u:42 was born in Dalian.", "You were born in Dalian."),
    ("u:42 keeps bees on the roof.", "You keep bees on the roof."),
    ("u:42 does yoga at dawn.", "You do yoga at dawn."),
    ("u:42 goes climbing on Fridays.", "You go climbing on Fridays."),
    ("u:42 doesn't drink coffee.", "You don't drink coffee."),
    ("u:42 isn't fond of crowds.", "You aren't fond of crowds."),
    ("u:42 hasn't seen the sea.", "You haven't seen the sea."),
    ("u:42 tries a new recipe each week.", "You try a new recipe each week."),
    ("u:42 watches the stars with a small telescope.", "You watch the stars with a small telescope."),
    ("u:42 misses the old neighbourhood.", "You miss the old neighbourhood."),
    ("u:42 fixes radios.", "You fix radios."),
    ("u:42 sold the scooter in June.", "You sold the scooter in June."),
    ("u:42 will run the relay in spring.", "You will run the relay in spring."),
    ("u:42's daughter plays the cello.", "Your daughter plays the cello."),
])
def test_the_reader_as_subject_becomes_you_and_the_verb_agrees(row, shown):
    assert about_dan(row) == shown


@pytest.mark.parametrize("row, shown", [
    ("u:42 also rents a garage.", "You also rent a garage."),
    ("u:42 no longer eats meat.", "You no longer eat meat."),
    ("u:42 recently finishes work at six.", "You recently finish work at six."),
    ("u:42 still has the old camera.", "You still have the old camera."),
    ("u:42 usually is the first to arrive.", "You usually are the first to arrive."),
    ("u:42 really enjoys quiet mornings.", "You really enjoy quiet mornings."),
])
def test_adverbs_between_the_reader_and_the_verb_are_skipped(row, shown):
    assert about_dan(row) == shown


def test_their_and_themselves_are_the_reader_when_no_one_else_is_named():
    assert about_dan("u:42 painted their door blue and is proud of themselves.") == (
        "You painted your door blue and are proud of yourself.")


def test_they_and_them_are_the_reader_until_a_plural_could_be_what_they_mean():
    assert about_dan("u:42 says the long commute tires them out.") == "You say the long commute tires you out."
    assert about_dan("u:42 said they were moving in May.") == "You said you were moving in May."
    assert about_dan("u:42 bakes cakes and sells them at the market.") == (
        "You bake cakes and sell them at the market.")
    assert about_dan("u:42 has two dogs; they are huskies.") == "You have two dogs; they are huskies."
    assert about_dan("u:42 visited the children and read to them.") == (
        "You visited the children and read to them.")
    assert about_dan("u:42 lent u:17 their ladder.", names={17: "Cara"}) == "You lent Cara their ladder."
    assert about_dan("u:42 told Warren that they were moving.", others={"Warren"}) == (
        "You told Warren that they were moving.")
    assert views.second_person("Warren thinks their plan is good and u:42 agrees.", 42) == (
        "Warren thinks their plan is good and you agree.")


def test_a_personas_promise_speaks_to_the_reader_as_you():
    assert views.second_person("Warren promised to send u:42 the map of the old town.", 42) == (
        "Warren promised to send you the map of the old town.")
    assert views.second_person("Nolan said he would call u:42 on Monday.", 42) == (
        "Nolan said he would call you on Monday.")
    assert views.second_person("Warren sends u:42 books every month.", 42) == "Warren sends you books every month."


def test_the_reader_after_a_clause_word_is_a_subject_and_elsewhere_an_object():
    assert views.second_person("Nolan thinks that u:42 cooks well.", 42) == "Nolan thinks that you cook well."
    assert views.second_person("Warren hopes u:42 is feeling better.", 42) == "Warren hopes you are feeling better."
    assert about_dan("u:42 bought a tent, and u:42 camps by the lake.") == "You bought a tent, and you camp by the lake."
    assert about_dan("u:42 moved in May. u:42 likes the new place.") == "You moved in May. You like the new place."


def test_a_second_verb_of_the_reader_agrees_but_a_list_of_things_stays():
    assert about_dan("u:42 loves maps and has a big atlas.") == "You love maps and have a big atlas."
    assert about_dan("u:42 bakes cakes and sells a few at the fair.") == "You bake cakes and sell a few at the fair."
    assert about_dan("u:42 dislikes queues and leaves home early.") == "You dislike queues and leave home early."
    assert about_dan("u:42 likes cats and dogs.") == "You like cats and dogs."
    assert about_dan("u:42 has a son who lives in Oslo and is a pilot.") == (
        "You have a son who lives in Oslo and is a pilot.")


def test_other_people_are_named_by_their_latest_display_name_or_their_id():
    names = {17: "Cara"}
    assert about_dan("u:42 and u:17 went sailing.", names=names) == "You and Cara went sailing."
    assert about_dan("u:42 borrowed u:17's kayak.", names=names) == "You borrowed Cara's kayak."
    assert about_dan("u:42 met u:99 at the gym.", names=names) == "You met u:99 at the gym."
    assert views.second_person("u:17 is u:42's flatmate.", 42, names=names) == "Cara is your flatmate."
    assert views.second_person("u:420 plays chess.", 42) == "u:420 plays chess."


def test_words_that_only_look_like_verbs_are_left_alone():
    assert about_dan("u:42 always walks.") == "You always walk."
    assert about_dan("u:42 perhaps moved.") == "You perhaps moved."
    assert views.base_form("plays") == "play" and views.base_form("carries") == "carry"
    assert views.base_form("focuses") == "focus" and views.base_form("uses") == "use"
    assert views.base_form("always") == "always" and views.base_form("boss") == "boss"


def test_a_room_is_named_by_its_title_or_its_kind_never_its_id():
    assert views.room_label(RoomFacts("room-7f3c2a9e", "Book club", False, ("warren", "nolan"))) == "“Book club”"
    assert views.room_label(RoomFacts("room-7f3c2a9e", None, True, ("mr_lee",))) == "a private chat with Mr Lee"
    assert views.room_label(RoomFacts("room-7f3c2a9e", None, False, ("warren", "nolan"))) == "a group chat"
    assert views.room_label(None) == "a chat"
    reader = views.Reader(42, rooms={"g": RoomFacts("g", None, False, ("warren",))})
    assert views.line_view(make_row(room_id="g"), {}, reader).room == "a group chat"
    assert views.line_view(make_row(room_id=None), {}, reader).room is None


def test_the_reader_is_named_by_their_display_name_else_their_number():
    assert views.Reader(42, names={42: "Dan"}).name == "Dan"
    assert views.Reader(42).name == "user 42"


# ---- search, filters, pages ------------------------------------------------------------------


def many(count: int) -> list[views.PersonaView]:
    rows = [make_row(id=1000 + n, persona=("warren", "nolan")[n % 2],
                     kind=("fact", "preference", "event")[n % 3],
                     text=f"u:42 keeps note {n} about the garden.",
                     valid_to="2026-09" if n % 5 == 0 else None,
                     created=NOW - timedelta(hours=n)) for n in range(count)]
    return views.persona_views(rows, DAN, personas=["ada"])


def query(**params: str) -> views.LineQuery:
    return views.LineQuery.from_params(params)


def test_119_lines_make_three_pages_of_50_in_persona_order():
    groups = many(119)
    pages = [views.memories_page(groups, query(page=str(n))) for n in (1, 2, 3)]
    assert [(p.first, p.last, p.pages, p.matched, p.total) for p in pages] == [
        (1, 50, 3, 119, 119), (51, 100, 3, 119, 119), (101, 119, 3, 119, 119)]
    shown = [line.id for p in pages for g in p.groups for line in g.lines]
    assert shown == [line.id for g in groups for line in g.lines] and len(set(shown)) == 119
    assert [g.slug for g in pages[0].groups] == ["nolan"]
    assert [g.slug for g in pages[1].groups] == ["nolan", "warren"]
    assert [g.slug for g in pages[2].empty] == ["ada"] and pages[0].empty == ()
    assert pages[1].groups[1].kept == 60  # a section still speaks for all of the persona's lines
    assert (pages[0].previous, pages[0].next) == (None, "/?page=2")
    assert (pages[2].previous, pages[2].next) == ("/?page=2", None)
    assert [(link.number, link.href, link.current) for link in pages[1].links] == [
        (1, "/", False), (2, "/?page=2", True), (3, "/?page=3", False)]


def test_filters_and_words_narrow_the_list_and_stay_in_every_link():
    groups = many(119)
    found = views.memories_page(groups, query(q="NOTE 1", persona="warren", kind="event", state="current"))
    lines = [line for g in found.groups for line in g.lines]
    assert lines and all("note 1" in line.text and line.kind == "event" and not line.closed for line in lines)
    assert {g.slug for g in found.groups} == {"warren"} and found.empty == ()
    assert found.query.href(2) == "/?q=NOTE+1&persona=warren&kind=event&state=current&page=2"
    closed = views.memories_page(groups, query(state="closed"))
    assert closed.matched == 24 and all(line.closed for g in closed.groups for line in g.lines)
    assert views.memories_page(groups, query(q="You keep")).matched == 119  # the text as shown
    assert views.memories_page(groups, query(q="u:42")).matched == 0


def test_a_page_past_the_end_is_empty_and_says_how_many_there_are():
    page = views.memories_page(many(60), query(page="4"))
    assert (page.groups, page.pages, page.matched, page.first) == ((), 2, 60, 0)
    assert page.previous is None and page.next is None


def test_many_pages_link_the_first_the_last_and_the_neighbours():
    page = views.memories_page(many(1000), query(page="10"))
    numbers = [None if link is None else link.number for link in page.links]
    assert numbers == [1, None, 8, 9, 10, 11, 12, None, 20]


@pytest.mark.parametrize("params, says", [
    ({"kind": "gossip"}, "There is no kind 'gossip'"),
    ({"state": "maybe"}, "state=current"),
    ({"page": "0"}, "The page must be a whole number from 1"),
    ({"page": "two"}, "The page must be a whole number from 1"),
    ({"persona": "No Body!"}, "There is no persona"),
    ({"q": "x" * 201}, "Search for at most 200 characters"),
])
def test_a_query_the_form_never_sends_is_refused_with_what_to_send(params, says):
    with pytest.raises(InvalidInput, match=says):
        views.LineQuery.from_params(params)
