"""What a speaker's own words named — plurals, people — and a later pointer named by them.

A row is read alone, so a pointer in it must say what it means. The line before a reply lends
it what it named (``answers``); the speaker's own line lends it more: "My kids are off school.
I took them to the museum" means the kids, and "My cousin had a rough year. I'm helping her
find a flat" means the cousin. Only what cannot be the speaker is named, and only by what fits.

Rules:
- **A "them" that cannot be the speaker** (``name_bound_them``): in the clause of the
  speaker's own "I" or "we" ("I love having them around"), "them" is something the chat
  named: the last plural the speaker's line named before it, else the line before's, else
  the speaker's own line before that ("my turtles", "two kayaks", "the younger players").
  People and pets may be any "them"; a thing only where a thing fits (not after "let", "tell",
  "to", "with"…) and only one the speaker said whose or how many ("my abilities" after "let
  them down" and "the hard work starts" are never it). A plural a sentence opens on counts
  whatever follows it ("These pups make me laugh. I got them a basket"). With none, "them"
  stays, and the reader keeps the sentence only when it says enough besides (``bound_them``):
  "I'd love to check them out" is no row; "I chose them because they help first-time
  buyers…" is.
- **An opening "they"** (``name_opening_they``): a sentence that opens on "they" after a
  sentence of the speaker's that named one plural and no other is about that plural:
  "Lanterns cheer me up. They were all over my grandmother's porch." → "Lanterns were all
  over…". With two plurals before it ("The kids loved the waves. They were huge.") it may be
  either, and stays as it is. Across the speaker's lines too: a line that names no plural and
  opens on "They" ("Of course! They look tired…") still speaks of the plural their line before
  named, and an answer that opens on "they" to a question asked by "they" is named by it.
- **A place the chat named** (``name_there``): a bare "there" ("we stayed there a week") is the
  last place named just before it — by a name after a verb or a preposition — in the line
  before or earlier in the speaker's own line ("Ever been to Crete? We stayed there a week
  in May." → "We stayed in Crete a week in May"). "There is…" and "out there in the hills"
  point at nothing.
- **A person the speaker named** (``name_the_person``): "he", "she", or "him"/"her" as an
  object, after the speaker's own line named one person of theirs ("my cousin", "my sister")
  is that person, unless the word says the other: "My cousin had a tough year. I'm helping
  her find a flat." → "I'm helping my cousin find a flat". An opening "he"/"she" and a
  possessive "her" are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .answers import Thing, is_plural, noun_phrases
from .lexicon import COLLECTIVES, PEOPLE_AND_PETS, RELATIONS


def own_plurals(said: str) -> list[Thing]:
    """The plural things a speaker's own words name, as the speaker says them, the last
    first: "My turtles love the sun" → "my turtles"; "two kayaks"; "I took my turtles out"
    (``name_bound_them`` names by them)."""
    found = [
        (at, f"{'the' if det in ('this', 'that', 'these', 'those') else det} {words}")
        for at, det, words in noun_phrases(said)
        if is_plural(words)
    ]
    found += [(m.start(), m[0]) for m in _COUNTED.finditer(said) if noun_phrases(f"the {m['noun']}")]
    found += [(m.start(), f"{(m['det'] or 'my').lower()} {(m['noun'] or m['bare']).lower()}")
              for m in _COLLECTIVE.finditer(said)]
    taken = {at for at, _ in found}
    found += [(m.start(), f"{m['det'].lower()} {m['noun']}") for m in _OWN_TAKEN_OUT.finditer(said)
              if m.start() not in taken and noun_phrases(f"the {m['noun']}")]
    opening = _SUBJECT_PLURAL.match(said)  # "These critters make me…", "My twins always…"
    if opening is not None and not any(at == 0 for at, _ in found) and noun_phrases(f"the {opening['noun']}"):
        det = opening["det"].lower()
        found.append((0, f"{'the' if det in ('these', 'those') else det} {opening['noun']}"))
    return [Thing(words=words, plural=True) for _, words in sorted(found, reverse=True)]


def plurals_said(said: str, before: Sequence[Thing] = ()) -> list[Thing]:
    """``own_plurals``, and a bare plural the sentence opens on ("Lanterns cheer me up"); for
    a sentence that opens on "they" and names none, the plurals before it (``before``): its
    "they" still means them."""
    found = own_plurals(said)
    if not found and _OPENING_THEY.match(said):
        return list(before)
    opening = _BARE_PLURAL_SUBJECT.match(said)
    if opening is not None and is_plural(opening["noun"]) and noun_phrases(f"the {opening['noun'].lower()}"):
        found.append(Thing(words=opening["noun"].lower(), plural=True))
    return found


def name_opening_they(sentence: str, before: Sequence[Thing]) -> str:
    """The sentence with its opening "they" named by the one plural the speaker's sentence
    before it named (``before``, from ``plurals_said``), or unchanged."""
    opening = _OPENING_THEY.match(sentence)
    if opening is None or len(before) != 1:
        return sentence
    words = before[0].words
    named = words[:1].upper() + words[1:] + _THEY_VERB[opening["they"].lower()]
    return named + sentence[opening.end() :]


_OPENING_THEY = re.compile(r"^(?P<they>they're|they've|they'll|they'd|they)\b(?!\s+(?:say|said|says)\b)", re.IGNORECASE)
_THEY_VERB = {"they": "", "they're": " are", "they've": " have", "they'll": " will", "they'd": " would"}
# "Lanterns cheer me up": a capitalised plural, then a word that is no pronoun or joiner
_BARE_PLURAL_SUBJECT = re.compile(
    r"^(?P<noun>[A-Z][a-z]+[^s\W]s)\s+(?!(?:I|you|he|she|it|we|they|and|or|of|to|for)\b)[a-z]"
)
# "two rabbits", "three old bikes": things counted are things named
_COUNTED = re.compile(
    r"\b(?:two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(?:[a-z-]+\s+)?(?P<noun>[a-z]+[^s\W]s)\b"
)
# what may follow a group that is the group itself — a verb or a joiner, never a noun it
# qualifies ("my family dinners", "our team's van")
_GROUP_THEN = (
    r"(?:and|or|is|was|are|were|has|had|have|will|would|can|could|always|never|just|still|really|so|too|"
    r"at|in|on|to|from|with|for|means|meant|loves|lives|gets|goes|does|makes|takes|keeps|helps|needs|"
    r"wants|likes|comes|[a-z]+ed|won|sang|went|came|made|got|took|gave|grew|ran|met|left|lost)\b"
)
# a group of the speaker's people spoken of as "they" ("my family", "our band"), and an
# opening "Family" the speaker says something of ("Family's everything to me": their own)
_COLLECTIVE = re.compile(
    rf"\b(?P<det>my|our)\s+(?P<noun>{'|'.join(sorted(COLLECTIVES))})\b(?=\s*(?:[.,!?;:]|$)|\s+{_GROUP_THEN})|"
    r"^(?P<bare>family)(?='s\b|\s+(?:is|was|means|has)\b)",
    re.IGNORECASE,
)
# the speaker's plural before a particle of its verb: "I took my turtles out", "dropped our kids off"
_OWN_TAKEN_OUT = re.compile(r"\b(?P<det>my|our)\s+(?P<noun>[a-z]+[^s\W]s)(?=\s+(?:out|off|back|around|over|up|down)\b)", re.IGNORECASE)
# a plural the sentence opens on, whatever follows it
_SUBJECT_PLURAL = re.compile(r"^(?P<det>these|those|my|our)\s+(?P<noun>[a-z]+[^s\W]s)\b", re.IGNORECASE)
# "them" in the clause of the speaker's own "I"/"we" cannot be the speaker ("I love having
# them around"): it is something the chat named.
_BOUND_THEM = re.compile(
    r"\b(?:I|I'm|I've|I'll|I'd|we|we're|we've|we'll)\s+"
    r"(?:(?!(?:and|but|because|so|when|while|if|that|who|which|since|as|after|before|until|or)\b)[^,;:.!?\s]+\s+){0,6}?"
    r"(?P<them>them)\b(?!\s+(?:and|&)\s+(?:others|me|us)\b)",
)


def name_bound_them(sentence: str, things: Sequence[Thing]) -> str:
    """The sentence with a "them" bound in the speaker's own clause named by the first
    plural of ``things`` ("I love having them around" → "I love having my turtles around"),
    or unchanged when there is none or no such "them"."""
    found = _BOUND_THEM.search(sentence)
    thing = them_named(sentence, things)
    if found is None or thing is None:
        return sentence
    return sentence[: found.start("them")] + thing.words + sentence[found.end("them") :]


def them_named(sentence: str, things: Sequence[Thing]) -> Thing | None:
    """The plural of ``things`` that names the sentence's bound "them" (``name_bound_them``),
    or ``None``."""
    found = _BOUND_THEM.search(sentence)
    if found is None:
        return None
    to_people = _TO_PEOPLE.search(sentence[: found.start("them")]) is not None
    return next((t for t in things if t.plural and _may_be_them(t, to_people)), None)


def bound_them(sentence: str) -> bool:
    """Whether ``sentence`` still has a "them" in the speaker's own clause ("I'd love to check
    them out"): something the chat named that nothing here names (``name_bound_them``)."""
    return "them" in sentence and _BOUND_THEM.search(sentence) is not None


