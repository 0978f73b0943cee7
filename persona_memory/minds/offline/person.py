"""First person to third: "I love hiking" said by u:42 becomes "u:42 loves hiking".

Rules:
- The first mention of the speaker becomes their ``u:`` id (``I`` → ``u:42``, ``my`` →
  ``u:42's``, ``me`` → ``u:42``); later mentions become ``they``/``their``/``them``/``themself``
  (or the ``he``/``she`` forms when the caller knows them, as for a persona), so a sentence
  names its subject once and reads naturally; being oneself is reflexive ("I can be me" →
  "u:42 can be themself").
- The verb after ``I`` agrees with its new subject, past adverbs ("I really love" → "u:42
  really loves", "I no longer eat" → "u:42 no longer eats", "I slowly formed" → "u:42 slowly
  formed": a word in -ly before another word is an adverb, but for "apply", "rely" and their
  like); an irregular past keeps its form with a prefix too ("retook", "outgrew"): ``am`` → ``is``, ``have`` →
  ``has``, ``do`` → ``does``, ``go`` → ``goes``, ``watch`` → ``watches``, ``study`` →
  ``studies``; a past form (``went``, ``sold``) or a modal (``can``, ``will``) stays. After
  ``they`` the verb keeps its plural form (``I am`` → ``they are``, ``I was`` → ``they
  were``).
- ``we``/``us`` are the speaker with company, named only when the speaker said who it is — "my
  wife and I", "me and my brother", "Tom and I", in this line or an earlier one of the slice:
  "we went camping" → "u:42 and their brother went camping". When nobody said, "we" is "u:42
  and others": honest about the people, and the row keeps what was done. ``our`` is the
  speaker's ("our flat" → "u:42's flat").
- An unnamed "we" that does what a couple does (got married, engaged or divorced, broke up,
  moved in together, is expecting or had a baby) is "u:42 and their partner".
- "Me and my brother" before a verb is a subject, at the start or after "and" mid-sentence:
  "…and me and my sister hiked the ridge" → "…and they and their sister hiked the ridge".
- A named person with the speaker as a subject ("Robin and I", "me and Robin") puts the
  speaker first: "u:42 and Robin moved to Leeds", and keeps whose they are: "My dog Rex and I
  walked…" → "u:42 and their dog Rex walked…". A name of someone present is dropped later, by
  the guards; a name of someone absent may stay.
- A ``u:`` id (``u:17``) is a user, never "you": it is left as it is.
- ``you`` is the listener. When the caller names the listener (a human speaking to the
  persona), ``you`` becomes that name, and a "you" that is a clause's subject (first, or
  after a comma or a word that opens a clause: "if you want", "how you paint") gives its verb
  the name's form: "if Warren wants", "how Warren paints"; otherwise — and always for a
  plural "you two", "you guys" — the sentence is refused (``None``): nobody later could tell
  whom it meant.
- A subject the chat left out is put back first: "Gonna continue my edu" → "I'm going to
  continue my edu", "Rolo, my hamster." → "My hamster is Rolo.", "Finally booked the ferry to
  Crete" → "I finally booked…", "Hoping my screenplay gets noticed" → "I'm hoping my screenplay
  gets noticed" (a verb after a hope or a plan is the hoped thing's, so it does not make the
  opening a gerund subject), "Comparing mortgage offers" → "I'm comparing mortgage offers",
  "Dyed my hair green" → "I dyed my hair green" (a past form before "my"), "Here's a snap of my
  allotment" → "I shared a snap of my allotment", "Stoked to start the new job" → "I'm stoked to
  start the new job" (a feeling before "to", "about", "for", "of" or "that"), "Busy packing for
  the move" → "I'm busy packing for the move". A bare "Enjoy…" is not one of them: it is said to
  the listener ("Enjoy the sea air!"), not about the speaker. A past form with the speaker as
  its object left out a thing, not "I": "Took me four months" → "It took me four months" (never
  "u:42 took them four months"), so its "it" is read like any other; so did a time that was
  something "for me" ("Been hectic for me lately" → "It's been hectic…") and an occasion that
  will be ("Gonna be a great night" → "It's going to be a great night"). A verdict with no
  subject before a dash and a deed in the past ("Been quite a week - in a good way - had an
  interview yesterday") is a frame: the deed is the sentence, with its "I". Only the first
  clause is asked whether it has a subject: in "Did a pottery course and I think it went well"
  the "I" is the second clause's, and the first still lacks its own (a verdict whose "it" was
  left out before the speaker's clause, "Was mad, I got a call…", is dropped later, when the row
  is shaped: ``shape``). An opening gerund stays a subject when any "I" follows ("Growing up, I
  spent summers on a farm"), and a describing word in -ing, after an adverb or alone, is no verb
  ("Really inspiring stuff", "Refreshing!"). "Have to…" and "Need to…" left out their "I" ("Have
  to renew my passport"), but not "Have to say, …".
- "Here's …" before a thing of the speaker's is the speaker showing it, even when an "I"
  follows inside: "Here's the quilt I finished on Sunday" → "I shared the quilt I finished
  on Sunday".
"""

