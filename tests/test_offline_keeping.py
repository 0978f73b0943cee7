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


# -- lists, reasons and names are kept whole ----------------------------------------------------


def test_a_list_after_the_speakers_own_clause_is_kept() -> None:
    assert said_by_dan("I'm torn between two courses: pottery and bookbinding.") == [
        "u:42 is torn between two courses: pottery and bookbinding."
    ]


def test_a_short_heading_before_a_colon_is_still_peeled() -> None:
    assert said_by_dan("Big news: I passed my sommelier exam on Friday!") == [
        "u:42 passed their sommelier exam on Friday 2026-08-07."
    ]


# -- a pronoun is named from the line it answers, or left alone ---------------------------------


def test_a_replys_pronoun_is_named_by_what_the_question_asked_about() -> None:
    rows = dialogue(
        ("warren", "How do you get your focaccia so crisp?"),
        ("u:42", "I bake it on a hot stone with plenty of olive oil."),
    )
    assert [m["text"] for m in rows] == ["u:42 bakes their focaccia on a hot stone with plenty of olive oil."]
    assert rows[0]["evidence"] == [101, 100]  # the question stays beside the answer


def test_a_plural_pronoun_is_named_only_by_a_plural_thing() -> None:
    assert [m["text"] for m in dialogue(
        ("warren", "What do your goats eat in winter?"),
        ("u:42", "They eat hay and beet pulp."),
    )] == ["u:42's goats eat hay and beet pulp."]
    named = [m["text"] for m in dialogue(
        ("warren", "Where do you keep the canoe?"),
        ("u:42", "They stay in the shed by the lake."),
    )]
    assert not any("canoe" in text for text in named)


def test_a_verdict_answers_a_question_about_the_speakers_own_thing() -> None:
    # "How did your … ?" asks about the nieces: how they took it is the answer, not a reaction
    assert [m["text"] for m in dialogue(
        ("warren", "How did your nieces like the puppet show?"),
        ("u:42", "They were thrilled and a bit scared."),
    )] == ["u:42's nieces were thrilled and a bit scared."]
    assert [m["text"] for m in dialogue(
        ("warren", "How was your holiday in Porto?"),
        ("u:42", "It was tiring but worth every penny."),
    )] == ["u:42's holiday was tiring but worth every penny."]
    # a verdict on a thing the line only named, not asked about, is still no row
    assert dialogue(
        ("warren", "It's nice that the ferry is still your favourite place."),
        ("u:42", "It is so calm."),
    ) == []


def test_a_plural_the_question_asks_about_without_a_determiner_names_the_replys_them() -> None:
    assert [m["text"] for m in dialogue(
        ("warren", "Do you still carve spoons?"),
        ("u:42", "I sell them at the Saturday market in Frome."),
    )] == ["u:42 sells spoons at the Saturday market in Frome."]
    assert [m["text"] for m in dialogue(
        ("warren", "How often do you get to hear owls like that?"),
        ("u:42", "I hear them most nights in spring."),
    )] == ["u:42 hears owls most nights in spring."]


def test_i_see_is_a_reply_only_when_nothing_is_seen() -> None:
    assert said_by_dan("I see my physio every Tuesday for my knee.") == [
        "u:42 sees their physio every Tuesday for their knee."
    ]
    assert said_by_dan("I see what you mean about the noise.") == []
    assert said_by_dan("I see.") == []


def test_an_opening_they_that_cannot_go_on_about_the_row_before_is_named_by_its_one_plural() -> None:
    rows = said_by_dan(
        "Lanterns cheer me up. They stand for warmth and safety. "
        "They hung all over my grandmother's porch and always remind me of her."
    )
    assert "Lanterns hung all over u:42's grandmother's porch and always remind them of her." in rows
    # one clause goes on about the row before, as it did
    assert said_by_dan("My kids love the beach. They were so tired after our trip to Brighton.") == [
        "u:42's kids love the beach; they were so tired after their trip to Brighton."
    ]
    # after two plurals "they" may be either, and is named by neither
    rows = said_by_dan("My cousins chased the gulls at Brighton all day. They were loud and wild.")
    assert rows and not any(re.search(r"(?:cousins|gulls) were loud", text) for text in rows)


