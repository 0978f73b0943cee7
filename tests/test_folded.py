"""``write.folded``: a case-insensitive pattern's fast search finds exactly what the pattern
finds — the same span, the same groups, the original text's letters — on any text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from persona_memory.minds.offline import extract, kinds, route
from persona_memory.write import guards
from persona_memory.write.folded import Folded

IN_USE = {
    "guards._SENSITIVE": guards._SENSITIVE,
    "guards._THIRD_PARTY": guards._THIRD_PARTY,
    "kinds._LIFE_EVENTS": kinds._LIFE_EVENTS,
    "kinds._HOBBIES": kinds._HOBBIES,
    "kinds._PLEASANTRY": kinds._PLEASANTRY,
    "kinds._MUNDANE": kinds._MUNDANE,
    "kinds._WEIGHTY": kinds._WEIGHTY,
    "kinds._FOLLOW_UP": kinds._FOLLOW_UP,
    "route._CHANGE": route._CHANGE,
    "extract._ABOUT_LISTENER": extract._ABOUT_LISTENER,
}

SENTENCES = [
    "My Brother was ARRESTED last spring, and Mum is in the Hospital now.",
    "I finally Quit my job at the bakery and now I Work nights at a depot.",
    "We got Married in June! I'm so happy it's over.",
    "Ask me on Friday how the interview went, OK?",
    "Just grabbed a quick Coffee this morning, nothing much.",
    "I play chess and go Rock Climbing every weekend with my neighbour.",
    "u:42 said their cousin has DIABETES and takes insulin daily.",
    "Ça va? I ran into an old friend at the café — she's Pregnant with twins.",
    "The Kelvin sign \u212a and a long \u017f are not ASCII letters.",
]


def same(found: re.Match[str] | None, expected: re.Match[str] | None) -> bool:
    if found is None or expected is None:
        return found is expected
    return (found.span(), found.group(0), found.groups()) == (expected.span(), expected.group(0), expected.groups())


@pytest.mark.parametrize("name", sorted(IN_USE))
def test_each_pattern_in_use_finds_what_its_case_insensitive_self_finds(name: str) -> None:
    pattern = IN_USE[name]
    assert isinstance(pattern, Folded)
    slow = re.compile(pattern.pattern, re.IGNORECASE)
    for sentence in SENTENCES:
        for text in (sentence, sentence.upper(), sentence.lower(), sentence.swapcase()):
            assert same(pattern.search(text), slow.search(text)), (name, text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abcdefkmsAKMS \u212a\u017f\u0130i.,'-0123", max_size=24))
def test_any_text_ascii_or_not_gets_the_case_insensitive_answer(text: str) -> None:
    pattern = Folded(r"\b(?:kiss|ask(?:ed)? me|miss(?:es)?|ma'am|s\w+k)\b")
    assert same(pattern.search(text), pattern.ignoring_case.search(text))
    assert pattern.sub("_", text) == pattern.ignoring_case.sub("_", text)


def test_a_match_keeps_the_texts_own_letters() -> None:
    found = Folded(r"\bquit (\w+)").search("I QUIT Smoking in May.")
    assert found is not None and found[0] == "QUIT Smoking" and found[1] == "Smoking"


@pytest.mark.parametrize("pattern", [r"\bAcme\b", r"\Wsold", r"[A-Z]\w+", r"(?P<Name>x)"])
def test_a_pattern_that_is_not_its_own_lowercase_is_refused(pattern: str) -> None:
    with pytest.raises(ValueError, match="its own lowercase"):
        Folded(pattern)
