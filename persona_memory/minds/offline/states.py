"""States: what a person is, one value at a time, kept as a table of words. Pure.

Some attributes hold one value per person at a time because their values exclude each other:
nobody is single and married at once, or vegan and a meat eater. A sentence that gives such an
attribute a value ("u:42 got engaged", "u:42 started eating meat again") replaces whatever
value it held ("u:42 is single", "u:42 has been vegetarian for ten years"), however few words
the two sentences share. This module holds those attributes as data — ``TABLE``: attribute →
its values → the words and phrasings that set each — and compiles the table, once, at import,
into one pattern per attribute that ``slots`` tries on a clause.

Rules:
- A value is set in two ways. ``be``: a word or phrase said after a copula, a verb of being or
  becoming shared by every value (``COPULAS``: "is", "has been", "became", "went", "got",
  "turned", "is back to being", …): "is single", "has been vegetarian", "went vegan", "got
  engaged to Sam", "became a vegetarian". ``say``: a phrasing with its own verb: "tied the
  knot", "broke up with Robin", "started eating meat". Only a clause that begins with one of
  these sets a value (``slots`` has already dropped the subject and leading adverbs):
  "went to a wedding", "ate a steak at a barbecue", "wants to go vegan" set nothing.
- A ``be`` word ends as an ending: "is no longer vegan", "is not vegan anymore", "stopped
  being vegan", "used to be vegan" end that value with nothing in its place; ``ends`` adds
  phrasings of their own ("gave up meat"). A plain negation — "is not vegetarian", "doesn't
  eat meat" when the table lists it — is a value of its own (``"not vegetarian"`` or the value
  it names).
- What follows the phrasing must not turn it into a description of something else: the next
  word is the clause's end, a preposition, a conjunction, a time, frequency or degree word or
  a number (``_TAIL``) — "is vegan now", "got married in June", "is single again", "eats meat
  every day" — and never a noun ("a vegan chef", "a single room", "got a vegan cookbook"). A
  value may name words that may not follow it (``not_before``: "engaged in a lawsuit" is no
  betrothal).
- ``{who}`` in a phrasing is the other person ("engaged to {who}"); ``slots`` keeps the
  name beside the value ("engaged sam") and compares statuses exactly and names loosely.
- Phrasing syntax, one token per word: ``a|an`` for alternatives, ``[ … ]`` around optional
  words (a first word alone in them takes its space along), ``{who}`` for a person,
  ``{their}`` for their/his/her/the, ``{not}`` for does not, doesn't, don't, never,
  ``{anymore}`` for anymore or any more. The words are general English; nothing is keyed to a
  particular conversation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs


@attrs.frozen
class Value:
    """One value of an attribute and the ways a sentence gives it (see the module rules)."""

    name: str
    be: tuple[str, ...] = ()
    say: tuple[str, ...] = ()
    ends: tuple[str, ...] = ()
    not_before: tuple[str, ...] = ()


@attrs.frozen
class Attribute:
    """An attribute a person holds one value of at a time, and its values."""

    name: str
    values: tuple[Value, ...]


TABLE: tuple[Attribute, ...] = (
    Attribute("relationship", (
        Value(
            "single",
            be=("single", "unattached", "on the dating market"),
            say=(
                "broke|broken|breaking up [with {who}]",
                "split|splitting up [with {who}]",
                "split from {who}",
                "got|was dumped [by {who}]",
                "called off {their} engagement [to|with {who}]",
                "ended {their} relationship|engagement|marriage [with|to {who}]",
            ),
        ),
        Value(
            "dating",
            be=(
                "dating {who}",
                "in a [new|serious|long-distance|committed] relationship [with {who}]",
                "seeing someone|somebody [new]",
                "seeing a [new] guy|girl|man|woman|boy",
            ),
            say=(
                "started|began dating|seeing {who}",
                "started|began going out with {who}",
                "is together [with {who}]",
                "has|have been together [with {who}]",
                "is|got back together [with {who}]",
                "got together with {who}",
                "has|have a [new] boyfriend|girlfriend|partner [named|called {who}]",
                "asked {who} out",
            ),
        ),
        Value(
            "engaged",
            be=("engaged [to {who}]", "betrothed [to {who}]"),
            say=(
                "proposed to {who}",
                "popped the question [to {who}]",
                "has|have a fiance|fiancee|fiancé|fiancée [named|called {who}]",
            ),
            not_before=("in", "with", "by"),
        ),
        Value(
            "married",
            be=("married [to {who}]", "hitched", "wed"),
            say=(
                "married {who}",
                "tied the knot [with {who}]",
                "has|have a wife|husband|spouse [named|called {who}]",
                "wed {who}",
            ),
            not_before=("off",),
        ),
        Value(
            "divorced",
            be=("divorced [from {who}]",),
            say=("divorced {who}", "filed for divorce [from {who}]"),
        ),
        Value("separated", be=("separated [from {who}]",), say=("separated from {who}",)),
        Value(
            "widowed",
            be=("widowed", "a widow|widower"),
            say=("lost {their} wife|husband|partner|spouse",),
        ),
    )),
    Attribute("diet", (
        Value("vegetarian", be=("[a] vegetarian|veggie", "meat-free"), say=("{not} eat|eats meat",)),
        Value("vegan", be=("[a] vegan", "plant-based"), say=("eats plant-based",)),
        Value("pescatarian", be=("[a] pescatarian|pescetarian",)),
        Value(
            "eats meat",
            be=("[a|an] meat-eater|omnivore|carnivore", "[a] meat eater", "back to eating meat"),
            say=(
                "eats|eat meat",
                "is eating meat",
                "started|began|resumed eating meat",
                "went|got back to eating meat",
            ),
            ends=(
                "gave|given up [eating] meat",
                "stopped|quit eating meat",
                "cut|cutting out meat",
                "no longer eats meat",
                "{not} eat meat {anymore}",
                "is off meat",
            ),
        ),
        Value("flexitarian", be=("[a] flexitarian",)),
        Value(
            "keto",
            be=("keto", "on [a|the] keto diet"),
            say=("follows|started|began [a|the] keto diet", "went on [a|the] keto diet", "is doing keto"),
        ),
        Value("paleo", be=("paleo", "on [a|the] paleo diet"), say=("follows|started|began [a|the] paleo diet",)),
        Value(
            "gluten-free",
            be=("gluten-free", "on [a|the] gluten-free diet"),
            say=("follows|started|began [a|the] gluten-free diet",),
        ),
    )),
)

COPULAS = (
    "is", "has been", "have been", "remains", "stays", "stayed", "became", "has become", "got",
    "has got", "has gotten", "just got", "went", "has gone", "is going", "is getting", "turned",
    "has turned", "is turning", "went back to being", "is back to being",
)
"""The verbs of being and becoming a ``be`` word follows ("was" is not one: a past state says
nothing of now)."""

_ADVERBS = (
    "now still officially finally recently newly happily also fully strictly mostly completely "
    "totally basically technically again already"
)
_ENDINGS = ("is no longer", "has stopped being", "stopped being", "quit being", "gave up being", "used to be")
_NOT_NOW = ("is not", "isn't", "has not been", "hasn't been")
_ANYMORE = r"\s+any ?more\b"
_WHO = r"[^,;()]+?"
_SPECIAL = {
    "{their}": r"(?:their|his|her|the)",
    "{not}": r"(?:does\s*n[o']t|does\s+not|do\s*n[o']t|do\s+not|never)",
    "{anymore}": r"any\s?more",
}
_TAIL = (
    r"(?=$|[,;:(]|\s+(?:to|with|from|in|on|at|for|since|by|over|during|after|before|until|till|"
    r"about|near|around|across|into|through|as|again|now|anymore|any|too|also|yet|still|"
    r"already|officially|finally|recently|yesterday|today|tonight|ago|last|this|next|earlier|"
    r"lately|then|happily|every|each|daily|weekly|most|mostly|often|usually|sometimes|regularly|"
    r"occasionally|rarely|twice|once|and|but|so|though|although|because|when|while|or|years?|months?|"
    r"weeks?|days?|\d)\b)"
)


@attrs.frozen
class Match:
    """What a clause says of one attribute: the value (``"engaged"``, ``"not vegan"``), the
    other person it names (``who``, as said), and whether it only ends that value (``ends``)."""

    attribute: str
    value: str
    ends: bool = False
    who: str = ""


@attrs.frozen
class Compiled:
    """One attribute of the table, compiled: ``gate`` finds a word every clause that can set
    the attribute holds; ``pattern`` is matched at a clause's start; ``read`` says what a
    match of it gives."""

    attribute: str
    gate: re.Pattern[str]
    pattern: re.Pattern[str]
    _outcomes: Mapping[str, tuple[str, bool, bool]]  # group → (value, ends, negated)

    def read(self, found: re.Match[str]) -> Match:
        group = found.lastgroup
        assert group is not None and found.re is self.pattern
        value, ends, negated = self._outcomes[group]
        who_group = "w" + group[1:]
        who = found.group(who_group) if who_group in self.pattern.groupindex else None
        return Match(self.attribute, f"not {value}" if negated else value, ends, "" if ends else (who or ""))


def _token(word: str, who: str) -> str:
    if word == "{who}":
        return rf"(?P<{who}>{_WHO})"
    if word in _SPECIAL:
        return _SPECIAL[word]
    return "(?:" + "|".join(re.escape(w) for w in word.split("|")) + ")"


def _phrase(text: str, who: str) -> str:
    """A phrasing of the table as a pattern (the syntax in the module rules)."""
    out: list[str] = []
    spaced = True  # the prefix before the phrasing ends in a space
    for raw in text.split():
        opens = len(raw) - len(raw.lstrip("["))
        word = raw.strip("[]")
        closes = len(raw) - len(raw.rstrip("]"))
        if spaced and opens == closes == 1:  # "[a] vegan": the space goes with the optional word
            out.append("(?:" + _token(word, who) + r"\s+)?")
            continue
        out.append("(?:" * opens + ("" if spaced else r"\s+") + _token(word, who) + ")?" * closes)
        spaced = False
    return "".join(out)


def _words(texts: tuple[str, ...]) -> list[str]:
    """Each phrasing's rarest-looking required word — the one whose shortest alternative is
    longest, the later on a tie — with its alternatives: one of them is in every clause the
    phrasing fits."""
    found: list[str] = []
    for text in texts:
        required = [w for w in text.split() if not w.startswith(("[", "{"))]
        if required:
            found.extend(max(reversed(required), key=lambda w: min(map(len, w.split("|")))).split("|"))
    return found


def _either(words: tuple[str, ...]) -> str:
    return "(?:" + "|".join(w.replace(" ", r"\s+") for w in words) + ")"


def _compile(attribute: Attribute) -> Compiled:
    """One pattern of alternatives, a named group for each phrasing in each frame, tried in
    order: the endings first ("is not vegan anymore" is no negation), then negations, then
    values. The ``be`` words of every value share one frame ("is no longer …", "is not …",
    a copula), so a clause that does not begin with the frame's verb leaves them all at once."""
    outcomes: dict[str, tuple[str, bool, bool]] = {}

    def one(phrasing: str, value: Value, *, ends: bool = False, negated: bool = False, suffix: str = "") -> str:
        number = len(outcomes)
        outcomes[f"p{number}"] = (value.name, ends, negated)
        guard = "" if ends or negated else "".join(rf"(?!\s+{re.escape(w)}\b)" for w in value.not_before)
        return rf"(?P<p{number}>{_phrase(phrasing, f'w{number}')}{suffix}){guard}"

    def frame(verb: str, **kind: Any) -> str:
        return verb + r"\s+(?:" + "|".join(one(be, v, **kind) for v in attribute.values for be in v.be) + ")"

    copula = _either(COPULAS) + r"(?:\s+(?:" + "|".join(_ADVERBS.split()) + "))*"
    alternatives = [
        frame(_either(_NOT_NOW), ends=True, suffix=_ANYMORE),
        frame(_either(_ENDINGS), ends=True),
        *(one(phrasing, v, ends=True) for v in attribute.values for phrasing in v.ends),
        frame(_either(_NOT_NOW), negated=True),
        frame(copula),
        r"(?:has\s+|have\s+)?(?:" + "|".join(one(phrasing, v) for v in attribute.values for phrasing in v.say) + ")",
    ]
    keywords = {k for v in attribute.values for k in _words(v.be + v.say + v.ends)}
    gate = r"\b(?:" + "|".join(re.escape(k) for k in sorted(keywords, key=len, reverse=True)) + r")\b"
    return Compiled(attribute.name, re.compile(gate), re.compile("(?:" + "|".join(alternatives) + ")" + _TAIL), outcomes)


COMPILED: tuple[Compiled, ...] = tuple(_compile(a) for a in TABLE)
"""The table, compiled once."""
ATTRIBUTES = frozenset(a.name for a in TABLE)


def read_state(clause: str) -> Match | None:
    """The value ``clause`` gives one of the table's attributes, or ``None``.

    ``clause`` is lower case and begins with its verb (``slots`` drops the subject and
    leading adverbs): ``"got engaged to sam last june"`` gives ``Match("relationship",
    "engaged", who="sam")``.
    """
    for compiled in COMPILED:
        if compiled.gate.search(clause):
            found = compiled.pattern.match(clause)
            if found is not None:
                return compiled.read(found)
    return None
