"""What a first-person sentence is — plan, happening, taste, tie or detail — and how much it matters.

Rules (kinds, first that applies):
- ``open_loop``: a plan or a follow-up — "I'm going to…", "I'll…", "next week I…", "I'm
  interviewing on Thursday", "ask me how it went", "remind me to…".
- ``relationship``: about someone in the speaker's life, who is the subject — "my sister just
  had a baby", "my husband…", "my best friend…".
- ``event``: something that happened — a past-tense verb after the speaker ("I sold…", "I went…",
  "we went camping") or a past time ("last weekend I…", "yesterday").
- ``relationship`` again for ties stated by the speaker: "I have two kids", "I'm married".
- ``preference``: love, like, enjoy, prefer, hate, can't stand, favourite, "into", "a fan of".
- ``fact``: any other personal detail.

Rules (importance, the Generative Agents scale: 1 is mundane, 10 is poignant):
- life events — job, interview, moving, marriage, divorce, birth, death, illness, graduation,
  break-up, adopting a child or a pet — 8 (9 for death, divorce, birth and a diagnosis). The
  list is of events any life has, named by common nouns and verbs; it names no group,
  identity or hobby of anyone in particular;
- plans and open loops 6, follow-ups ("ask me how it went") 7; what someone does for a
  living ("I work at…", "I'm a nurse") 6;
- events 5; relationships 5; hobbies and routines 5; preferences 4 (a stated taste is never
  below 3, whatever it is a taste for: "I love cheese pizza" is worth keeping); other facts 4;
  a taste or a fact that names its thing — a capitalised name after the first word, a number
  or a quoted title ("I love "Harbour Lights"", "I love the Penwith coast") — 5, as a hobby:
  it is what a later chat asks about, and a day's cap keeps it before a vaguer one; so is a
  taste for doing something ("We love prepping the feast", "I enjoy restoring old radios"): a
  habit, not a passing like;
- pleasantries and small talk — "can't wait to see it", "I'll take it one day at a time",
  "I'm so excited", "I'll keep going", a mood with no object — 2, below the bar of 3, and so
  is the mundane — meals, weather, being tired or busy — unless the sentence says something
  more than that ("I was bored, so I repotted my lemon tree", "I can't wait to show my
  parents Porto in June"). A change of a habit or a diet ("again", "anymore", "no longer",
  "started", "stopped", "quit", "gave up", "switched to") is more than that, even about food
  ("I'm drinking coffee again"); a mood or the weather again is not ("I'm tired again"). "Something more" is counted: words that are not stop words, vague
  words ("great", "stuff") or the pleasantry itself; fewer than two is small talk. A name, a
  number or a quoted title is always something more ("So thrilled to be back in Tallinn!").
"""

from __future__ import annotations

import re
from typing import Literal

from ...text.folded import Folded
from .dates import Tense
from .lexicon import ADVERBS, ING_NOUNS, IRREGULAR_PAST, PRESENT_IN_ED, RELATIONS, STOPWORDS, VAGUE

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")

Kind = Literal["fact", "preference", "event", "promise", "open_loop", "relationship"]

_SUBJECT = r"(?:\bI|\b[Ww]e|\b[Mm]y \w+|\b[Oo]ur \w+)"
_ADVERBS = "|".join(sorted(ADVERBS))