def test_a_quote_by_an_author_with_initials_is_kept_with_the_quote() -> None:
    [text] = said_by_dan('There\'s a line by T.S. Eliot that I really love: "Home is where one starts from."')
    assert text.startswith("u:42 loves a line by T S Eliot")  # initials lose their dots, never the line
    assert '"Home is where one starts from"' in text


def test_a_view_that_opens_on_a_time_clause_is_kept() -> None:
    assert said_by_dan("After weeks in a cast, walking the dog without crutches was a joy.") == [
        "u:42 found that after weeks in a cast, walking the dog without crutches was a joy."
    ]


def test_a_work_the_speaker_made_by_a_verb_that_names_it_is_that_work() -> None:
    assert said_by_dan("I painted this after a week at the salt marshes.") == [
        "u:42 made a painting after a week at the salt marshes."
    ]
    assert [m["text"] for m in dialogue(
        ("warren", "Is that yours?"),
        ("u:42", "Yeah, I sketched it. It stands for patience and the sea."),
    )] == ["u:42 made a sketch; it stands for patience and the sea."]
    # painting a thing the chat named is not making a painting
    rows = said_by_dan("My old bench was grey. I painted it green on Sunday.")
    assert rows and not any("painting" in text for text in rows)


def test_a_thing_the_listener_praised_by_a_demonstrative_names_the_replys_it() -> None:
    assert [m["text"] for m in dialogue(
        ("warren", "That tart looks amazing!"),
        ("u:42", "Thanks! It's pear and almond with a honey glaze."),
    )] == ["u:42 thinks the tart is pear and almond with a honey glaze."]
    # the reply praising the same thing still lends it to a later "it"
    assert [m["text"] for m in dialogue(
        ("warren", "I really recommend this trilogy. It has great maps."),
        ("u:42", "Wow, that trilogy sounds great! I'll have to check it out soon!"),
    )] == ["u:42 will have to check the trilogy out soon."]


def test_a_view_of_a_named_place_is_kept_and_a_named_person_is_still_no_view() -> None:
    assert said_by_dan("Ghent is a must-see city! The canals are lovely.")[0] == "u:42 thinks: Ghent is a must-see city."
    assert said_by_dan("Rosa is a nurse at the city hospital.") == []
    assert said_by_dan("Rosa is the best mum in the village.") == []


def test_a_plural_named_for_a_pronoun_names_the_opening_they_of_a_later_sentence() -> None:
    rows = [m["text"] for m in dialogue(
        ("warren", "How are your geckos doing?"),
        ("u:42", "I love having them around. They're funny and they keep me calm. Plus, they don't need much looking after."),
    )]
    assert rows == [
        "u:42 loves having their geckos around; they're funny and they keep them calm.",
        "u:42's geckos don't need much looking after.",
    ]


def test_a_look_here_opener_is_no_part_of_the_row() -> None:
    [text] = said_by_dan("Looky here, I got a new kite for the beach!")
    assert text == "u:42 got a new kite for the beach."


def test_a_bare_verdict_between_a_row_and_what_goes_on_about_it_leaves_the_row_open() -> None:
    assert said_by_dan(
        'I just finished rereading "Watership Down" - it was really moving. It made me think about home and courage.'
    ) == ['u:42 just finished rereading "Watership Down"; it made them think about home and courage.']


def test_a_row_that_took_a_clause_says_its_subject_again_before_the_next() -> None:
    [text] = said_by_dan(
        'I finished "Watership Down". It made me think about home and courage. I felt calm and hopeful after reading it.'
    )
    assert text == (
        'u:42 finished "Watership Down"; it made them think about home and courage; '
        "u:42 felt calm and hopeful after reading it."
    )


def test_a_photo_names_a_pointer_only_where_the_pointer_stands_alone_as_a_thing() -> None:
    rows = said_by_dan(
        "I adored the old lighthouses. I hoped to carry that same calm into my kitchen. I made a painting too! "
        "[shares a photo of a painting of a lighthouse in a storm]"
    )
    assert "u:42 made a painting of a lighthouse in a storm." in rows  # the photo is the painting's
    assert not any("storm same calm" in text for text in rows)  # never the determiner's
    assert said_by_dan("I wore my green scarf and got this as a treat! [shares a photo of a chocolate bar in a box]") == [
        "u:42 wore their green scarf and got a chocolate bar in a box as a treat."
    ]