from __future__ import annotations

import re

import attrs

from .lexicon import (
    ADVERBS,
    AMBIGUOUS_PAST,
    IRREGULAR_PAST,
    ING_ADJECTIVES,
    ING_NOUNS,
    MODALS,
    PAST_PARTICIPLES,
    PEOPLE_AND_PETS,
    PLURAL_FIXES,
    PRESENT_IN_ED,
    RELATIONS,
    STOPWORDS,
    SUBORDINATORS,
    VERB_FIXES,
)


@attrs.frozen
class Voice:
    """Who "I", "we" and "you" are in the sentence being turned.

    ``ref`` names the speaker at first mention; ``pronoun`` (``they``, ``he`` or ``she``) at
    every later one. ``company`` is who "we" adds to the speaker; ``listener`` is the name
    "you" becomes (``None``: a sentence with "you" is refused).
    """

    ref: str
    company: str = "others"
    listener: str | None = None
    pronoun: str = attrs.field(default="they", validator=attrs.validators.in_(("they", "he", "she")))

    @property
    def forms(self) -> dict[str, str]:
        return _PRONOUN_FORMS[self.pronoun]


def _forms(
    subject: str, obj: str, possessive: str, owned: str, reflexive: str, be: str, have: str
) -> dict[str, str]:
    return {
        "subject": subject,
        "object": obj,
        "possessive": possessive,
        "owned": owned,
        "reflexive": reflexive,
        "'m": be,
        "'ve": have,
        "'ll": "'ll",
        "'d": "'d",
    }


_PRONOUN_FORMS = {
    "they": _forms("they", "them", "their", "theirs", "themself", "'re", "'ve"),
    "he": _forms("he", "him", "his", "his", "himself", "'s", "'s"),
    "she": _forms("she", "her", "her", "hers", "herself", "'s", "'s"),
}


_FIRST_PERSON = re.compile(
    r"\bI\b|\bI'(?:m|ve|ll|d)\b|\b(?:me|my|mine|myself)\b|"
    r"\b(?:[Ww]e|[Ww]e're|[Ww]e've|[Ww]e'll|[Ww]e'd|[Mm]y|Me)\b|^[Oo]ur\b"
)
_FIRST_PERSON_SUBJECT = re.compile(r"\bI\b|\bI'(?:m|ve|ll|d)\b|\b[Ww]e(?:'re|'ve|'ll|'d)?\b")
_SECOND_PERSON = re.compile(
    r"\b(?:[Yy]ou|[Yy]our|[Yy]ours|[Yy]ourself|[Yy]ourselves|YOU|ya|u(?!:\d))(?:'[a-z]+)?\b"
)
_YOU_MANY = re.compile(r"\b(?:you|your) (?:two|both|guys|all|folks|lot)\b|\by'all\b", re.I)
_TOKEN = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*|\s+|.", re.DOTALL)
_HABITUAL = re.compile(
    r"\b(every|each(?! (?:way|other|one|of)\b)|often|usually|always|a lot|daily|weekly|regularly|sometimes)\b", re.I
)

