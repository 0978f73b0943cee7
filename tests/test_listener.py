"""The offline reader's rule for a sentence about the listener rather than its speaker."""

from __future__ import annotations

import pytest

from persona_memory.minds.offline.listener import about_the_listener


@pytest.mark.parametrize(
    "said",
    [
        "I'm in awe of your patience with the choir.",
        "I understand why the choir means so much to you.",
        "I have faith in you.",
        "I can't wait to see your garden when it blooms.",
        "I'd love to hear you sing at the open mic.",
        "I'm loving your new haircut.",
        "I can see why the coast inspires you.",
        "I really value your advice on the allotment.",
    ],
)
def test_an_attitude_toward_the_listener_is_about_the_listener(said: str) -> None:
    assert about_the_listener(said)


@pytest.mark.parametrize(
    "said",
    [
        "I got this scarf for you at the market.",  # a deed of the speaker's
        "I told you about the relay race.",
        "I'll send you the recipe tonight.",  # a plan toward the listener
        "I could help you with the move if you want.",  # offers
        "I can lend you the tent for the weekend.",
        "I'm posting you the pattern now.",
        'I think you\'d love "Quiet Harbour", it\'s a slow read.',  # names a title
        "I think you met Odile at the fair.",
        "I miss my old flat, you know.",  # more of the speaker
        "I'm lucky to have you and my sister nearby.",
        "My brother thinks you're funny.",  # the speaker does not open it
        "I'm training for a half marathon.",  # no listener at all
    ],
)
def test_a_sentence_with_more_of_the_speaker_in_it_is_not(said: str) -> None:
    assert not about_the_listener(said)