def test_a_photo_of_people_or_a_caption_in_a_clause_names_no_pointer() -> None:
    rows = said_by_dan("The volunteers were so excited about this! [shares a photo of a man shaking hands with a nurse]")
    assert not any("shaking hands" in text for text in rows)
    rows = said_by_dan("I'd love to build something like this for my niece. [shares a photo of a boy is reading in a tent]")
    assert not any("is reading" in text for text in rows)


def test_where_a_photo_was_taken_is_no_description_of_the_thing() -> None:
    assert said_by_dan("I got a new canoe. Look! [shares a photo of a green canoe on a river]") == [
        "u:42 got a new canoe and shared a photo of a green canoe on a river."
    ]


def test_a_demonstrative_before_a_noun_in_s_is_a_determiner() -> None:
    assert said_by_dan("I'd really recommend this series. It has sea battles and clever pirates.") == [
        "u:42 would recommend the series; it has sea battles and clever pirates."
    ]


def test_a_photo_shown_after_the_listeners_question_joins_the_row_it_shows() -> None:
    rows = dialogue(
        ("u:42", "Guess what? Bleached my hair yesterday - come see!"),
        ("warren", "No way! How does it feel?"),
        ("u:42", "I'm so stoked! Check it out! [shares a photo of a woman with silver hair and a nose ring]"),
    )
    assert [m["text"] for m in rows] == [
        "u:42 bleached their hair on 2026-08-09 and shared a photo of a woman with silver hair and a nose ring."
    ]
    assert rows[0]["evidence"] == [100, 102]  # the photo's line is evidence too


def test_news_openers_with_no_news_in_them_are_no_rows() -> None:
    assert said_by_dan("As for me, loads happened since we last talked. I ran my first half marathon!") == [
        "u:42 ran their first half marathon."
    ]
    assert said_by_dan("Loads happened since our last call.") == []
    # the aside only turned the talk to the speaker: the row opens on them
    assert said_by_dan("As for me, I've been restoring a canal boat.") == ["u:42 has been restoring a canal boat."]


def test_a_deed_after_a_subjectless_verdict_and_a_dash_is_the_speakers() -> None:
    assert said_by_dan("Been quite a week - in a good way - had a trial shift at the bakery on Monday.") == [
        "u:42 had a trial shift at the bakery on Monday 2026-08-03."
    ]


def test_a_verdict_answers_a_question_about_the_thing_it_names() -> None:
    assert [m["text"] for m in dialogue(
        ("warren", "How did the plum jam turn out?"),
        ("u:42", "Super good! It was tart and glossy - might be my new favourite spread!"),
    )] == ["u:42 found that the plum jam was tart and glossy - might be their new favourite spread."]


def test_telling_the_listener_you_have_news_is_no_part_of_the_news() -> None:
    assert said_by_dan(
        "Hey! Wanted to fill you in on what's been going on- I took a welding class, and it was fun!"
    ) == ["u:42 took a welding class, and it was fun."]
    assert said_by_dan("Wanted to tell you - I passed my driving test!") == ["u:42 passed their driving test."]
    assert said_by_dan("I just wanted to tell you that I'm moving to Cork in May.") == ["u:42 is moving to Cork in May 2027."]


def test_a_closing_lets_after_a_dash_and_an_opening_for_example_are_no_part_of_the_row() -> None:
    assert said_by_dan("We want our fair to spread kindness and hope - let's make it count.") == [
        "u:42 and others want their fair to spread kindness and hope."
    ]
    [text] = said_by_dan("For example, sketching old mills by the river gave me loads of ideas.")
    assert text == "Sketching old mills by the river gave u:42 loads of ideas."


def test_a_pronoun_with_something_in_its_own_sentence_to_mean_is_left_alone() -> None:
    [text] = [m["text"] for m in dialogue(
        ("warren", "How long do you hold the plank?"),
        ("u:42", "I bought a rowing machine and use it every morning."),
    )]
    assert "plank" not in text and "rowing machine and" in text and "it every morning" in text