_ELIDED_PAST = (
    "got went took had made started finished signed joined visited bought sold moved painted "
    "tried saw met ran found spent learned learnt quit left lost won booked adopted graduated "
    "launched opened built wrote played picked decided managed watched baked cooked volunteered "
    "donated attended hosted organized organised completed passed received became traveled "
    "travelled bumped checked caught did"
).split()
_RESTORE = (
    # "Was nervous when…": a feeling of the speaker's, whose "I" was left out
    (re.compile(r"^was (?=(?:so |really |very |pretty |super |a bit |a little |kinda )?(?:nervous|scared|excited|"
                r"stoked|thrilled|anxious|proud|grateful|thankful|sad|worried|tired|exhausted|busy|shocked|"
                r"surprised|amazed|overwhelmed|relieved|happy|glad|lucky|blessed|bummed|gutted)\b)", re.I), "I was "),
    # "Going to see my gran" — but in "Going to the coast is my favourite thing" the going is the subject
    (re.compile(r"^(?:gonna|going to)\b(?! be\b)(?![^,;]*\b(?:is|was|are|were|makes|made|means)\b)", re.I), "I'm going to"),
    # "Been hectic for me lately": the time was hectic, the speaker is "for me"
    (re.compile(r"^been (?=(?:\w+ ){1,2}?for (?:me|us)\b)", re.I), "It's been "),
    # "Gonna be a great night": the night is, not the speaker
    # "Gonna be a big change" — the thing is; "Gonna be a dad", "…a nurse" — the speaker is
    (re.compile(r"^(?:gonna|going to) be (?=(?:a|an|such a) (?!(?:\w+ ){0,2}(?:"
                + "|".join(sorted(PEOPLE_AND_PETS)) + r"|[a-z]+(?:ist|ian)|nurse|doctor|teacher|student|lawyer|engineer|"
                r"chef|volunteer|leader|owner|winner|grad|graduate|homeowner|intern|pro|regular)\b))", re.I), "It's going to be "),
    # "Been ages" is "it's been ages": small talk, not the speaker
    (re.compile(r"^been\b(?! (?:a|an|ages|forever|too long|so long|some time|a while|a few|a bit|quite)\b)", re.I), "I've been"),
    # "Just been helping my gran move" — an adverb before it changes nothing ("Just been so
    # hectic" is the time's, as "Been so…" after an adverb reads)
    (re.compile(r"^(?:just|still|also|really|recently|mostly|mainly) been\b"
                r"(?! (?:a|an|ages|forever|too long|so long|some time|a while|a few|a bit|quite|so|such)\b)", re.I), "I've {0}"),
    (re.compile(r"^gotta\b", re.I), "I have to"),
    (re.compile(r"^(?:have|has) been\b", re.I), "I've been"),
    (re.compile(r"^(?:can't|cannot) wait\b", re.I), "I can't wait"),
    (re.compile(r"^used to\b", re.I), "I used to"),
    # "Just working on…" — but "Just something nice…" and "Still amazing" are no doing
    (re.compile(r"^(?:still|currently|now|also|just|really|mostly|mainly|always|busy) (?=(?!(?:"
                + "|".join(sorted(ING_ADJECTIVES)) + r"|(?:some|no|any|every)?thing|morning|evening)\b)[a-z]{2,}ing\b)", re.I),
     "I'm {0}"),
    # "Have to focus on…": the chat's "I" left out before a need
    (re.compile(r"^(?:have|need) to\b(?! (?:say|admit|agree)\b)", re.I), None),
    (
        re.compile(
            r"^(?:so |really |very |pretty |super |quite )?(?:excited|stoked|thrilled|psyched|pumped|nervous|anxious|proud|grateful|"
            r"thankful|bummed|gutted|sad|worried|curious|keen|eager|ready|glad|happy|lucky|blessed|relieved)"
            r"(?= (?:to|about|for|of|that)\b)",
            re.I,
        ),
        "I'm {0}",
    ),
    (
        re.compile(
            r"^(?:just|finally|recently|also|still)\s+(?=[a-z]+ed\b|(?:"
            + "|".join(sorted(IRREGULAR_PAST))
            + r")\b)",
            re.I,
        ),
        None,
    ),
    (re.compile(r"^(?:" + "|".join(_ELIDED_PAST) + r")\b", re.I), None),
    # "Love the new café" left out its "I"; "Love sure does bring joy" is about love
    (re.compile(r"^(?:love|loved|hate|hated|enjoyed|adore|prefer)\b(?!\s*(?:and|&|,)|\s+(?:\w+\s+)?(?:does|did|is|are|was|were|has|have|makes|made|brings|brought|helps|can|will)\b)", re.I), None),
    (re.compile(r"^[A-Za-z]{2,}ed (?=my\b)"), None),
    (
        re.compile(r"^(?:here's|here is|here are|check out|take a look at)(?=.*\b(?:my|I|our|we)\b)", re.I),
        "I shared",
    ),
    (
        re.compile(
            r"^(?:here's|here is|here are|this is|these are|check out|look at|take a look at)"
            r"(?= (?:a |an |my |our |this |the |some )?(?:\w+ )?(?:pic|pics|photo|photos|picture|"
            r"pictures|shot|snap|selfie|painting|paintings|drawing|sketch)\b)",
            re.I,
        ),
        "I shared",
    ),
)
# "Hoping my screenplay gets noticed", "Working on a new song": the chat's "I'm" left out
_ELIDED_PROGRESSIVE = re.compile(
    r"^(?:hoping|planning|trying|working on|thinking (?:about|of)|looking forward|heading|saving up)"
    r"(?= (?:to|for|on|about|that|my|our|the|a|an|it|this|some)\b)"
    r"|^adding(?= (?:[\w'-]+ ){1,3}to (?:my|our)\b)",  # "Adding Oslo to my list"
    re.I,
)
# The word after a left-out subject's verb is the speaker as its object ("Took me four months",
# "Got us talking"): the subject the chat left out was a thing, not "I".
_SPEAKER_AS_OBJECT = re.compile(r"\s*(?:me|us)\b", re.I)
_PRESENTER = re.compile(
    r"^(?:here's|here is|here are)(?= (?:a|an|the|my|our|some|one of my|one of our)\b)"
    r"(?=.*\b(?:I|my|our|we)\b)",
    re.I,
)
_GERUND = re.compile(
    r"^([A-Za-z]{2,}ing)\b(?!'s|\s+(?:is|was|has|are|can|makes|helps|means|gives|keeps|takes|"
    r"brings|feels)\b)"
)
_MAIN_VERB_LATER = re.compile(
    r"\b(?:has been|have been|is|was|are|were|isn't|wasn't|aren't|weren't|can't|won't|doesn't|"
    r"can|could|will|would|should|might|must|makes|helps|"
    r"means|gives|keeps|brings|feels|seems|sounds|looks|takes|matters|reminds|lets|gets|puts|"
    r"inspires|motivates|calms|relaxes|allows|builds|pushes|teaches|shows|turns|needs|costs|beats|"
    r"'s been|'ve been)\b|\b(?:always|really|just|also|often|usually|never)"
    r"\s+[a-z]+s\b"
)
_COMPOUND = re.compile(
    rf"\b([Mm]y|[Oo]ur) ((?:[\w'-]+ )?(?:{'|'.join(sorted(RELATIONS, key=len, reverse=True))})) and I\b"
)
_ME_AND = re.compile(r"^[Mm]e and (my|our) ")
_ME_AND_MID = re.compile(  # after "and" or a comma, only before a verb: "…and me and my sister hiked"
    r"(?:(?<=\band )|(?<=, ))[Mm]e and (my|our) "
    r"(?=(?:[\w'-]+ ){1,2}(?:[a-z]+ed|[a-z]+s|went|got|had|did|made|took|saw|ran|ate|are|were|will|can)\b)"
)
_COUPLE_WE = re.compile(
    r"\b[Ww]e(?:'re|'ve|'d)?(?:\s+(?:" + "|".join(sorted(ADVERBS)) + r"|are|have|had|were|will))*\s+"
    r"(?:(?:got|get|getting|gotten) (?:married|engaged|divorced|hitched)|"
    r"(?:broke|break|breaking|split|splitting) up|(?:moved|move|moving) in together|"
    r"expecting (?:a|our|another|twins\b)|(?:had|have|having) (?:a|our|another) baby)\b"
)
_NAME_AND_I = re.compile(r"(?<![\w'])((?:(?:[Mm]y|[Oo]ur) [a-z]+ )?[A-Z][a-z]+) and (?:I|me)\b(?!')")
_ME_AND_NAME = re.compile(r"^[Mm]e and ([A-Z][a-z]+)\b(?!')")
_NOT_A_NAME = ADVERBS | STOPWORDS | frozenset(
    "yes yeah yep no nope ok okay oh well thanks sorry honestly anyway lol haha hey hi".split()
    # a month or a day before "and I" is a time ("…in March and I miss him"), not a person
    + """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday christmas easter""".split()
)


