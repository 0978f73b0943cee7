"""A reply read with the line it answers: what the line before names, and what it asked.

A row is read weeks later, alone. "u:42 makes them with buttermilk." and "u:42 thinks the
Riverside Rowing Club." lost what the listener had just said; the reply means something only
beside it. So the line before a reply lends the reply what it named and what it asked.

Rules:
- **The things it named** (``antecedents``, likeliest first): the noun phrases of the line
  before, the last first — in its question when it asks one ("How do you get your pancakes so
  fluffy?" → "your pancakes") — a title in quotes or a name of capitalised words ("You should
  read "The Overstory"!"), a noun after a possessive or a demonstrative ("your", "my", "the",
  "this", "that", "these", "those"), with up to two words before its noun ("that sourdough
  bread recipe"), a thing praised by itself ("Wow, nice banjo!") and a name after a verb or a
  preposition ("to see Lisbon"). A demonstrative before a verb stands alone ("That looks
  delicious" names nothing), and a phrase with a person inside it ("the shed I built") is not
  carried. A question that asks by a pronoun ("What's the story with it?", "Did your coach
  hand them out?") also lends what its line named before it, and a reply's pronoun of the same
  number as the question's means that first (the banjo, not "the story") — unless the
  question's own "your" subject agrees too ("What did your kids think of them?": "they" are
  the kids). A name the chat addresses someone by is never a thing (``extract``). Seen from the
  replying speaker: the listener's "your" is the speaker's "my", the listener's own "my" is
  "your" (and becomes the persona's name in the third person), a demonstrative is "the". A
  word that names no thing ("way", "time", "plans", a time word) is not one, nor is a phrase
  that opens on one ("the way cats stretch"). The phrase runs
  to its noun and stops before a verb ("your pupils grow and…" is "my pupils"): "What is your
  new rug made of?" asks about "my new rug", never "my new"; in
  "Is that the rug you…?" the thing is "the rug", not a "that" before an article.
  A question about a doing ("What's the hardest part of training for a marathon?") names
  the doing first: the reply's "It takes up every weekend" is about training for a marathon.
  A plural the question asks about with no determiner, after "you" and its verb ("Do you
  grow tomatoes?"), is a thing too: "I sell them at the market" sells tomatoes.
  A thing announced and not yet told ("I've got something to share!", "big news:") is what
  a reply's pronoun means, and it names nothing: the things named before it are not lent
  ("I lost my job at Acme. But I've got news!" — "Can't wait to hear it!" is not about Acme).
- **Naming the reply's pronoun** (``name_the_pronoun``): until the reply has said a row of
  its own, when a sentence of it (or a follow-up such as "I'll check it out") has
  "it" or "they"/"them"/"their" with nothing before it in the sentence that it could mean, the
  pronoun becomes the first thing that agrees with it in number ("it" one thing, "they" a
  plural):
  "I make them with buttermilk" → "I make my pancakes with buttermilk". A pronoun with
  something before it to mean ("I bought a kite and flew it") is left alone, and so is a dummy
  "it" ("it takes patience to…", "how hard it can be when…", "it's lovely being able to…").
  A participle with its agent is no verdict: "They were handed out by the mayor" names them.
  A verdict on the question's own subject ("your" or "the" and its noun, up to its verb) is
  what was asked, and is kept: "How did your kids like the zoo?" — "They were thrilled" →
  "My kids were thrilled"; "How did the plum jam turn out?" — "It was tart" → "The plum jam
  was tart".
  Nor after a sentence of the reply that opened on a thing of its own ("That chapter has two
  letters. It's a gloomy tale"): a later "it" means what the reply went on to speak of (the
  reader, ``extract``, stops lending the line before's things to an "it" there).
- **A short reply to a question** (``answer_row``): when the line before asks a wh-question
  ("what", "which", "where", "who", "when", "how many/much/long/often/far/old") of the
  listener, and the reply's first sentence is a fragment (at most eight words, no verb of its
  own, no first person, not a yes, no, thanks or reaction) holding a word that says
  something, the row is the answer to that question: "What pizza do you usually order?" —
  "Margherita, always!" → "Asked what pizza they usually order, u:42 answered: Margherita,
  always." The question is turned into its indirect form ("which club did you end up joining"
  → "which club they ended up joining"); a question it cannot turn is not guessed at, and no
  row is written.
- **A reply about a thing asked by a pronoun** (``indirect_question_about``): when the
  question asks about a thing by "it" or "they" ("…I've always wanted to visit Lisbon. How was
  it?") or by a bare plural ("How have rehearsals been going?"), and the reply's first sentence
  that answers anything (a "Thanks!" before it answers nothing) opens on "it" or "they" that
  nothing else named, the row is the reply written with the question, whose words say what
  its pronoun is: "Asked how Lisbon was, u:42 answered: it was wonderful." A verdict is kept
  here — it is what was asked. The pronoun must be named by a thing of the line before, of
  its number; a dummy "it" ("How did it feel when you…?", "How did it feel being there?")
  needs none, and then no phrase of
  the line names the reply's "it" (it is the experience). With no name, no row.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from .identity import is_verdict
from .lexicon import IRREGULAR_PAST, STOPWORDS, VAGUE, reads_as_plural
from .person import third_singular
from .references import asks_by_pronoun, dangling, opens_on_dummy_it


@attrs.frozen
class Thing:
    """A noun phrase the line before named, as the replying speaker would say it."""

    words: str  # "my pancakes", "the plank", "your bread recipe"
    plural: bool
    asked: bool = False  # the question's own subject ("How are your kids?"): a verdict answers it


_NOUN_PHRASE = re.compile(
    r"\b(?P<det>your|my|the|this|that|these|those)\s+"
    r"(?!(?:a|an|the|your|my|our|this|that|these|those)\b)(?P<words>(?:[a-z][a-z'-]*\s+){0,2}?[a-z][a-z-]+)"
    r"(?=\s*(?:[?!.,;]|$|\s(?:of|with|for|to|in|on|at|from|and|or|so|do|does|did|is|are|was|were|has|have|had|you|ready|going|looks|looked|sounds|sounded|seems|seemed|smells|tastes)\b))",
    re.IGNORECASE,
)
# A title in quotes ("The Overstory") or a run of two or more capitalised words that does
# not open the sentence ("the Riverside Rowing Club", "Rocket League").
_TITLE = re.compile(r'"[^"]{2,60}"|(?<=[a-z,] )[A-Z][a-z]+(?: (?:of|the|and) [A-Z][a-z]+| [A-Z][a-z]+)+\b')
_NOT_THINGS = frozenset(
    """one ones thing things stuff way ways day days time times life week weekend weekends month
    year plans plan opinion thoughts mind favourite favorite end part take view experience
    experiences advice secret fault turn moment moments morning evening night today tomorrow
    yesterday point idea sense news same rest other others lot lots kind sort bit back
    anymore anyway anyhow though either yet together apart""".split()
)
_ABOUT_DOING = re.compile(
    r"\b(?:about|of|with)\s+(?P<doing>(?!being\b|doing\b|getting\b)[a-z]{3,}ing(?:\s+(?!you\b|it\b)[\w'-]+){1,5})\s*\?\s*$",
    re.IGNORECASE,
)
_SWAP = {"your": "my", "my": "your", "the": "the", "this": "the", "that": "the", "these": "the", "those": "the"}
_QUESTION = re.compile(r"[^.!?]*\?")


def antecedents(line_before: str) -> tuple[Thing, ...]:
    """Every thing the line before a reply named that the reply's pronoun may mean, the
    likeliest first (see the module rules)."""
    asked = _QUESTION.findall(line_before)
    question = asked[-1] if asked else None
    own: list[Thing] = []  # what the question itself names, its "your" subject first
    subject = _ASKED_OF.match(question.strip().rstrip("?")) if question else None
    if subject is not None and subject["subject"].lower().startswith(("your ", "the ")):
        det, words = subject["subject"].lower().split(None, 1)
        rest = subject["rest"].lower().split()  # what _with_its_noun takes is gone from it
        words = _without_final_verb(_to_its_verb(_with_its_noun(words, rest), rest))
        if words and _names_a_thing(words) and not _PERSON_WORD.search(words):
            own.append(Thing(words=f"{_SWAP[det]} {words}", plural=is_plural(words), asked=True))
    if question is not None:
        about = _ABOUT_DOING.search(question)
        if about is not None:  # "What do you love about camping with your fam?": the doing is "it"
            own.append(Thing(words=" ".join(_SWAP.get(w.lower(), w) for w in about["doing"].split()), plural=False))
        own += _named_in(question)
        own += _bare_plurals(question)
    before: list[Thing] = []  # what the line named before its question (or, with none, at all)
    by_pronoun = _ASKED_BY.search(question) if question else None
    if question is None or by_pronoun is not None:
        said = line_before[: line_before.rfind(question)] if question else line_before
        for part in reversed([p for p in re.split(r"(?<=[.!?])\s+|\s+[-–—]+\s+", said) if p.strip()]):
            if _PLACEHOLDER.search(part):
                break  # "…lost my job at Acme. But I've got news to share!": "it" is the news
            before += _named_in(part)
    if question is not None and _ASKED_BY_DUMMY_IT.search(question):
        # "How did it feel when you crossed the line?": the reply's "it" is the experience,
        # which no phrase of the line names
        return _unique([t for t in own + before if t.plural])
    if by_pronoun is None:
        return _unique(own + before)
    # "Nice banjo! What's the story with it?": a reply's "it" means what the question's "it"
    # means — a thing named before the question, of the same number — not "the story"; a
    # pronoun of the other number means the question's own thing
    plural = by_pronoun[0].lower() != "it"
    if own and own[0].words.startswith("my ") and subject is not None and own[0].plural == plural:
        return _unique(own + before)  # "What did your kids think of them?": "they" are the kids
    meant = [t for t in before if t.plural == plural]
    return _unique(meant + own + before)


# a thing announced and not yet told: what a reply's "it" means, though it names nothing
_PLACEHOLDER = re.compile(
    r"\b(?:something|some(?:thing)? (?:big|exciting|new|fun)|(?:some |big |great |good |exciting )*news|a surprise|an update)"
    r"(?:\s+(?:to (?:share|tell|show)|for you))?\s*[-:!.]*\s*$",
    re.IGNORECASE,
)


# A plural the question asks about with no determiner, after "you" and its verb: "Do you
# grow tomatoes?", "Where do you find fossils like these?" — after "you" a verb
# is in its plain form, so a word in -s that follows is a noun.
_BARE_PLURAL = re.compile(
    r"\byou\s+(?:[a-z]+\s+){1,3}?(?P<noun>[a-z]{3,}s)"
    r"(?=\s*(?:[?,.!]|$|\s(?:like|on|in|at|with|for|from|anymore|any more|too|often|every|lately|recently|these days|nowadays)\b))",
    re.IGNORECASE,
)


def _bare_plurals(question: str) -> list[Thing]:
    found = []
    for match in _BARE_PLURAL.finditer(question):
        noun = match["noun"].lower()
        before = question[: match.start("noun")].split()
        if before and before[-1].lower() in _SWAP:
            continue  # "the shops": a noun phrase, named as one
        if is_plural(noun) and _names_a_thing(noun):
            found.append(Thing(words=noun, plural=True))
    return found


def _unique(things: list[Thing]) -> tuple[Thing, ...]:
    return tuple(dict.fromkeys(things))


def antecedent(line_before: str) -> Thing | None:
    """The likeliest thing the line before a reply named (``antecedents``), or ``None``."""
    found = antecedents(line_before)
    return found[0] if found else None


def noun_phrases(part: str) -> list[tuple[int, str, str]]:
    """The noun phrases after a possessive or a determiner in ``part``, in order, as
    (where, the determiner in lower case, the words): "my new rug", "that sourdough bread
    recipe". A demonstrative before its verb ("That looks…"), a phrase that would start on the
    word after a pointer ("that on your runs"), a word that names no thing and a phrase with a
    person in it ("the shed I built") are none."""
    found = []
    for m in _NOUN_PHRASE.finditer(part):
        first = m["words"].split()[0].lower()
        if m["det"].lower() in _POINTERS and first in _NOT_AFTER_A_POINTER or first in STOPWORDS:
            continue
        words = _without_final_verb(_lower_common(_before_object(m, part)))
        if words and _names_a_thing(words) and not _PERSON_WORD.search(words):
            found.append((m.start(), m["det"].lower(), words))
    return found


def places_named(said: str) -> list[str]:
    """The places ``said`` names by a name after a verb or preposition ("been to Crete",
    "in Oslo"), the last first."""
    return [m["name"] for m in reversed(list(_PLACE_NAME.finditer(said)))]


def _named_in(part: str) -> list[Thing]:
    """The things one sentence names, the last first: noun phrases after a possessive or a
    determiner, titles, a thing praised by itself ("nice guitar!") and a name after a verb or
    a preposition ("to see Lisbon")."""
    named = [(at, f"{_SWAP[det]} {words}") for at, det, words in noun_phrases(part)]
    named += [(m.start(), m[0]) for m in _TITLE.finditer(part)]
    named += [(m.start(), f"the {m['noun'].lower()}") for m in _PRAISED.finditer(part) if _names_a_thing(m["noun"])]
    named += [(m.start(), m["name"]) for m in _PLACE_NAME.finditer(part)]
    return [
        Thing(words=words, plural=not words.startswith('"') and words[:1].islower() and is_plural(words))
        for _, words in sorted(named, reverse=True)
    ]


_POINTERS = frozenset({"this", "that", "these", "those"})
_ASKED_BY = re.compile(r"\b(?:it|they|them)\b", re.IGNORECASE)
_ASKED_BY_DUMMY_IT = re.compile(
    r"\bit\s+(?:feel|felt|be|was|is)\s+(?:like|to|when|that|[a-z]+ing)\b|\b(?:was|is)\s+it\s+like\b", re.IGNORECASE
)
# "the space I designed": a phrase with a clause of its own says whose it is in words the
# reply would have to turn; it is not carried.
_PERSON_WORD = re.compile(r"\b(?:i|me|you|we|us|he|she|they|them)\b", re.IGNORECASE)
# "That looks delicious", "This is…": the demonstrative stands alone, the next word is its verb.
_NOT_AFTER_A_POINTER = frozenset(
    """looks look looked sounds sound sounded seems seem seemed feels feel felt is was are were
    must makes make made means mean brings bring reminds remind gives give takes take has have
    had will would can could should really so just too all""".split()
)
# A thing praised by itself, as an exclamation or the end of a sentence: "Wow, nice guitar!",
# "Those are great medals."
# "Wow, nice banjo!" — but "looks great framed" praises no "framed"
_PRAISED = re.compile(
    r"\b(?:nice|great|cool|lovely|beautiful|awesome|amazing|gorgeous|cute|stunning|impressive|"
    r"neat|fantastic|wonderful|incredible)\s+(?P<noun>(?![a-z]{3,}ed\b)[a-z][a-z-]+)(?=\s*(?:[!.,]|$))",
    re.IGNORECASE,
)
# One capitalised word after a verb or a preposition, inside the sentence: "to see Lisbon",
# "in Oslo". (A person's name there is caught by the reader, which drops rows naming people.)
_PLACE_NAME = re.compile(
    r"\b(?:to|in|at|from|visit|visited|visiting|see|saw|seen|explore|explored|around)\s+"
    r"(?P<name>[A-Z][a-z]+|[A-Z]{2,5})\b(?!\s+[A-Z])"
)


_MODIFIERS = frozenset(
    """new old latest last first second third next big little small favourite favorite own recent
    current best extra whole main final special local""".split()
)


def _with_its_noun(words: str, rest: list[str]) -> str:
    """A question's "your" phrase taken to its noun: "What is your new quilt made of?" asks
    about "new quilt", not "new" — a word that only comes before a noun takes the next one."""
    taken = words.split()
    while taken[-1] in _MODIFIERS and rest and len(taken) < 3 and rest[0].isalpha():
        taken.append(rest.pop(0))
    return " ".join(taken)


# A question's last verb can follow its noun straight ("How did the marathon go?").
_QUESTION_VERBS = frozenset(
    """go goes went do does did be been look looks feel feels turn turned work works happen
    happened end ended come came taste tastes tasted sound sounds sounded seem seems seemed looked
    felt begin began start started finish finished compare grow grew succeed learn learned
    need want get make think know see enjoy live eat""".split()
)


_OBJECT_NEXT = re.compile(r"\s+(?:you|me|us|them|him|her)\b", re.IGNORECASE)


def _before_object(match: re.Match[str], text: str) -> str:
    """The phrase's words without a last one that an object pronoun follows — a verb: "What
    did the support group teach you?" names "the support group"."""
    words = match["words"]
    if " " in words and _OBJECT_NEXT.match(text, match.end()):
        return words.rsplit(" ", 1)[0]
    return words