def test_a_pronoun_after_the_reply_spoke_of_a_thing_of_its_own_is_not_the_asked_thing() -> None:
    rows = [m["text"] for m in dialogue(
        ("warren", "Is that your notebook?"),
        ("u:42", "That chapter has two letters about loss and luck. It's a gloomy tale that I'm proud of!"),
    )]
    assert not any("notebook" in text for text in rows)  # the tale is the chapter's, not the notebook
    # with nothing of its own named first, the question's thing is still what "it" means
    assert [m["text"] for m in dialogue(
        ("warren", "Is that your garden shed?"),
        ("u:42", "Thanks! It was built by my grandfather in the fifties."),
    )] == ["u:42's garden shed was built by their grandfather in the fifties."]


def test_a_quotation_the_speaker_likes_is_kept_word_for_word() -> None:
    assert said_by_dan('There\'s a line by Ursula Le Guin that I really like: "You cannot buy the revolution."') == [
        'u:42 likes a line by Ursula Le Guin: "You cannot buy the revolution".'
    ]


def test_a_photo_shown_is_said_with_the_moment_it_caught() -> None:
    assert said_by_dan("Check out this moment I caught! [shares a photo of two herons on a jetty]") == [
        "u:42 shared this moment they caught: two herons on a jetty."
    ]
    # with the photo said already, or none at all, "this moment" points at nothing a row could keep
    assert said_by_dan("I baked this yesterday! Check out this moment I caught! [shares a photo of a plum tart]") == [
        "u:42 baked a plum tart on 2026-08-09."
    ]


def test_a_fragment_with_no_subject_of_its_own_is_no_row() -> None:
    assert said_by_dan("Same with me at the climbing wall.") == []
    assert said_by_dan("Definitely one of my favorite walks.") == []


def test_a_verdict_on_a_time_before_the_speakers_clause_is_dropped() -> None:
    [text] = said_by_dan("Last month was wild, I got picked for the county team.")
    assert text.startswith("u:42 got picked for the county team")
    # a verdict whose "it" was left out, before the speaker's own clause, says nothing
    assert said_by_dan("Was mad, I got a call from the orchestra.") == ["u:42 got a call from the orchestra."]


def test_advice_to_the_listener_is_no_view_of_the_speaker() -> None:
    assert [m["text"] for m in dialogue(
        ("warren", "Any tips for a new runner?"),
        ("u:42", "Sure! Read lots and try out different routes."),
    )] == []


def test_a_reaction_to_what_the_listener_lived_is_no_row() -> None:
    for reply in (
        "Wow, gorgeous! So refreshing!",
        "That's great news! The cheering from the stands must have been deafening.",
        "Losing the whole draft must be so annoying.",
        "Exciting but kind of scary.",
    ):
        assert [m["text"] for m in dialogue(("warren", "I rowed across the bay at dawn."), ("u:42", reply))] == [], reply


def test_it_is_all_worth_it_is_not_the_thing_the_line_before_named() -> None:
    rows = [m["text"] for m in dialogue(
        ("warren", "You clearly threw yourself into your balcony garden!"),
        ("u:42", "Small jobs like that swallow whole weekends, but I reckon it's all worth it once the beans come up."),
    )]
    assert not any("balcony" in row for row in rows)


def test_a_view_about_someone_else_after_yet_is_no_view_of_the_speaker() -> None:
    rows = [m["text"] for m in dialogue(
        ("warren", "How does your neighbour cope?"),
        ("u:42", "Yet, she still tends her roses every morning."),
    )]
    assert not any("she still tends" in row for row in rows)


def test_how_it_felt_doing_something_asks_about_no_thing() -> None:
    rows = [m["text"] for m in dialogue(
        ("warren", "So you sing with a big crowd now! How did it feel singing with that crowd?"),
        ("u:42", "It was so uplifting."),
    )]
    assert not any("crowd felt" in row for row in rows)


def test_a_lone_especially_when_clause_is_no_row() -> None:
    assert said_by_dan("Especially when I'm baking for my nephew, trying to skip the sugar.") == []


def test_a_verdict_on_the_asked_thing_is_no_row() -> None:
    assert dialogue(("warren", "How was your weekend in Bath?"), ("u:42", "It was lovely but tiring.")) == []


