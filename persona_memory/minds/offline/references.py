"""Words that point elsewhere — "it", "this", "those", "there" — and whether a row says what they mean.

A memory is read weeks later, alone. "u:42 loves reading those letters." cannot be used: the
letters are in a line nobody will see. This module decides, for one third-person row, whether
its pointing words point at something inside the row, and rewrites the ones it safely can.

Rules:
- A *demonstrative determiner* ("this blue scarf", "those letters") names its thing: it becomes
  "the" ("the blue scarf"), which a reader can take as it stands. "that" is left as it is —
  it joins clauses as often as it points ("the dogs that nobody adopts") — and "that" before
  a noun counts as naming its thing. Before a time word ("this
  week", "that summer") it is left alone — the dates module reads those. "those" before
  "close to", "near", "in need" stands for people: "the people close to me".
- "that" before a noun, straight after a verb or a preposition, points at a thing only the
  chat named ("u:42 loves that painting") unless the row named that noun before it, or a
  preposition and a name, a number or an id after the noun say which ("that trip to
  Portugal"), or a clause of its own ("that stuff they baked"): such a row is *dangling* too.
  The "that" of a noun the words after it name becomes "the" ("got the idea from the trip to
  Portugal"), unless it opens a clause ("found that kids they teach…").
- A pointing word used alone — ``it``/``its``, ``this``/``that``/``these``/``those`` not followed
  by a noun, ``there`` not followed by "is/are/was/were", ``he``/``she``/``him``/``her``/``his``
  — needs a *referent* earlier in the row (``he`` and its forms a person or a pet: a name or
  a word for one, "their sister", "a dog"; ``there`` a place: a name, or a thing after "in",
  "at", "to"…): a word after an article, number or possessive ("a bike", "their dog", "u:42's
  studio", "two cats") or after a quantity's "of" ("lots of cookbooks"), a capitalised word inside the row ("Lisbon"; never "I'm"), a number or a
  quoted title. Without one the row is *dangling*. So is a row where "that one" or "some"
  stands for a thing only the chat named ("might check that one out", "can look some up").
- Not pointing at all: dummy "it" ("it takes courage to…", "find it hard to…", "made it to
  the final", "how hard it can be when…", "it seems like…", "giving it my all", "give it a
  try", "it's so true", "it's all worth it"), "that" joining a clause ("says that the bus…", "so tired that…"), and
  "they/them/their", which the third-person turn uses for the speaker themself.
- What a line showed (an attachment, "a photo of a clay bowl") can be the referent of the
  line's first pointing word: "I made this!" with that photo becomes "u:42 made a clay bowl";
  a "this" standing alone as a thing (``this_alone``: before an end mark or a preposition) is
  the photo's even when the row names something else ("My kids made this at the fair!").
  Only a pointer that stands alone takes the photo — never a determiner ("that same magic")
  — and never a photo of people ("a man shaking hands…": "excited about this" is about an
  event) or a caption written as a clause ("a girl is writing…"), which names no thing.
- A work the speaker says they made by a verb that names it ("I painted this after my trip",
  "Yeah, I drew it"), with nothing in the row for "this" or "it" to mean, is that work
  (``name_the_work``): "I made a painting after my trip", "I made a drawing". Only when
  nothing but an end, a joiner or a time or place phrase follows the pointer: "I painted
  it blue" paints something the chat named, and stays as it is.
- What the listener just asked about can be the referent of an answer's opening pronoun: after
  "What's your new screenplay about?", the next line's "It's about grief and second chances"
  is "My new screenplay is about grief and second chances". The thing is the words after
  "your" in a question of the line just before (its adjectives, and one noun — two when they
  end the question: "your dance studio?"); the pronoun must agree in number ("it/she/he/her/
  his/its" with one thing, "they/their" with a plural), and what follows the pronoun must name
  something — a possessive before its noun ("Her name is…"), or a verb before an article, a
  preposition, a name or a number ("It's about…", "She's a rescue", "It was made by…") —
  never an adjective ("It's awesome to…" says nothing about the thing) unless more about the
  thing follows ("It's tiny but it has a balcony" → "My new flat is tiny but it has a
  balcony"). Nothing else is guessed. Only the
  question itself is read ("Your garden looks great! How old is your dog?" asks about "dog").
- A question that asks by a pronoun ("What do they eat?", ``asks_by_pronoun``) asks about what
  the speaker's row just before it named; the answer's opening pronoun may mean that row's
  thing only when they agree (``may_mean``): "they" needs a plural in the row ("two
  paintings", "their boots"), "it" a thing after an article ("a kayak"); "he" and "she" are
  never carried ("u:42's sister moved…" is no antecedent for "They'll hang…"). A line that
  opens on a reaction to the speaker's thing by a pointer ("That looks delicious!", "Oh, it
  sounds lovely") points at it the same way: "Here's the quilt I finished!" — "That looks
  so cosy!" — "Thanks! It's wool and linen from my aunt's attic." goes on about the quilt.
"""

