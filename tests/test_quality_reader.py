"""The quality bench's reader of rows (``bench/quality.py``, its checks in ``bench/row_checks.py``):
each check passes a row a person could read alone and fails one they could not.

Every sentence here was written for this file. The bench lives outside the package, so it is
loaded from its path.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


quality = _load("quality")


@pytest.mark.parametrize(
    "text",
    [
        "u:42 bought a bike and rides it daily.",
        "u:42 loves yoga because it calms them.",
        "u:42 says the trip made them happy.",  # them: the subject, another clause's object
        "u:42's brother said he would come to the party.",
        "u:42 kept old letters and reread those letters last night.",
        "u:42 went to the lake and swam there.",
        "u:42 finds it hard to sleep before exams.",  # "it" of an adjective and an infinitive
        "u:42 bought a lamp that was broken.",  # "that" as a relative pronoun
        "u:42 has a bike and wants a new one.",
        "There is a bakery near u:42's flat.",
        "u:42 wants to put themselves out there more.",
        "u:42 moved to a new flat in May, and that was hard.",  # "that": the clause before it
        "u:42 volunteers with those who have no home.",
        "u:42 read \"The Quiet Harbour\" and found it moving.",
        "u:42 is set on the bakery plan and will make it happen.",  # "it" in a fixed phrase
        "u:42 gave it their all at the regatta.",
    ],
)
def test_a_reference_with_something_in_the_row_to_point_at_passes(text: str) -> None:
    assert quality.dangling_reference(text) is None


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("u:42 has to get them ready soon.", "them"),
        ("u:42 thinks it is great.", "it"),
        ("u:42 found those letters in the attic.", "those letters"),
        ("u:42 went there last week.", "there"),
        ("u:42 thinks so.", "thinks so"),
        ("u:42 feels the same.", "the same"),
        ("u:42 wants a new one.", "one"),
        ("u:42 said he would come to the party.", "he"),  # the rows call their human "they"
        ("u:42 is going hiking this weekend.", "this weekend"),
        ("u:42 says that was fun.", "that"),
        ("u:42 loved that book.", "that book"),
        ("u:42 says the brushes and the rollers give it a glow.", "it"),  # plural nouns only
        ("u:42 met her at the station.", "her"),
    ],
)
def test_a_reference_pointing_outside_the_row_fails_with_its_word(text: str, word: str) -> None:
    assert quality.dangling_reference(text) == word


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("u:42 and I went sailing on Sunday.", "I"),
        ("u:42 taught me to bake bread.", "me"),
        ("u:42 joined our book club.", "our"),
        ("u:42 wants us to visit in June.", "us"),
        ("u:42 said i'm welcome any time.", "i'm"),
    ],
)
def test_first_person_fails(text: str, word: str) -> None:
    assert quality.first_person(text) == word


@pytest.mark.parametrize(
    "text",
    [
        "u:42 sang \"I Will Be Fine\" at the open mic.",  # a quoted title
        "u:42 moved to the US in 2019.",
        "u:42 bakes bread every Sunday.",
    ],
)
def test_first_person_passes(text: str) -> None:
    assert quality.first_person(text) is None


@pytest.mark.parametrize(
    ("text", "word"),
    [("u:42 thinks you would like the museum.", "you"), ("u:42 borrowed your ladder.", "your")],
)
def test_second_person_fails(text: str, word: str) -> None:
    assert quality.second_person(text) == word


@pytest.mark.parametrize(
    "text", ["u:42 loves the song \"Call You Back\".", "u:42 fixed their neighbour's ladder."]
)
def test_second_person_passes(text: str) -> None:
    assert quality.second_person(text) is None


@pytest.mark.parametrize(
    ("text", "frame"),
    [
        ("u:42 says the ferry is always late.", "u:42 says"),
        ("u:42 said that the exam went well.", "u:42 said"),
        ("u:42 mentioned a new job at the harbour.", "u:42 mentioned"),
        ("u:42 really mentioned cycling is faster.", "u:42 really mentioned"),
        ("u:42 feels that the move was right.", "u:42 feels"),
        ("u:42 felt like they finally belonged.", "u:42 felt"),
        ("u:42 shared that their sister is engaged.", "u:42 shared"),
        ("u:42 added that the ferry was late again.", "u:42 added"),
        ("u:42 says: winters up north are long.", "u:42 says"),
    ],
)
def test_a_says_frame_fails_with_the_frame(text: str, frame: str) -> None:
    assert quality.says_frame(text) == frame


@pytest.mark.parametrize(
    "text",
    [
        "u:42 takes the ferry to work.",
        "u:42 feels tired after night shifts.",  # feels + an adjective: not a frame
        "u:42 shared a photo of their garden.",  # shared + an object
        "u:42 thinks about moving abroad.",
        "u:42 thinks cycling is faster than the bus.",  # an opinion: the thinking is the fact
        "u:42 said goodbye to their old team.",
        "u:42 added some sage to the stew.",  # added + an object: a deed
    ],
)
def test_a_row_without_a_frame_passes(text: str) -> None:
    assert quality.says_frame(text) is None


@pytest.mark.parametrize(
    "text",
    ["u:42 grows tomatoes on their balcony.", "u:42's sister lives in Lisbon.", "Family time matters to u:42."],
)
def test_a_row_that_opens_with_whom_it_is_about_passes(text: str) -> None:
    assert quality.subject_problem(text, "u:42") is None


@pytest.mark.parametrize(
    ("text", "about", "reason"),
    [
        ("They grow tomatoes on the balcony.", None, "opens with 'They'"),
        ("Lately, u:42 sleeps badly.", "u:42", "opens with 'Lately,'"),
        ("When u:42 was young, they lived by the sea.", "u:42", "opens with 'When'"),
        ("Running keeps u:42 calm.", "u:42", "opens with 'Running'"),
        ("Was busy, u:42 moved flats.", "u:42", "opens with 'Was'"),
        ("Same with u:42 at the pool.", "u:42", "opens with 'Same'"),
        ("Glad u:42's cousin called.", "u:42", "opens with 'Glad'"),
        ("u:7 lent the car for the weekend.", "u:42", "does not name u:42"),
        ("u:420 lent the car for the weekend.", "u:42", "does not name u:42"),
    ],
)
def test_a_row_that_does_not_name_whom_it_is_about_fails(text: str, about: str | None, reason: str) -> None:
    assert quality.subject_problem(text, about) == reason


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("u:42 is swamped.", "3 words"),
        ("u:42 " + "walks the dog along the canal " * 7 + "daily.", "221 characters"),
        ("u:42 moved house. They like it.", "not one sentence"),
        ("u:42 wonders whether the shop is open?", "not one sentence"),
        ("u:42 has a new job", "not one sentence"),  # no full stop
    ],
)
def test_length_or_sentence_problems_fail(text: str, reason: str) -> None:
    assert quality.length_problem(text) == reason


def test_a_short_plain_sentence_passes_the_length_check() -> None:
    assert quality.length_problem("u:42 plays the cello.") is None


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("u:42 dont like early trains.", "dont"),
        ("u:42 is gonna paint the fence.", "gonna"),
        ("u:42 thinks ur plan is good.", "ur"),
        ("u:42 said lol about the rain.", "lol"),
        ("u:42 says ill call the plumber.", "ill"),
        ("u:42 is still livin' by the coast.", "livin'"),
        ("u:42 says its so cold by the river.", "its so"),
    ],
)
def test_chat_english_fails(text: str, word: str) -> None:
    assert quality.chat_english(text) == word


@pytest.mark.parametrize(
    "text",
    [
        "u:42 was ill for a week in March.",  # ill: sick, not I'll
        "u:42 can't wait for the concert.",
        "u:42 repaired the boat and painted its hull.",
        "u:42 likes the film \"Gonna Be Alright\".",  # a quoted title
    ],
)
def test_chat_english_passes(text: str) -> None:
    assert quality.chat_english(text) is None


def test_a_row_passing_every_check_is_standalone_and_a_failing_one_names_its_checks() -> None:
    good = quality.verdict("u:42 bought a bike and rides it to work.", "u:42")
    bad = quality.verdict("u:42 says I have to get them ready.", "u:42")

    assert good.standalone and quality.marks(good) == "SR12FLC"
    assert not bad.standalone
    assert dict(bad.failures) == {"dangling reference": "them", "first person": "I", "says frame": "u:42 says"}
    assert quality.marks(bad) == "S--2-LC"


def test_the_report_counts_failures_per_check_and_shows_failing_rows() -> None:
    texts = [
        "u:42 bought a bike and rides it to work.",
        "u:42 says the ferry is always late.",
        "u:42 says they're gonna move.",
        "u:42 grows basil in the kitchen.",
    ]
    rows = [Row(text) for text in texts]
    every = [quality.verdict(text, "u:42") for text in texts]

    out = quality.report(rows, every, every[:2]).splitlines()

    assert out[5].split() == ["says", "frame", "2", "(50.0%)", "1", "(50.0%)"]
    assert out[8].split() == ["passes", "every", "check", "2", "(50.0%)", "1", "(50.0%)"]
    assert out[9:] == [
        "  says frame, e.g.:",
        "    [u:42 says] u:42 says the ferry is always late.",
        "    [u:42 says] u:42 says they're gonna move.",
        "  chat English, e.g.:",
        "    [gonna] u:42 says they're gonna move.",
    ]


class Row:
    def __init__(self, text: str) -> None:
        self.text = text