def _lower_common(words: str) -> str:
    """The words in lower case, but for names ("Lisbon", "NYC", "GoT"), which keep theirs."""
    return " ".join(w if len(w) > 1 and w[:1].isupper() else w.lower() for w in words.split())


def _to_its_verb(words: str, rest: list[str]) -> str:
    """A question's subject taken on to the word before its verb: "How did the plum jam turn
    out?" asks about "plum jam" (at most three words)."""
    taken = words.split()
    for word in rest:
        if len(taken) >= 3 or not word.isalpha() or word in _QUESTION_VERBS or word in _NOT_NOUN_AFTER_SUBJECT:
            break
        if word.endswith("ed") or word in IRREGULAR_PAST:  # "your new rug made of": a participle
            break
        taken.append(word)
    return " ".join(taken)


_NOT_NOUN_AFTER_SUBJECT = STOPWORDS | frozenset(
    "like liked love loved help helped handle handled react reacted say said mean cost took take turn".split()
)


def _without_final_verb(words: str) -> str:
    parts = words.split()
    while parts and parts[-1].lower() in _QUESTION_VERBS:
        parts.pop()
    return " ".join(parts)


def is_plural(words: str) -> bool:
    """Whether a phrase's last word is a plural ("my kayaks"; not "glass", "series")."""
    head = words.split()[-1]
    return reads_as_plural(head)