from __future__ import annotations

import re

from .dates import MONTHS, WEEKDAYS
from .lexicon import PEOPLE_AND_PETS, STOPWORDS, SUBORDINATORS, reads_as_plural

_TIME_WORDS = frozenset(
    """week weekend month year morning afternoon evening night time summer winter spring fall
    autumn season semester term day moment point weekday""".split()
)
_FUNCTION_WORDS = frozenset(
    """because since while although though until unless whenever after before during through
    without around like cause anymore anyway lol haha yet either""".split()
)
_WORD = re.compile(r"u:\d+(?:'s)?|\"[^\"]+\"|[A-Za-z0-9]+(?:'[A-Za-z]+)?|[^\sA-Za-z0-9]")
_DETERMINER_BEFORE = frozenset(
    """a an the my your his her its our their some two three four five six seven eight nine ten
    several many few every each another this that these those first second third new old""".split()
)
_QUANTITIES = frozenset(
    """lot lots plenty bunch couple pair loads tons heaps piles stacks dozens hundreds thousands
    kinds sorts types""".split()
)
_DEMONSTRATIVES = frozenset({"this", "that", "these", "those"})
_POINTING = frozenset({"it", "its", "it's", "this", "that", "these", "those", "there", "he", "she", "him", "her", "his"})
_EXISTENTIAL = frozenset({"is", "are", "was", "were", "'s", "has", "have", "had", "will", "might"})
_CLAUSE_AFTER_THAT = frozenset(
    """i you he she we they it u there the a an my his her their our some every all no one
    people everyone someone nothing everything this these those nobody everybody somebody
    anybody anyone""".split()
)
_DUMMY_IT = re.compile(
    r"\b(?:it(?:'s| is| was| has been| feels| felt| takes| took| seems| seemed|"
    r" (?:can|could|may|might|must) (?:be|get|feel|take))\s+(?:\w+\s+){0,2}"
    r"(?:to|that|when|how|if)\b|(?:make|makes|made|making|find|finds|found|take|takes|took)\s+it\s+"
    r"(?:\w+\s+)?(?:to|through|out|back|home|easy|hard|big)\b|\bit all\b|"
    r"\b(?:make|makes|made|making)\s+it\s+(?:happen|work|count)\b|"
    # "how hard it can be when…": what follows is what "it" stands for
    r"\bhow\s+\w+\s+it\s+(?:(?:can|could|must|might|may)\s+be|is|was|gets|got)\b|"
    # "giving it my all", "give it a try": an idiom
    r"\b(?:give|gives|giving|gave)\s+it\s+(?:(?:my|our|their|your|his|her)\s+(?:all|best)|a\s+(?:try|go|shot|whirl))\b|"
    # "it seems like…": what follows, not a thing
    r"\bit\s+(?:seems|seemed|looks|looked|feels|felt)\s+(?:like|as if|as though)\b|"
    # agreeing: "it's so true", "it's right"
    r"\bit(?:'s| is| was)\s+(?:so\s+|very\s+|really\s+)?(?:true|right)\b|"
    # "it's worth it, all that effort": the whole effort, not a thing
    r"\bit(?:'s| is| was| will be)\s+(?:all\s+|so\s+|totally\s+|definitely\s+|really\s+)?worth\s+it\b)",
    re.IGNORECASE,
)
_SHOWN = re.compile(
    r"^(?:I shared\s+)?(?:(?:a|an|the|this|my)\s+)?(?:\w+\s+)?(?:photo|photograph|photography|picture|pic|image|snap|shot|"
    r"screenshot|selfie)s?\s+of\s+(?P<what>.+?)\.?$",
    re.IGNORECASE,
)
_IT = re.compile(r"\bit(?:'s)?\b", re.IGNORECASE)
# A pointer that stands alone as a thing: before an end, a preposition or a joiner — not
# "that same magic", where it is a determiner, nor "it is…", where it is a subject
_PRONOUN_OBJECT = re.compile(
    r"\b(?:this|that|these|those|it)\b(?!')"
    r"(?=\s*(?:[.!,;:?]|$)|\s+(?:at|in|on|for|from|with|to|last|yesterday|today|myself|ourselves|and|but|so|"
    r"because|when|after|before|too|again|out|up|off|over|back|together|while|during|since|as)\b)",
    re.IGNORECASE,
)
# What a photo of someone shows is no thing a pointer means: "excited about this" with a
# photo of a man shaking hands is about an event, not about the man
_SOMEONE = re.compile(
    r"^(?:a|an|the|two|three|four|some|several)?\s*(?:[\w'-]+\s+){0,2}?"
    r"(?:man|men|woman|women|person|people|boy|boys|girl|girls|child|children|kid|kids|family|group|crowd|"
    r"couple|guy|guys|lady|ladies|friends|team|baby|toddler)\b",
    re.IGNORECASE,
)