def _speaker_first(match: re.Match[str]) -> str:
    """ "Robin and I" → "I and Robin", "My dog Rex and I" → "I and my dog Rex"; a word that
    is no name ("Yes and I…") is left as it is."""
    name = match.group(1)
    if name.split()[-1].lower() in _NOT_A_NAME:
        return match[0]
    whose, _, who = name.rpartition(" ")
    return f"I and {whose.lower()} {who}" if whose else f"I and {name}"  # "my dog Rex and I" → "I and my dog Rex"


def has_first_person(sentence: str) -> bool:
    """True when the sentence speaks of its speaker: "I", "me", "my", or "we" as a subject.

    "us", "our" and "ourselves" alone do not count — "Rain keeps us indoors" and "Sleep does
    wonders for ourselves" speak of people in general — unless "our" opens the sentence
    ("Our twins start school next month").
    """
    return bool(_FIRST_PERSON.search(sentence))


def has_first_person_subject(sentence: str) -> bool:
    """True when "I" or "we" is a subject somewhere in the sentence."""
    return bool(_FIRST_PERSON_SUBJECT.search(sentence))


def addresses_listener(sentence: str) -> bool:
    """True when the sentence says "you" (the listener) in any form, outside a quotation
    ("My gran said "you make your own luck"" quotes her; it says nothing to the listener)."""
    if '"' in sentence:
        sentence = _QUOTATION.sub('""', sentence)
    return bool(_SECOND_PERSON.search(sentence))