def _names_a_thing(words: str) -> bool:
    if any(w.endswith(("ly", "wise")) for w in words.lower().split()):
        return False
    head = words.lower().split()[-1]
    if head in STOPWORDS or head in VAGUE or head in _NOT_THINGS:
        return False
    if words.lower().split()[0] in ("way", "time", "times", "day", "moment", "kind", "sort"):
        return False  # "the way dogs…", "the time kids…": a clause follows, not a thing
    return not head.endswith(("ly", "ing")) or head in ("painting", "building", "wedding", "meeting", "ring")


_PRONOUN = re.compile(
    r"\b(?P<word>it's|it|its|they're|they've|they|them|their)\b(?!')", re.IGNORECASE
)
_SINGULAR = frozenset({"it's", "it", "its"})
_SPELLED = {
    "it's": "{} is", "it": "{}", "its": "{}'s", "they're": "{} are", "they've": "{} have",
    "they": "{}", "them": "{}", "their": "{}'",
}


# a pleasantry whose pronoun only keeps the chat going
_PLEASANT_IT = re.compile(
    r"\bwait to (?:hear|see|read) (?:it|them|all about it)\b|\bkeep (?:it|that) up\b|"
    r"\blook(?:ing)? forward to (?:it|them)\b|\bmake it (?:count|work|happen)\b",
    re.IGNORECASE,
)


