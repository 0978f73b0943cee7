"""First person to third, as the offline mind writes it (``minds.offline.person``)."""

from __future__ import annotations

import pytest

from persona_memory.minds.offline.person import (
    Voice,
    company_of,
    restore_subject,
    third_singular,
    to_third_person,
)

DAN = Voice(ref="u:42")


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("I love hiking", "u:42 loves hiking"),
        ("I go climbing on Sundays", "u:42 goes climbing on Sundays"),
        ("I watch a lot of films", "u:42 watches a lot of films"),
        ("I study Japanese at night", "u:42 studies Japanese at night"),
        ("I have two kids", "u:42 has two kids"),
        ("I am a nurse", "u:42 is a nurse"),
        ("I do bookbinding", "u:42 does bookbinding"),
        ("I don't eat meat", "u:42 doesn't eat meat"),
        ("I really enjoy the spicy dishes", "u:42 really enjoys the spicy dishes"),
        ("I sold my flat", "u:42 sold their flat"),
        ("I went to Paris", "u:42 went to Paris"),
        ("I can swim", "u:42 can swim"),
        ("I'm interviewing at Tencent", "u:42 is interviewing at Tencent"),
        ("I've been to Rome", "u:42 has been to Rome"),
        ("I'll start in March", "u:42 will start in March"),
        ("I'd love to visit Kyoto", "u:42 would love to visit Kyoto"),
        ("I'd been there before", "u:42 had been there before"),
        ("I was a teacher", "u:42 was a teacher"),
    ],
)
def test_the_speaker_becomes_their_id_and_the_verb_agrees(said: str, written: str) -> None:
    assert to_third_person(said, DAN) == written


def test_later_mentions_are_pronouns_with_plural_verbs() -> None:
    assert to_third_person("I love my job because I am good at it", DAN) == (
        "u:42 loves their job because they are good at it"
    )
    assert to_third_person("I think I was wrong", DAN) == "u:42 thinks they were wrong"
    assert to_third_person("I'm sure I'm right", DAN) == "u:42 is sure they're right"


def test_words_inside_a_quotation_stay_as_they_were_written() -> None:
    assert to_third_person('My gran always said "you make your own luck" and I believe it', DAN) == (
        'u:42\'s gran always said "you make your own luck" and they believe it'
    )


def test_being_oneself_is_the_reflexive_form() -> None:
    assert to_third_person("I just want to be me", DAN) == "u:42 just wants to be themself"
    assert to_third_person("I finally feel like me again", DAN) == "u:42 finally feels like themself again"
    assert to_third_person("My friends helped me be brave", DAN) == "u:42's friends helped them be brave"


def test_object_and_reflexive_forms() -> None:
    assert to_third_person("The group made me feel accepted", DAN) == "The group made u:42 feel accepted"
    assert to_third_person("I taught myself to code", DAN) == "u:42 taught themself to code"
    assert to_third_person("My kids are excited about summer break", DAN) == (
        "u:42's kids are excited about summer break"
    )


def test_we_is_the_speaker_with_company() -> None:
    voice = Voice(ref="u:42", company="their kids")
    assert to_third_person("We went kayaking on the lake", voice) == (
        "u:42 and their kids went kayaking on the lake"
    )
    assert to_third_person("We're moving to Berlin", DAN) == "u:42 and others are moving to Berlin"


def test_a_compound_subject_keeps_a_plural_verb() -> None:
    assert to_third_person("My husband and I love camping", DAN) == "u:42 and their husband love camping"


def test_company_is_read_only_where_the_line_says_who_we_is() -> None:
    assert company_of("My wife and I finally booked the ferry.") == "their wife"
    assert company_of("Me and my brother rebuilt the shed.") == "their brother"
    assert company_of("Tom and I drove up to Inverness.") == "Tom"
    assert company_of("My fam and I went out") == "their family"
    assert company_of("Took my kids to the zoo. We loved it.") is None
    assert company_of("We went camping.") is None


def test_you_names_the_listener_or_refuses_the_sentence() -> None:
    assert to_third_person("I'll send you the photos", DAN) is None
    with_listener = Voice(ref="u:42", listener="Warren")
    assert to_third_person("I'll send you the photos", with_listener) == "u:42 will send Warren the photos"
    assert to_third_person("I read the book you recommended", with_listener) == (
        "u:42 read the book Warren recommended"
    )


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("I can fix the gate if you want", "u:42 can fix the gate if Warren wants"),
        ("I admire how you paint", "u:42 admires how Warren paints"),
        ("I'll post the map so you know the way", "u:42 will post the map so Warren knows the way"),
        ("I told my aunt what you said", "u:42 told their aunt what Warren said"),
        ("I'll lend you my kayak", "u:42 will lend Warren their kayak"),  # an object: no verb
        ("I bought flowers for you", "u:42 bought flowers for Warren"),
    ],
)
def test_a_named_listener_who_is_a_clauses_subject_takes_its_verb(said: str, written: str) -> None:
    assert to_third_person(said, Voice(ref="u:42", listener="Warren")) == written


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("Robin and I moved to Leeds", "u:42 and Robin moved to Leeds"),
        ("My dog Rex and I walked the ridge", "u:42 and their dog Rex walked the ridge"),
        ("Our cat Miso and I nap after lunch", "u:42 and their cat Miso nap after lunch"),
    ],
)
def test_a_named_companion_and_i_puts_the_speaker_first_with_whose_they_are(said: str, written: str) -> None:
    assert to_third_person(said, DAN) == written


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("I need a new bike chain", "u:42 needs a new bike chain"),
        ("I feed the ducks every morning", "u:42 feeds the ducks every morning"),
        ("I shed a tear at the wedding", "u:42 shed a tear at the wedding"),  # a past, as "read"
        ("I succeed when I plan ahead", "u:42 succeeds when they plan ahead"),
    ],
)
def test_a_verb_that_only_ends_like_a_past_form_agrees(said: str, written: str) -> None:
    assert to_third_person(said, DAN) == written


