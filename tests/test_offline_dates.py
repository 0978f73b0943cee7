"""Dates resolved against the line's time (``minds.offline.dates``).

Every case is said on Monday 2026-08-10.
"""

from __future__ import annotations

from datetime import date

import pytest

from persona_memory.minds.offline.dates import resolve_dates
from persona_memory.minds.offline.kinds import tense_of

MONDAY = date(2026, 8, 10)


def resolved(sentence: str) -> tuple[str, str | None]:
    dated = resolve_dates(sentence, MONDAY, tense_of(sentence))
    return dated.text, dated.valid_from


@pytest.mark.parametrize(
    ("said", "text", "valid_from"),
    [
        ("I'm interviewing at Tencent on Thursday", "I'm interviewing at Tencent on Thursday 2026-08-13", "2026-08-13"),
        ("I fly to Berlin tomorrow", "I fly to Berlin on 2026-08-11", "2026-08-11"),
        ("I went to a book swap yesterday", "I went to a book swap on 2026-08-09", "2026-08-09"),
        ("I got married on July 17", "I got married on 2026-07-17", "2026-07-17"),
        ("I graduated on 17 July 2023", "I graduated on 17 July 2023", "2023-07-17"),
        ("I bought tickets for next Friday", "I bought tickets for Friday 2026-08-21", "2026-08-21"),
        ("I signed the lease on 2026-07-17", "I signed the lease on 2026-07-17", "2026-07-17"),
        ("I ran a race last Saturday", "I ran a race on Saturday 2026-08-08", "2026-08-08"),
        ("I saw a sunset three days ago", "I saw a sunset on 2026-08-07", "2026-08-07"),
        ("I have an exam next Friday", "I have an exam on Friday 2026-08-21", "2026-08-21"),
        ("My daughter turns 5 on Saturday", "My daughter turns 5 on Saturday 2026-08-15", "2026-08-15"),
    ],
)
def test_a_day_is_resolved_to_the_day(said: str, text: str, valid_from: str) -> None:
    assert resolved(said) == (text, valid_from)


@pytest.mark.parametrize(
    ("said", "text", "valid_from"),
    [
        ("We are going camping next month", "We are going camping in September 2026", "2026-09"),
        ("I sold my Tesla shares last July", "I sold my Tesla shares in July 2026", "2026-07"),
        ("We booked a cabin for next June", "We booked a cabin for June 2027", "2027-06"),
        ("My sister and I are expecting our first baby in November", "My sister and I are expecting our first baby in November 2026", "2026-11"),
        ("I moved here in March", "I moved here in March 2026", "2026-03"),
        ("I'm starting my new job in March", "I'm starting my new job in March 2027", "2027-03"),
        ("I was in Rome in May 2023", "I was in Rome in May 2023", "2023-05"),
        ("I went to a school event last week", "I went to a school event in the week of 2026-08-03", "2026-08"),
        ("I joined a choir last weekend", "I joined a choir on the weekend of 2026-08-08", "2026-08"),
        ("I went camping two weekends ago", "I went camping on the weekend of 2026-08-01", "2026-08"),
    ],
)
def test_a_month_week_or_weekend_is_resolved_to_the_month(said: str, text: str, valid_from: str) -> None:
    assert resolved(said) == (text, valid_from)


@pytest.mark.parametrize(
    ("said", "text", "valid_from"),
    [
        ("I moved to Shanghai in 2019", "I moved to Shanghai in 2019", "2019"),
        ("I quit smoking two years ago", "I quit smoking in 2024", "2024"),
        ("I carved that walnut bowl last year", "I carved that walnut bowl in 2025", "2025"),
        ("I've played in this band for 4 years", "I've played in this band for 4 years (since 2022)", "2022"),
    ],
)
def test_a_year_is_resolved_to_the_year(said: str, text: str, valid_from: str) -> None:
    assert resolved(said) == (text, valid_from)


@pytest.mark.parametrize(
    "said",
    [
        "I love hiking",
        "My birthday is in March",
        "I swim on Mondays",
        "I swim every Saturday morning",
        "I met him a few weeks ago",
        "I've been busy lately",
        "My neighbour plays the organ for the Sunday concerts",  # a weekday that names a thing
        "I loved my Saturday job at the bakery",
        "I waited an hour for the Friday train",
    ],
)
def test_no_time_stated_means_no_valid_from(said: str) -> None:
    assert resolved(said) == (said, None)


def test_a_date_that_opens_the_sentence_moves_behind_its_first_clause() -> None:
    assert resolved("Last Friday I visited a harbour festival - it was loud.") == (
        "I visited a harbour festival on Friday 2026-08-07 - it was loud.",
        "2026-08-07",
    )
    assert resolved("Yesterday I took my niece to the aquarium") == (
        "I took my niece to the aquarium on 2026-08-09",
        "2026-08-09",
    )


def test_the_first_date_is_valid_from_and_every_date_is_written() -> None:
    text, valid_from = resolved("I booked flights yesterday for a trip next month")
    assert text == "I booked flights on 2026-08-09 for a trip in September 2026"
    assert valid_from == "2026-08-09"


def test_the_speakers_preposition_is_kept() -> None:
    assert resolved("I'll have the report done by Friday") == (
        "I'll have the report done by Friday 2026-08-14",
        "2026-08-14",
    )
    assert resolved("I've lived here since last year") == ("I've lived here since 2025", "2025")


def test_weekdays_resolve_from_any_day_of_the_week() -> None:
    sunday = date(2026, 8, 16)
    assert resolve_dates("I'm flying out on Monday", sunday, "future").valid_from == "2026-08-17"
    assert resolve_dates("I flew in on Monday", sunday, "past").valid_from == "2026-08-10"
    assert resolve_dates("I'm seeing her on Sunday", sunday, "future").valid_from == "2026-08-23"


def test_the_thing_a_relative_day_owns_is_said_with_its_date_after_it() -> None:
    assert resolved("I can't wait for tomorrow's ferry to Skye") == (
        "I can't wait for the ferry to Skye on 2026-08-11",
        "2026-08-11",
    )
    assert resolved("We played our hearts out in last week's derby.") == (
        "We played our hearts out in the derby in the week of 2026-08-03.",
        "2026-08",
    )


def test_a_relative_day_owning_a_subject_keeps_its_possessive() -> None:
    # "the show is sold out on 2026-08-11" would move the date into the verb's clause
    assert resolved("I think tomorrow's show is sold out.") == ("I think 2026-08-11's show is sold out.", "2026-08-11")
