"""``text.folded``: a case-insensitive pattern's fast search finds exactly what the pattern
finds — the same span, the same groups, the original text's letters — on any text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from persona_memory.minds.offline import continuation, dates, extract, kinds, route, sentences
from persona_memory.text import orders, secrets
from persona_memory.text.folded import Folded, lowercase_letters
from persona_memory.write import fiction, guards

IN_USE = {
    f"{module.__name__.rsplit('.', 1)[-1]}.{name}": value
    for module in (guards, fiction, orders, secrets, continuation, dates, extract, kinds, route, sentences)
    for name, value in vars(module).items()
    if isinstance(value, Folded)
}


def test_the_patterns_in_use_are_found() -> None:
    assert {
        "guards._SENSITIVE", "secrets._HANDED_OVER", "orders._STANDING_ORDER", "kinds._LIFE_EVENTS",
        "kinds._FUTURE", "route._CHANGE",
    } <= IN_USE.keys()


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
    slow = re.compile(pattern.pattern, pattern.ignoring_case.flags)
    for sentence in SENTENCES:
        for text in (sentence, sentence.upper(), sentence.lower(), sentence.swapcase()):
            assert same(pattern.search(text), slow.search(text)), (name, text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="abcdefkmsAKMS \u212a\u017f\u0130i.,'-0123", max_size=24))
def test_any_text_ascii_or_not_gets_the_case_insensitive_answer(text: str) -> None:
    pattern = Folded(r"\b(?:Kiss|ask(?:ed)? me|miss(?:es)?|ma'am|s\w+K|[^a-k]+s)\b")
    assert same(pattern.search(text), pattern.ignoring_case.search(text))
    assert pattern.sub("_", text) == pattern.ignoring_case.sub("_", text)


def test_a_match_keeps_the_texts_own_letters() -> None:
    found = Folded(r"\bquit (\w+)").search("I QUIT Smoking in May.")
    assert found is not None and found[0] == "QUIT Smoking" and found[1] == "Smoking"


def test_only_literal_letters_are_lowercased() -> None:
    assert lowercase_letters(r"\bI'll (?P<When>Soon)\S+ [a-z0-9] (?P=When)") == r"\bi'll (?P<When>soon)\S+ [a-z0-9] (?P=When)"


@pytest.mark.parametrize(
    ("pattern", "why"),
    [
        (r"[A-Z]\w+", "classes lowercase"),
        (r"\x41cme", "letters as letters"),
        ("\u212aelvin", "folds to an ASCII one"),
        (r"(?-i:Super)", "no flags inside"),
    ],
)
def test_a_pattern_it_cannot_lowercase_exactly_is_refused(pattern: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        Folded(pattern)