def name_the_pronoun(sentence: str, things: Sequence[Thing]) -> str:
    """The reply's first sentence with its pointing pronoun named by the first of ``things``
    that agrees with it in number (see the module rules), or unchanged."""
    match = _PRONOUN.search(sentence)
    if match is None:
        return sentence
    word = match["word"].lower()
    thing = next((t for t in things if (word in _SINGULAR) != t.plural), None)
    if thing is None:
        return sentence
    if word.startswith("it") and (opens_on_dummy_it(sentence[match.start() :]) or _dummy_it_in(sentence)):
        return sentence
    if not dangling(f"{sentence[: match.start()]}it."):
        return sentence  # something before it in the sentence it may mean
    if not thing.asked and _ONLY_A_VERDICT.match(sentence, match.end()) and not _MORE_AFTER.search(sentence, match.end()):
        return sentence  # "It was busy but fine": a verdict says nothing a row could keep
    predicate = _PREDICATE_AFTER.match(sentence, match.end())
    if not thing.asked and predicate is not None and is_verdict(predicate["what"]):
        return sentence  # "It's such a relief!": a reaction, about whatever the chat meant
    if _JUDGES_WHAT_FOLLOWS.match(sentence[match.start() :]):
        return sentence  # "It's priceless being able to…": "it" is what follows, not a thing
    if _PLEASANT_IT.search(sentence):
        return sentence  # "Can't wait to hear it!": a name would make a pleasantry seem to say something
    head = thing.words.split()[-1].lower()
    if re.match(rf"(?:'s|\s+is|\s+was)?\s+(?:a|an|the)\s+(?:\w+\s+)?{re.escape(head)}\b", sentence[match.end() :], re.I):
        return sentence  # "It's a map of the old harbour": the reply names it itself (``identity``)
    named = _SPELLED[word].format(thing.words)
    if word == "it's" and re.match(r"\s+(?:been|got|gotten)\b", sentence[match.end() :]):
        named = f"{thing.words} has"  # "it's been" is "has been", not "is been"
    if word == "their" and not thing.plural:
        named = f"{thing.words}'s"
    if match.start() == 0 or sentence[: match.start()].rstrip().endswith((".", "!", "?")):
        named = named[:1].upper() + named[1:]
    return sentence[: match.start()] + named + sentence[match.end() :]