# -- a short reply is written as the answer to the question -------------------------------------


def test_a_short_reply_is_the_answer_to_the_question_it_follows() -> None:
    assert [m["text"] for m in dialogue(
        ("warren", "Which instrument did you end up picking?"),
        ("u:42", "The bassoon, believe it or not!"),
    )] == ["Asked which instrument they ended up picking, u:42 answered: The bassoon, believe it or not."]
    assert [m["text"] for m in dialogue(
        ("warren", "What's your go-to breakfast?"),
        ("u:42", "Porridge with stewed plums."),
    )] == ["Asked what their go-to breakfast is, u:42 answered: Porridge with stewed plums."]
    # one word and an adverb is an answer, not a reaction like "Thanks!"
    assert [m["text"] for m in dialogue(
        ("warren", "What cheese do you usually buy?"),
        ("u:42", "Comté, always!"),
    )] == ["Asked what cheese they usually buy, u:42 answered: Comté, always."]


def test_a_reply_that_answers_nothing_worth_keeping_is_no_row() -> None:
    for reply in ("Yes, definitely!", "Not sure yet.", "Good question!", "Thanks so much!"):
        assert dialogue(("warren", "Which city are you moving to?"), ("u:42", reply)) == [], reply
    # a yes/no question has no answer to write out
    assert dialogue(("warren", "Did you enjoy the concert?"), ("u:42", "The encore, mostly!")) == []


def test_a_short_answer_after_thanks_and_before_a_clause_is_the_answer() -> None:
    assert [m["text"] for m in dialogue(
        ("warren", "How often do you all go climbing?"),
        ("u:42", "Thanks, Warren! Twice a week; it keeps us strong."),
    )] == ["Asked how often they all go climbing, u:42 answered: Twice a week."]


def test_questions_are_turned_into_their_indirect_form() -> None:
    from persona_memory.minds.offline.answers import indirect_question

    turned = {
        "What tea do you usually drink?": "what tea they usually drink",
        "Which route did you take home?": "which route they took home",
        "Where are your grandparents from?": "where their grandparents are from",
        "What is your favourite board game?": "what their favourite board game is",
        "How long have you been knitting?": "how long they have been knitting",
        "What does your brother study?": "what their brother studies",
        "What did you bake me?": "what they baked Warren",
    }
    for question, indirect in turned.items():
        assert indirect_question(question, "Warren") == indirect, question
    assert indirect_question("What did you bake me?", None) is None  # "me" is nobody known
    assert indirect_question("Did you bake today?", "Warren") is None  # not a wh-question


def test_a_verdict_that_goes_on_to_say_something_keeps_the_asked_thing() -> None:
    assert [m["text"] for m in dialogue(
        ("warren", "How did the half marathon go?"),
        ("u:42", "It was brutal but I finished in two hours flat!"),
    )] == ["u:42 found that the half marathon was brutal but they finished in two hours flat."]


def test_your_that_means_anyone_keeps_the_sentence_about_the_speakers_thing() -> None:
    [text] = said_by_dan(
        "I just finished \"The Salt Road\" and it was gripping! It's a tale about exile and chasing your dreams."
    )
    assert text.endswith("it's a tale about exile and chasing one's dreams.")
    assert "Warren" not in text


def test_a_follow_up_whose_it_the_line_before_named_keeps_the_name() -> None:
    assert [m["text"] for m in dialogue(
        ("warren", "You should read \"The Glass Orchard\" next, it's wonderful."),
        ("u:42", "Thanks! I'll check it out this weekend."),
    )][0].startswith('u:42 will check "The Glass Orchard" out')


def test_a_follow_up_whose_it_nothing_named_is_no_row() -> None:
    assert dialogue(("warren", "Wow, great."), ("u:42", "Thanks! I'll check it out.")) == []


def test_the_line_befores_thing_does_not_name_a_pronoun_after_the_speakers_own_row() -> None:
    texts = [m["text"] for m in dialogue(
        ("warren", "How is your garden doing?"),
        ("u:42", "I built a new greenhouse in May. It keeps the tomatoes warm at night."),
    )]
    assert not any("garden keeps" in t for t in texts)