_QUOTATION = re.compile(r'"[^"]*"')


_GENERIC_YOUR = re.compile(
    r"\b(?P<verb>(?:[a-z]+ing|to [a-z]+)(?: (?:for|after|on|in|with|to|towards))?) your (?P<own>own )?(?P<thing>dreams?|heart|passions?|goals?|fears?|"
    r"future|potential|life|self|best|way|path|instincts?|gut|limits?|comfort zone|mind|voice|truth|"
    r"purpose|calling|worth|values)\b",
    re.IGNORECASE,
)


def generic_your(sentence: str) -> str:
    """"your" that means anyone, not the listener: after a gerund or "to" and before a word of
    a life's aims ("chasing your dreams", "to follow your heart"), it is "one's" — the
    sentence speaks of people at large, and it is no longer addressed to the listener."""
    if "your" not in sentence.lower():
        return sentence
    return _GENERIC_YOUR.sub(lambda m: f"{m['verb']} one's {m['own'] or ''}{m['thing']}", sentence)


_IT_FEELS_LIKE = re.compile(r"^it (?P<verb>feels|felt|seems|seemed) like (?=.*\b(?:I|I'm|I've|I'd|my|me)\b)", re.IGNORECASE)
_FEEL = {"feels": "feel", "felt": "felt", "seems": "feel", "seemed": "felt"}


def feeling_of_the_speaker(sentence: str) -> str:
    """"It feels like all my hard work paid off" is how the speaker feels: "I feel like all my
    hard work paid off". Only when what follows speaks of the speaker; other sentences
    unchanged."""
    match = _IT_FEELS_LIKE.match(sentence)
    if match is None:
        return sentence
    return f"I {_FEEL[match['verb'].lower()]} like " + sentence[match.end() :]


def company_of(line: str) -> str | None:
    """Who "we" is, when the line says it: "my wife and I" → "their wife", "me and my brother"
    → "their brother", "Tom and I" → "Tom"; ``None`` when the line does not say."""
    match = _SAID_COMPANY.search(line)
    if match is None:
        return None
    if match["name"]:
        return match["name"]
    word = (match["relation"] or match["relation2"]).lower()
    return "their family" if word == "fam" else f"their {word}"


_RELATION_WORDS = "|".join(sorted(RELATIONS, key=len, reverse=True))
_SAID_COMPANY = re.compile(
    rf"\b(?:[Mm]y|[Oo]ur) (?:[\w'-]+ )?(?P<relation>{_RELATION_WORDS}) and (?:I|me)\b|"
    rf"\b(?:[Mm]e|I) and (?:my|our) (?:[\w'-]+ )?(?P<relation2>{_RELATION_WORDS})\b|"
    r"(?<![\w'])(?P<name>(?!I\b|My\b|Me\b|We\b)[A-Z][a-z]+) and (?:I|me)\b"
)


def restore_subject(sentence: str) -> str:
    """Put back an "I" the chat left out (see the module rules); other sentences unchanged."""
    deed = _VERDICT_THEN_DEED.match(sentence)
    if deed is not None and _is_past(deed["verb"]):
        # "Been quite a week - in a good way - had an interview…": the deed is the sentence
        return restore_subject(deed["deed"][0].upper() + deed["deed"][1:])
    presenting = _PRESENTER.match(sentence)
    if presenting is not None:
        return "I shared" + sentence[presenting.end() :]
    named = _NAME_THEN_MINE.match(sentence)
    if named is not None:  # "Rolo, my hamster." names the hamster: "My hamster is Rolo."
        return f"{named['whose'].capitalize()} {named['what']} is {named['name']}{named['end']}"
    if _MAIN_SUBJECT.search(_FIRST_CLAUSE.split(sentence, 1)[0]):
        # the "I" of a later clause is that clause's ("Did a course and I loved it"), and so is
        # the "I" of a clause inside a noun phrase ("Been planning a trip I can afford")
        return sentence
    if _ELIDED_PROGRESSIVE.match(sentence):  # a verb later is the hoped thing's, not the subject's
        return "I'm " + sentence[0].lower() + sentence[1:]
    for pattern, replacement in _RESTORE:
        match = pattern.match(sentence)
        if match is None:
            continue
        if replacement is None:
            after = sentence[match.end() :]
            if match[0].endswith(" "):  # the pattern stopped at an adverb ("Just "): skip its verb
                after = after.split(" ", 1)[-1] if " " in after else ""
            if _SPEAKER_AS_OBJECT.match(after):
                return "It " + sentence[0].lower() + sentence[1:]  # "Took me four months": a thing did it
            return "I " + sentence[0].lower() + sentence[1:]
        if "{0}" in replacement:
            if _MAIN_VERB_LATER.search(sentence[match.end() :]):
                return sentence  # "Really having a studio is…": the gerund is the subject
            return replacement.format(match[0].lower()) + sentence[match.end() :]
        return replacement + sentence[match.end() :]
    match = _GERUND.match(sentence) if not has_first_person_subject(sentence) else None
    if match and match.group(1).lower() not in ING_NOUNS | ING_ADJECTIVES:  # "Growing up, I saw…" has its subject
        rest = sentence[match.end() :]
        if not _MAIN_VERB_LATER.search(rest) and not _past_main_verb(rest):
            return "I'm " + sentence[0].lower() + sentence[1:]
    return sentence