_ASKED_ABOUT = re.compile(
    r"\byour\s+(?P<thing>(?:(?:new|first|second|third|latest|last|next|favou?rite|big|little|old|"
    r"own|recent|current)\s+)*[a-z][a-z-]+)(?P<second>\s+[a-z][a-z-]+(?=\s*[?!.]))?",
    re.IGNORECASE,
)
_OPENING_PRONOUN = re.compile(
    r"^(?P<pronoun>it|she|he|they|its|her|his|their)(?P<verb>'s been|'s got|'s|'re|'ve| is| was| are| were"
    r"| has| had| looks| looked| seems| feels| makes| made| took| got| gets)?\b",
    re.IGNORECASE,
)
_QUESTION = re.compile(r"[^.!?]*\?")
_POSSESSIVES = frozenset({"its", "her", "his", "their"})


_ASKS_BY_PRONOUN = re.compile(r"\b(?:it|they|them)\b[^.!?]*\?", re.IGNORECASE)
_THANKS_FIRST = re.compile(r"^(?:(?:thanks|thank you|thx|ty|aw+|haha|yes|yeah|yep|oh)\b[^\w]*)+", re.IGNORECASE)
_ANSWER_PRONOUN = re.compile(r"(it|it's|its|they|they're|they'll|they've|their|them)\b", re.IGNORECASE)
_PLURAL_THING = re.compile(
    r"\b(?:two|three|four|five|six|seven|eight|nine|ten|\d+|some|several|many|few|couple of|lots of|"
    r"their|the|these|those|u:\d+'s)\s+(?:[a-z-]+\s+){0,2}[a-z]+[^su\W]s\b"
)
_SINGULAR_THING = re.compile(r"\b(?:a|an|the|their|u:\d+'s)\s+(?:[a-z-]+\s+){0,2}[a-z]+\b")


_THIS_ALONE = re.compile(
    r"\b(?:this|these)\b(?=\s*(?:[.!,;]|$)|\s+(?:at|in|on|for|from|with|to|as|last|yesterday|today|myself)\b)",
    re.IGNORECASE,
)


def this_alone(sentence: str) -> bool:
    """Whether "this" or "these" stands alone as a thing in ``sentence`` (see the rules)."""
    return bool(_THIS_ALONE.search(sentence))