def test_a_sentence_led_by_a_thing_only_the_chat_showed_is_no_row() -> None:
    assert said_by_dan("The colours make me feel so calm.") == []
    assert said_by_dan("That mug reminds me of my first flat.") == []
    # the speaker's own thing, or one the line's photo shows, is kept
    assert said_by_dan("The maps in my attic fascinate me.") != []
    assert said_by_dan("This mug reminds me of my first flat. [shares a photo of a chipped blue mug]") != []


def test_it_feels_like_with_the_speaker_in_it_is_how_the_speaker_feels() -> None:
    assert said_by_dan("It feels like all the hours I've put in have paid off now that I'm head baker.") == [
        "u:42 feels like all the hours they've put in have paid off now that they're head baker."
    ]


def test_a_row_opens_on_whom_it_is_about() -> None:
    from persona_memory.minds.offline.shape import as_memory_text

    assert as_memory_text("At the allotment, u:42 grew forty pumpkins.") == "u:42 grew forty pumpkins at the allotment."
    assert as_memory_text("Maybe u:42 will sell the boat.") == "u:42 will maybe sell the boat."
    assert as_memory_text("Overall, u:42 enjoyed the course.") == "u:42 enjoyed the course."
    assert as_memory_text("When u:42 was a student, they worked nights at a bakery.") == (
        "u:42 worked nights at a bakery when u:42 was a student."
    )
    assert as_memory_text("When the rain stops, they walk the dog.") == "When the rain stops, they walk the dog."


def test_a_name_given_in_the_next_sentence_joins_the_row() -> None:
    [text] = said_by_dan("I rescued a greyhound on Saturday. Her name is Pepper.")
    assert text.startswith("u:42 rescued a greyhound") and text.endswith("her name is Pepper.")


def test_reasons_lists_numbers_and_dates_are_kept_whole() -> None:
    assert said_by_dan("I quit the bakery job because the commute was two hours each way.") == [
        "u:42 quit the bakery job because the commute was two hours each way."
    ]
    assert said_by_dan("My favourite poets are Szymborska, Heaney and Oliver.") == [
        "u:42's favourite poets are Szymborska, Heaney and Oliver."
    ]
    [text] = said_by_dan("I swam 5 km in 1 hour 48 minutes at the lake race on 2 June.")
    assert "5 km in 1 hour 48 minutes" in text and "2026-06-02" in text  # the date, resolved


def test_a_cleft_says_plainly_what_its_focus_does_to_the_speaker() -> None:
    assert said_by_dan("It's the hum of the night tram that helps me fall asleep.") == [
        "u:42 thinks the hum of the night tram helps them fall asleep."
    ]
    assert said_by_dan("It was my uncle who taught me to sail.") == ["u:42's uncle taught them to sail."]
    assert said_by_dan("It's knowing that my tutoring helps kids read that keeps me going, even in exam season.") == [
        "u:42 thinks knowing that their tutoring helps kids read keeps them going, even in exam season."
    ]


def test_a_cleft_whose_focus_names_nothing_is_no_row() -> None:
    assert said_by_dan("It's something that keeps me sane.") == []
    assert said_by_dan("It's so good that my cousin calls me.") == []
    assert said_by_dan("It was wonderful being among folks who loved the same old films as me.") == []


def test_them_after_a_group_of_the_speakers_people_is_that_group() -> None:
    assert said_by_dan("My crew means everything to me. After the storm I learned how much I lean on them.") == [
        "u:42's crew means everything to them.",
        "u:42 learned how much they lean on their crew after the storm.",
    ]
    assert "u:42 recorded their choir from the balcony." in said_by_dan(
        "Our choir sang at the cathedral. I recorded them from the balcony."
    )


def test_they_after_a_row_about_the_speakers_group_is_that_group_and_what_it_means_to_them_is_kept() -> None:
    """"They" that cannot go on as the row's clause is named by the one group said before it;
    a last "them" that is the speaker, or the group the row names, points nowhere outside."""
    rows = said_by_dan(
        "Since the move to Leeds, I've realised how much I need my family. "
        "They mean everything to me and I'm so grateful to have them."
    )
    assert rows == [
        "u:42 has realised how much they need their family since the move to Leeds.",
        "u:42's family mean everything to them and they're so grateful to have them.",
    ]
    # a vague sentence of the speaker's own that ends on them is still no row
    assert said_by_dan("I've had a lot of things going on for me.") == []