# a name, then whose it is and nothing more: "Rolo, my hamster." (no verb: a reply's naming)
_NAME_THEN_MINE = re.compile(
    r"^(?P<name>[A-Z][a-z]+(?: [A-Z][a-z]+)?), (?P<whose>my|our) (?P<what>[a-z]+(?: [a-z]+){0,2}?)(?P<end>[.!]*)$"
)


# A verdict with no subject, a dash, maybe an aside and a dash, then a deed in the past with
# no subject either: "Been quite a week - in a good way - had an interview yesterday"
_VERDICT_THEN_DEED = re.compile(
    r"^(?:(?:it'?s|it has|has)\s+)?(?:been|was)\s+[^-–—,;:.!?]{1,40}?\s+[-–—]+\s+"
    r"(?:[^-–—,;:.!?]{1,25}?\s+[-–—]+\s+)?(?P<deed>(?P<verb>[a-z]+)\b.*)$",
    re.IGNORECASE,
)


def _is_past(verb: str) -> bool:
    word = verb.lower()
    return word in IRREGULAR_PAST or word.endswith("ed") and len(word) > 4


# "I" or "we" as the subject of the sentence's own clause: first, or after a mark, a joining
# word or an adverb — not straight after a noun, where it opens a clause inside a noun phrase
_MAIN_SUBJECT = re.compile(
    r"(?:^|[,;:!.]\s*|\b(?:and|but|so|then|now|because|when|if|since|as|after|before|while|that|"
    r"until|once|though|although|also|just|finally|really|recently|today|yesterday|lately|still|"
    r"even|actually|honestly|sometimes|usually|often|always|never)\s+)"
    r"(?:I|I'm|I've|I'll|I'd|[Ww]e|[Ww]e're|[Ww]e've|[Ww]e'll|[Ww]e'd)\b"
)
# "be me", "like me again": the speaker as themself, after the speaker was named
_BEING_ONESELF = re.compile(r".*\b(?:be|being|been|feel like|feels like|felt like)\s+$", re.IGNORECASE)
# where a sentence's first clause ends: its subject, if it has one, stands before this
_FIRST_CLAUSE = re.compile(r"[,;:]\s|\s[-–—]+\s|\s(?:and|but|so|because|though|although|while|when|since|as|if)\s", re.I)


_ONLY_PAST = IRREGULAR_PAST - frozenset(
    """found built held bought sold told lost won spent sent paid caught heard met had said
    thought sat slept stood understood led fed lent meant dug hung shot stuck struck swept
    swung lit slid spun wound bent""".split()
)
"""Past forms that, after a leading gerund's words, are its own verb ("Finishing the race felt
great"); the ones as often a participle of a phrase ("books bought in Lisbon") are left out."""
_SUBJECT_BEFORE = frozenset("i we you he she they it who that which".split())
_WORD_RUN = re.compile(r"[A-Za-z']+")


def _past_main_verb(rest: str) -> bool:
    """Whether the words after a leading gerund hold its own past verb ("Selling the van gave
    me the nerve to travel"): a past form (``_ONLY_PAST``), not straight after a subject of its own ("…the
    dog I adopted" is a clause of the gerund's)."""
    words = _WORD_RUN.findall(rest.lower())
    return any(w in _ONLY_PAST and (i == 0 or words[i - 1] not in _SUBJECT_BEFORE) for i, w in enumerate(words))


