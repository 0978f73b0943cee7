"""Slots: the things a person holds one value of at a time, read from a memory sentence. Pure.

"u:42 works at Acme Corp." and "u:42 now works at Globex." fill the same slot — where u:42
works — with two values, so the second replaces the first, however unlike the two sentences
are. This module reads which slot a third-person memory sentence fills; the router decides
what to do with it (``minds.offline.route``), and the neighbour search offers the rows that
fill the same slot (``write.routing``, which asks through its port, ``write.slot_reader``:
``EnglishSlots`` is this module's adapter, the one the composition root gives every mind).

Rules:
- A *slot* is a name and a key. The names, a closed set: ``employer`` (where someone works),
  ``role`` (as what), ``home`` (where they live), ``relationship`` (single, dating, engaged,
  married, divorced, …), ``diet`` (vegetarian, vegan, eating meat, …), ``school`` (the school
  or university they attend), ``course`` (keyed by what it teaches: "a Spanish course"),
  ``habit`` (keyed by the habit: smoking, drinking, "plays tennis every Sunday"), ``owns``
  (keyed by the object: "owns a flat" / "sold the flat") and ``stance`` (love or like against
  hate or dislike, keyed by the object). Slots without a key hold one value per person. The
  states among them — relationship status and diet, whose values are a closed set of words
  that exclude each other — are read from the table in ``states``; the others by the
  grammar below.
- A *reading* is a slot, the value the sentence gives it, and whether the sentence says the
  old value ended with nothing in its place (``ends``: "quit smoking", "sold the flat", "left
  their job", "is no longer vegetarian", "graduated"). An ending may name what ended ("left
  Acme"); then it ends only that value. An ending that is an event of its own, worth keeping
  beside the arc it closes — sold, gave away, graduated, dropped out, moved out, quit or lost a
  job, was laid off, retired, finished a course — is marked ``event``; a bare ending ("no
  longer", "not … anymore", "used to", "stopped", "gave up", quitting a habit) is not.
- Only sentences about a human are read, and only clauses whose subject is that human: the
  sentence must begin with their ``u:`` id (optionally "and someone": "u:42 and their partner
  moved to Lisbon"); a later clause counts when it has no subject of its own or "they", "he",
  "she" ("…, they left Acme last month"). "u:42's sister lives in Berlin" fills nothing.
- The verb comes first in a clause, after a few adverbs ("now", "just", "finally", …): so a
  plan, wish or report ("wants to move to Lisbon", "said they might quit") fills nothing.
  A past state ("lived in Berlin", "worked at Acme") fills nothing either; a past change
  ("moved to Lisbon", "got engaged", "was promoted to", "sold") does, and so does a state
  that runs up to now ("has been living in Porto" reads as "is living in Porto").
- A plain negation is a value ("does not smoke", "doesn't like opera"); only an explicit
  ending — "no longer", "not … anymore", "used to", "quit", "stopped", "gave up" — ends.
- Values compare loosely where a name can be said in more or fewer words — employer, home,
  school, a partner's name: the same when one's words are all among the other's, once
  articles, possessives and generic nouns ("flat", "city", "company") are left out. A role,
  a diet, a relationship status, a habit's verb and a stance compare exactly.
- The grammar and the word lists here are general English, a small closed set of verbs and
  nouns per slot; nothing is keyed to a particular conversation.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import attrs

from .states import COMPILED, Compiled

_I = 0  # no flags: every pattern is matched on the casefolded sentence

NAMES = ("employer", "role", "home", "relationship", "diet", "school", "course", "habit", "owns", "stance")


@attrs.frozen
class Slot:
    """What is filled: ``name`` (one of ``NAMES``) and ``key`` (``""`` for one-value slots)."""

    name: str
    key: str = ""


@attrs.frozen
class Reading:
    """One slot a sentence fills: the value it gives (``"not …"`` when negated), or that the
    old value ended (``ends``; ``value`` then names what ended, or is ``""``; ``event`` when
    the ending is worth keeping as a memory of its own)."""

    slot: Slot
    value: str = ""
    ends: bool = False
    event: bool = False


def slot_of(text: str) -> Slot | None:
    """The first slot ``text`` fills, or ``None``."""
    found = readings(text)
    return found[0].slot if found else None


@attrs.frozen
class EnglishSlots:
    """The slot reader of English memory sentences (``write.slot_reader.SlotReader``): the
    slots of ``readings(text)``, each once, in the order the sentence says them."""

    def slots(self, text: str) -> tuple[Slot, ...]:
        found: list[Slot] = []
        for reading in readings(text):
            if reading.slot not in found:
                found.append(reading.slot)
        return tuple(found)


@functools.lru_cache(maxsize=1 << 16)
def readings(text: str) -> tuple[Reading, ...]:
    """Every slot ``text`` (a third-person memory sentence) fills, in the order it says them.

    A slot given a value anywhere in the sentence is not also read as ended ("u:42 left Acme
    and now works at Globex" gives the employer Globex).
    """
    head = _SUBJECT.match(text.strip().casefold())
    if head is None:
        return ()
    out: list[Reading] = []
    for number, clause in enumerate(_CLAUSE_BREAK.split(head.group("rest"))):
        clause = clause.strip(" .!?\"'")
        if number > 0:
            clause = _CLAUSE_SUBJECT.sub("", clause, count=1)
        clause = _LEADING_ADVERBS.sub("", clause)
        clause = _PLURAL_VERB.sub("is ", clause)
        clause = _PERFECT_PROGRESSIVE.sub("is ", clause)
        clause = _BASE_FORMS.sub(_third_person, clause)
        out.extend(_read_clause(clause))
    valued = {r.slot for r in out if not r.ends}
    kept: list[Reading] = []
    for reading in out:
        if (reading.ends and reading.slot in valued) or reading in kept:
            continue
        kept.append(reading)
    return tuple(kept)


def about_someone_else(text: str) -> bool:
    """Whether ``text`` is about someone of a human's ("u:42's sister got engaged"): such a
    sentence fills none of that human's slots, and changes none."""
    return _SOMEONE_OF.match(text.strip()) is not None


def _third_person(match: re.Match[str]) -> str:
    verb = match.group(1)
    return "studies" if verb == "study" else verb + "s"


def _read_clause(clause: str) -> list[Reading]:
    """The readings of the first rule that matches ``clause`` (a section is tried only when
    its words occur in it)."""
    for needs, rules in _SECTIONS:
        if not needs.search(clause):
            continue
        for pattern, make in rules:
            match = pattern.match(clause)
            if match is not None:
                return [r for r in make(match) if r is not None]
    return []


def conflicts(new: Reading, old: Reading) -> bool:
    """Whether ``new`` replaces or ends what ``old`` says about the same slot."""
    if new.slot != old.slot:
        return False
    if new.ends:
        return not old.ends and (not new.value or _names_it(new.slot.name, new.value, old.value))
    return old.ends or not same_value(new.slot.name, new.value, old.value)


def _names_it(name: str, ended: str, held: str) -> bool:
    """Whether an ending that names what ended (``ended``: "left Acme") is about the value
    ``held``: the same, or, for loosely compared slots, sharing a word that is not generic —
    an ending never ends a value it cannot be seen to name."""
    if ended == held:
        return True
    if name not in _LOOSE:
        return same_value(name, ended, held)
    return bool(_words(ended) & _words(held))


def same_value(name: str, a: str, b: str) -> bool:
    """Whether two values of slot ``name`` say the same thing (see the module rules)."""
    a_not, a = _polarity(a)
    b_not, b = _polarity(b)
    if a_not != b_not:
        return False
    if name == "relationship":
        a_status, _, a_who = a.partition(" ")
        b_status, _, b_who = b.partition(" ")
        return a_status == b_status and _loosely_same(a_who, b_who)
    if name in _LOOSE:
        return _loosely_same(a, b)
    return a == b


# ---- reading a value ---------------------------------------------------------------------

_LOOSE = frozenset({"employer", "home", "school"})
_DETERMINERS = frozenset(
    "a an the their his her my our its your some this that these those own new old current former "
    "one two three few several many".split()
)
_GENERIC_NOUNS = frozenset(
    """flat apartment house home place city town village area neighbourhood neighborhood suburb
    part centre center downtown company firm office business startup shop store place school
    college university uni campus in of at near on by and""".split()
)
_TIME_TAIL = re.compile(
    r"(?:\s+(?:now|anymore|any more|again|too|lately|these days|so much|a lot|very much|as well|"
    r"the most|more than anything|for now|for good|for a while|full[- ]time|part[- ]time|"
    r"every\s+\w+|each\s+\w+|daily|weekly|on \w+days?|last \w+|this \w+|next \w+|"
    r"in (?:\d{4}|january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\b.*|since\b.*|"
    r"\d+ (?:years?|months?|weeks?|days?) ago))+$",
    _I,
)
_CUT = re.compile(
    r"\s*(?:,|;|\(|\s-\s|\s(?:as|with|for|since|because|after|before|when|while|until|where|who|which|that|"
    r"and|but|to|from|so|though|although|named|called|last|this|next)\s).*$",
    _I,
)
_CUT_AT_PREPOSITION = re.compile(
    r"\s+(?:in|at|on|near|along|around|during|by|over|under|into|of the|about)\s.*$", _I
)
_PRONOUN_OBJECT = frozenset(
    "it this that them him her you me us these those everything something anything nothing one "
    "what how when where why".split()
)
_CALENDAR = frozenset(
    """january february march april may june july august september october november december jan
    feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday
    sunday mondays tuesdays wednesdays thursdays fridays saturdays sundays day days week weeks
    month months year years morning mornings night nights weekend weekends""".split()
)
_ALCOHOL = frozenset(
    "alcohol booze beer beers wine wines whisky whiskey vodka gin rum liquor spirits cocktails drinks drink".split()
)
_TOBACCO = frozenset("cigarettes cigarette cigs tobacco cigars cigar".split())
_QUANTITY = re.compile(
    r"^(?:a|an|one|two|three|four|five|six|\d+|half a|a few|a lot|lots|heavily|socially|too much|"
    r"way too much|occasionally|regularly|every|each|daily|at least|more than)\b",
    _I,
)


def _polarity(value: str) -> tuple[bool, str]:
    return (True, value[4:]) if value.startswith("not ") else (False, value)


def _words(value: str) -> frozenset[str]:
    return frozenset(w for w in value.split() if w not in _DETERMINERS and w not in _GENERIC_NOUNS)


def _loosely_same(a: str, b: str) -> bool:
    wa, wb = _words(a), _words(b)
    return not wa or not wb or wa <= wb or wb <= wa


def _clean(phrase: str | None) -> str:
    """A phrase as a value: cut at its first joint, without a time tail, lower case, no
    articles or possessives, one space between words."""
    if not phrase:
        return ""
    phrase = _CUT.sub("", phrase.strip(" .!?\"'"))
    phrase = _TIME_TAIL.sub("", " " + phrase).strip()
    words = [w for w in re.findall(r"[\w'&+-]+", phrase.casefold()) if w not in _DETERMINERS]
    return " ".join(w.removesuffix("'s") for w in words)


def _head(phrase: str | None) -> str:
    """The key of an object: its last word before a preposition, folded (``"a flat in
    Xuhui"`` → ``flat``); ``""`` when that is a pronoun, a date or a number."""
    if not phrase:
        return ""
    phrase = _CUT_AT_PREPOSITION.sub("", _CUT.sub("", phrase.strip(" .!?\"'")))
    phrase = _TIME_TAIL.sub("", " " + phrase).strip()
    words = [w for w in re.findall(r"[a-z][a-z'-]*", phrase.casefold()) if w not in _DETERMINERS]
    if not words or words[-1] in _PRONOUN_OBJECT or words[-1] in _CALENDAR:
        return ""
    return fold(words[-1])


def _object_key(phrase: str | None) -> str:
    """The key of a stance's object: every word of it up to a preposition, folded
    (``"hiking in the Alps"`` → ``hik``; ``"Italian food"`` → ``italian food``)."""
    if not phrase:
        return ""
    phrase = _CUT_AT_PREPOSITION.sub("", _CUT.sub("", phrase.strip(" .!?\"'")))
    phrase = _TIME_TAIL.sub("", " " + phrase).strip()
    words = [w for w in re.findall(r"[a-z][a-z'-]*", phrase.casefold()) if w not in _DETERMINERS]
    if not words or words[0] in _PRONOUN_OBJECT:
        return ""
    return " ".join(fold(w) for w in words)


_FOLD_IRREGULAR = {
    "apartment": "flat", "apartments": "flat", "flats": "flat", "smoker": "smok", "smokers": "smok",
    "drinker": "drink", "gambler": "gambl", "vaper": "vap", "children": "kid", "kids": "kid",
    "ran": "run", "running": "run", "swimming": "swim", "sold": "sell",
}


def fold(word: str) -> str:
    """A crude, consistent stem: the same word in two forms gives the same fold."""
    word = word.casefold().removesuffix("'s")
    if word in _FOLD_IRREGULAR:
        return _FOLD_IRREGULAR[word]
    if len(word) <= 3:
        return word
    for suffix, keep in (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                break
            word = word[: -len(suffix)] + keep
            if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                word = word[:-1]
            break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def _habit(verb: str | None, obj: str | None) -> tuple[Slot, str] | None:
    """The habit slot of ``verb`` (possibly a gerund or an agent noun) with ``obj``, and the
    value (the verb's fold): keyed by the object when there is one ("drinks coffee" → coffee),
    else by the verb ("smokes a pack a day" → smok); drink of alcohol is "drink", a smoke of
    tobacco "smok"."""
    verb_fold = fold(verb) if verb else ""
    key = ""
    if obj:
        obj = _TIME_TAIL.sub("", " " + obj.strip(" .!?")).strip()
    if obj and not _QUANTITY.match(obj):
        head_words = [w for w in re.findall(r"[a-z]+", _CUT_AT_PREPOSITION.sub("", _CUT.sub("", obj)).casefold())]
        head_words = [w for w in head_words if w not in _DETERMINERS]
        if head_words and head_words[0].endswith("ing") and len(head_words[0]) > 5 and not verb_fold:
            verb_fold, head_words = fold(head_words[0]), head_words[1:]
        if head_words:
            last = head_words[-1]
            if last in _ALCOHOL:
                key = "drink"
            elif last in _TOBACCO:
                key = "smok"
            elif last not in _PRONOUN_OBJECT and last not in _CALENDAR:
                key = fold(last)
    if not key:
        key = verb_fold
    if not key:
        return None
    return Slot("habit", key), verb_fold


# ---- the grammar -------------------------------------------------------------------------

_SUBJECT = re.compile(
    r"^u:\d+(?!'|’|\w)(?:\s+and\s+(?:(?:their|his|her)\s+)?[\w-]+)?\s+(?P<rest>.+)$", re.DOTALL
)
_SOMEONE_OF = re.compile(r"u:\d+(?:'|’)s?\s")
_CLAUSE_BREAK = re.compile(
    r"\s*[;,]\s*(?:and\s+|but\s+|then\s+|so\s+)?|\s+(?:and|but|then|after|before|because|since|while|when|so)\s+",
    _I,
)
_CLAUSE_SUBJECT = re.compile(r"^(?:they|he|she|u:\d+)(?:\s+|(?='))", _I)
_PLURAL_VERB = re.compile(r"^(?:'re\s+|are\s+|'s\s+)", _I)
"""A clause led by "they're" / "they are" (the extraction's "they" for the speaker) reads as
"is"; "u:42 and family live in …" as "lives"."""
_PERFECT_PROGRESSIVE = re.compile(r"^(?:has|have)\s+been\s+(?=[a-z]+ing\b)", _I)
""""has been living in Porto" says what "is living in Porto" says: a state that holds now."""
_BASE_FORMS = re.compile(r"^(live|work|own|love|like|hate|enjoy|smoke|drink|study)\b", _I)
_LEADING_ADVERBS = re.compile(
    r"^(?:(?:now|still|just|recently|finally|already|also|currently|officially|actually|really|"
    r"happily|newly|lately|again|even|both|soon|then|since|eventually|basically|totally|"
    r"completely|fully|mostly|absolutely|truly|somehow|suddenly|proudly|sadly|luckily|"
    r"unfortunately|fortunately|gladly|reluctantly|quietly)\s+)+",
    _I,
)

Rule = tuple[re.Pattern[str], Callable[[re.Match[str]], list[Reading | None]]]


def _g(match: re.Match[str], name: str) -> str | None:
    return match.groupdict().get(name)


_NOT_EMPLOYERS = frozenset(
    """hour hours day days week weeks month months year years minute minutes while long ages free
    fun money nothing food living hard""".split()
)


def _employment(match: re.Match[str], *, ends: bool = False, event: bool = True) -> list[Reading | None]:
    org, role = _clean(_g(match, "org")), _clean(_g(match, "role"))
    if org and (org.split()[0] in _NOT_EMPLOYERS or org.split()[0].isdigit()):
        return []
    if ends:
        return [
            Reading(Slot("employer"), org, ends=True, event=event),
            Reading(Slot("role"), "", ends=True, event=event),
        ]
    out: list[Reading | None] = []
    if org:
        out.append(Reading(Slot("employer"), org))
    if role and role.split()[-1] not in _NOT_ROLES:
        out.append(Reading(Slot("role"), role))
    return out


def _role_at(match: re.Match[str]) -> list[Reading | None]:
    role = _clean(_g(match, "role"))
    if not role or role.split()[-1] in _NOT_ROLES:
        return []
    if role.split()[-1] in _STUDENTS:
        return [Reading(Slot("school"), _clean(_g(match, "org")) or "student")]
    return _employment(match)


_NOT_ROLES = frozenset(
    "member regular fan guest customer patient resident visitor client friend neighbour neighbor "
    "volunteer regulars".split()
)
_STUDENTS = frozenset("student pupil freshman sophomore undergrad undergraduate candidate".split())


def _home(match: re.Match[str], *, ends: bool = False, event: bool = False) -> list[Reading | None]:
    place = _clean(_g(match, "place"))
    if not place and not ends:
        return []
    return [Reading(Slot("home"), place, ends=ends, event=event)]


def _left(match: re.Match[str]) -> list[Reading | None]:
    """"left Acme", "left Berlin": the end of whichever of the two it names (gated by value)."""
    what = _clean(_g(match, "what"))
    if not what or what.split()[0] in ("work", "early", "home", "for", "behind"):
        return []
    return [
        Reading(Slot("employer"), what, ends=True, event=True),
        Reading(Slot("home"), what, ends=True, event=True),
    ]


def _state(compiled: Compiled) -> Callable[[re.Match[str]], list[Reading | None]]:
    """The reading of a match of one of ``states``' attributes: the value, and the
    other person's name after it for a relationship ("engaged sam")."""

    def make(match: re.Match[str]) -> list[Reading | None]:
        found = compiled.read(match)
        who = _clean(_CUT_AT_PREPOSITION.sub("", found.who))
        return [Reading(Slot(found.attribute), f"{found.value} {who}".strip(), ends=found.ends)]

    return make


def _school(match: re.Match[str], *, ends: bool = False) -> list[Reading | None]:
    school = _clean(_g(match, "school"))
    if not ends and not school:
        return []
    return [Reading(Slot("school"), school, ends=ends, event=ends)]


def _course(match: re.Match[str], *, ends: bool = False) -> list[Reading | None]:
    key = _object_key(_g(match, "what"))
    if not key:
        return []
    event = ends and bool(re.match(r"(?:finished|completed)\b", match.group(0), _I))
    return [Reading(Slot("course", key), "", ends=ends, event=event)]


def _habit_reading(*, ends: bool = False, negated: bool = False) -> Callable[[re.Match[str]], list[Reading | None]]:
    def make(match: re.Match[str]) -> list[Reading | None]:
        obj = _g(match, "obj")
        if obj and (re.match(r"\s*(?:by|at|in|to|for|on|over|off|with|there|here|it|this|that)\b", obj, _I)):
            return []
        if obj and ends:
            obj = re.sub(r"\s+any ?more\b.*$", "", obj, flags=_I)
        found = _habit(_g(match, "verb"), obj)
        if found is None:
            return []
        slot, verb = found
        if verb in _NOT_HABITS:
            return []
        value = verb
        if negated:
            value = f"not {value}"
        return [Reading(slot, value, ends=ends)]

    return make


_NOT_HABITS = frozenset("is has was does get feel seem look become stay keep mean hop want need think".split())


def _owns(*, ends: bool = False) -> Callable[[re.Match[str]], list[Reading | None]]:
    def make(match: re.Match[str]) -> list[Reading | None]:
        obj = _g(match, "obj") or ""
        if ends:
            obj = re.sub(r"\s+any ?more\b.*$", "", obj, flags=_I)
        first = obj.strip().split(" ")[0].casefold() if obj.strip() else ""
        key = _head(obj)
        if not key or key in _PEOPLE or first in _PRONOUN_OBJECT:
            return []
        event = ends and not re.match(r"(?:no\s+longer|does)", match.group(0), _I)
        return [Reading(Slot("owns", key), "", ends=ends, event=event)]

    return make


_PEOPLE = frozenset(
    "girlfriend boyfriend partner wife husband spouse kid son daughter sister brother mom mum dad "
    "mother father parent grandmother grandfather grandma grandpa friend baby twin cousin aunt "
    "uncle niece nephew fianc fiance fiancee colleague boss roommate flatmate".split()
)


def _stance(polarity: str, *, ends: bool = False) -> Callable[[re.Match[str]], list[Reading | None]]:
    def make(match: re.Match[str]) -> list[Reading | None]:
        obj = _g(match, "obj") or ""
        ending = ends or bool(re.search(r"\bany ?more\b", obj, _I))
        if ending:
            obj = re.sub(r"\s+any ?more\b.*$", "", obj, flags=_I)
        key = _object_key(obj)
        if not key:
            return []
        if ending:
            return [Reading(Slot("stance", key), "", ends=True)]
        return [Reading(Slot("stance", key), polarity)]

    return make


_ORG = r"(?P<org>[^,;]+?)"
_ROLE = r"(?:an?\s+)?(?P<role>[^,;]+?)"
_END = r"(?=$|[,;]|\s+(?:since|for|in|last|this|next|after|before|because|when|until|now|again|and|but)\b)"
_NEG = r"(?:does\s*n[o']t|does\s+not|do\s*n[o']t|never)"
_NO_MORE = r"(?:no\s+longer|does\s*n[o']t|does\s+not|used\s+to|stopped|quit|gave\s+up)"

_SECTIONS: tuple[tuple[re.Pattern[str], tuple[Rule, ...]], ...] = (
    # -- work
    (re.compile(r"work|job|position|role|gig|company|firm|hired|employ|promot|demot|resign|retir|laid|fired|let\s+go|redundan|sacked|unemploy|\sat\s|\sfor\s", _I), (
    (re.compile(rf"(?:is\s+)?work(?:s|ing)\s+(?:at|for)\s+{_ORG}(?:\s+as\s+{_ROLE})?{_END}", _I), _employment),
    (re.compile(rf"(?:is\s+)?work(?:s|ing)\s+as\s+{_ROLE}(?:\s+(?:at|for)\s+{_ORG})?{_END}", _I), _employment),
    (re.compile(
        rf"(?:got|has|found|took|started|landed|accepted|began)\s+(?:a\s+|an\s+|the\s+)?(?:new\s+)?"
        rf"(?:job|position|role|gig)(?:\s+as\s+{_ROLE})?(?:\s+(?:at|with|for)\s+{_ORG})?{_END}", _I), _employment),
    (re.compile(rf"(?:started|began)\s+(?:working|work)\s+(?:at|for)\s+{_ORG}(?:\s+as\s+{_ROLE})?{_END}", _I), _employment),
    (re.compile(rf"joined\s+{_ORG}\s+as\s+{_ROLE}{_END}", _I), _employment),
    (re.compile(rf"(?:was|got|has\s+been)\s+hired\s+(?:at|by)\s+{_ORG}(?:\s+as\s+{_ROLE})?{_END}", _I), _employment),
    (re.compile(rf"(?:was|got|has\s+been)\s+hired\s+as\s+{_ROLE}(?:\s+(?:at|by)\s+{_ORG})?{_END}", _I), _employment),
    (re.compile(rf"is\s+employed\s+(?:at|by)\s+{_ORG}(?:\s+as\s+{_ROLE})?{_END}", _I), _employment),
    (re.compile(rf"(?:is|was|got|has\s+been|has\s+got|just\s+got)\s+(?:promoted|demoted)\s+to\s+{_ROLE}(?:\s+at\s+{_ORG})?{_END}", _I), _employment),
    (re.compile(r"(?:switched|changed|has\s+switched|has\s+changed)\s+(?:jobs|careers|employers|companies)\b", _I),
     lambda m: _employment(m, ends=True)),
    (re.compile(rf"(?:got|received|earned|was\s+given)\s+a\s+promotion(?:\s+to\s+{_ROLE})?{_END}", _I),
     lambda m: _employment(m) if _g(m, "role") else [Reading(Slot("role"), "", ends=True, event=True)]),
    (re.compile(rf"(?:is|became|has\s+become)\s+(?:an?|the)\s+(?P<role>[\w' -]+?)\s+(?:at|for)\s+{_ORG}{_END}", _I), _role_at),
    (re.compile(
        r"(?:(?:quit|lost|resigned\s+from|walked\s+away\s+from|has\s+quit)\s+(?:(?:their|his|her|the|a)\s+)?"
        r"(?:(?:old|current|day|full-time|part-time)\s+)?(?:job|position|role|work)|(?:left|has\s+left)\s+"
        r"(?:(?:their|his|her|the|a)\s+)?(?:(?:old|current|day|full-time|part-time)\s+)?(?:job|position|role|company|firm))\b"
        rf"(?:\s+(?:at|with|for)\s+{_ORG}{_END})?", _I),
     lambda m: _employment(m, ends=True)),
    (re.compile(rf"(?:resigned|has\s+resigned|retired|has\s+retired|is\s+retired)(?:\s+from\s+{_ORG}{_END})?", _I),
     lambda m: _employment(m, ends=True)),
    (re.compile(rf"(?:was|got|has\s+been|is)\s+(?:laid\s+off|fired|let\s+go|made\s+redundant|sacked)(?:\s+(?:from|by)\s+{_ORG}{_END})?", _I),
     lambda m: _employment(m, ends=True)),
    (re.compile(r"(?:is|became)\s+(?:unemployed|jobless|out\s+of\s+work|between\s+jobs)", _I), lambda m: _employment(m, ends=True)),
    (re.compile(rf"(?:no\s+longer\s+works|{_NEG}\s+work|stopped\s+working|used\s+to\s+work)(?:\s+(?:at|for)\s+{_ORG})?(?:\s+any ?more)?{_END}", _I),
     lambda m: _employment(m, ends=True, event=False)),
    )),
    # -- school
    (re.compile(r"graduat|dropped|school|college|universit|\buni\b|academy|institute|conservatory|polytechnic|degree|studies|studying|master|phd|doctorate|course|class|lesson|workshop|program|student|pupil|freshman|sophomore|undergrad|candidate|learning", _I), (
    (re.compile(r"(?:graduated|has\s+graduated)(?:\s+from\s+(?P<school>[^,;]+?))?" + _END, _I), lambda m: _school(m, ends=True)),
    (re.compile(r"dropped\s+out(?:\s+of\s+(?P<school>[^,;]+?))?" + _END, _I), lambda m: _school(m, ends=True)),
    (re.compile(
        r"(?:quit|left|finished|completed|dropped)\s+(?:(?:their|his|her|the)\s+)?"
        r"(?:school|college|university|uni|degree|studies|masters?|master's|phd|doctorate)\b"
        r"(?:\s+at\s+(?P<school>[^,;]+?))?" + _END, _I), lambda m: _school(m, ends=True)),
    (re.compile(
        r"(?:finished|completed|dropped|quit|gave\s+up|stopped|left)\s+(?:(?:their|his|her|the|a|an)\s+)?"
        r"(?:taking\s+|attending\s+|going\s+to\s+)?(?:(?:their|his|her|the)\s+)?(?P<what>[\w' -]+?)\s+"
        r"(?:course|class|classes|lessons|workshop|program|programme)\b", _I), lambda m: _course(m, ends=True)),
    (re.compile(r"(?:stopped|quit|gave\s+up)\s+(?:learning|studying)\s+(?:to\s+)?(?P<what>[^,;]+)", _I), lambda m: _course(m, ends=True)),
    (re.compile(
        r"(?:studies|is\s+studying|is\s+doing\s+(?:a\s+|an\s+|their\s+|his\s+|her\s+)?(?:degree|masters?|master's|phd|bachelor's|mba|doctorate))"
        r"(?:\s+in)?(?:\s+[^,;]+?)?\s+at\s+(?P<school>[^,;]+?)" + _END, _I), _school),
    (re.compile(
        r"(?:attends|is\s+attending|goes\s+to|started\s+at|is\s+enrolled\s+(?:at|in)|enrolled\s+(?:at|in)|"
        r"transferred\s+to|got\s+accepted\s+(?:to|into|at)|was\s+accepted\s+(?:to|into|at))\s+"
        r"(?P<school>[^,;]*?\b(?:school|college|university|academy|uni|institute|conservatory|polytechnic)\b[^,;]*?)" + _END, _I),
     _school),
    (re.compile(
        r"is\s+(?:an?\s+)?(?:(?:first|second|third|fourth|final|last)[- ]year\s+|graduate\s+|grad\s+|phd\s+|"
        r"master's\s+|masters\s+|undergraduate\s+|medical\s+|law\s+|exchange\s+|college\s+|university\s+)*"
        r"(?:student|pupil|freshman|sophomore|undergrad|undergraduate|phd\s+candidate)"
        r"(?:\s+(?:at|in)\s+(?P<school>[^,;]+?))?" + _END, _I), lambda m: [Reading(Slot("school"), _clean(_g(m, "school")) or "student")]),
    (re.compile(
        r"(?:is\s+taking|takes|started|has\s+started|is\s+doing|signed\s+up\s+for|enrolled\s+in|joined|is\s+attending|attends|began)\s+"
        r"(?:a\s+|an\s+|some\s+|the\s+|new\s+)*(?P<what>[\w' -]+?)\s+"
        r"(?:course|class|classes|lessons|workshop|program|programme)\b", _I), _course),
    (re.compile(r"(?:is\s+learning|started\s+learning|began\s+learning|studies|is\s+studying|started\s+studying)\s+(?:to\s+)?(?:the\s+)?(?P<what>[^,;]+)", _I), _course),
    )),
    # -- home
    (re.compile(r"liv|mov|relocat|settled|resides|based|left", _I), (
    (re.compile(r"(?:is\s+)?liv(?:es|ing)\s+(?:in|on|at|near)\s+(?P<place>[^,;]+)", _I), _home),
    (re.compile(
        r"(?:has\s+|have\s+)?(?:moved|relocated|is\s+moving|is\s+relocating)(?:\s+back|\s+house|\s+home|\s+abroad)*\s+"
        r"(?:to|into)\s+(?P<place>[^,;]+)", _I), _home),
    (re.compile(r"(?:settled(?:\s+down)?|resides|is\s+based)\s+in\s+(?P<place>[^,;]+)", _I), _home),
    (re.compile(r"(?:moved|has\s+moved|is\s+moving)\s+in\s+with\b", _I), lambda m: [Reading(Slot("home"), "", ends=True, event=True)]),
    (re.compile(r"(?:moved|has\s+moved)\s+(?:out|away)(?:\s+(?:of|from)\s+(?P<place>[^,;]+))?", _I), lambda m: _home(m, ends=True, event=True)),
    (re.compile(rf"(?:no\s+longer\s+lives|{_NEG}\s+live|used\s+to\s+live)(?:\s+(?:in|at|near)\s+(?P<place>[^,;]+?))?(?:\s+any ?more)?{_END}", _I),
     lambda m: _home(m, ends=True)),
    (re.compile(r"(?:left|has\s+left)\s+(?P<what>[^,;]+)", _I), _left),
    )),
    # -- relationship, diet: the one-value states of ``states``' table
    *((compiled.gate, ((compiled.pattern, _state(compiled)),)) for compiled in COMPILED),
    # -- a diet the table does not name
    (re.compile(r"diet", _I), (
    (re.compile(r"(?:is\s+on|follows|started|is\s+following|went\s+on|began)\s+(?:a\s+|an\s+|the\s+)?(?:strict\s+|new\s+)?(?P<diet>[\w-]+(?:\s[\w-]+)?)?\s*diet\b", _I),
     lambda m: [Reading(Slot("diet"), (m.group("diet") or "diet").casefold())]),
    )),
    # -- owns
    (re.compile(r"sold|rid\s+of|gave|given\s+away|traded|donated|own|have|has|bought|purchas|got", _I), (
    (re.compile(r"(?:sold|has\s+sold|got\s+rid\s+of|gave\s+away|has\s+given\s+away|traded\s+in|donated|no\s+longer\s+owns|does\s*n[o']t\s+own)\s+(?P<obj>[^,;]+)", _I), _owns(ends=True)),
    (re.compile(r"does\s*n[o']t\s+have\s+(?P<obj>[^,;]+?)\s+any ?more", _I), _owns(ends=True)),
    (re.compile(r"gave\s+(?P<obj>(?:their|his|her|the|an?|its)\s+[^,;]+?)\s+(?:away|to)\b", _I), _owns(ends=True)),
    (re.compile(r"(?:owns|has\s+bought|bought|purchased|has\s+purchased|is\s+the\s+(?:proud\s+)?owner\s+of)\s+(?P<obj>[^,;]+)", _I), _owns()),
    (re.compile(r"(?:has|got)\s+(?P<obj>(?:a|an|two|three|four|another)\s+(?:new\s+)?[^,;]+)", _I), _owns()),
    )),
    # -- stance
    (re.compile(r"like|love|enjoy|ador|fan\s+of|into|passionate|obsessed|crazy\s+about|fond\s+of|interest|hate|dislike|detest|loath|stand|tired\s+of|sick\s+of", _I), (
    (re.compile(
        r"(?:no\s+longer|used\s+to)\s+(?:likes?|loves?|enjoys?|adores?)\s+(?:to\s+)?(?P<obj>[^,;]+)", _I), _stance("", ends=True)),
    (re.compile(r"(?:lost\s+(?:all\s+)?interest\s+in|fell\s+out\s+of\s+love\s+with|is\s+(?:no\s+longer|not)\s+(?:a\s+)?fan\s+of\s+(?=.*any ?more))\s*(?P<obj>[^,;]+)", _I), _stance("", ends=True)),
    (re.compile(
        r"(?:loves|likes|enjoys|adores|is\s+(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of|is\s+(?:really\s+)?into|"
        r"is\s+passionate\s+about|is\s+obsessed\s+with|is\s+crazy\s+about|is\s+fond\s+of)\s+(?:to\s+)?(?P<obj>[^,;]+)", _I), _stance("+")),
    (re.compile(
        rf"(?:hates|dislikes|detests|loathes|can'?t\s+stand|cannot\s+stand|{_NEG}\s+(?:like|enjoy|love)|"
        r"is\s+not\s+(?:a\s+)?fan\s+of|isn't\s+(?:a\s+)?fan\s+of|is\s+(?:tired|sick)\s+of|got\s+(?:tired|sick)\s+of|"
        r"is\s+not\s+into|isn't\s+into)\s+(?:to\s+)?(?P<obj>[^,;]+)", _I), _stance("-")),
    )),
    # -- habits
    (re.compile(r"quit|stop|gave\s+up|given\s+up|kick|cut\s+out|is\s+off|ditch|no\s+longer|used\s+to|n't|not|sober|smok|vap|drink|gambl|addict|every|each|daily|weekly|nightly|twice|times|days\b|weekends", _I), (
    (re.compile(
        r"(?:quit|stopped|gave\s+up|has\s+given\s+up|kicked|cut\s+out|is\s+off|has\s+quit|has\s+stopped|is\s+quitting|ditched)"
        r"(?:\s+the\s+habit\s+of)?(?:\s+on)?\s+(?P<obj>[^,;]+)", _I), _habit_reading(ends=True)),
    (re.compile(r"(?:no\s+longer|used\s+to)\s+(?P<verb>\w+?)(?:s|es)?(?:\s+(?P<obj>[^,;]+))?$", _I), _habit_reading(ends=True)),
    (re.compile(r"does\s*n[o']t\s+(?P<verb>\w+)(?:\s+(?P<obj>[^,;]+?))?\s+any ?more", _I), _habit_reading(ends=True)),
    (re.compile(r"(?:is|has\s+been|stayed)\s+sober\b", _I), lambda m: [Reading(Slot("habit", "drink"), "", ends=True)]),
    (re.compile(r"is\s+(?:a\s+)?(?:non-?smoker|ex-?smoker|former\s+smoker)\b", _I), lambda m: [Reading(Slot("habit", "smok"), "", ends=True)]),
    (re.compile(r"is\s+(?:no\s+longer|not)\s+an?\s+(?:heavy\s+|regular\s+)?(?P<verb>smoker|drinker|gambler|vaper)\s+any ?more\b", _I), _habit_reading(ends=True)),
    (re.compile(r"is\s+no\s+longer\s+an?\s+(?:heavy\s+|regular\s+)?(?P<verb>smoker|drinker|gambler|vaper)\b", _I), _habit_reading(ends=True)),
    (re.compile(rf"{_NEG}\s+(?P<verb>smoke|vape|drink|gamble)\b(?:\s+(?P<obj>[^,;]+))?", _I), _habit_reading(negated=True)),
    (re.compile(r"(?:is\s+|started\s+|began\s+|is\s+back\s+to\s+|went\s+back\s+to\s+)?(?P<verb>smokes|smoke|smoking|vapes|vaping|drinks|drinking|gambles|gambling)\b(?:\s+(?P<obj>[^,;]+))?", _I), _habit_reading()),
    (re.compile(r"is\s+(?:an?\s+)?(?:heavy\s+|chain\s+|social\s+|regular\s+|daily\s+)?(?P<verb>smoker|drinker|gambler|vaper)\b", _I), _habit_reading()),
    (re.compile(r"is\s+addicted\s+to\s+(?P<obj>[^,;]+)", _I), _habit_reading()),
    (re.compile(
        r"(?:goes\s+)?(?P<verb>[a-z]+(?:s|ing))\s+(?P<obj>(?:[\w'-]+\s+){0,4}?)(?:every|each|daily|weekly|nightly|twice|"
        r"three\s+times|on\s+(?:weekends|\w+days))\b", _I), _habit_reading()),
    )),
)