def test_a_persona_voice_uses_its_pronoun_after_the_first_mention() -> None:
    warren = Voice(ref="he", pronoun="he", listener="u:42")
    assert to_third_person("send you my notes once I find them", warren, named=True) == (
        "send u:42 his notes once he finds them"
    )


@pytest.mark.parametrize(
    ("chat", "restored"),
    [
        ("Gonna continue my edu", "I'm going to continue my edu"),
        ("Finally booked the ferry to Crete", "I finally booked the ferry to Crete"),
        ("Comparing mortgage offers", "I'm comparing mortgage offers"),
        ("Been swimming longer to unwind", "I've been swimming longer to unwind"),
        ("Went hiking with my dad", "I went hiking with my dad"),
        ("Dyed my hair green", "I dyed my hair green"),
        ("Here's a pic of my nephew fishing", "I shared a pic of my nephew fishing"),
        ("Still saving up for a used camper van", "I'm still saving up for a used camper van"),
        # a later clause's own "I" does not give the first clause its subject
        ("Did a pottery course and I think it went well", "I did a pottery course and I think it went well"),
        ("Been building a canoe, and my brother helps", "I've been building a canoe, and my brother helps"),
        ("Pretty proud of my first loaf", "I'm pretty proud of my first loaf"),
        # an "I" inside a noun phrase is that clause's subject, not the sentence's
        ("Been planning a trip I can afford", "I've been planning a trip I can afford"),
        ("Was nervous when I played for the choir", "I was nervous when I played for the choir"),
        ("Have to renew my passport", "I have to renew my passport"),
        ("Need to book the ferry", "I need to book the ferry"),
    ],
)
def test_a_subject_the_chat_left_out_is_put_back(chat: str, restored: str) -> None:
    assert restore_subject(chat) == restored


@pytest.mark.parametrize(
    ("chat", "restored"),
    [
        ("Took me four months to sand it down", "It took me four months to sand it down"),
        ("Made us laugh all evening", "It made us laugh all evening"),
        ("Been chaotic for me this month", "It's been chaotic for me this month"),
        ("Gonna be a long weekend of marking", "It's going to be a long weekend of marking"),
        ("Just got me thinking about the old house", "It just got me thinking about the old house"),
    ],
)
def test_a_left_out_subject_that_acted_on_the_speaker_is_a_thing_not_i(chat: str, restored: str) -> None:
    assert restore_subject(chat) == restored


def test_me_inside_a_hyphenated_word_is_not_the_speaker() -> None:
    assert to_third_person("I keep Sunday as me-time", DAN) == "u:42 keeps Sunday as me-time"


def test_gerund_subjects_are_not_mistaken_for_a_missing_i() -> None:
    assert restore_subject("Really having a shed of my own is a treat") == (
        "Really having a shed of my own is a treat"
    )
    assert restore_subject("Really enjoying the new kayak club") == "I'm really enjoying the new kayak club"
    assert restore_subject("Gardening's a cheap way to unwind") == "Gardening's a cheap way to unwind"
    assert restore_subject("Feeding them always makes me late") == "Feeding them always makes me late"
    assert restore_subject("Knowing that can change a lot") == "Knowing that can change a lot"
    assert restore_subject("Going to be busy at the market") == "I'm going to be busy at the market"
    assert restore_subject("Growing up, I spent summers on a farm") == "Growing up, I spent summers on a farm"
    assert restore_subject("Loved ones are the best part of my week") == "Loved ones are the best part of my week"
    # a describing word in -ing after an adverb is no left-out "I'm"
    assert restore_subject("Really inspiring stuff") == "Really inspiring stuff"
    assert restore_subject("Refreshing!") == "Refreshing!"
    assert restore_subject("Have to say, the view was great") == "Have to say, the view was great"
    assert restore_subject("Love and patience matter most, and we try to show both") == (
        "Love and patience matter most, and we try to show both"
    )


@pytest.mark.parametrize(
    ("verb", "agreed"),
    [("love", "loves"), ("go", "goes"), ("watch", "watches"), ("study", "studies"), ("play", "plays"),
     ("have", "has"), ("am", "is"), ("do", "does"), ("went", "went"), ("sold", "sold"), ("can", "can"),
     ("fix", "fixes"), ("guess", "guesses")],
)
def test_third_singular(verb: str, agreed: str) -> None:
    assert third_singular(verb) == agreed


def test_a_verb_that_is_its_own_past_is_present_only_in_a_habit() -> None:
    assert third_singular("read") == "read"
    assert third_singular("read", habitual=True) == "reads"


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("Yes and I'll bring the trifle", "Yes and u:42 will bring the trifle"),
        ("Honestly and I mean it", "Honestly and u:42 means it"),
        ("Kai and I'm late", "Kai and u:42 is late"),
    ],
)
def test_a_word_that_is_no_name_or_a_contraction_does_not_make_company(said: str, written: str) -> None:
    assert to_third_person(said, DAN) == written