def to_third_person(sentence: str, voice: Voice, *, named: bool = False) -> str | None:
    """The sentence about ``voice.ref`` in the third person, or ``None`` if "you" cannot be
    resolved. See the module rules. ``named`` says the speaker was already named (the text
    continues a sentence about them), so even the first mention is a pronoun."""
    if addresses_listener(sentence) and (voice.listener is None or _YOU_MANY.search(sentence)):
        return None
    if voice.company == "others" and _COUPLE_WE.search(sentence):
        voice = attrs.evolve(voice, company="their partner")
    sentence = _COMPOUND.sub(lambda m: f"I and {m.group(1).lower()} {m.group(2)}", sentence)
    sentence = _ME_AND.sub(lambda m: f"I and {m.group(1)} ", sentence)
    sentence = _ME_AND_MID.sub(lambda m: f"I and {m.group(1)} ", sentence)
    sentence = _NAME_AND_I.sub(_speaker_first, sentence)
    sentence = _ME_AND_NAME.sub(_speaker_first, sentence)
    tokens = _TOKEN.findall(sentence)
    habitual = bool(_HABITUAL.search(sentence))
    turner = _Turner(voice, tokens, habitual)
    turner.named = named
    return turner.run()


class _Turner:
    """One pass over a sentence's tokens, remembering whether the speaker was named yet."""

    def __init__(self, voice: Voice, tokens: list[str], habitual: bool) -> None:
        self.voice = voice
        self.tokens = tokens
        self.habitual = habitual
        self.named = False

    def run(self) -> str:
        tokens = self.tokens
        quoted = False  # inside a quotation: the words are someone's, as written ("Keep your heart open")
        for i, token in enumerate(tokens):
            if token == '"':
                quoted = not quoted
            if quoted or not token[:1].isalpha():
                continue
            replacement = self._replace(i, token)
            if replacement is not None:
                tokens[i] = replacement
        return "".join(tokens)

    def _speaker(self) -> str:
        if self.named:
            return self.voice.pronoun
        self.named = True
        return self.voice.ref

    def _group(self) -> str:
        if self.named:
            return "they"
        self.named = True
        return f"{self.voice.ref} and {self.voice.company}"

    def _possessive(self) -> str:
        if self.named:
            return self.voice.forms["possessive"]
        self.named = True
        return f"{self.voice.ref}'s"

    def _replace(self, i: int, token: str) -> str | None:
        lower = token.lower()
        forms = self.voice.forms
        if token == "I":
            was_named = self.named
            subject = self._speaker()
            self._agree(i, singular=not was_named or subject != "they")
            return subject
        if lower in _I_CONTRACTIONS:
            if self.named:
                return forms["subject"] + forms[lower[1:]]
            return self._speaker() + " " + self._expand(i, lower[2:])
        match lower:
            case "me":
                if self.tokens[i + 1 : i + 2] == ["-"]:
                    return None  # "me-time" is a word, not the speaker
                if self.named and _BEING_ONESELF.match("".join(self.tokens[max(0, i - 4) : i])):
                    return forms["reflexive"]  # "I can be me" is "they can be themself"
                return forms["object"] if self.named else self._speaker()
            case "my":
                return self._possessive()
            case "mine":
                return forms["owned"] if self.named else f"{self._speaker()}'s"
            case "myself":
                return forms["reflexive"] if self.named else self._speaker()
            case "we":
                subject = self._group()
                self._agree(i, singular=False)
                return subject
            case "we're" | "we've" | "we'll" | "we'd":
                subject = self._group()
                if subject == "they":
                    return "they" + token[2:]
                return subject + " " + self._expand(i, lower[3:], plural=True)
            case "us":
                return f"{forms['object']} and {self.voice.company}" if self.named else self._group()
            case "our":
                return "their" if self.named else self._possessive()
            case "ours":
                return "theirs" if self.named else f"{self._speaker()}'s"
            case "ourselves":
                return "themselves"
        if lower in _SECOND or token == "ya" or token == "u" and not self._user_id_at(i):
            return self._listener(i, lower)
        return None

    def _user_id_at(self, i: int) -> bool:
        """Whether the token ``u`` at ``i`` opens a user id (``u:17``): an id is never "you"."""
        following = "".join(self.tokens[i + 1 : i + 3])
        return len(following) == 2 and following[0] == ":" and following[1].isdigit()

    def _expand(self, i: int, contraction: str, plural: bool = False) -> str:
        if contraction == "m":
            return "is"
        if contraction == "re":
            return "are"
        if contraction == "ve":
            return "have" if plural else "has"
        if contraction == "ll":
            return "will"
        nxt = self._next_word(i)
        if nxt is not None and self.tokens[nxt].lower() in PAST_PARTICIPLES:
            return "had"
        return "would"

    def _listener(self, i: int, lower: str) -> str:
        name = self.voice.listener or "them"
        if lower in ("you", "ya", "u", "yourself", "yourselves"):
            nxt = self._next_word(i)
            if nxt is not None and i + 1 < len(self.tokens) and self.tokens[i + 1].isspace():
                verb = self.tokens[nxt]
                fix = {"are": "is", "were": "was", "have": "has"}.get(verb.lower())
                if fix:
                    self.tokens[nxt] = fix
                elif lower == "you" and self._opens_a_clause(i):
                    self.tokens[nxt] = third_singular(verb, habitual=self.habitual)
            return name
        if lower in ("your", "yours"):
            return f"{name}'s"
        contraction = lower[3:]
        verb = {"'re": "is", "'ve": "has", "'ll": "will", "'d": "would"}.get(contraction, "")
        return f"{name} {verb}".strip()

    def _opens_a_clause(self, i: int) -> bool:
        """Whether the "you" at ``i`` is a clause's subject: after a word that opens a clause
        ("if you want", "how you feel", "so you know"), a comma, or first in the sentence.
        After a verb or a preposition it is an object ("send you", "for you")."""
        for j in range(i - 1, -1, -1):
            token = self.tokens[j]
            if token.isspace():
                continue
            return token in ",;:" or token.lower() in _CLAUSE_OPENERS
        return True

    def _next_word(self, i: int) -> int | None:
        for j in range(i + 1, len(self.tokens)):
            token = self.tokens[j]
            if token.isspace():
                continue
            if not token[:1].isalpha():
                return None
            if token.lower() in ADVERBS or self._in_no_longer(j) or _an_ly_adverb(token.lower(), self._after(j)):
                continue
            return j
        return None

    def _after(self, j: int) -> str | None:
        """The word straight after the token at ``j`` (past one space), if any."""
        if j + 2 < len(self.tokens) and self.tokens[j + 1].isspace() and self.tokens[j + 2][:1].isalpha():
            return self.tokens[j + 2]
        return None

    def _in_no_longer(self, j: int) -> bool:
        """Whether the word at ``j`` is half of "no longer", an adverb between a subject and
        its verb ("I no longer smoke"), not a verb."""
        pair = "".join(self.tokens[j : j + 3]).lower()
        before = "".join(self.tokens[max(j - 2, 0) : j + 1]).lower()
        return pair == "no longer" or before == "no longer"

    def _agree(self, i: int, *, singular: bool) -> None:
        j = self._next_word(i)
        if j is None:
            return
        word = self.tokens[j]
        self.tokens[j] = third_singular(word, habitual=self.habitual) if singular else plural(word)