def asks_by_pronoun(question: str) -> bool:
    """Whether ``question`` asks about something by "it", "they" or "them", or opens on a
    reaction to it by a pointer ("That looks so cosy!") (see the rules)."""
    return bool(_ASKS_BY_PRONOUN.search(question) or _REACTS_BY_POINTER.match(question))


# "That looks so cosy!", "Wow, it sounds lovely": an opening reaction to the thing by a pointer
_REACTS_BY_POINTER = re.compile(
    r"^(?:(?:wow|oh|ooh|aw+|omg|yum|nice|whoa|ah)\W+)?(?:that|it|this|they|those|these)\s+"
    r"(?:(?:really|so|all|both)\s+)?(?:looks?|looked|sounds?|sounded|seems?|seemed)\b",
    re.IGNORECASE,
)


def may_mean(answer: str, row_text: str) -> bool:
    """Whether the opening pronoun of ``answer`` can mean something ``row_text`` names (see the
    rules): "they" a plural, "it" a thing after an article."""
    opening = _ANSWER_PRONOUN.match(_THANKS_FIRST.sub("", answer.lstrip(" \"'")))
    if opening is None:
        return False
    plural = opening[1].lower().startswith(("they", "their", "them"))
    return bool((_PLURAL_THING if plural else _SINGULAR_THING).search(row_text))


def asked_thing(question: str) -> str | None:
    """What a question asked the speaker about: "How's your new puppy settling in?" → "new
    puppy"; ``None`` when the line asks no question about something of theirs."""
    asked = [q for q in _QUESTION.findall(question) if "your" in q.lower()]
    match = _ASKED_ABOUT.search(asked[-1]) if asked else None
    if match is None:
        return None
    thing, second = match["thing"].lower(), (match["second"] or "").strip().lower()
    if second and second not in STOPWORDS and not second.endswith(("ed", "ing")):
        thing = f"{thing} {second}"
    head = thing.split()[-1]
    if head in STOPWORDS or head in _NOT_THINGS or head.endswith(("est", "ly", "ed", "ing")):
        return None
    return thing


_NOT_THINGS = frozenset(
    """one ones thing things stuff way day days time times life week weekend plans plan
    opinion thoughts mind favourite favorite early end next own new old big little now
    part take view experience experiences advice secret fault turn""".split()
)
_ADJECTIVE_THEN_IT = re.compile(
    # "It's tiny but it has a balcony…": a word about the thing, then more about it
    r"^\s+(?:\w+\s+)?\w+,?\s+(?:but|and)\s+(?:it|they)(?:'s|'re| is| are| has| have| was| were)\s+\w",
    re.IGNORECASE,
)
_WHAT_FOLLOWS = re.compile(
    r"^\s+(?:a|an|the|about|from|called|named|by|in|at|on|for|with|my|one of|\w+ed by|"
    r"[A-Z]\w*|\d)\b",
)


def name_the_asked(sentence: str, thing: str) -> str:
    """The answer with its opening pronoun replaced by the thing asked about, when they agree
    in number (see the module rules); otherwise the sentence unchanged."""
    match = _OPENING_PRONOUN.match(sentence)
    if match is None:
        return sentence
    pronoun = match["pronoun"].lower()
    plural = thing.endswith("s") and not thing.endswith("ss")
    if plural != (pronoun in ("they", "their")):
        return sentence
    verb = (match["verb"] or "").lower()
    rest = sentence[match.end() :]
    if verb and not _WHAT_FOLLOWS.match(rest) and not _ADJECTIVE_THEN_IT.match(rest):
        return sentence  # "It's awesome to…", "They were scared": not a statement about the thing
    if pronoun in _POSSESSIVES:
        if verb:
            return sentence  # "his is…": not a possessive before a noun
        return f"My {thing}'{'' if plural else 's'}" + sentence[match.end() :]
    spelled = {"'s been": " has been", "'s got": " has got", "'s": " is", "'re": " are", "'ve": " have"}
    if not verb:
        return sentence  # "She said…": too many readings to guess
    return f"My {thing}{spelled.get(verb, verb if verb.startswith(' ') else ' ' + verb)}" + sentence[match.end() :]