# After a subject pronoun, a copula and a word that names nothing: an adjective, not "a",
# "the", a preposition, a name or a number ("It's about…", "They were a gift…" name something).
_ONLY_A_VERDICT = re.compile(
    r"(?:'s|'re| is| was| are| were)(?:\s+(?:so|really|very|pretty|quite|super|too|just|totally))*\s+"
    r"(?!(?:a|an|the|about|from|called|named|by|in|at|on|for|with|my|our|one|part|made|built|"
    r"written|inspired|based)\b)(?![a-z]+(?:ed|en)\s+(?:(?:out|up|down|over|off|back|in)\s+)?(?:by|to|as|for|from|with)\b)[a-z]+\b",
)


_PREDICATE_AFTER = re.compile(r"(?:'s|\s+is|\s+was|\s+'re|\s+are|\s+were)?\s+(?:really\s+|such\s+|so\s+)?(?P<what>.+)$", re.IGNORECASE)


# A judgement of the clause after it: "it's priceless being able to…", "it was fun seeing…".
_JUDGES_WHAT_FOLLOWS = re.compile(
    r"^it(?:'s| is| was)\s+(?:so\s+|very\s+|really\s+)?(?!(?:a|an|the|my|your|our|their|been)\b)[a-z]+,?\s+"
    r"(?!(?:some|any|no|every)thing\b)[a-z]{2,}ing\b|"
    # "It's been so rewarding to teach them…": the teaching is what was rewarding
    r"^it(?:'s| has) been\s+(?:so\s+|very\s+|really\s+|such\s+)?(?!(?:a|an|the)\b)[a-z]+\s+(?:to|[a-z]{2,}ing)\b",
    re.IGNORECASE,
)