def test_a_group_word_before_a_noun_names_no_them() -> None:
    assert said_by_dan("My family dinners get loud. I love them though.") == ["u:42's family dinners get loud."]


def test_a_possessive_that_stands_for_a_thing_is_theirs() -> None:
    assert said_by_dan("Even though mine is only a tiny plot, I count on my allotment for calm.") == [
        "u:42 counts on their allotment for calm even though theirs is only a tiny plot."
    ]


def test_news_announced_and_not_yet_told_lends_nothing_to_the_reply() -> None:
    rows = [m["text"] for m in dialogue(
        ("warren", "Since the bakery on Pell Street closed, it's been slow. But guess what - I've got something to share!"),
        ("u:42", "Ooh, I can't wait to hear it!"),
    )]
    assert rows == []


def test_a_pleasantry_is_no_row_whatever_its_pronoun_would_be_named_by() -> None:
    for reply in ("Love it! I can't wait to see it.", "Thanks! I'm going to keep it up."):
        assert [m["text"] for m in dialogue(("warren", "Your harbour print looks great framed!"), ("u:42", reply))] == []
    said = [m["text"] for m in dialogue(
        ("warren", "Your harbour print looks great framed!"), ("u:42", "Thanks! I can't wait to hang it in the hall.")
    )]
    assert said == ["u:42 can't wait to hang their harbour print in the hall."]


def test_an_announcement_of_news_is_chatter() -> None:
    assert said_by_dan("I've got something to share!") == []
    assert said_by_dan("I have big news! I got a place on the midwifery course.") == [
        "u:42 got a place on the midwifery course."
    ]


def test_a_word_in_ed_after_praise_is_no_thing_the_reply_means() -> None:
    said = [m["text"] for m in dialogue(
        ("warren", "Your tide chart looks great laminated!"), ("u:42", "Thanks! I keep it by the back door.")
    )]
    assert said == ["u:42 keeps their tide chart by the back door."]


def test_a_tag_question_after_its_auxiliary_is_dropped_comma_or_not() -> None:
    assert said_by_dan("I ought to plant a herb bed of my own.") == ["u:42 ought to plant a herb bed of their own."]
    assert said_by_dan("I should plant a herb bed of my own, shouldn't I?") == ["u:42 should plant a herb bed of their own."]
    assert said_by_dan("I should plant a herb bed of my own shouldn't I.") == ["u:42 should plant a herb bed of their own."]


def test_how_a_thing_looks_or_sounds_now_is_a_reaction_not_a_view() -> None:
    for reaction in ("The twins look so proud holding that trophy.", "Supper with the neighbours sounds lovely."):
        assert said_by_dan(reaction) == []
    assert said_by_dan("The canal behind my flat looks silver at dusk.") == ["The canal behind u:42's flat looks silver at dusk."]
    assert said_by_dan("The river sounded so loud and the pines smelled amazing.") == [
        "u:42 found that the river sounded so loud and the pines smelled amazing."
    ]


def test_sympathy_and_praise_for_the_listener_are_chatter() -> None:
    assert said_by_dan("I'm so sorry about Biscuit. Losing a pet is hard.") == []
    assert said_by_dan("Wow, way to turn a hobby into a living!") == []
    assert said_by_dan("I'm sorry I missed your call, I was at my choir practice.") == [
        "u:42 is sorry they missed Warren's call, they were at their choir practice."
    ]


def test_a_fragment_on_something_gets_no_i_put_back() -> None:
    assert said_by_dan("Just something small to keep my hands busy.") == []
    assert said_by_dan("Still sketching every single evening.") == ["u:42 is still sketching every single evening."]


def test_a_generic_it_with_a_modal_names_nothing_from_the_line_before() -> None:
    rows = [m["text"] for m in dialogue(
        ("warren", "We said goodbye to our old cat. It's strange not hearing her purr by the stove anymore."),
        ("u:42", "That's so sad. It can be hard to lose a pet."),
    )]
    assert rows == []