def settle_demonstratives(text: str) -> str:
    """"that blue scarf" → "the blue scarf" (see the module rules); other words unchanged."""

    def swap(match: re.Match[str]) -> str:
        word, following = match["word"], match["next"]
        lower = following.lower()
        if lower in STOPWORDS or lower in _FUNCTION_WORDS or lower in _CLAUSE_AFTER_THAT:
            return match[0]
        if lower in _TIME_WORDS or lower.rstrip("s") in _TIME_WORDS:
            return match[0]
        if word.lower() in ("this", "that") and reads_as_plural(lower):
            return match[0]  # "this makes…": a verb, so "this" stands alone
        if _LIKE_BEFORE.search(match.string[: match.start()]):
            return match[0]  # "evenings like these make…": "these" stands for the evenings
        if word.lower() == "those" and _PEOPLE_AFTER_THOSE.match(match.string, match.end()):
            return f"{'The' if word[0].isupper() else 'the'} people {following}"  # "those close to me"
        article = "The" if word[0].isupper() else "the"
        return f"{article} {following}"

    def named(match: re.Match[str]) -> str:
        before = match.string[: match.start()].split()
        if before and before[-1].lower().strip(",") in _THAT_OPENS_A_CLAUSE:
            return match[0]  # "found that kids they teach…": "that" opens a clause
        return "The " if match[0][0] == "T" else "the "

    return _THAT_NAMED.sub(named, _DEMONSTRATIVE_NOUN.sub(swap, text))


# "that trip to Portugal", "that stuff they baked": a "that" whose noun the words after it
# name is "the" — the row says which without the chat
_THAT_NAMED = re.compile(
    r"(?<!like )\b[Tt]hat (?=(?!(?:way|kind|sort|much|many|long|far)\b)[a-z][a-z'-]* "
    rf"(?:(?:to|in|of|from|at|on|with|by) (?!(?:{'|'.join((*MONTHS, *WEEKDAYS))})\b)[A-Z]|(?:they|we|he|she)\b))"
)
# words after which "that" opens a clause ("thinks that…", "so tired that…")
_THAT_OPENS_A_CLAUSE = frozenset(
    """think thinks thought found find finds say says said know knows knew believe believes
    believed hope hopes hoped feel feels felt realise realised realize realized learn learned
    learnt notice notices noticed see sees saw show shows showed mean means meant so such sure
    glad proud happy sad true now and but""".split()
)
_LIKE_BEFORE = re.compile(r"\blike\s+$", re.IGNORECASE)
# "those close to me", "those dear to us": "those" stands for people, the word after is no noun
_PEOPLE_AFTER_THOSE = re.compile(r"\s+(?:to|around|near|in need|of us)\b", re.IGNORECASE)
_DEMONSTRATIVE_NOUN = re.compile(r"\b(?P<word>[Tt]his|[Tt]hese|[Tt]hose)\s+(?P<next>[a-z][a-z'-]*)\b")


def shown_thing(attachment: str) -> str | None:
    """What a photo shows, as a noun phrase ("I shared a photo of a clay bowl." → "a clay
    bowl"), or ``None`` when the attachment does not say — or says it in a clause ("a girl
    is writing at a table"), which no row can take as a thing."""
    match = _SHOWN.match(attachment.strip())
    if match is None or _FINITE.search(match["what"]):
        return None
    return match["what"].strip()


_FINITE = re.compile(r"\b(?:is|are|was|were)\b", re.IGNORECASE)


def shows_someone(thing: str) -> bool:
    """Whether what a photo shows is a person or people ("a man shaking hands…", "a group of
    women dancing"): a pointer in the line never means them."""
    return _SOMEONE.match(thing.strip()) is not None


def name_the_work(sentence: str) -> str:
    """"I painted this after…" → "I made a painting after…" (see the module rules); any
    other sentence unchanged."""
    return _MADE_THE_WORK.sub(lambda m: f"{m['who']} made {_WORKS[m['verb'].lower()]}", sentence, count=1)