# "It was brutal but I finished in four hours": the verdict goes on to say something.
_MORE_AFTER = re.compile(r"\s(?:but|and|so|though)\s+(?:I|I'm|I've|I'd|we|my|it|it's|they)\b", re.IGNORECASE)


def _dummy_it_in(sentence: str) -> bool:
    return bool(_DUMMY_IT_INSIDE.search(sentence))


_DUMMY_IT_INSIDE = re.compile(
    r"\b(?:make|made|makes|find|found|take|took)\s+it\s+(?:to|easy|hard|home)\b|"
    r"\bhow\s+\w+\s+it\s+(?:(?:can|could|must|might|may)\s+be|is|was|gets|got)\b|"  # "how hard it can be"
    r"\b(?:give|gives|giving|gave)\s+it\s+(?:my|our|their|your|his|her|a|an|some)\b|"  # "giving it my all"
    # "It just took us an afternoon": the task the speaker did, not a thing the listener named
    r"^it\s+(?:only\s+|just\s+)?(?:took|takes)\s+(?:me|us)\b",
    re.IGNORECASE,
)


_WH = re.compile(
    r"^(?P<wh>(?:what|which|where|who|whom|whose|when|how\s+(?:many|much|long|often|far|old))"
    r"(?:\s+(?!(?:do|does|did|are|is|was|were|have|has|had|will|would|can|could|should)\b)[a-z'-]+){0,3}?)"
    r"\s+(?P<aux>do|does|did|are|were|is|was|have|has|had|will|would|can|could|should)\s+"
    r"(?P<subject>you|your\s+(?:[a-z'-]+\s+){0,2}?[a-z'-]+)(?=\s|$)\s*(?P<rest>[^?]*?)\s*$",
    re.IGNORECASE,
)
# The question's own subject, also after "how" and "why": "How did your nephews like the
# aquarium?" asks about the nephews, whatever else it names
_ASKED_OF = re.compile(
    r"^(?:how|why|what|which|where|who|whom|whose|when)(?:\s+(?!(?:do|does|did|are|is|was|were|have|has|had|will|would|can|could|should)\b)[a-z'-]+){0,3}?"
    + _WH.pattern[_WH.pattern.index(r"\s+(?P<aux>") :].replace("(?P<subject>you|your", "(?P<subject>you|(?:your|the)", 1),
    re.IGNORECASE,
)
_BE = frozenset({"is", "are", "was", "were"})
_PREDICATE = re.compile(r"^(?:from|in|at|on|with|about|like|for|to|up|into|made|called|named|[a-z]+ing|[a-z]+ed)$", re.I)
_CONTRACTED = re.compile(r"^(what|where|who|when|how)'s\b", re.IGNORECASE)
_ADVERBS = frozenset("usually normally often ever really actually finally first still just also always never mostly".split())
_PAST = {
    "go": "went", "get": "got", "take": "took", "see": "saw", "make": "made", "have": "had", "do": "did",
    "come": "came", "give": "gave", "find": "found", "feel": "felt", "leave": "left", "meet": "met",
    "buy": "bought", "sell": "sold", "tell": "told", "think": "thought", "know": "knew", "run": "ran",
    "begin": "began", "write": "wrote", "say": "said", "keep": "kept", "lose": "lost", "win": "won",
    "spend": "spent", "send": "sent", "build": "built", "pay": "paid", "bring": "brought",
    "teach": "taught", "hear": "heard", "hold": "held", "sit": "sat", "drive": "drove", "ride": "rode",
    "fly": "flew", "grow": "grew", "draw": "drew", "eat": "ate", "drink": "drank", "swim": "swam",
    "sing": "sang", "break": "broke", "choose": "chose", "speak": "spoke", "wear": "wore", "read": "read",
    "put": "put", "cut": "cut", "let": "let", "set": "set", "hit": "hit", "catch": "caught", "learn": "learned",
}
_OBJECTS = {"you": "them", "your": "their", "yours": "theirs", "yourself": "themself", "yourselves": "themselves"}


