"""Whether a first-person sentence is about the listener rather than its speaker.

Rules:
- A sentence whose speaker only holds an attitude toward the listener or the listener's
  things — "I'm in awe of your patience", "I understand why the choir means so much to you",
  "I have faith in you", "I can't wait to see your garden" — says nothing lasting about the
  speaker, and is no row about them. It has these marks together:
  - it opens on the speaker ("I", "I'm", "I've", "I'd", "I can", an adverb between);
  - it says "you" or "your" after that opening;
  - it holds no more of the speaker: no "my", "me", "mine", "myself", "we", "our" or "us";
  - the speaker did nothing in it: no past deed ("I got this scarf for you", "I told you
    about the race"), no plan of theirs toward the listener ("I'll send you the recipe") —
    except a wish to see or hear the listener's things ("I'd love to hear you sing") — and no
    offer ("I can lend you the tent", "I could help you with the move", "I'm posting you the
    pattern now": what they can do or are doing, unless it is only seeing, imagining or
    understanding, or a feeling in -ing: "I'm loving your haircut");
  - it names nothing: no capitalised name after its first word, no number, no quoted title
    ("I think you'd like "Quiet Harbour"" keeps the title).
"""

from __future__ import annotations

import re

from .kinds import tense_of

_SPEAKER_OPENS = re.compile(
    r"^(?:I|I'm|I am|I've|I'd|I have|I can|I could|I would|I do|I really|I still|I totally|I just|"
    r"I always|I so|I truly|I definitely|I honestly)\b"
)
_LISTENER = re.compile(r"\b(?:you|your|yours|yourself)\b", re.IGNORECASE)
_MORE_OF_THE_SPEAKER = re.compile(r"\b(?:my|me|mine|myself|we|our|ours|us)\b", re.IGNORECASE)
_NAMED = re.compile(r"(?<=\S )(?!I\b|I')[A-Z][a-z]+|\d|\"[^\"]+\"")
_OFFER = re.compile(
    r"^I(?:'m| am)?(?: \w+ly| just| still| always| totally)? (?:can(?!')|could(?!')|'d be happy to|would be happy to|"
    r"happy to|glad to|\w+ing (?:you|it|them|this|that|the)\b)(?! (?:see|tell|imagine|relate|understand|feel|"
    r"picture|hear|believe|only imagine|just imagine)\b)"
)
_FEELING_PROGRESSIVE = re.compile(r"^I'm (?:so |really |totally )?(?:loving|rooting|cheering|hoping|wishing|missing)\b")
_TO_SEE_OR_HEAR = re.compile(
    r"\b(?:can't wait|cannot wait|would love|'d love|hope|hoping|excited|looking forward)\b"
    r"(?:\s+\w+){0,3}?\s+(?:to )?(?:see|seeing|hear|hearing|watch|watching|read|reading|meet|meeting)\b",
    re.IGNORECASE,
)


def about_the_listener(sentence: str) -> bool:
    """True for a sentence of the speaker's attitude toward the listener (module rules)."""
    opening = _SPEAKER_OPENS.match(sentence)
    if opening is None or not _LISTENER.search(sentence, opening.end()):
        return False
    if _MORE_OF_THE_SPEAKER.search(sentence) or _NAMED.search(sentence):
        return False
    tense = tense_of(sentence)
    if tense == "past" or _OFFER.match(sentence) and not _FEELING_PROGRESSIVE.match(sentence):
        return False
    return tense == "present" or bool(_TO_SEE_OR_HEAR.search(sentence))