_WORKS = {"painted": "a painting", "drew": "a drawing", "sketched": "a sketch", "illustrated": "an illustration"}
_MADE_THE_WORK = re.compile(
    r"\b(?P<who>I|we)\s+(?:(?:just|finally|actually|also|recently)\s+)?(?P<verb>painted|drew|sketched|illustrated)\s+(?:this|that|it)\b"
    r"(?=\s*(?:[.!,;:]|$|\s(?:after|before|when|while|for|in|on|at|during|last|yesterday|myself|ourselves|and|but|so|because)\b))",
    re.IGNORECASE,
)




def point_at(sentence: str, thing: str) -> str:
    """The sentence with its first pointing word ("this", "it") replaced by ``thing``."""
    return _PRONOUN_OBJECT.sub(thing, sentence, count=1)


def opens_on_dummy_it(text: str) -> bool:
    """Whether ``text`` opens on a dummy "it" ("It's hard to…", "It takes courage to…"),
    which points at nothing and needs nothing to point at."""
    found = _DUMMY_IT.match(text.lstrip())
    return found is not None


def dangling(text: str) -> bool:
    """True when a pointing word in ``text`` has no referent inside it (see the module rules)."""
    if _ONE_OR_SOME_ALONE.search(text):
        return True  # "might check that one out", "can look some up": which stayed in the chat
    words = _WORD.findall(text)
    lowered = [w.lower() for w in words]
    has_dummy: bool | None = None  # a dummy "it" in the text: looked for once an "it" asks
    for i, word in enumerate(lowered):
        if word not in _POINTING:
            continue
        following = lowered[i + 1] if i + 1 < len(lowered) else ""
        if word == "there" and following in _EXISTENTIAL:
            continue
        if word in _DEMONSTRATIVES and following[:1].isalpha():
            if following in _CLAUSE_AFTER_THAT or following.startswith("u:") or word == "that" and following in SUBORDINATORS:
                continue  # "that" opening a clause
            if following not in STOPWORDS and following not in _FUNCTION_WORDS:
                if word == "that" and i > 0 and _points_past_the_row(words, lowered, i):
                    return True  # "loves that painting": a painting the row never named
                if not (word in ("this", "that") and reads_as_plural(following)):
                    continue  # a determiner: "these boots", "that walnut bowl"
        if word in ("it", "it's"):
            if has_dummy is None:
                has_dummy = _DUMMY_IT.search(text) is not None
            if has_dummy and _dummy_at(text, words, i):
                continue
        if word in _PERSON_POINTERS:
            if not _person_before(words, i):
                return True  # "u:42 got to see him play": who he is stayed in the chat
            continue
        if word == "there":
            after = lowered[i + 2] if i + 2 < len(lowered) else ""
            if (following in _PLACE_WORDS or following in ("on", "with")) and after not in _WHEN_WORDS and not after[:1].isdigit():
                continue  # "out there in the hills": the place follows (not "there in December")
            if not _place_before(words, i):
                return True  # "u:42 stayed there a week": where stayed in the chat
            continue
        if not _referent_before(words, i):
            return True
    return False


# "that one" or "some" standing for a thing only the chat named
_ONE_OR_SOME_ALONE = re.compile(
    r"\b(?:that|this) one\b(?=\s*(?:[,.;:!?]|$)|\s+(?:out|up|down|back|too|again|yet|first|next|soon|later|some|"
    r"for|in|on|at|is|was|has|had|will|would|because|since|and|but)\b)|"
    r"\b(?:look|looks|looked|check|checks|checked|pick|picks|picked|try|tries|tried)\s+(?:some|a few|a couple)\s+(?:up|out)\b",
    re.IGNORECASE,
)
_PERSON_POINTERS = frozenset({"he", "she", "him", "her", "his"})
_PLACE_WORDS = frozenset("in at to from into near around visit visited visiting".split())
_WHEN_WORDS = _TIME_WORDS | frozenset(name.lower() for name in (*MONTHS, *WEEKDAYS))


