"""An answer whose opening pronoun is named by what follows it: "It's a map of the old city".

In chat the thing a line is about was often named in the line before, by the other person
("Love that map! What's on it?"), and the answer opens on a pronoun: "It's a map of the old
city from 1890." Alone the sentence points at nothing; but its predicate *names* the thing —
the sentence says what "it" is. So the speaker's row keeps that name: "u:42 mentioned a map of
the old city from 1890." — what they spoke of, without guessing what the pronoun meant.

Rules:
- Only a sentence that has no row before it to continue (the first of a line, the one that
  answers the line before, or one after a sentence that gave no row — the caller knows),
  opening on "it", "that", "this", "they" or "these" with "is", "was", "are", "were" or
  their contractions,
  and then a thing: an article or a number and a noun ("It's a sourdough starter", "They're
  two rescue ferrets") or a name ("It's Lisbon"). Never an adjective ("It's lovely to…"),
  a dummy "it" or a time ("It's been a week", "It was a Tuesday").
- What the predicate calls the pronoun must be a thing, not a verdict on it: "a shame", "a
  relief", "a great idea", "a lot", "a must", "a nice break" are reactions (``_VERDICTS``)
  and give nothing; so is an article with two words or fewer ("a great pic", "an amazing
  experience", "a big decision"): the thing needs three words after its article ("a team
  shooter game", "a mix of jazz and soul") or a name or a number. Praise by "that" or
  "this" ("That's a good spot for a swim!", "That's an awesome stamp collection") is for what
  the listener showed, and gives nothing too.
- The sentence must not speak to the listener ("It's a gift for you") — whose thing that is
  cannot be told later — nor name someone present (the caller checks names).
- "This is my prized possession, a jersey signed by my hero" says what the speaker's thing
  is: "My prized possession is a jersey signed by my hero".
- A name given for the pronoun is the thing: "Her name is Juniper!", "It's called The Lamb"
  → "I mentioned Juniper", "I mentioned The Lamb" (a name is capitalised; "It's called a
  hob" is no name).
- The row is first person, for the usual turn to the third: "I mentioned <the predicate>"; the
  rest of the sentence after the thing stays ("It's a quilt my gran made" → "I mentioned a
  quilt my gran made").
"""

from __future__ import annotations

import re

_IDENTITY = re.compile(
    r"^(?:it|that|this|they|these)(?:'s|'re| is| was| are| were)\s+"
    r"(?P<thing>(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+)\s+[A-Za-z][\w'-]*.*|"
    r"(?-i:[A-Z])[\w'-]+.*)$",
    re.IGNORECASE,
)
_NAMED = re.compile(
    r"^(?:(?:her|his|their|its) names? (?:is|are|was|were)|(?:it|she|he|they)(?:'s|'re| is| are| was| were)"
    r" (?:called|named))\s+(?P<name>(?-i:[A-Z])[\w'-]*(?:\s+(?:and\s+)?(?-i:[A-Z])[\w'-]*)*)(?P<rest>.*)$",
    re.IGNORECASE,
)
_VERDICTS = re.compile(
    r"^(?:one of (?:my|our|the) (?:all-time )?favou?rites\b|"
    r"(?:a|an)\s+(?:(?:\w+\s+){0,2})?(?:shame|pity|relief|bummer|blast|must|lot|joke|mess|"
    r"idea|way|thing|deal|start|treat|dream|nightmare|pleasure|honou?r|challenge|struggle|"
    r"journey|process|bit|while|time|moment|day|night|morning|evening|weekend|week|month|season|"
    r"summer|winter|spring|autumn|year|reminder|sign|lesson|experience|memory|memories|feeling|"
    r"quality|adventure|move|step|rush|ride|jump|light|break|change|escape|getaway|distraction|outlet|"
    r"success|hit|win|surprise|wonder|miracle|game changer|no-brainer)\b)",
    re.IGNORECASE,
)
# "That's an awesome book collection!": a pointer at the listener's thing, praised
_PRAISED_THERE = re.compile(
    r"^(?:that|this)(?:'s| is| was)\s+(?:a|an|such a|such an)\s+(?:\w+\s+)?(?:good|great|nice|awesome|amazing|lovely|"
    r"beautiful|cool|fantastic|wonderful|incredible|perfect|fun|gorgeous|stunning|impressive|neat|sweet|cute)\b",
    re.IGNORECASE,
)
_TIME_OR_NUMBER_ONLY = re.compile(
    r"^(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:o'clock|am|pm|minutes?|hours?|"
    r"days?|weeks?|months?|years?)\b|^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b",
    re.IGNORECASE,
)
_TO_LISTENER = re.compile(r"\byou(?:r|rs|'re|'ve|'ll|'d)?\b", re.IGNORECASE)


_THIS_IS_MY = re.compile(
    r"^(?:this|that|it|these)(?:'s| is| was| are)\s+(?P<own>my|our)\s+(?P<what>[\w'-]+(?:\s+[\w'-]+){0,3}?)\s*"
    r"(?:,|:|\s[-–—])\s*(?P<thing>(?:a|an|the|two|three|\d+)\s+\S.*|(?-i:[A-Z])\S.*)$",
    re.IGNORECASE,
)


def is_verdict(predicate: str) -> bool:
    """Whether what a sentence calls its pronoun is a reaction, not a thing: "a big deal", "a
    relief", "one of my favourites" (see the module rules)."""
    return _VERDICTS.match(predicate.strip()) is not None


def named_thing(sentence: str) -> str | None:
    """"It's a map of the old city." → "I mentioned a map of the old city."; ``None`` when
    the sentence is not a pronoun named by its predicate (see the module rules)."""
    own = _THIS_IS_MY.match(sentence.strip())
    if own is not None:
        verb = "are" if own["what"].lower().endswith("s") and not own["what"].lower().endswith("ss") else "is"
        return f"{own['own'].capitalize()} {own['what']} {verb} {own['thing']}"
    named = _NAMED.match(sentence.strip())
    if named is not None:
        return f"I mentioned {named['name']}{named['rest']}"
    match = _IDENTITY.match(sentence.strip())
    if match is None:
        return None
    thing = match["thing"].strip()
    if _VERDICTS.match(thing) or _TIME_OR_NUMBER_ONLY.match(thing) or _TO_LISTENER.search(thing):
        return None
    if _PRAISED_THERE.match(sentence.strip()):
        return None  # "That's a good spot for a swim!": praise for what the listener showed
    words = re.findall(r"[\w'-]+", thing)
    if words[0].lower() in ("a", "an") and len(words) < 4 and not any(w[:1].isupper() or w[:1].isdigit() for w in words[1:]):
        return None
    return f"I mentioned {thing}"
