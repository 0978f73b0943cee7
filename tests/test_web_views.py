"""The pure view models of the human's pages: grouping, arcs, dates, speakers, the note count."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import attrs

from persona_memory.storage.store import TranscriptLine
from persona_memory.storage.writes import Notice
from persona_memory.web import views
from rowfactory import NOW, make_row


def test_lines_are_grouped_by_persona_sorted_by_name_open_newest_first_then_closed():
    sold = make_row(id=106, persona="warren", text="Dan sold the flat.", valid_from="2026-11", created=NOW)
    owned = make_row(id=105, persona="warren", text="Dan owns a flat.", valid_from="2026-07",
                     valid_to="2026-11", closed_by=106, created=NOW - timedelta(days=90))
    older = make_row(id=104, persona="warren", kind="open_loop", text="Dan has an interview.",
                     created=NOW - timedelta(days=30))
    nolans = make_row(id=107, persona="nolan", kind="preference", text="Dan likes noir.")
    groups = views.persona_views([owned, older, nolans, sold], personas=["ada"], meters={"warren": (605, 1200)},
                                 muted={"nolan"})
    assert [(g.slug, g.name, g.muted) for g in groups] == [("ada", "Ada", False), ("nolan", "Nolan", True),
                                                           ("warren", "Warren", False)]
    ada, nolan, warren = groups
    assert ada.count == 0 and ada.meter is None
    assert [line.id for line in warren.open_lines] == [106, 104]
    assert [line.id for line in warren.closed_lines] == [105]
    assert warren.meter == views.Meter(605, 1200) and warren.meter.percent == 50
    assert nolan.open_lines[0].kind == "preference"
    assert warren.open_lines[1].kind == "open loop"


def test_a_closed_line_shows_its_arc_and_the_line_that_replaced_it():
    sold = make_row(id=206, text="Dan sold the flat.", valid_from="2026-11")
    owned = make_row(id=205, text="Dan owns a flat.", valid_from="2026-07", valid_to="2026-11", closed_by=206,
                     created=datetime(2026, 7, 3, 9, tzinfo=timezone.utc), room_id="dm", evidence=(3, 4))
    view = views.line_view(owned, {206: sold, 205: owned})
    assert view == views.LineView(id=205, text="Dan owns a flat.", kind="fact", noted="2026-07-03",
                                  since="2026-07", room_id="dm", evidence_count=2, closed=True,
                                  arc="2026-07 → 2026-11", replaced_by="Dan sold the flat.")
    assert views.line_view(owned, {205: owned}).replaced_by is None
    assert views.line_view(sold, {}).arc is None and not views.line_view(sold, {}).closed


def test_an_arc_without_a_stated_start_begins_the_month_the_line_was_noted():
    row = make_row(valid_to="2026-11", created=datetime(2026, 8, 2, tzinfo=timezone.utc))
    assert views.arc(row) == "2026-08 → 2026-11"


def test_memory_text_passes_through_untouched_escaping_is_the_templates_job():
    text = '<script>alert(1)</script> <img src=x onerror=alert(1)> javascript:alert(1)'
    (group,) = views.persona_views([make_row(text=text)])
    assert group.open_lines[0].text == text


def test_transcript_speakers_read_as_you_a_persona_name_or_another_persons_id():
    at = datetime(2026, 8, 18, 9, 5, tzinfo=timezone.utc)
    lines = [TranscriptLine(1, "dm", "u:42", "I bought a flat.", at),
             TranscriptLine(2, "dm", "mr_lee", "Congratulations.", at),
             TranscriptLine(3, "dm", "u:17", "Me too.", at)]
    spoken = views.spoken_lines(lines, 42)
    assert [(s.speaker, s.mine) for s in spoken] == [("You", True), ("Mr Lee", False), ("u:17", False)]
    assert spoken[0].when == "2026-08-18 09:05 UTC"


def test_notices_show_the_persona_by_name_and_how_many_lines_undo_removes():
    notice = Notice(id=3, user_id=42, persona="warren", room_id="dm", text="Warren noted: owns a flat",
                    memory_ids=(5, 6), created=datetime(2026, 8, 18, 9, 5, tzinfo=timezone.utc))
    assert views.notice_views([notice]) == [
        views.NoticeView(id=3, persona="Warren", text="Warren noted: owns a flat", room_id="dm",
                         when="2026-08-18 09:05 UTC", lines=2)
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