_FUTURE = Folded(
    r"\b(?:I'll|I will|we'll|we will|I'm going to|I am going to|we're going to|gonna|I plan|"
    r"I'm planning|we're planning|I'm thinking (?:about|of)|we're thinking (?:about|of)|"
    r"I intend|I hope to|I want to|I'd like to|I'm hoping to|can't wait to|about to|"
    r"I'm off to|I'm heading|I'm starting|next (?:week|month|year|weekend|time)|tomorrow|tonight|"
    r"this (?:weekend|coming)|upcoming|soon|later this|in \w+ (?:days|weeks|months|years)(?! ago)|"
    r"I'm (?:\w+ )?\w+ing (?:on|this|next|to(?:morrow|night))\b|I'm (?:\w+ )?\w+ing (?:\w+ ){0,4}on "
    r"(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday))",
    re.I,
)
_NOT_PAST = rf"(?!(?:{'|'.join(sorted(PRESENT_IN_ED))})\b)"
_PAST = re.compile(
    rf"(?:{_SUBJECT}|\band)\s+(?:(?:{_ADVERBS})\s+)*"
    rf"(?:{_NOT_PAST}\w+ed|{'|'.join(sorted(IRREGULAR_PAST))})\b|"
    r"\b(?:I've|we've|I had|we had)\s+(?:(?:just|finally|already|recently)\s+)?(?:\w+ed|been|got|gone|"
    r"made|done|had|seen|taken|found|bought|sold|met|won|lost|started)\b|"
    r"\b(?:yesterday|ago|last (?:night|week|weekend|month|year|\w+day)|earlier (?:today|this))\b",
)
_FOLLOW_UP = Folded(
    r"(?:^|[,;:]\s*|\b(?:and|so|please)\s+)(?:ask me|remind me|check (?:in|back) with me)\b|"
    r"\b(?:let you know|keep you posted)\b",
    re.I,
)
_PREFERENCE = Folded(
    rf"\b(?:I|we|I'd|we'd|I do|I don't|I didn't|we don't|I really don't)\s+(?:(?:{_ADVERBS})\s+)*"
    r"(?:love|loved|like|liked|enjoy|enjoyed|prefer|hate|hated|adore|dislike|can't stand|cannot stand|"
    r"am into|am obsessed|am a (?:big |huge )?fan)\b|"
    r"\b(?:favou?rite|fan of|can't stand|keen on|passionate about|obsessed with|crazy about|"
    r"not a fan|(?:I'm|I am|we're|really|totally|so) into|(?:my|our) love (?:of|for))\b",
    re.I,
)
_RELATIONSHIP = Folded(
    rf"^(?:\w+ ){{0,3}}?(?:my|our) (?:(?:\w+|best|older|younger|little|big|eldest|youngest) )?"
    rf"(?:{'|'.join(sorted(RELATIONS))})\b|\bI (?:have|have got|'ve got) (?:a|an|two|three|four|\d) "
    rf"(?:\w+ )?(?:{'|'.join(sorted(RELATIONS))})\b|\bI'm (?:married|engaged|divorced|single|"
    r"dating|seeing someone|pregnant)\b",
    re.I,
)