def indirect_question(question: str, listener: str | None) -> str | None:
    """"Which club did you end up joining?" → "which club they ended up joining"; ``None`` for
    a question of another shape. ``listener`` is who "me"/"my" in the question is (the persona
    who asked), or ``None`` when it is not known (then such a question is not turned)."""
    text = _CONTRACTED.sub(lambda m: f"{m[1]} is", question.strip().rstrip("?!. ").strip())
    match = _WH.match(text)
    if match is None:
        return None
    wh, aux, subject = match["wh"].lower(), match["aux"].lower(), match["subject"]
    rest = match["rest"].split()
    if subject.lower() != "you" and aux in _BE and rest and not _PREDICATE.match(rest[0]):
        subject, rest = " ".join([subject, *rest]), []  # "what is your favourite colour"
    if any(w.lower() in ("me", "my", "i", "mine", "we", "us", "our") for w in rest) and listener is None:
        return None
    rest = [_turn_word(w, listener) for w in rest]
    if subject.lower() == "you":
        who = "they"
    else:
        who = "their " + subject.split(None, 1)[1]
    if aux in ("do", "does", "did"):
        index = next((i for i, w in enumerate(rest) if w.lower() not in _ADVERBS), None)
        if index is None:  # "what do you do" without a verb: the auxiliary is the verb
            return None
        verb = rest[index]
        if aux == "did":
            rest[index] = _past(verb)
        elif who != "they":
            rest[index] = third_singular(verb)
        clause = [who, *rest]
    else:
        if who == "they" and aux in ("is", "was"):
            return None
        aux = {"are": "are", "were": "were"}.get(aux, aux) if who == "they" else aux
        clause = [who, aux, *rest]
    return " ".join([wh, *clause])


_WH_ABOUT = re.compile(
    r"^(?P<wh>(?:what|which|where|who|when|why|how)(?:\s+(?!(?:do|does|did|are|is|was|were|have|has|had|will|would|can|could)\b)[a-z'-]+){0,2}?)"
    r"\s+(?P<aux>do|does|did|are|were|is|was|have|has|had|will|would|can|could)\s+"
    r"(?P<subject>it|they|[a-z]{3,}s)\b\s*(?P<rest>[^?]*?)\s*$",
    re.IGNORECASE,
)
# "How did it feel to…", "What was it like…": "it" is what follows, and needs no name
_DUMMY_REST = re.compile(r"^(?:\w+\s+)?(?:to|like|when|that|[a-z]+ing)\b", re.IGNORECASE)