# "there" that points at a place: not "there is/are…", not "out there in…" (the place follows)
_BARE_THERE = re.compile(
    r"\bthere\b(?!\s+(?:is|are|was|were|'s|has|have|had|will|would|might|must|seems|seem|in|at|on|to|from|with|by)\b)(?!')",
    re.IGNORECASE,
)


def name_there(sentence: str, places: Sequence[str]) -> str:
    """"We stayed there a week." after "…ever been to Crete?" → "We stayed in Crete a week."
    — the first bare "there" named by the last place the chat named just
    before it; unchanged with none."""
    if not places or "there" not in sentence.lower():
        return sentence
    found = _BARE_THERE.search(sentence)
    if found is None or found.start() == 0:
        return sentence
    return f"{sentence[: found.start()]}in {places[0]}{sentence[found.end() :]}"


_HE = frozenset("brother son dad father husband boyfriend uncle nephew grandpa grandfather fiance stepdad stepson".split())
_SHE = frozenset("sister daughter mom mum mother wife girlfriend aunt niece grandma grandmother fiancee stepmom stepdaughter".split())
_KIN = re.compile(
    r"\b(?P<whose>my|our)\s+(?:(?:little|big|older|younger|oldest|youngest|best|new|old)\s+)?(?P<who>[a-z-]+)\b",
    re.IGNORECASE,
)