_RELATION_SUBJECT = Folded(
    rf"^(?:my|our) (?:(?:best|older|younger|little|big|eldest|youngest|oldest|new|ex) )?"
    rf"(?:{'|'.join(sorted(RELATIONS))})\b",
    re.I,
)
_LIFE_EVENTS = Folded(
    r"\b(?:job|jobs|interview\w*|hired|fired(?! up)|laid off|promot\w+|resign\w*|retir\w+|career|"
    r"mov(?:e|ed|ing) (?:to|out|in|house|back)|new (?:house|flat|apartment|home|place)|"
    r"bought (?:a|an|my|our) (?:house|flat|apartment|home|car)|sold (?:my|our|the) (?:house|flat|"
    r"apartment|home|car|company|business|shares)|married|marry|wedding|engaged|proposed|divorc\w+|"
    r"pregnan\w+|baby|born|birth|gave birth|adopt(?:ed|ing|ion)|died|passed away|death|funeral|"
    r"lost (?:my|our)|cancer|diagnos\w+|surgery|hospitali[sz]\w*|in (?:the )?hospital|illness|"
    r"sick|injur\w+|graduat\w+|degree|"
    r"broke up|break-?up|split up|separated|started (?:a|my|our) (?:own )?(?:business|company|store|"
    r"shop)|launch\w*|accident|scholarship|accepted (?:to|into|at))\b",
    re.I,
)
_OCCUPATION = Folded(
    r"\bwork(?:s|ing)? (?:as|at|for)\b|\b(?:I'm|I am|u:\d+ is) (?:a|an) (?:\w+ )?(?:nurse|teacher|doctor|"
    r"engineer|developer|programmer|designer|lawyer|student|accountant|banker|chef|cook|artist|"
    r"writer|musician|manager|consultant|scientist|researcher|professor|firefighter|officer|pilot|"
    r"driver|farmer|dancer|actor|actress|photographer|counsel+or|therapist|worker|architect|"
    r"entrepreneur|founder|owner|analyst|trader|investor|coach|athlete|player|vet|dentist|"
    r"pharmacist|mechanic|electrician|plumber|carpenter|editor|journalist|volunteer)\b",
    re.I,
)
_GRAVE = Folded(
    r"\b(?:died|passed away|death|funeral|divorc\w+|gave birth|born|cancer|diagnos\w+)\b", re.I
)
_HOBBIES = Folded(
    r"\b(?:hik\w+|camp\w*|swim\w*|run|running|ran|marathon|race|yoga|gym|workout|paint\w*|draw\w*|"
    r"guitar|piano|violin|music|sing\w*|danc\w+|read\w*|books?|novel|writ\w+|poetry|"
    r"photograph\w*|cook\w*|bak\w+|garden\w*|travel\w*|trip|volunteer\w*|class|classes|lessons?|"
    r"course|learn\w*|stud\w+|practi[cs]\w+|team|league|club|game|games|gaming|chess|tennis|"
    r"football|soccer|basketball|baseball|golf|climb\w*|surf\w*|ski\w*|bik\w+|cycl\w+|"
    r"knit\w*|sew\w*|craft\w*|concert|festival|museum|art|artist|collect\w*|pet|dog|cat|"
    r"church|faith|charity|mentor\w*|group|community|project|business|store|"
    r"shop|company|studio|band|show|exhibit\w*|play\w* the \w+|trumpet|drums|saxophone|flute|"
    r"cello|ukulele|fish|birds?|hamsters?|horses?|puppy|kitten)\b",
    re.I,
)
_MUNDANE = Folded(
    r"\b(?:breakfast|lunch|dinner|snack|ate|eating|coffee|tea|sandwich|pizza|weather|rain\w*|"
    r"sunny|cold|hot|tired|sleepy|busy|bored|woke up|shower|nap|laundry|groceries|traffic|"
    r"errands|chilling|relaxing at home|just chilling|watching tv|hungry)\b",
    re.I,
)
_HABIT_CHANGE = re.compile(
    r"\b(?:again|anymore|any more|no longer|start(?:ed|ing)|stopp(?:ed|ing)|quit(?:ting)?|"
    r"gave up|given up|giving up|switch(?:ed|ing) to)\b",
    re.I,
)
_MOOD_OR_WEATHER = re.compile(
    r"\b(?:weather|rain\w*|sunny|cold|hot|tired|sleepy|busy|bored|hungry|traffic)\b", re.I
)
_PLEASANTRY = Folded(
    r"\b(?:can't wait|cannot wait|looking forward|look forward|one day at a time|one step at a time|"
    r"keep (?:going|pushing|trying|at it|it up|that in mind|it in mind|you posted|my head up|smiling)|"
    r"do (?:my|our) best|take (?:it|things) (?:easy|slow)|stay(?:ing)? (?:positive|strong|safe|tuned)|"
    r"hang in there|see how it goes|see what happens|see what(?:'s| is| comes) next|"
    r"make (?:the most of it|it count|it work)|"
    r"(?:never|always) (?:forget|remember)|make (?:\w+ )?memories|"
    r"(?:so |really |super |very )*(?:excited|thrilled|pumped|stoked|happy|glad|grateful|thankful|"
    r"blessed|lucky|proud|relieved|nervous|exhausted|overwhelmed|stressed)|"
    r"won't (?:give up|quit|stop)|(?:not|never) (?:give up|giving up|quit)|"
    r"(?:it|this|that|everything) (?:was|is|has been|'s been) (?:\w+ )?(?:great|amazing|awesome|fun|"
    r"wonderful|nice|cool|hard|tough|crazy|wild))\b",
    re.I,
)
# a taste for doing something: "we love prepping the feast", "I enjoy restoring old radios"
_LIKES_DOING = Folded(
    rf"\b(?:love|loves|enjoy|enjoys|like|likes|adore|adores)\s+(?!(?:{'|'.join(sorted(ING_NOUNS))})s?\b)[a-z]+ing\b",
    re.I,
)
_NAMED_OR_COUNTED = re.compile(r"(?<=\S )(?!I\b|I')[A-Z][a-z]+|\b\d+\b|\"[^\"]+\"")
_WEIGHTY = Folded(
    r"\b(?:dream|goal|passion|mission|identity|mental health|"
    r"therapy|anxiety|depression|recovery|sober|faith|values?|proud|grateful|family|allerg\w+|"
    r"vegetarian|vegan|gluten|diabet\w+|asthma|pregnan\w+|religio\w+)\b",
    re.I,
)