def test_an_adverb_after_a_noun_is_no_thing_a_reply_may_mean() -> None:
    rows = [m["text"] for m in dialogue(
        ("warren", "It's odd not hearing her purr by the stove anymore."),
        ("u:42", "I still keep it warm for the kittens."),
    )]
    assert not any("anymore" in text for text in rows), rows


def test_it_has_been_so_good_to_do_something_is_not_the_thing_asked_about() -> None:
    rows = [m["text"] for m in dialogue(
        ("warren", "Proud of you! What are you doing to get your rowing club ready?"),
        ("u:42", "Thanks! It's been so inspiring to coach our new juniors, seeing their drive and grit."),
    )]
    assert not any("club has been" in text for text in rows), rows


def test_a_time_adverb_goes_after_an_auxiliary_only_when_there_is_one() -> None:
    assert said_by_dan("Recently I had a fall on the ice.") == ["u:42 had a fall on the ice recently."]
    assert said_by_dan("Recently I have started rowing.") == ["u:42 has recently started rowing."]


def test_a_noun_phrase_with_no_verb_is_no_row() -> None:
    assert said_by_dan("Chin up. Plus my full backing.") == []
    assert said_by_dan("My kettle broke.") == ["u:42's kettle broke."]


def test_that_before_a_noun_the_row_names_reads_the() -> None:
    assert said_by_dan("I got the idea from that hike to Ben Nevis last spring.")[0].startswith(
        "u:42 got the idea from the hike to Ben Nevis"
    )
    assert said_by_dan("I dropped off that soup we made at the community fridge.") == [
        "u:42 dropped off the soup they made at the community fridge."
    ]
    assert said_by_dan("I keep a diary; that way I can look back on the year.") == [
        "u:42 keeps a diary; that way they can look back on the year."
    ]
    assert said_by_dan("I first heard that album in May 2019.") == ["u:42 first heard that album in May 2019."]


def test_praise_for_what_the_listener_showed_is_no_row_about_the_speaker() -> None:
    assert said_by_dan("That's a good spot for an early swim!") == []
    assert said_by_dan("Totally. It was a nice break from my desk job.") == []
    # praise by "it" for the speaker's own thing still names it
    assert [m["text"] for m in dialogue(
        ("warren", "Love that map! What's on it?"), ("u:42", "It's a great map of the old harbour from 1890.")
    )] == ["u:42 mentioned a great map of the old harbour from 1890."]


def test_that_one_or_some_standing_for_a_chat_thing_is_no_row() -> None:
    assert said_by_dan("I might check that one out next month.") == []
    assert said_by_dan("I can look some up tonight.") == []
    assert said_by_dan("I adopted that one of the three kittens.") == ["u:42 adopted that one of the three kittens."]


def test_gonna_be_a_big_change_is_about_the_thing_not_the_speaker() -> None:
    assert not any("u:42 is going to be a big" in text for text in said_by_dan("Gonna be a big adjustment, but I'm ready."))
    assert said_by_dan("Gonna be a big change, but I'm ready for the move to Porto.") != [
        "u:42 is going to be a big change, but they're ready for the move to Porto."
    ]
    assert said_by_dan("Gonna be a dad in June!")[0].startswith("u:42 is going to be a dad")


def test_a_closing_clause_about_the_two_of_them_takes_its_preposition_along() -> None:
    assert said_by_dan("Here's a snap from when we met up at the lido! [shares a photo of two swimmers on a diving board]") == [
        "u:42 shared a snap: two swimmers on a diving board."
    ]


def test_a_view_that_opens_on_its_verb_is_a_fragment() -> None:
    assert said_by_dan("Brings back warm memories of the seaside.") == []


def test_a_doing_cut_from_its_verdict_by_a_dash_is_one_sentence() -> None:
    assert said_by_dan("Watching the swifts over the rooftops - it's the best part of June.") == [
        "u:42 thinks watching the swifts over the rooftops is the best part of June."
    ]
    assert said_by_dan("Going to the coast with my kids is my favourite thing.") == [
        "u:42 thinks going to the coast with their kids is their favourite thing."
    ]
    # an "it" that stands for the "to…" after it leaves the doing where it was
    assert said_by_dan("Sanding the old door - it's been a joy to own a workshop.") == [
        "u:42 is sanding the old door; it's been a joy to own a workshop."
    ]
