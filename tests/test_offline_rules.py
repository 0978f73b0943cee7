"""The offline mind's extraction rules, one at a time: what a row keeps, what it drops, and how
much it matters.

Every line here was written for this file. Lines are said by Dan (u:42) to the persona Warren
in a private chat on Monday 2026-08-10, unless a test says otherwise.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from persona_memory.minds.offline import continuation, extract_memories
from persona_memory.minds.port import ExtractionRequest, Line, Person
from persona_memory.write.validation import is_one_sentence

MONDAY = datetime(2026, 8, 10, 9, 0, tzinfo=timezone.utc)
DAN = Person(42, "Dan")


def rows(*said: str, importance_min: int = 3) -> list[dict]:
    request = ExtractionRequest(
        persona="warren",
        lines=tuple(
            Line(id=100 + i, speaker="u:42", text=text, at=MONDAY + timedelta(minutes=i))
            for i, text in enumerate(said)
        ),
        present=(DAN,),
        block="",
        today=MONDAY.date(),
        private=True,
        personas=("warren",),
    )
    return extract_memories(request, importance_min=importance_min)["memories"]


def texts(*said: str) -> list[str]:
    return [m["text"] for m in rows(*said)]


# -- a row keeps the specific content of its line ----------------------------------------------


def test_names_titles_places_and_dates_survive_into_the_row() -> None:
    [text] = texts("I finally finished Piranesi by Susanna Clarke on the train to Leeds yesterday.")
    for kept in ("Piranesi", "Susanna Clarke", "Leeds", "2026-08-09"):
        assert kept in text


def test_numbers_and_objects_survive_into_the_row() -> None:
    [text] = texts("I sold 14 of my linocut prints at the Saturday craft fair in Frome.")
    for kept in ("14", "linocut prints", "craft fair", "Frome"):
        assert kept in text


def test_a_row_that_shows_something_names_what_the_photo_showed() -> None:
    [text] = texts("Here's my latest linocut. [shares a photo of a print of a heron over reeds in green ink]")
    assert text == "u:42 shared their latest linocut: a print of a heron over reeds in green ink."


def test_here_is_before_a_thing_is_showing_it_even_with_an_i_inside() -> None:
    [text] = texts("Here's the bench I built last weekend. [shares a photo of an oak bench under an apple tree]")
    assert text.startswith("u:42 shared the bench they built")
    assert text.endswith(": an oak bench under an apple tree.")


def test_this_standing_alone_is_what_the_photo_showed_even_beside_another_thing() -> None:
    assert texts("My kids made this at the pottery fair! [shares a photo of a clay mug shaped like an owl]") == [
        "u:42's kids made a clay mug shaped like an owl at the pottery fair."
    ]
    # a "this" before its noun names its own thing: the photo is not forced into it
    assert texts("This brooch belonged to my aunt in Porto. [shares a photo of a silver brooch]") == [
        "The brooch belonged to u:42's aunt in Porto."
    ]


def test_make_it_happen_points_at_nothing_not_even_a_photo() -> None:
    assert texts(
        "I saved for two years and I will make it work. [shares a photo of a red tent beside a lake]"
    ) == ["u:42 saved for two years and they will make it work."]


def test_like_these_keeps_its_demonstrative() -> None:
    assert texts("Evenings like these make me want to phone my parents.") == [
        "Evenings like these make u:42 want to phone their parents."
    ]


def test_a_group_that_goes_on_about_the_row_before_is_joined_in_full() -> None:
    [text] = texts("I bought a canoe with my brother. We paddle it on the canal every weekend.")
    assert "and and" not in text and text.startswith("u:42 bought a canoe with their brother")


def test_a_photo_already_said_in_the_row_is_not_said_twice() -> None:
    assert texts("Here's a pic of my allotment. [shares a photo of my allotment]") == [
        "u:42 shared a pic of their allotment."
    ]


def test_a_photo_pointed_at_joins_only_a_row_that_opens_on_its_subject() -> None:
    assert texts("A lot has changed in my life. Look! [shares a photo of a red kayak on a lake]") == [
        "A lot has changed in u:42's life."
    ]


def test_a_photo_pointed_at_after_a_statement_joins_that_statement() -> None:
    assert texts("I finally repainted the shed. Take a look! [shares a photo of a shed painted mustard yellow]") == [
        "u:42 finally repainted the shed and shared a photo of a shed painted mustard yellow."
    ]
    # a view's subject is the thing, not the speaker: the photo would read as the maps' deed
    assert texts("Old maps are fascinating. Look! [shares a photo of a map of a harbour town]") == [
        "u:42 thinks: Old maps are fascinating."
    ]
    # a join that would pass the row's length is not made: the row is not cut mid-caption
    long_deed = "I finally repainted the shed at the bottom of the garden with two coats of the exterior paint left from the fence"
    (row,) = texts(f"{long_deed}. Take a look! [shares a photo of a wooden shed painted a deep mustard yellow beside a vegetable patch]")
    assert "shared a photo" not in row and row.endswith("left from the fence.")


def test_a_row_that_names_the_photos_thing_takes_the_photos_words_for_it() -> None:
    assert texts("I knitted a jumper for my dad! [shares a photo of a jumper with green reindeer on it]") == [
        "u:42 knitted a jumper with green reindeer on it for their dad."
    ]
    assert texts("I knitted a jumper for my dad! [shares a photo of a dog on a sofa]") == [
        "u:42 knitted a jumper for their dad."
    ]


def test_an_opening_just_before_a_time_is_no_order() -> None:
    assert texts("Just yesterday I signed up for a pottery course in Stroud.") == [
        "u:42 signed up for a pottery course in Stroud on 2026-08-09."
    ]
    assert texts("Just keep going!") == []


def test_a_closing_too_is_a_filler_not_a_pointer() -> None:
    assert texts("I adopted a greyhound too!") == ["u:42 adopted a greyhound."]
    assert texts("Me too!") == []


def test_a_line_with_more_rows_than_it_may_keep_keeps_the_ones_that_say_most() -> None:
    kept = texts("I saw a film. I baked bread. I restored a 1968 Vespa with my uncle in Bath.")
    assert len(kept) == 2
    assert "u:42 restored a 1968 Vespa with their uncle in Bath." in kept


def test_a_row_a_line_cannot_keep_joins_the_kept_row_said_before_it() -> None:
    assert texts("I saw a film. I baked bread. I restored a 1968 Vespa with my uncle in Bath.") == [
        "u:42 saw a film; u:42 baked bread.",
        "u:42 restored a 1968 Vespa with their uncle in Bath.",
    ]


def test_a_kept_row_takes_one_leftover_row_at_most() -> None:
    kept = texts(
        "I adopted a three-legged greyhound called Pickle. I saw a film. I baked bread. I cleaned the oven."
    )
    assert len(kept) == 2
    assert max(text.count(";") for text in kept) == 1


def test_a_joined_row_that_opens_on_a_common_word_is_lowered() -> None:
    said = "I restored a 1968 Vespa with my uncle in Bath. I adopted a three-legged greyhound called Pickle."
    assert texts(f"{said} The old maps in my attic fascinate me.") == [
        "u:42 restored a 1968 Vespa with their uncle in Bath; the old maps in u:42's attic fascinate them.",
        "u:42 adopted a three-legged greyhound called Pickle.",
    ]


def test_a_row_that_would_not_fit_beside_the_one_before_it_is_left_out() -> None:
    long_one = (
        "I restored a 1968 Vespa with my uncle in Bath over three wet weekends in the shed behind his"
        " house, with parts we found at a scrapyard near Chippenham and a manual from the library."
    )
    kept = texts(f"{long_one} I baked bread. I saw a film about the miners' strike in Wales.")
    assert len(kept) == 2
    assert not any("bread" in text for text in kept)
    assert kept[1] == "u:42 saw a film about the miners' strike in Wales."


def test_a_follow_up_is_kept_before_a_more_specific_row() -> None:
    kept = texts("I saw a film. I restored a 1968 Vespa with my uncle in Bath. I'll tell you how the MOT goes.")
    assert "u:42 will report back on how the MOT goes." in kept


def test_a_clause_whose_it_points_nowhere_is_cut_and_the_rest_kept() -> None:
    assert texts("I took up fencing and it's giving me so much focus.") == ["u:42 took up fencing."]


def test_what_is_left_after_the_cut_must_still_name_its_subject() -> None:
    assert texts("Sadly, it means I can't keep a cat in the flat.") == []


def test_an_answer_whose_it_is_named_by_what_follows_keeps_the_name() -> None:
    assert texts("Thanks! It's a map of the canal towpaths from 1902.") == [
        "u:42 mentioned a map of the canal towpaths from 1902."
    ]
    assert texts("They're two rescue ferrets called Pip and Moss.") == [
        "u:42 mentioned two rescue ferrets called Pip and Moss."
    ]


def test_a_name_given_for_the_pronoun_is_the_thing_named() -> None:
    assert texts("Her name is Juniper! She's full of beans and always makes me laugh.") == [
        "u:42 mentioned Juniper; she's full of beans and always makes them laugh."
    ]
    assert texts("Their names are Pip and Moss.") == ["u:42 mentioned Pip and Moss."]
    assert texts("It's called a hob.") == []


@pytest.mark.parametrize(
    "said",
    ["It's a shame.", "It's a great pic!", "It's an amazing experience.", "It's been a long week.",
     "It's one of my favourites.", "It's a memory I'll never forget.",
     "It's lovely to hear from you.", "It's a present for you."],
)
def test_a_verdict_a_dummy_it_or_a_thing_of_the_listeners_is_no_name(said: str) -> None:
    assert texts(said) == []


def test_a_named_it_after_a_row_continues_that_row_instead() -> None:
    [text] = texts("I joined a choir in Frome. It's a group of forty singers.")
    assert text.startswith("u:42 joined a choir in Frome")
    assert "mentioned" not in text


# -- a row drops what says nothing about the speaker -------------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        "Hi there, lovely to hear from you!",
        "Can't wait to see it!",
        "That's so cool, good for you.",
        "Morning! Hope the week is treating you well.",
    ],
)
def test_greetings_and_pleasantries_write_nothing(said: str) -> None:
    assert rows(said) == []


@pytest.mark.parametrize(
    "said",
    [
        "Enjoy the sea air and the cliffs!",
        "Take care of yourself this week.",
        "Good luck with the move to Dundee!",
        "Wishing you a calm week ahead.",
        "If you find the recipe, let me know.",
    ],
)
def test_instructions_and_wishes_for_the_listener_are_not_the_speakers_memories(said: str) -> None:
    assert rows(said) == []


def test_a_photo_with_nothing_said_about_it_writes_nothing() -> None:
    assert rows("Ha, look! [shares a photo of a heron on a fence post]") == []


def test_a_row_whose_it_or_there_points_at_nothing_is_dropped() -> None:
    assert rows("I love it so much.") == []
    assert rows("I went there twice last summer.") == []
    assert rows("I'll put it on the fridge.") == []


def test_a_demonstrative_that_names_its_thing_becomes_the() -> None:
    assert texts("I keep rereading those postcards from Oaxaca.") == [
        "u:42 keeps rereading the postcards from Oaxaca."
    ]
    # "those" standing for people is not a demonstrative before a noun
    assert texts("I cook every Sunday for those close to me.") == [
        "u:42 cooks every Sunday for the people close to them."
    ]


def test_it_with_its_thing_inside_the_row_is_kept() -> None:
    assert texts("I bought a tandem bike and I ride it to work.") == [
        "u:42 bought a tandem bike and they ride it to work."
    ]


def test_it_that_points_at_the_sentence_before_joins_that_row() -> None:
    assert texts("I bought a secondhand accordion. I play it every evening.") == [
        "u:42 bought a secondhand accordion and plays it every evening."
    ]


def test_intensifiers_that_only_raise_the_voice_are_taken_out() -> None:
    assert texts("I'm really super proud of my first half marathon in Bristol.") == [
        "u:42 is proud of their first half marathon in Bristol."
    ]
    assert texts("I totally love the Super Bowl parties at my cousin's.") == [
        "u:42 loves the Super Bowl parties at their cousin's."
    ]


def test_a_row_that_lost_its_subject_in_the_chat_is_dropped() -> None:
    assert rows("Really got me wondering about my own garden plans.") == []
    assert rows("Totally changed my mind about camping.") == []


def test_chat_fillers_are_taken_out_of_the_text() -> None:
    assert texts("I also sold my drum kit lol.") == ["u:42 sold their drum kit."]
    assert texts("Anyway, I passed my driving test, haha!") == ["u:42 passed their driving test."]
    assert texts("btw I signed up for an evening class in Welsh tbh.") == [
        "u:42 signed up for an evening class in Welsh."
    ]


def test_the_speakers_view_of_a_thing_is_kept_as_theirs() -> None:
    assert texts("The night ferry to Arran is always two hours late.") == [
        "u:42 thinks the night ferry to Arran is always two hours late."
    ]


def test_a_view_that_points_outside_itself_or_speaks_to_the_listener_is_dropped() -> None:
    assert rows("It was a brutal season for the whole squad.") == []
    assert rows("Your rose garden looks lovely in the photos.") == []
    assert rows("Nadia is moving to Quito in spring.") == []


def test_a_view_is_not_an_order_a_reaction_or_a_clause_without_its_subject() -> None:
    assert rows("Grab the chance while it lasts, mate.") == []
    assert rows("That lemon tart looks amazing in the photo.") == []
    assert rows("Was a bit of a shock at the dentist on Monday.") == []


def test_a_thing_named_with_this_is_a_row_only_where_the_line_shows_it() -> None:
    # with the photo that shows it, "this brooch" is a thing the row can name ...
    assert texts("This brooch belonged to my aunt in Porto. [shares a photo of a silver brooch]") == [
        "The brooch belonged to u:42's aunt in Porto."
    ]
    # ... and so is one the sentence makes the speaker's; without either, a reader of the row
    # could not tell which brooch
    assert texts("This brooch belonged to my aunt in Porto.") == ["The brooch belonged to u:42's aunt in Porto."]
    assert texts("This brooch reminds me of Porto.") == []


def chat(*lines: tuple[str, str]) -> list[str]:
    request = ExtractionRequest(
        persona="warren",
        lines=tuple(
            Line(id=100 + i, speaker=speaker, text=text, at=MONDAY + timedelta(minutes=i))
            for i, (speaker, text) in enumerate(lines)
        ),
        present=(DAN,),
        block="",
        today=MONDAY.date(),
        private=True,
        personas=("warren",),
    )
    return [m["text"] for m in extract_memories(request)["memories"] if m["subject"] == "u:42"]


def test_an_answers_opening_pronoun_is_the_thing_the_question_asked_about() -> None:
    assert chat(
        ("warren", "Lovely photo! What is your new greyhound called?"),
        ("u:42", "Her name is Juniper, after the gin."),
    ) == ["u:42's new greyhound's name is Juniper, after the gin."]
    assert chat(
        ("warren", "So what is your second novel about?"),
        ("u:42", "It's about a lighthouse keeper in 1920s Orkney."),
    ) == ["u:42's second novel is about a lighthouse keeper in 1920s Orkney."]
    assert chat(  # a word about the thing, then more about it
        ("warren", "How's your new flat?"),
        ("u:42", "It's tiny but it has a balcony with a view of the river."),
    ) == ["u:42's new flat is tiny but it has a balcony with a view of the river."]


def test_the_thing_asked_about_is_the_whole_noun_phrase_of_the_question() -> None:
    assert chat(  # an adjective of the question's phrase takes its noun
        ("warren", "What is your new rug made of?"),
        ("u:42", "It's woven from strips of my old denim jackets."),
    ) == ["u:42's new rug is woven from strips of their old denim jackets."]
    # "that the rug you…": the thing is "the rug", not "the"; what took the winter is the rug
    (row,) = chat(
        ("warren", "Is that the rug you were telling me about?"),
        ("u:42", "Yes! It's made from strips of my old denim jackets. Took me all winter."),
    )
    assert "the rug is made from strips of" in row.lower()
    assert row.endswith("; it took them all winter.")


def test_an_answer_is_not_guessed_when_the_pronoun_or_the_words_after_it_do_not_fit() -> None:
    assert chat(("warren", "How are your twins?"), ("u:42", "It's been a hectic month.")) == []
    assert chat(("warren", "How is your new job?"), ("u:42", "It's awesome to finally have weekends.")) == []
    assert chat(("warren", "Your garden looks great."), ("u:42", "It's a lot of work in July.")) == []


def test_a_question_that_asks_by_a_pronoun_means_what_its_line_named_before_it() -> None:
    # "it" in the question is the thing praised just before it; the reply's "It" is that thing
    (row,) = chat(
        ("warren", "Wow, nice banjo! What's the story with it?"),
        ("u:42", "Thanks! It was built by my grandfather in the sixties."),
    )
    assert "the banjo was built by their grandfather in the sixties" in row
    # the question's own thing ("your coach") is one; "They" needs the plural named before it
    (row,) = chat(
        ("warren", "Those are great trophies. Did your coach hand them out?"),
        ("u:42", "They were handed out by the mayor at the harvest fair."),
    )
    assert "the trophies were handed out by the mayor at the harvest fair" in row
    # ... but when the question's own subject agrees with its pronoun, "they" is that subject
    said = chat(
        ("warren", "Those are great trophies. What did your nephews think of them?"),
        ("u:42", "They were thrilled by the shiny handles and polished them for hours."),
    )
    assert not any("trophies were thrilled" in row for row in said)


def test_a_plan_for_the_thing_asked_about_names_it_after_a_time_word() -> None:
    (row,) = chat(
        ("warren", "Any plans for the finished screenplay?"),
        ("u:42", "Now I'm gonna send it to a few agents and hope for the best."),
    )
    assert "send the finished screenplay to a few agents" in row


def test_a_reply_about_a_thing_asked_by_a_pronoun_is_written_with_the_question() -> None:
    # the question names what the reply's "it" is; "Thanks!" first does not answer it
    assert chat(
        ("warren", "That skyline is gorgeous - I've always wanted to visit Lisbon. How was it?"),
        ("u:42", "Thanks! It was wonderful."),
    ) == ["Asked how Lisbon was, u:42 answered: it was wonderful."]
    assert chat(
        ("warren", "How have rehearsals been going?"),
        ("u:42", "It has been an exhausting month with long nights and loud arguments."),
    ) == ["Asked how rehearsals have been going, u:42 answered: it has been an exhausting month with long nights and loud arguments."]
    # a dummy "it" needs no name, and "you" inside the question's clause is its subject
    assert chat(
        ("warren", "How did it feel when you crossed the finish line?"),
        ("u:42", "It was the best moment of my year."),
    ) == ["Asked how it felt when they crossed the finish line, u:42 answered: it was the best moment of their year."]


def test_a_reply_about_a_thing_nothing_names_is_not_written() -> None:
    assert chat(("warren", "How was it?"), ("u:42", "Thanks! It was wonderful.")) == []
    # the question's own "it" must point somewhere too, not only the answer's
    assert chat(("warren", "How was it to finally hear it on the radio?"), ("u:42", "It was a thrilling moment.")) == []
    assert chat(("warren", "Wow. What do they eat?"), ("u:42", "They eat kale and peppers.")) == []


def test_a_when_we_clause_of_the_speakers_own_is_kept_and_one_of_the_chat_is_not() -> None:
    (row,) = texts("I'll always remember our sailing trip when we spotted a pod of orcas.")
    assert "spotted a pod of orcas" in row
    (row,) = texts("I finished the quilt for my niece, since we spoke on Monday.")
    assert "since" not in row and "quilt for their niece" in row


def test_since_we_last_spoke_is_peeled_whatever_follows() -> None:
    assert texts("Since we last talked, I adopted a greyhound called Moss.") == ["u:42 adopted a greyhound called Moss."]
    assert not any("spoke" in row for row in texts("Since we last spoke, our allotment won a prize at the show."))


def test_that_before_a_thing_said_by_what_follows_names_it() -> None:
    (row,) = texts("I found the recipe on that trip to Portugal in 2019.")
    assert "trip to Portugal" in row


def test_a_feeling_without_its_i_gets_it_back() -> None:
    (row,) = texts("So glad to have a pottery studio of my own in Leeds.")
    assert row.startswith("u:42 is") and "studio of their own" in row


def test_it_seems_like_and_it_took_us_point_at_no_thing_of_the_line_before() -> None:
    said = chat(
        ("warren", "The lake looked so calm and the trees were beautiful."),
        ("u:42", "It seems like a quiet lake has a way of calming people down."),
    )
    assert not any("lake looked" in row or "the lake seems" in row for row in said)
    said = chat(
        ("warren", "Everyone worked so hard on the garden clean-up."),
        ("u:42", "It just took us an afternoon. We filled twelve bags."),
    )
    assert said == ["u:42 and others filled twelve bags."]


def test_a_them_that_cannot_be_the_speaker_is_named_by_what_they_named() -> None:
    assert "u:42 took their kids to the science museum" in " ".join(
        texts("My kids are off school this week. I took them to the science museum on Monday.")
    )
    said = chat(
        ("u:42", "I keep two tortoises in the garden."),
        ("warren", "Aww, how old are they?"),
        ("u:42", "I've had them for nine years and I love watching them eat."),
    )
    assert any("had two tortoises for nine years" in row for row in said)
    # only people fit "let them know": a thing the speaker named is not carried there
    said = texts("I set myself new goals this year. I let them know at dinner on Sunday.")
    assert not any("let their" in row or "let the " in row for row in said)


def test_a_them_nothing_named_is_no_row_unless_the_rest_says_enough() -> None:
    assert texts("I'd love to check them out.") == []
    # a plural the line opens on, whatever verb follows it, is what "them" is
    assert "u:42 got the pups a new basket." in texts(
        "These pups make me laugh every single morning. I got them a new basket!"
    )
    # a sentence that says enough besides its "them" is kept as it is
    assert texts("I chose them because they help first-time buyers with tiny deposits and odd incomes.") == [
        "u:42 chose them because they help first-time buyers with tiny deposits and odd incomes."
    ]


def test_a_hope_or_a_plan_without_its_i_gets_it_back_even_with_a_verb_after_it() -> None:
    assert texts("Hoping my screenplay gets picked up by a small studio.") == [
        "u:42 is hoping their screenplay gets picked up by a small studio."
    ]
    assert texts("Working on a new song about the harbour.") == ["u:42 is working on a new song about the harbour."]


def test_so_far_so_good_is_not_cut_to_far() -> None:
    assert not any(row.startswith("Far") for row in texts("So far, so good - my bakery doubled its orders in May."))


@pytest.mark.parametrize(
    "said",
    [
        "If the boiler breaks again, I'll ring the landlord.",
        "Unless the ferry is cancelled, I'm in Oban on Friday.",
        "Even though I kept slipping on the ice.",
        "Loads has been happening lately.",
    ],
)
def test_a_condition_a_leaning_clause_or_small_talk_is_no_row(said: str) -> None:
    assert texts(said) == []


def test_small_talk_before_a_clause_of_the_speakers_own_is_peeled_not_the_whole_sentence() -> None:
    (row,) = texts("Some odd stuff has been happening; last week I gave away that bread I baked to the food bank.")
    assert row.startswith("u:42 gave away the bread they baked to the food bank")


def test_giving_it_my_all_names_no_thing_of_the_line_before() -> None:
    said = chat(("warren", "How did the final level go?"), ("u:42", "Giving it my all every time I play."))
    assert not any("level" in row for row in said)


def test_a_row_cut_to_its_clause_before_a_pointer_must_still_say_something() -> None:
    # "I put so much into this": cut before "this", "u:42 put." would say nothing
    assert not any(row.startswith("u:42 put") for row in texts("I put so much into this."))


def test_a_bare_there_is_the_place_the_chat_named_or_no_row() -> None:
    assert texts("Ever been to Porto? I stayed there for a week in May.") == [
        "u:42 stayed in Porto for a week in May 2026."
    ]
    assert chat(("warren", "I've always wanted to visit Oslo."), ("u:42", "I lived there for two years after college.")) == [
        "u:42 lived in Oslo for two years after college."
    ]
    # with no place named, "there" says nothing a reader could use
    assert not any("there" in row for row in texts("I stayed there for a week in December."))


def test_he_or_she_needs_a_person_and_is_the_one_the_speaker_named() -> None:
    assert "u:42 is helping their cousin find a new flat" in " ".join(
        texts("My cousin had a rough year. I'm helping her find a new flat in Bristol.")
    )
    # a word that says the other one is not named over
    assert not any("brother" in row and "garden" in row for row in texts("My brother moved to Leeds. I love her garden."))
    # "the chance" is no person: "him" points at nobody in the row
    assert not any(" him " in row for row in texts("I finally had the chance to see him play live at the arena."))


def test_a_row_about_the_speakers_kin_is_not_continued_as_if_the_kin_did_it() -> None:
    said = texts("My brother moved to Leeds. I visit him every month.")
    assert "u:42's brother moved to Leeds." in said
    assert not any("moved to Leeds and visits" in row for row in said)


def test_that_before_a_thing_a_clause_describes_names_it() -> None:
    (row,) = texts("I gave away that bread I baked to the food bank on Tuesday.")
    assert "gave away the bread they baked to the food bank" in row


def test_a_reply_that_says_what_the_thing_is_keeps_its_own_words() -> None:
    assert chat(
        ("warren", "Love this map, it really pulls you in. What's on it?"),
        ("u:42", "It's a map of the old harbour from 1850."),
    ) == ["u:42 mentioned a map of the old harbour from 1850."]


def test_a_sentence_opening_on_a_preposition_in_ing_is_the_speakers_own() -> None:
    # "During" is no gerund subject: the family's habit is theirs, not people's at large
    assert texts("During the holidays, we usually watch a few old films.") == [
        "u:42 and others usually watch a few old films during the holidays."
    ]


def test_this_is_my_thing_and_what_it_is_says_what_the_thing_is() -> None:
    (row,) = texts("By the way - this is my prized possession, a jersey signed by my favorite player.")
    assert row == "u:42's prized possession is a jersey signed by their favorite player."


def test_a_reaction_about_a_thing_of_the_line_before_is_not_named_by_it() -> None:
    # "It's a huge relief!": a reaction, not a statement about "the big screen"
    said = chat(
        ("warren", "I'd love to see your film on the big screen one day."),
        ("u:42", "It's a huge relief! The paperwork took ages."),
    )
    assert not any("big screen is" in row for row in said)


def test_love_as_a_subject_is_no_left_out_i() -> None:
    assert not any(row.startswith("u:42 loves") for row in texts("Love sure does make people kinder, right?"))
    assert texts("Love the new café on my street.") == ["u:42 loves the new café on their street."]


def test_a_statement_with_a_tag_question_is_the_statement() -> None:
    assert texts("Tulips mean hope and new starts, right?") == ["u:42 thinks: Tulips mean hope and new starts."]
    assert texts("I've been rowing for six years now, haven't I?") == ["u:42 has been rowing for six years (since 2020) now."]
    assert texts("Do tulips mean hope?") == []  # a question of its own is still a question


def test_a_phrase_never_starts_on_the_word_after_a_pointer() -> None:
    # "sunrises like that on your runs": "that" ended its phrase; "the on your runs" is no thing
    said = chat(
        ("warren", "How often do you get to watch sunrises like that on your runs?"),
        ("u:42", "Thanks! I watch them at least twice a week."),
    )
    assert not any(" the on " in row for row in said)


def test_a_pointer_before_its_verb_names_nothing() -> None:
    # "That looks delicious!": "that" stands alone; "the looks delicious" is no thing
    said = chat(
        ("warren", "That looks delicious!"),
        ("u:42", "Thanks! It's lemon sponge with a raspberry layer."),
    )
    assert not any("looks delicious" in row for row in said)


def test_a_name_said_to_someone_or_a_dummy_it_is_never_the_thing_meant() -> None:
    # the listener's name in the line before is no "it"
    said = chat(
        ("warren", "Thanks so much, Dan! How was it?"),
        ("u:42", "It was hosted by the library in the old town hall."),
    )
    assert not any("Dan" in row for row in said)
    # "how hard it can be" and "it's lovely being able to…" point at what follows them
    said = chat(
        ("warren", "I'm stuck at the airport in Oslo. Any tips?"),
        ("u:42", "I know how draining it can be when every flight gets cancelled."),
    )
    assert not any("Oslo can be" in row for row in said)
    said = chat(
        ("warren", "Your allotment looks great. How does sharing the produce feel?"),
        ("u:42", "It's lovely being able to hand out courgettes to the neighbours."),
    )
    assert not any("allotment is lovely" in row for row in said)


def test_a_closing_later_is_a_goodbye_but_later_that_week_is_a_time() -> None:
    assert rows("Later, take care.") == []
    assert rows("Later!") == []
    assert texts("Later that week I repainted the shed.") == ["Later that week u:42 repainted the shed."]
    assert texts("Later, I went home and slept for ten hours.") == ["Later, u:42 went home and slept for ten hours."]


def test_a_closing_suggestion_to_the_listener_is_cut_from_the_row() -> None:
    assert texts("I care a lot about the river clean-up, so let's get it done.") == [
        "u:42 cares a lot about the river clean-up."
    ]
    assert texts("I joined the choir, and let's see if I can hold a tune.") == ["u:42 joined the choir."]
    assert texts("I built a bird table for the garden, take a look!") == ["u:42 built a bird table for the garden."]
    assert texts("I look after my gran's allotment on Sundays.") == ["u:42 looks after their gran's allotment on Sundays."]


@pytest.mark.parametrize(
    "said",
    [
        "Use local radio and work with the library for a bigger reach.",  # advice to the listener
        "Focus on the first chapter before you edit the rest.",
        "Count me in!",
        "Sorry for the silence this week.",  # an apology
        "I remember!",  # a reply that says nothing more
        "Biscuit looks so adorable in that photo.",  # a reaction to what the listener showed
    ],
)
def test_advice_a_reply_and_a_reaction_are_no_rows(said: str) -> None:
    assert rows(said) == []


def test_a_view_in_the_present_speaks_of_people_and_a_told_one_of_the_speaker() -> None:
    assert texts("Dogs make us calmer and keep us honest.") == [
        "u:42 thinks: Dogs make people calmer and keep people honest."
    ]
    assert texts("The ferry left us stranded for hours.") == ["u:42 found that the ferry left them and others stranded for hours."]
    assert texts("The bakery near us makes the best rye bread.") == [  # a place of theirs, not of people's
        "u:42 thinks the bakery near them and others makes the best rye bread."
    ]


def test_a_view_that_keeps_its_capital_is_quoted() -> None:
    assert texts("Setbacks are just chances for a comeback.") == ["u:42 thinks: Setbacks are just chances for a comeback."]
    assert texts("The ferry to Arran is always late.") == ["u:42 thinks the ferry to Arran is always late."]


# -- a reply is kept with what it answers --------------------------------------------------------


def chat_rows(*said: tuple[str, str]) -> list[dict]:
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
    return extract_memories(request)["memories"]


def test_a_replys_first_row_cites_the_line_it_answers() -> None:
    found = chat_rows(
        ("warren", "How often do you get to the pool these days?"),
        ("u:42", "I swim three times a week at the lido. I also joined a masters squad in Hove."),
    )
    assert [(m["text"], m["evidence"]) for m in found] == [
        ("u:42 swims three times a week at the lido.", [101, 100]),
        ("u:42 joined a masters squad in Hove.", [101]),
    ]


def test_a_line_after_the_speakers_own_line_cites_only_itself() -> None:
    found = chat_rows(
        ("warren", "How was the weekend?"),
        ("u:42", "Busy!"),
        ("u:42", "I repainted the kitchen a deep olive green."),
    )
    assert [m["evidence"] for m in found] == [[102]]


# -- follow-ups --------------------------------------------------------------------------------


def test_two_follow_ups_are_never_merged_into_one_row() -> None:
    found = texts("I'm meeting the landlord about the leak on Friday. I'll let you know. I'll keep you posted!")
    assert found == ["u:42 is meeting the landlord about the leak on Friday 2026-08-14 and will report back."]
    assert all(t.count("report back") <= 1 for t in found)


def test_two_follow_ups_about_different_things_are_two_rows() -> None:
    assert texts("Remind me to renew my passport.", "Ask me about the cello recital on Sunday.") == [
        "u:42 asked to be reminded to renew their passport.",
        "u:42 asked to be asked about the cello recital on Sunday 2026-08-16.",
    ]


def test_one_sentence_asking_for_two_follow_ups_is_two_rows() -> None:
    assert texts("I'll let you know how the dentist goes, and I'll report back on the car loan too.") == [
        "u:42 will report back on how the dentist goes.",
        "u:42 will report back on the car loan.",
    ]
    assert texts("Remind me to water the ferns, and ask me about the bookbinding fair later.") == [
        "u:42 asked to be reminded to water the ferns.",
        "u:42 asked to be asked about the bookbinding fair later.",
    ]


def test_a_second_follow_up_in_a_sentence_does_not_swallow_the_plan_it_follows() -> None:
    found = texts("I'm sitting my bar exam on Thursday. Ask me how it went, and remind me to book the taxi.")
    assert found == [
        "u:42 is sitting their bar exam on Thursday 2026-08-13 and asked to be asked how it went.",
        "u:42 asked to be reminded to book the taxi.",
    ]


# -- who "we" is -------------------------------------------------------------------------------


def test_we_names_the_company_the_line_names() -> None:
    assert texts("My husband and I spent our honeymoon in Crete.") == [
        "u:42 and their husband spent their honeymoon in Crete."
    ]


def test_we_names_the_company_an_earlier_line_of_the_slice_named() -> None:
    found = texts("Me and my sister run a bakery in Hove.", "We open at six every morning.")
    assert found[-1] == "u:42 and their sister open at six every morning."


def test_we_with_nobody_named_is_the_speaker_and_others() -> None:
    assert texts("We spent a week walking the Cotswold Way.") == [
        "u:42 and others spent a week walking the Cotswold Way."
    ]
    assert not any("family" in t for t in texts("We went to Crete for our honeymoon."))


@pytest.mark.parametrize(
    ("said", "row"),
    [
        ("We got engaged at the lake on Saturday!",
         "u:42 and their partner got engaged at the lake on Saturday 2026-08-08."),
        ("We're expecting a baby in February.", "u:42 and their partner are expecting a baby in February 2027."),
        ("We finally moved in together.", "u:42 and their partner finally moved in together."),
        ("We broke up in the spring.", "u:42 and their partner broke up in the spring."),
    ],
)
def test_an_unnamed_we_doing_what_a_couple_does_is_the_speaker_and_their_partner(said: str, row: str) -> None:
    assert row in texts(said)


def test_a_couple_verb_keeps_the_company_the_line_named() -> None:
    assert texts("My girlfriend and I got engaged in Porto.") == ["u:42 and their girlfriend got engaged in Porto."]


@pytest.mark.parametrize(
    ("said", "row"),
    [
        ("Tomasz and I broke up.", "u:42 and Tomasz broke up."),
        ("Me and Ingrid adopted a rescue greyhound.", "u:42 and Ingrid adopted a rescue greyhound."),
        ("Farah and me opened a bookbinding studio in Hull.", "u:42 and Farah opened a bookbinding studio in Hull."),
    ],
)
def test_a_named_person_with_the_speaker_is_a_subject_the_row_keeps(said: str, row: str) -> None:
    assert texts(said) == [row]


def test_a_person_present_never_appears_as_the_speakers_company() -> None:
    assert rows("Dan and I broke up.") == []  # Dan is the display name of the human in the room


def test_a_month_before_and_i_is_a_time_not_a_person() -> None:
    assert texts("My best friend Tom moved to Canada in March and I miss him.") == [
        "u:42's best friend Tom moved to Canada in March and they miss him."
    ]


def test_me_and_my_someone_before_a_verb_is_a_subject_mid_sentence_too() -> None:
    assert texts("I got new boots and me and my sister hiked the ridge at dawn.") == [
        "u:42 got new boots and they and their sister hiked the ridge at dawn."
    ]


# -- the verb after an adverb ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "row"),
    [
        ("I no longer live in Bristol.", "u:42 no longer lives in Bristol."),
        ("I no longer smoke cigars.", "u:42 no longer smokes cigars."),
        ("I don't play the trombone anymore.", "u:42 doesn't play the trombone anymore."),
        ("I never miss a parkrun.", "u:42 never misses a parkrun."),
        ("I slowly rebuilt my savings after the move.", "u:42 slowly rebuilt their savings after the move."),
        ("I happily spend my Sundays at the allotment.", "u:42 happily spends their Sundays at the allotment."),
        ("I first watched that film in 2019.", "u:42 first watched that film in 2019."),
    ],
)
def test_no_longer_and_never_sit_between_the_speaker_and_the_verb(said: str, row: str) -> None:
    assert texts(said) == [row]


@pytest.mark.parametrize(
    ("said", "row"),
    [
        ("I retook my driving test in Swindon.", "u:42 retook their driving test in Swindon."),
        ("I outgrew my old climbing shoes.", "u:42 outgrew their old climbing shoes."),
        ("I apply for two arts grants every spring.", "u:42 applies for two arts grants every spring."),
        ("I resent the new parking rules at work.", "u:42 resents the new parking rules at work."),
    ],
)
def test_a_prefixed_past_stays_past_and_a_verb_in_ly_still_agrees(said: str, row: str) -> None:
    assert texts(said) == [row]


# -- a subject the chat left out ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "row"),
    [
        ("Stoked to start the new job on Monday!", "u:42 is stoked to start the new job on Monday 2026-08-17."),
        ("Grateful for my neighbours after the storm.", "u:42 is grateful for their neighbours after the storm."),
        ("Busy packing for the move to Leeds.", "u:42 is busy packing for the move to Leeds."),
    ],
)
def test_a_feeling_or_a_busy_spell_without_its_i_gets_it_back(said: str, row: str) -> None:
    assert texts(said) == [row]


def test_used_to_without_its_i_gets_it_back() -> None:
    assert texts("Used to live in Cork before the move.") == ["u:42 used to live in Cork before the move."]


def test_a_gerund_with_its_own_verb_later_is_the_subject_not_the_speaker() -> None:
    assert texts("Overcoming setbacks builds real grit.") == ["u:42 thinks overcoming setbacks builds real grit."]
    assert texts("Opening the bakery's been a great adventure for me.") == [
        "Opening the bakery's been a great adventure for u:42."
    ]
    assert texts("Planning my sister's wedding in Bath.") == ["u:42 is planning their sister's wedding in Bath."]


def test_speaking_of_something_and_then_are_peeled_like_other_markers() -> None:
    assert texts("Speaking of long drives, my cousin and I finally reached Inverness.") == [
        "u:42 and their cousin finally reached Inverness."
    ]
    assert texts("Then I signed up for the autumn half marathon.") == ["u:42 signed up for the autumn half marathon."]


def test_a_gerund_with_its_own_past_verb_is_the_subject_too() -> None:
    assert texts("Selling my old van gave me the nerve to travel alone.") == [
        "Selling u:42's old van gave them the nerve to travel alone."
    ]
    # the gerund is what made them happier, and the row opens on whom it is about
    assert texts("Moving to Leeds made me happier.") == ["u:42 found that moving to Leeds made them happier."]
    assert texts("Reading books borrowed from the library.") == ["u:42 is reading books borrowed from the library."]


def test_an_agreement_before_the_speakers_own_clause_is_peeled_like_yeah() -> None:
    assert texts("It really is, I still can't explain how my goldfish calm me down so much.") == [
        "u:42 still can't explain how their goldfish calm them down so much."
    ]
    assert texts("You're so right, I joined the allotment society in May.") == [
        "u:42 joined the allotment society in May 2026."
    ]


def test_thanks_for_asking_is_peeled_and_a_dash_glued_to_a_word_still_ends_a_clause() -> None:
    assert texts("And thanks for asking, they're fine- we adopted another ferret called Noodle.") == [
        "u:42 and others adopted another ferret called Noodle."
    ]
    assert texts("I repainted the hallway green- it took me a whole weekend.") == [
        "u:42 repainted the hallway green; it took them a whole weekend."
    ]


def test_a_marker_cut_off_by_a_dash_is_peeled_whole() -> None:
    assert texts("Wanted to fill you in on what's been going on with me- I joined a rowing club.") == [
        "u:42 joined a rowing club."
    ]


def test_a_name_then_whose_it_is_says_what_it_is_called() -> None:
    assert texts("Yep, I do- Pickle, my tortoise.") == ["u:42's tortoise is Pickle."]
    assert texts("Marta Vance, my old piano teacher!") == ["u:42's old piano teacher is Marta Vance."]


def test_an_it_too_long_to_join_its_row_is_named_by_that_rows_one_thing() -> None:
    """Joined, the two would pass the row limit; the second keeps its own row, its "it" named."""
    found = texts(
        "I'm feeling a whirl of relief, pride, plain tiredness and a bit of sadness - all of it at once "
        "- over finishing the ferry restoration. Now I'm going to enter it in the harbour festival and "
        "hopefully get a few sailing clubs to charter it."
    )
    assert found[-1] == (
        "u:42 is now going to enter the ferry restoration in the harbour festival and hopefully get a "
        "few sailing clubs to charter it."
    )
    # an idiom's "it" is no thing of the row before ("dance it out")
    assert not any("the ferry restoration out" in t for t in texts(
        "I'm feeling a whirl of relief, pride, plain tiredness and a bit of sadness - all of it at once "
        "- over finishing the ferry restoration. When I'm stressed I just dance it out in the kitchen with the radio on loud."
    ))


def test_a_short_name_before_the_speakers_clause_is_peeled_but_not_an_adverb() -> None:
    # the short form of a name in the room: Dan calls the persona Isabella "Isa"
    request = ExtractionRequest(
        persona="isabella",
        lines=(Line(id=100, speaker="u:42", text="Isa, I'm so chuffed that my quilt won a rosette at the county show.", at=MONDAY),),
        present=(DAN,),
        block="",
        today=MONDAY.date(),
        private=True,
        personas=("isabella",),
    )
    assert [m["text"] for m in extract_memories(request)["memories"]] == [
        "u:42 is so chuffed that their quilt won a rosette at the county show."
    ]
    assert texts("Sadly, I sold my old camper van to a neighbour.") == [
        "u:42 sadly sold their old camper van to a neighbour."
    ]


def test_not_having_talked_for_a_while_is_peeled_like_long_time_no_see() -> None:
    assert texts("Haven't spoken in a couple of weeks, but I joined a bell-ringing group.") == [
        "u:42 joined a bell-ringing group."
    ]
    assert texts("Haven't caught up with you in ages, and guess what, I passed my driving test!") == [
        "u:42 passed their driving test."
    ]


def test_a_photography_of_something_is_read_as_a_photo_of_it() -> None:
    assert texts("I made a quilt too! [shares a photography of a quilt with red stars]") == [
        "u:42 made a quilt with red stars."
    ]


def test_a_photo_no_row_took_joins_a_row_that_says_next_to_nothing() -> None:
    assert texts("Since we last spoke, I've had quite the ride! [shares a photo of a trophy for a regional chess final]") == [
        "u:42 has had quite the ride and shared a photo of a trophy for a regional chess final."
    ]
    # a row that says something keeps to it; a photo of people joins nothing
    assert texts("Playing chess in the park helps me unwind. [shares a photo of a bench by a pond]") == [
        "u:42 thinks playing chess in the park helps them unwind."
    ]
    assert texts("I worked hard and did something good. [shares a photo of a man smiling at a desk]") == [
        "u:42 worked hard and did something good."
    ]


def test_been_a_while_is_small_talk_and_been_doing_gets_its_i() -> None:
    assert rows("Been ages, huh.") == []
    assert texts("Been learning Welsh on the bus.") == ["u:42 has been learning Welsh on the bus."]
    # an adverb before it changes nothing, for the doing and for the small talk
    assert texts("Just been helping some neighbours fix their fences after the storm.") == [
        "u:42 has just been helping some neighbours fix their fences after the storm."
    ]
    assert rows("Just been so hectic.") == []


def test_a_capitalised_word_in_ly_can_be_the_subject() -> None:
    """"Family" ends like an adverb; before "is" it is what the sentence is about."""
    assert texts("Family is everything to me.") == ["Family is everything to u:42."]
    assert texts("Family means the world to me.") == ["Family means the world to u:42."]


# -- importance on the Generative Agents scale --------------------------------------------------


@pytest.mark.parametrize(
    ("said", "row"),
    [
        ("I'm eating fish again.", "u:42 is eating fish again."),
        ("I stopped drinking coffee after lunch.", "u:42 stopped drinking coffee after lunch."),
        ("I switched to oat milk for breakfast.", "u:42 switched to oat milk for breakfast."),
    ],
)
def test_a_change_of_habit_or_diet_is_not_small_talk_even_about_food(said: str, row: str) -> None:
    [found] = rows(said)
    assert found["text"] == row and found["importance"] >= 4


def test_a_mood_or_a_meal_with_nothing_changed_is_still_small_talk() -> None:
    assert rows("I'm tired again.") == []
    assert rows("I had toast for breakfast.") == []


@pytest.mark.parametrize(
    "said",
    [
        "I'm so excited!",
        "I'll take it one day at a time.",
        "I can't wait to see the photos.",
        "I'm staying positive.",
        "I'll keep going no matter what.",
        "So excited to see what comes next!",
        "Mostly chilling at home tonight.",
    ],
)
def test_pleasantries_and_small_talk_rate_at_most_two(said: str) -> None:
    assert all(m["importance"] <= 2 for m in rows(said, importance_min=1))
    assert rows(said) == []


def test_a_stated_preference_is_worth_keeping_whatever_it_is_for() -> None:
    [row] = rows("I love cheese pizza more than anything.")
    assert row["kind"] == "preference" and row["importance"] >= 3
    assert row["text"] == "u:42 loves cheese pizza more than anything."


def test_life_events_rate_high() -> None:
    found = rows("I got engaged to Priyanka on Saturday!", "My grandad passed away last week.")
    assert [m["importance"] >= 8 for m in found] == [True, True]


def test_a_name_or_a_number_lifts_a_sentence_out_of_small_talk() -> None:
    assert texts("I'm so thrilled to be back in Tallinn!") == ["u:42 is so thrilled to be back in Tallinn."]
    assert rows("I'm so thrilled to be back!") == []


def test_a_plan_with_something_in_it_outranks_small_talk() -> None:
    [plan] = rows("I can't wait to show my parents around Porto in June.")
    assert plan["importance"] >= 3


# -- every row -----------------------------------------------------------------------------------


def test_every_row_is_one_standalone_sentence_about_the_speaker() -> None:
    found = texts(
        "Hey! So I also finally joined the Tuesday climbing club lol.",
        "It's brutal. We did the big overhang. I loved it!",
        "Enjoy your trip btw!",
        "I sketched this on the bus [shares a photo of a pencil drawing of a harbour]",
    )
    assert found
    for text in found:
        assert text.startswith("u:42") and is_one_sentence(text)
        assert " lol" not in text and " also " not in text


# -- a sentence that goes on about the one before joins its row (``continuation``) --------------


def test_a_sentence_that_points_back_joins_the_row_before_it() -> None:
    [text] = texts("I saw a documentary about lighthouse keepers. It was all storms and night rescues.")
    assert text == "u:42 saw a documentary about lighthouse keepers; it was all storms and night rescues."
    assert is_one_sentence(text)


def test_the_joined_clause_is_turned_to_the_third_person() -> None:
    [text] = texts("I picked the shelter because they take in senior dogs. Their patience with old animals spoke to me.")
    assert text.endswith("; their patience with old animals spoke to them.")


def test_a_row_takes_one_continuing_clause() -> None:
    [text] = texts(
        "I bought a kayak on Saturday. It is bright orange and fits in my van. It has two seats and a dry hatch."
    )
    assert text.count(";") == 1
    assert "bright orange" in text and "dry hatch" not in text


@pytest.mark.parametrize(
    "second",
    [
        "It was awesome!",  # says nothing a reader could use
        "It is a car you would love to drive.",  # said to the listener
        "Is it worth the money?",  # a question
        "If only it had a bigger boot.",  # a wish
    ],
)
def test_a_sentence_that_adds_nothing_usable_does_not_continue(second: str) -> None:
    [text] = texts(f"I bought a second-hand hatchback in Bristol. {second}")
    assert text == "u:42 bought a second-hand hatchback in Bristol."


def test_only_the_sentence_straight_after_a_row_continues_it() -> None:
    said = texts("I bought a second-hand hatchback in Bristol. Thanks for asking! It has heated seats and a roof rack.")
    assert said == ["u:42 bought a second-hand hatchback in Bristol."]


def test_a_clause_that_would_overrun_the_row_limit_is_left_out() -> None:
    first = "I finally finished restoring the old oak dresser my grandmother left me, sanding every drawer by hand over three long winter months in the garage"
    [text] = texts(f"{first}. It now stands in the hallway holding the good china, the linen and the board games.")
    assert ";" not in text and len(text) <= 200


def test_a_sentence_too_long_to_join_joins_with_its_first_clause() -> None:
    [text] = texts(
        "The hardest part of the month was that we had to sell the family boat at the harbour. "
        "It was part of our summers for 15 years and it's so strange to think we won't sail it along the coast again next year."
    )
    assert text.endswith("had to sell the family boat at the harbour; it was part of their summers for 15 years.")
    assert continuation.first_clause("it was part of their summers for 15 years and it's strange.") == (
        "it was part of their summers for 15 years."
    )
    assert continuation.first_clause("it holds the china, the linen and the board games.") is None


def test_the_clause_lowers_a_common_opening_word_and_keeps_a_name() -> None:
    [text] = texts("I adopted a cat in the spring. Her name is Biscuit and she naps on my laptop.")
    assert text.endswith("; her name is Biscuit and she naps on their laptop.")
    assert continuation.joined("u:42 reread a trilogy.", "Piranesi was next, strange and calm.") == (
        "u:42 reread a trilogy; Piranesi was next, strange and calm."
    )


@pytest.mark.parametrize(
    "second",
    [
        "It is hard to find a parking space for it in town.",  # a dummy "it": points at nothing
        "That photo looks great, it brings back memories.",  # a reaction to what was shown
    ],
)
def test_a_dummy_it_or_a_reaction_does_not_continue(second: str) -> None:
    [text] = texts(f"I bought a second-hand hatchback in Bristol. {second}")
    assert text == "u:42 bought a second-hand hatchback in Bristol."


def test_a_quantity_of_things_is_a_referent() -> None:
    [text] = texts("I've got loads of cookbooks- classics, recipes from far away, all of that.")
    assert text.startswith("u:42 has got loads of cookbooks")


def test_an_answer_goes_on_about_the_row_the_question_asked_about_by_a_pronoun() -> None:
    request = ExtractionRequest(
        persona="warren",
        lines=(
            Line(id=100, speaker="u:42", text="I finished two paintings for the fair.", at=MONDAY),
            Line(id=101, speaker="warren", text="Nice! Where will they hang?", at=MONDAY + timedelta(minutes=1)),
            Line(id=102, speaker="u:42", text="They'll hang in the library foyer until June.", at=MONDAY + timedelta(minutes=2)),
        ),
        present=(DAN,),
        block="",
        today=MONDAY.date(),
        private=True,
        personas=("warren",),
    )
    [row] = extract_memories(request)["memories"]
    assert row["text"] == "u:42 finished two paintings for the fair; they'll hang in the library foyer until June."
    assert row["evidence"] == [100, 102]


def test_an_answer_by_they_to_a_row_already_continued_is_named_by_the_rows_plural() -> None:
    said = chat_rows(
        ("u:42", "On Sunday we toured the old lighthouse. It left a mark on my nephews."),
        ("warren", "Lovely! How did they take it when they climbed to the top?"),
        ("u:42", "They were quiet and amazed."),
    )
    assert [(m["text"], m["evidence"]) for m in said][-1] == ("u:42's nephews were quiet and amazed.", [102, 101])


def test_an_answer_by_they_to_a_question_by_it_is_not_named() -> None:
    said = chat_rows(
        ("u:42", "On Sunday we toured the old lighthouse. It left a mark on my nephews."),
        ("warren", "Lovely! How was it?"),
        ("u:42", "They were quiet and amazed."),
    )
    assert not any("quiet" in m["text"] for m in said)


def test_what_made_it_so_goes_on_about_the_row_before() -> None:
    [text] = texts("We held a small supper for the night-shift porters. All the stories and new friendships made it memorable.")
    assert text.endswith("; all the stories and new friendships made it memorable.")


def test_a_reply_after_a_reaction_by_a_pointer_goes_on_about_the_row_reacted_to() -> None:
    said = chat_rows(
        ("u:42", "Here's the rug I wove over the winter!"),
        ("warren", "Ooh, that looks so warm! Great colours."),
        ("u:42", "Thanks! It's undyed sheep's wool from a farm near Skipton."),
    )
    assert [(m["text"], m["evidence"]) for m in said] == [
        ("u:42 shared the rug they wove over the winter; it's undyed sheep's wool from a farm near Skipton.", [100, 102])
    ]


def test_a_reaction_that_points_at_nothing_carries_nothing() -> None:
    said = chat_rows(
        ("u:42", "Here's the rug I wove over the winter!"),
        ("warren", "Great colours! Do you have plans for the weekend?"),
        ("u:42", "It's undyed sheep's wool from a farm near Skipton."),
    )
    assert not any("Skipton" in m["text"] for m in said)


def test_an_answer_does_not_go_on_about_a_row_the_question_did_not_point_at() -> None:
    assert chat(
        ("u:42", "I finished two paintings for the fair."),
        ("warren", "Lovely. How was your week otherwise?"),
        ("u:42", "It was busy but fine."),
    ) == ["u:42 finished two paintings for the fair."]
    assert chat(  # the row just before the question names no plural for "they"
        ("u:42", "I finished two paintings for the fair."),
        ("u:42", "My sister moved to Leeds last week."),
        ("warren", "Where will they hang?"),
        ("u:42", "They'll hang in the library foyer until June."),
    ) == ["u:42 finished two paintings for the fair.", "u:42's sister moved to Leeds in the week of 2026-08-03."]


# -- a reply is chatter only when nothing follows it ------------------------------------------------


@pytest.mark.parametrize("said", ["I'm good, thanks!", "I know!", "I'm in!", "I see, that makes sense."])
def test_a_reply_that_stands_alone_is_chatter(said: str) -> None:
    assert texts(said) == []


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("I'm in talks with a kit maker about a sponsorship.", "u:42 is in talks with a kit maker about a sponsorship."),
        ("I'm back at college in Leeds.", "u:42 is back at college in Leeds."),
        ("I know three languages.", "u:42 knows three languages."),
    ],
)
def test_a_reply_word_that_goes_on_to_say_something_is_kept(said: str, kept: str) -> None:
    assert texts(said) == [kept]


def test_a_capitalised_opener_is_kept_when_it_says_what_it_is_to_the_speaker() -> None:
    assert texts("Rowan is my oldest friend.") == ["Rowan is u:42's oldest friend."]
    assert texts("Climbing is my way to switch off.") == ["u:42's way to switch off is climbing."]
    assert texts("Jazz has been a big part of my life since college.") == [
        "Jazz has been a big part of u:42's life since college."
    ]
    assert texts("Rowan is moving to Perth.") == []  # about Rowan, not the speaker


def test_a_fragment_led_by_a_gerund_does_not_continue() -> None:
    assert texts("I bought a second-hand hatchback in Bristol. Definitely keeping it for years.") == [
        "u:42 bought a second-hand hatchback in Bristol."
    ]


def test_a_phrase_opening_on_a_word_for_a_way_or_a_time_names_no_thing() -> None:
    from persona_memory.minds.offline.answers import noun_phrases

    assert noun_phrases("I love the way cats stretch.") == []
    assert [words for _, _, words in noun_phrases("I love the old cats.")] == ["old cats"]


def test_a_reply_about_a_doing_the_question_asked_of_is_named_by_the_doing() -> None:
    said = chat(
        ("warren", "What's the hardest part of training for a marathon?"),
        ("u:42", "It takes up every weekend."),
    )
    assert said == ["u:42 thinks training for a marathon takes up every weekend."]


def test_a_verb_after_the_listeners_plural_is_not_part_of_the_thing() -> None:
    said = chat(
        ("warren", "Seeing your pupils grow and succeed must be rewarding!"),
        ("u:42", "It has made a real difference to my week."),
    )
    assert not any("pupils grow" in row for row in said)
