"""What the offline reader keeps of a chat, read as a person reads the rows it writes.

Each test is one failure class a reader of the rows saw: a pronoun with nothing it refers to,
the answer cut away, the "u:N says" frame, chat spellings leaking into the row. The sentences
are our own.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from persona_memory.minds.offline.extract import extract_memories
from persona_memory.minds.port import ExtractionRequest, Line, Person

MONDAY = datetime(2026, 8, 10, 18, 0, tzinfo=timezone.utc)
DAN = Person(user_id=42, name="Dan")


def dialogue(*said: tuple[str, str]) -> list[dict]:
    """The rows written from a private chat between Warren and u:42: ``(speaker, text)`` pairs."""
    request = ExtractionRequest(
        persona="warren",
        lines=tuple(
            Line(id=100 + i, speaker=speaker, text=text, at=MONDAY + timedelta(minutes=i))
            for i, (speaker, text) in enumerate(said)
        ),
        present=(DAN,),
        block="",
        today=MONDAY.date(),
        private=True,
        personas=("warren",),
    )
    return [m for m in extract_memories(request)["memories"] if m["subject"] == "u:42"]


def said_by_dan(*lines: str) -> list[str]:
    return [m["text"] for m in dialogue(*(("u:42", line) for line in lines))]


# -- chat spellings are written out before reading -------------------------------------------


def test_contractions_typed_without_apostrophes_are_read_as_english() -> None:
    [text] = said_by_dan("Im learning the cello and I cant wait for my first recital in June.")
    assert text.startswith("u:42 is learning the cello")
    assert "can't" in text
    assert not re.search(r"\b(?:Im|cant)\b", text)


def test_ill_is_read_as_i_will_only_where_it_cannot_be_the_adjective() -> None:
    [text] = said_by_dan("ill start my new job at the bakery next week.")
    assert text.startswith("u:42 will start their new job at the bakery")
    [text] = said_by_dan("I was ill for the whole week of the marathon in Bristol.")
    assert "was ill" in text


def test_chat_words_are_written_out() -> None:
    [text] = said_by_dan("Im gonna repaint my bday bike cuz the old blue paint is peeling.")
    assert "going to repaint their birthday bike because" in text


# -- no "says" frame ---------------------------------------------------------------------------


def test_a_view_is_kept_as_what_the_speaker_thinks_not_as_what_they_said() -> None:
    assert said_by_dan("Old maps are the best souvenirs from any trip.") == [
        "u:42 thinks: Old maps are the best souvenirs from any trip."
    ]
    assert said_by_dan("The night bus to Hull was freezing and packed.") == [
        "u:42 found that the night bus to Hull was freezing and packed."
    ]
    assert not any(text.startswith("u:42 says") for text in said_by_dan(
        "Gardening teaches patience.", "The new library downtown has a great reading room."
    ))


def test_a_fragment_is_no_view() -> None:
    assert said_by_dan("Like being on another planet with all those stars overhead.") == []
    assert said_by_dan("Must have been a long drive through the hills.") == []