def _person_before(words: list[str], index: int) -> bool:
    """A person (or pet) the row names before ``index``: a name ("Cara") or a word for one
    ("their sister", "a dog") — "the opportunity" is no "him"."""
    for j in range(1, index):
        word = words[j]
        if word[:1].isupper() and not word.startswith("u:") and word.split("'")[0] != "I":
            return True
        if word.lower().split("'")[0] in PEOPLE_AND_PETS:
            return True
        if (words[j - 1].endswith("'s") or words[j - 1].lower() in ("their", "his", "her", "our")) and word[:1].isalpha():
            return True  # "u:42's one-year-old… his name", "their youngest… her first steps"
    return False


def _place_before(words: list[str], index: int) -> bool:
    """A place the row names before ``index``: a name ("Lisbon") or a thing after "in", "at",
    "to"… ("at the lake") — "a trip there" says no more where than "there"."""
    for j in range(1, index):
        word = words[j]
        if word[:1].isupper() and not word.startswith("u:") and word.split("'")[0] != "I":
            return True
        if words[j - 1].lower() in _PLACE_WORDS and word[:1].isalpha() and word.lower() not in STOPWORDS:
            return True
        if j >= 2 and words[j - 2].lower() in _PLACE_WORDS and words[j - 1].lower() in _DETERMINER_BEFORE:
            return True
    return False


_BEFORE_A_POINTED_THING = frozenset(
    """of about from at in on with for to into by love loves loved like likes liked enjoy enjoys
    enjoyed miss misses missed remember remembers remembered try tries tried see sees saw seen
    recreate recreated capture captured need needs needed want wants wanted keep keeps kept
    adore adores adored appreciate appreciates appreciated""".split()
)


def _points_past_the_row(words: list[str], lowered: list[str], index: int) -> bool:
    """Whether "that" before a noun, after a verb or a preposition, points at a thing the
    row never named ("u:42 loves that painting"), rather than joining a clause ("the dogs
    that…"), naming a thing of the row again ("a mural … that mural") or naming it by what
    follows ("that trip to Portugal", "that jacket of u:42's")."""
    if lowered[index - 1] not in _BEFORE_A_POINTED_THING:
        return False
    noun = lowered[index + 1]
    if noun in _TIME_WORDS or noun.rstrip("s") in _TIME_WORDS:
        return False  # "in that moment", "at that point"
    after = words[index + 2 : index + 4]
    if after and (after[0].startswith("u:") or after[0].lower() in _CLAUSE_SUBJECTS):
        return False  # "that stuff they baked": the clause after it says which
    if len(after) == 2 and after[0].lower() in _NAMING_PREPOSITIONS and (
        after[1][:1].isupper() or after[1][:1].isdigit() or after[1].startswith("u:")
    ):
        return False
    return noun not in lowered[:index]


_NAMING_PREPOSITIONS = frozenset({"to", "in", "of", "from", "at", "on", "with", "by"})
_CLAUSE_SUBJECTS = frozenset({"i", "they", "we", "he", "she", "you"})


def _dummy_at(text: str, words: list[str], index: int) -> bool:
    position = sum(1 for w in words[:index] if w.lower() in ("it", "it's"))
    hits = list(_IT.finditer(text))
    if position >= len(hits):
        return False
    start = hits[position].start()
    return any(m.start() <= start < m.end() for m in _DUMMY_IT.finditer(text))


def _referent_before(words: list[str], index: int) -> bool:
    for j in range(1, index):
        word, before = words[j], words[j - 1].lower()
        if word.startswith('"') or word[:1].isdigit():
            return True
        if word[:1].isupper() and not word.startswith("u:") and word.split("'")[0] != "I":
            return True
        if not word[:1].isalpha() or word.lower() in STOPWORDS:
            continue
        if before in _DETERMINER_BEFORE or before.endswith("'s") or before[:1].isdigit():
            return True
        if before == "of" and j >= 2 and words[j - 2].lower() in _QUANTITIES:
            return True  # "lots of cookbooks", "a couple of kayaks"
    return False