def indirect_question_about(question: str, things: Sequence[Thing], listener: str | None) -> str | None:
    """A question asked about a thing, turned indirect with the thing named: "How was it?"
    after "…I've always wanted to visit Lisbon." → "how Lisbon was"; "What do they eat?" →
    "what the tortoises eat"; "How have rehearsals been going?" → "how rehearsals have been
    going". ``None`` for a question of another shape, or one whose "it"/"they" no thing of
    ``things`` can name. A dummy "it" stays ("how it felt to sign the deal")."""
    asked = _QUESTION.findall(question)
    if not asked:
        return None
    text = _CONTRACTED.sub(lambda m: f"{m[1]} is", asked[-1].strip().rstrip("?!. ").strip())
    match = _WH_ABOUT.match(text)
    if match is None:
        return None
    wh, aux, subject = match["wh"].lower(), match["aux"].lower(), match["subject"].lower()
    rest = match["rest"].split()
    if any(w.lower() in ("me", "my", "i", "mine", "we", "us", "our") for w in rest) and listener is None:
        return None
    if subject not in ("it", "they"):
        if aux not in ("are", "were", "have", "had") or subject in STOPWORDS or subject.endswith("ss"):
            return None  # a bare plural is a subject only before a verb of its own: "How have rehearsals been…"
        who, plural = subject, True
    elif subject == "it" and _DUMMY_REST.match(" ".join(rest)):
        who, plural = "it", False
    else:
        plural = subject == "they"
        thing = next((t for t in things if t.plural == plural), None)
        if thing is None:
            return None
        who = thing.words
    rest = [_turn_word(w, listener, after) for w, after in zip(rest, ["", *rest])]
    if aux in ("do", "does", "did"):
        index = next((i for i, w in enumerate(rest) if w.lower() not in _ADVERBS), None)
        if index is None:
            return None
        verb = rest[index]
        rest[index] = _past(verb) if aux == "did" else verb if plural else third_singular(verb)
        clause = [who, *rest]
    else:
        clause = [who, aux, *rest]
    return " ".join([wh, *clause])


_CLAUSE_OPENERS = frozenset("when if that as after before since while because once until".split())


def _turn_word(word: str, listener: str | None, after: str = "") -> str:
    lower = word.lower()
    if lower == "you" and after.lower() in _CLAUSE_OPENERS:
        return "they"  # "when you won": the subject of a clause of its own
    if lower in _OBJECTS:
        return _OBJECTS[lower]
    if listener is not None and lower in ("me", "i"):
        return listener
    if listener is not None and lower in ("my", "mine"):
        return f"{listener}'s"
    return word


def _past(verb: str) -> str:
    lower = verb.lower()
    if lower in _PAST:
        return _PAST[lower]
    if lower in IRREGULAR_PAST or lower.endswith("ed"):
        return verb
    if lower.endswith("e"):
        return verb + "d"
    if len(lower) > 2 and lower.endswith("y") and lower[-2] not in "aeiou":
        return verb[:-1] + "ied"
    return verb + "ed"


_NOT_AN_ANSWER = re.compile(
    r"^(?:yes|yeah|yep|yup|no|nope|nah|not|thanks|thank|sure|maybe|perhaps|hmm+|haha+|lol|wow|oh|"
    r"well|ok|okay|absolutely|definitely|totally|exactly|right|true|same|good|great|awesome|nice|"
    r"cool|sounds|looks|seems|i|i'm|i've|i'll|i'd|my|me|we|we're|our|it|it's|that|that's|this|"
    r"they|they're|you|you're|your|there|here|so|too|aw+|ah+|ha)\b",
    re.IGNORECASE,
)
_A_VERB = re.compile(
    r"\b(?:is|are|was|were|am|be|been|has|have|had|do|does|did|can|could|will|would|should|"
    r"'s|'re|'ve|'m|'ll|'d)\b|n't\b",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(?:I|me|my|mine|we|us|our)\b")
_WORDS = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")
_WH_START = re.compile(r"^\s*(?:what|which|where|who|whom|whose|when|how\s+(?:many|much|long|often|far|old))\b", re.I)


def answer_row(question_line: str, reply: str, speaker: str, listener: str | None) -> str | None:
    """The row for a short reply to a wh-question (see the module rules), or ``None``."""
    asked = _QUESTION.findall(question_line)
    if not asked or not _WH_START.match(asked[-1]):
        return None
    fragment = reply.strip().rstrip("!.…").strip()
    # "Twice a week; it keeps us strong": the answer is the fragment before the clause
    fragment = re.split(r"\s*;\s+|\s+[-–—]+\s+", fragment, maxsplit=1)[0].rstrip("!.…,").strip()
    words = _WORDS.findall(fragment)
    if not words or len(words) > 8 or "?" in fragment:
        return None
    if _NOT_AN_ANSWER.match(fragment) or _A_VERB.search(fragment) or _FIRST_PERSON.search(fragment):
        return None
    if not any(w.lower() not in STOPWORDS and w.lower() not in VAGUE for w in words):
        return None
    indirect = indirect_question(asked[-1].strip(), listener)
    if indirect is None:
        return None
    return f"Asked {indirect}, {speaker} answered: {fragment}."