_CLAUSE_OPENERS = (SUBORDINATORS - {"during"}) | frozenset("as so and but or that whether how what why where".split())
_SECOND = frozenset(
    {"you", "your", "yours", "yourself", "yourselves", "you're", "you've", "you'll", "you'd"}
)
_I_CONTRACTIONS = frozenset({"i'm", "i've", "i'll", "i'd"})


_LY_VERBS = frozenset("apply reply rely supply fly multiply comply imply tally bully rally ally".split())
_PAST_PREFIXES = ("re", "over", "out", "under", "mis", "up")


def _an_ly_adverb(word: str, following: str | None) -> bool:
    """Whether ``word`` is an adverb in -ly between a subject and its verb ("I slowly formed",
    "I quickly learned"): a word in -ly with another word after it, other than the verbs in
    -ly ("apply", "rely", …)."""
    return following is not None and len(word) > 4 and word.endswith("ly") and word not in _LY_VERBS


_PRESENT_LOOKALIKES = frozenset({"resent", "relent"})  # present verbs spelled like a prefixed past


def _prefixed_past(word: str) -> bool:
    """An irregular past with a prefix: "retook", "rewrote", "overslept", "outgrew"."""
    if word in _PRESENT_LOOKALIKES:
        return False
    return any(word.startswith(p) and word[len(p) :] in IRREGULAR_PAST for p in _PAST_PREFIXES)


def third_singular(verb: str, *, habitual: bool = False) -> str:
    """The verb as it follows "he"/"she": ``love`` → ``loves``; past forms and modals unchanged.

    ``habitual`` says the sentence speaks of a habit ("every", "usually"), which makes a verb
    like ``read`` present ("reads") rather than past.
    """
    lower = verb.lower()
    if lower in VERB_FIXES:
        return VERB_FIXES[lower]
    if lower == "and" or lower in MODALS or lower.endswith("n't") or lower in IRREGULAR_PAST or _prefixed_past(lower):
        return verb
    if lower in AMBIGUOUS_PAST and not habitual:
        return verb
    if lower.endswith("ed") and lower not in PRESENT_IN_ED or lower.endswith("s") and not lower.endswith(("ss", "sh")):
        return verb
    if lower.endswith(("ss", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(lower) > 2 and lower.endswith("y") and lower[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def plural(verb: str) -> str:
    """The verb as it follows "they": ``am`` → ``are``, ``was`` → ``were``; others unchanged."""
    return PLURAL_FIXES.get(verb.lower(), verb)
