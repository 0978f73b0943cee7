"""The persona's own promises: "I'll send you the 1988 shareholder letter", said by Warren to
u:42, becomes "Warren said he would send u:42 the 1988 shareholder letter."

Rules:
- A promise commits the persona to an act *for the person it is talking to*: "I'll…", "I
  will…", "I'm going to…", "Let me…" with "you" or "your" in the act ("I'll send you…", "I'll
  look at your draft"), or anything said with "I promise". Resolutions about itself ("I'll
  keep going", "I'm gonna make this year count") are not promises to anyone.
- Questions, conditionals ("if you like, I'll…") and pleasantries ("I'll miss you", "I'll
  always have your back", "I'll see you soon", "I'll let you know") are not promises.
- ``you`` becomes the counterpart's ``u:`` id; ``I``/``me``/``my`` become the persona's pronoun.
- An act that points at what it does not name ("I'll send it to you tonight") takes its thing
  from the line before, another's ("Could you send me the ferry timetable?" → "Warren said he
  would send the ferry timetable to u:42…"); with none there, it is no promise: nobody could
  tell later what was promised (``act_points_nowhere``).
"""

from __future__ import annotations

import re

from .lexicon import STOPWORDS
from .person import Voice, to_third_person
from .references import dangling
from .shape import as_memory_text

_PROMISE = re.compile(
    r"^(?:and |so |but |ok,? |okay,? )?(?P<how>I'll|I will|I shall|I promise(?: that)?(?: I'll| I will| to)?|"
    r"I'm going to|I am going to|I'm gonna|let me|I can promise(?: that)? I'll)\s+"
    r"(?:(?:definitely|totally|surely|make sure to|be sure to|try to|also|just|always)\s+)*(?P<act>.+)$",
    re.IGNORECASE,
)
_NOT_AN_ACT = re.compile(
    r"^(?:be|miss|see you|talk|chat|catch|bet|guess|admit|say|leave you|think|wait|have to|"
    r"know|hope|wish|take your word|do my best|keep (?:that|it|this) in mind|"
    r"keep (?:my|our) fingers crossed|hold you to|let you go|cheer|root|let you know|have (?:your|ya) back|"
    r"keep (?:you|ya) posted|keep (?:you|ya) updated|remember|never forget|always remember)\b",
    re.IGNORECASE,
)
_NEXT_CLAUSE = re.compile(r",?\s+(?:and|but|so)\s+(?=I\b|I'm\b)")
_FOR_LISTENER = re.compile(r"\b(?:you|your|yours|yourself|ya)\b", re.IGNORECASE)
_CONDITIONAL = re.compile(r"\b(?:if|unless|maybe|perhaps|might)\b", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")


def promised_act(sentence: str) -> str | None:
    """What the persona commits to in ``sentence`` ("send you the letter"), or ``None``."""
    if sentence.rstrip().endswith("?") or _CONDITIONAL.search(sentence):
        return None
    match = _PROMISE.match(sentence.strip())
    if match is None:
        return None
    act = _NEXT_CLAUSE.split(match["act"], maxsplit=1)[0].strip().rstrip(".!,")
    if _NOT_AN_ACT.match(act):
        return None
    promised = match["how"].lower().startswith(("i promise", "i can promise"))
    if not (promised or _FOR_LISTENER.search(act)):
        return None
    content = [w for w in _WORD.findall(act) if w.lower() not in STOPWORDS and w.lower() != "ya"]
    return act if content else None


def promise_text(act: str, persona_name: str, pronoun: str, counterpart: str) -> str | None:
    """The promise as one third-person sentence about the persona and its counterpart."""
    voice = Voice(ref=pronoun, pronoun=pronoun, listener=counterpart)
    turned = to_third_person(act, voice, named=True)
    return None if turned is None else f"{persona_name} said {pronoun} would {turned}"


def act_points_nowhere(act: str, counterpart: str) -> bool:
    """Whether a promised act ("send it to you tonight") points at something it does not
    name. It is read as a plain deed of someone's, so the persona's own pronoun never counts."""
    turned = to_third_person(act, Voice(ref="u:0", listener=counterpart), named=False)
    return turned is None or dangling(as_memory_text(f"u:0 will {turned}"))