_PROGRESSIVE = Folded(r"\b(?:I'm|I am|we're|we are|are|is)\s+(?:\w+\s+)?\w+ing\b", re.I)
_TIME_AHEAD = re.compile(
    r"\b(?:on|this|next|in|by|from)\s+(?:January|February|March|April|May|June|July|August|"
    r"September|October|November|December|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|"
    r"Sunday|\d)"
)


def tense_of(sentence: str) -> Tense:
    """``past``, ``future`` or ``present``: the direction a bare "on Friday" points.

    A present progressive with a time ("I'm flying to Rome in May", "My sister and I are
    expecting a baby in November") speaks of the future.
    """
    past = _PAST.search(sentence)
    future = _FUTURE.search(sentence)
    if future is None and _PROGRESSIVE.search(sentence) and _TIME_AHEAD.search(sentence):
        future = _PROGRESSIVE.search(sentence)
    if past and future:
        return "past" if past.start() < future.start() else "future"
    if past:
        return "past"
    if future:
        return "future"
    return "present"


def is_follow_up(sentence: str) -> bool:
    """True for "ask me how it went", "remind me to…", "I'll let you know"."""
    return bool(_FOLLOW_UP.search(sentence))


def kind_of(sentence: str, tense: Tense) -> Kind:
    """The kind of a first-person sentence (see the module rules)."""
    if tense == "future" or is_follow_up(sentence):
        return "open_loop"
    if _RELATION_SUBJECT.search(sentence):
        return "relationship"
    if tense == "past":
        return "event"
    if _RELATIONSHIP.search(sentence):
        return "relationship"
    if _PREFERENCE.search(sentence):
        return "preference"
    return "fact"


def importance_of(sentence: str, kind: Kind) -> int:
    """How much the statement matters, 1..10 (see the module rules)."""
    if _LIFE_EVENTS.search(sentence):
        return 9 if _GRAVE.search(sentence) else 8
    if kind == "promise":
        return 7
    if _OCCUPATION.search(sentence) and kind != "open_loop":
        return 6
    if kind == "open_loop" and is_follow_up(sentence):
        return 7
    if _small_talk(sentence, kind):
        return 2
    if kind == "open_loop":
        return 6
    base = {"event": 5, "relationship": 5, "preference": 4, "fact": 4}[kind]
    if _HOBBIES.search(sentence) or _WEIGHTY.search(sentence) or _NAMED_OR_COUNTED.search(sentence):
        return max(base, 5)
    if kind == "preference" and _LIKES_DOING.search(sentence):
        return 5
    return base


def _small_talk(sentence: str, kind: Kind) -> bool:
    """A pleasantry, a mood or the mundane with fewer than two words that say more."""
    if kind == "preference" and _specific_words(_PLEASANTRY.sub(" ", sentence)) >= 1:
        return False
    if _WEIGHTY.search(sentence) or kind == "relationship" and _RELATION_SUBJECT.search(sentence):
        return False
    if _NAMED_OR_COUNTED.search(sentence):
        return False  # a name or a number is content
    for pattern in (_PLEASANTRY, _MUNDANE):
        if pattern is _MUNDANE and _changes_a_habit(sentence):
            continue
        if pattern.search(sentence) and _specific_words(pattern.sub(" ", sentence)) < 2:
            return True
    return _specific_words(sentence) < 1


def _changes_a_habit(sentence: str) -> bool:
    """A habit or a diet that changed ("I'm eating fish again", "I stopped having sugar in my
    tea"): not small talk even about a meal. A mood or the weather "again" still is."""
    return bool(_HABIT_CHANGE.search(sentence)) and not _MOOD_OR_WEATHER.search(sentence)


_SMALL_WORDS = frozenset(
    "morning evening afternoon night tonight today weekend week grabbed grab quick quickly little "
    "bit again here there outside able chance lately since last talked chatted spoke caught "
    "busy ready interesting exciting excited see hear wait feeling tired mostly mainly".split()
)


def _specific_words(text: str) -> int:
    return sum(
        1
        for w in _WORD.findall(text.lower())
        if w not in STOPWORDS and w not in VAGUE and w not in _SMALL_WORDS
    )