def people_named(said: str) -> list[tuple[str, str | None]]:
    """The one person (or pet) phrases a speaker's own words name, the last first, with "he"
    or "she" when the word says which: "my cousin" (either), "my sister" ("she")."""
    found = []
    for m in _KIN.finditer(said):
        who = m["who"].lower()
        if who in RELATIONS and not is_plural(who) and who not in ("family", "fam", "team", "kids", "children"):
            found.append((m[0][0].lower() + m[0][1:], "he" if who in _HE else "she" if who in _SHE else None))
    return found[::-1]


# "he", "she", and "him"/"her" as an object (before a verb, a preposition or the end)
_PERSON_POINTER = re.compile(
    r"\b(?P<word>he|she|him|her)\b(?P<next>\s+(?:find|get|go|be|feel|know|see|make|out|up|with|to|for|about|"
    r"through|when|and|a|the|so|again|too|more|most)\b|\s*[.,;!]|$)?",
    re.IGNORECASE,
)


def name_the_person(sentence: str, people: Sequence[tuple[str, str | None]]) -> str:
    """"I'm helping her find a new place." after "My cousin had a tough year." → "I'm helping
    my cousin find a new place.": the first "he"/"she"/"him"/"her" (as an object) named by
    the last person the speaker's line named, when their word does not say the other one;
    unchanged otherwise."""
    if not people:
        return sentence
    found = _PERSON_POINTER.search(sentence)
    if found is None or found.start() == 0:
        return sentence
    word = found["word"].lower()
    if word == "her" and found["next"] is None:
        return sentence  # "her bag": a possessive, whose form the phrase cannot take
    phrase, gender = people[0]
    if gender is not None and gender != ("he" if word in ("he", "him") else "she"):
        return sentence
    return f"{sentence[: found.start()]}{phrase}{sentence[found.end('word') :]}"


# "let them know", "reading to them": a "them" that only people (or pets) can be
_TO_PEOPLE = re.compile(
    r"\b(?:let|lets|tell|told|help|helped|helps|thank|thanked|support|supported|remind|reminded|show|"
    r"showed|teach|taught|meet|met|visit|visited|miss|missed|know|knew|trust|love|loved|call|called|"
    r"to|for|with|of|about|provide|provided|believe in|proud of)\s+$",
    re.IGNORECASE,
)


def _may_be_them(thing: Thing, to_people: bool) -> bool:
    """Whether a bound "them" may be ``thing``: people or pets ("my kids", "the younger
    players") anywhere, a thing only where a thing fits and the speaker said whose or how many
    ("my turtles", "two kayaks") — "the hard work starts" or "my abilities" are no "them"."""
    head = thing.words.split()[-1].lower()
    if head in PEOPLE_AND_PETS or head.endswith("s") and head[:-1] in PEOPLE_AND_PETS:
        return True  # "the kids", "these critters"
    if to_people or thing.words.startswith('"'):
        return False
    return thing.words.split()[0].lower() in ("my", "our", "your") or thing.words.split()[0].isdigit() or thing.words.split()[0].lower() in _COUNT_WORDS


_COUNT_WORDS = frozenset("two three four five six seven eight nine ten".split())
