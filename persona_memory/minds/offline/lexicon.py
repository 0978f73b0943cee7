"""The word lists the offline mind reads English by.

Rules:
- Every list here is closed and small enough to read; a rule elsewhere that needs a word class
  imports it from here, so one list decides one question everywhere.
- Words are lower case; contractions use the plain apostrophe (text is normalised before lookup).
"""

from __future__ import annotations

ADVERBS = frozenset(
    """just really also still always never usually often sometimes actually finally totally
    absolutely definitely recently even only already ever truly honestly seriously currently
    mostly generally rarely seldom certainly probably literally both now then again kinda
    sorta almost nearly officially barely hardly simply basically pretty so too very
    constantly regularly normally typically occasionally secretly once originally initially
    eventually luckily sadly unfortunately fortunately recently lately first""".split()
)

MODALS = frozenset(
    """can could will would should might must may shall ought can't couldn't won't wouldn't
    shouldn't mightn't mustn't cannot gotta""".split()
)

IRREGULAR_PAST = frozenset(
    """went got took saw made had did was were came gave found felt left met bought sold told
    thought knew ran began wrote said kept lost won spent sent built paid brought taught
    caught fought heard held stood understood sat slept drove rode flew grew threw drew ate
    drank swam sang rang broke chose spoke woke wore tore forgot became fell lent meant led
    fed bent dug hung shot shook stole stuck struck swore swept swung bit hid lit slid
    spun sprang sank stank strove wept wound""".split()
)

AMBIGUOUS_PAST = frozenset("put cut hit set let quit read hurt cost shut spread bet bid shed".split())

PRESENT_IN_ED = frozenset("need feed seed speed bleed breed proceed succeed exceed shed bed red embed".split())
"""Words that end like a past form in -ed and are not one ("I need", "we feed them")."""

PAST_PARTICIPLES = frozenset(
    """been gone seen done got gotten had made taken given known written eaten driven
    ridden flown grown thrown drawn swum sung broken chosen spoken woken worn torn forgotten
    become fallen found left met bought sold told thought kept lost won spent sent built paid
    brought taught heard held felt""".split()
)

VERB_FIXES = {
    "am": "is",
    "'m": "is",
    "have": "has",
    "do": "does",
    "go": "goes",
    "don't": "doesn't",
    "haven't": "hasn't",
    "ain't": "isn't",
    "am not": "is not",
}

PLURAL_FIXES = {"am": "are", "was": "were", "wasn't": "weren't"}

STOPWORDS = frozenset(
    """a an the and or but if then so of to in on at by for with from about into onto over
    under up down out off as than that this these those there here it its it's is are was
    were be been being am do does did doing have has had having will would can could should
    shall may might must not no nor very too just really also still i me my mine myself we us
    our ours ourselves you your yours yourself he him his she her hers they them their theirs
    themself themselves what which who whom whose when where why how all any some each every
    more most much many such own same other again once only s t don doesn didn won wouldn
    isn aren wasn weren haven hasn hadn can't don't i'm i've i'll i'd we're we've we'll
    they're they've it'll that's there's let's gonna wanna kinda sorta""".split()
)

RELATIONS = frozenset(
    """sister sisters brother brothers mom mum mother dad father parents parent husband wife
    partner boyfriend girlfriend fiance fiancee fiancé fiancée son sons daughter daughters
    kid kids child children twins baby babies family fam grandma grandpa grandmother grandfather
    grandparents aunt uncle cousin cousins niece nephew friend friends bestie roommate
    flatmate neighbour neighbor boss manager colleague colleagues coworker coworkers
    co-worker co-workers team mentor mentee students student teacher dog dogs cat cats pet pets
    puppy kitten spouse ex in-laws stepmom stepdad stepson stepdaughter""".split()
)

PEOPLE_AND_PETS = RELATIONS | frozenset(
    """player players coach singer actor actress author writer artist man men woman women guy
    guys girl girls boy boys lady people folks kids members fans teammate teammates resident
    residents volunteer volunteers visitors guests pup puppy dog cat horse bird turtle rabbit
    hamster pet critter animal""".split()
)
"""Words for a person or a pet: what "he", "she" or a "them" of people can stand for."""

COLLECTIVES = frozenset("family team crew band squad choir".split())
"""Words for one group of people that chat speaks of as "they": "My crew won. They trained
all winter." """

ING_NOUNS = frozenset(
    """thing something nothing anything everything morning evening wedding building ceiling
    king ring spring string sing swing wing bring sibling earring darling pudding duckling
    feeling meeting painting drawing clothing housing funding offspring being having seeing
    hearing knowing""".split()
)

NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "couple": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}

ING_ADJECTIVES = frozenset(
    """amazing inspiring refreshing exciting interesting relaxing rewarding fulfilling exhausting
    frustrating challenging heartwarming satisfying encouraging motivating uplifting calming
    touching moving surprising boring stunning charming annoying overwhelming humbling thrilling
    breathtaking comforting terrifying depressing promising fascinating intriguing entertaining
    amusing soothing energizing invigorating draining tiring disappointing embarrassing
    confusing worrying shocking striking astonishing appealing""".split()
)
"""Words in -ing that describe ("so refreshing", "really inspiring stuff"): after an adverb
they are no verb whose "I'm" the chat left out."""

VAGUE = frozenset(
    """so much stuff thing things great good awesome nice amazing fun cool lot lots really
    nothing something everything anything way ways time times day bit kind sort feel feels
    felt feeling make makes made get gets got keep keeps going done doing happy glad excited
    thankful grateful lucky sure totally huge special best better important super well
    blast wonderful fantastic incredible beautiful lovely sweet crazy wild tough hard easy
    think thinks thought know knows knew want wants wanted need needs like likes love loves
    loved say says said tell tells told mean means meant yeah yes oh wow hey hi thanks thank
    definitely absolutely honestly actually basically literally seriously probably maybe
    always never sometimes often usually still even ever quite rather pretty very truly
    one ones people someone everyone anyone others other another else whole part lately
    recently right now today moment moments experience experiences journey vibe vibes
    cherish cherished enjoy enjoyed enjoying appreciate appreciated appreciating
    support supported supportive motivated motivating motivation inspired inspiring
    inspiration positive meaningful rewarding powerful""".split()
)

ONE_OR_MANY = frozenset({"series", "species", "news", "means", "lens"})
"""Nouns in -s that are one thing as well as many: "this series" is one."""


def reads_as_plural(word: str) -> bool:
    """Whether a word in -s reads as a plural noun or a verb in -s ("kayaks", "makes"), not as
    a noun that only ends in -s ("glass", "bus", "crisis", "series")."""
    word = word.lower()
    return word.endswith("s") and not word.endswith(("ss", "us", "is")) and word not in ONE_OR_MANY


SUBORDINATORS = frozenset(
    "after before when whenever while since once during because although though if unless until".split()
)
"""Words that open a clause leaning on another ("After months off, …", "found that when…")."""
