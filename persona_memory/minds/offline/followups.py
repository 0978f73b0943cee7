"""Follow-ups a human asks for: "ask me how it went", "remind me to call the bank", "I'll let you
know".

Rules:
- A follow-up is a request the speaker makes of the listener, at the start of a sentence or
  clause ("Ask me how it went", "…, so remind me to call the bank") — not "it reminds me of
  home". It is rendered as what the speaker asked, without "you": "asked to be asked how it
  went", "asked to be reminded to call the bank", "will report back on how it goes".
- One request is one follow-up: a sentence that asks for two ("I'll let you know how the exam
  goes, and I'll report back on the vet too") yields two, each about its own part.
- When what it is about is only a pronoun ("how it went", "I'll let you know"), it cannot stand
  alone: it is joined to the statement it follows ("u:42 is interviewing at Tencent on Thursday
  2026-08-13 and asked to be asked how it went."), or dropped when there is none.
"""

from __future__ import annotations

import re

import attrs

from .lexicon import STOPWORDS

_LEAD = (
    r"(?:^|[,;:–—-]\s*|\b(?:and|so|but|then)\s+)"
    r"(?:(?:please|pls|just|also|can you|could you|do|don't forget to)\s+)*"
)
_PATTERNS = (
    (
        re.compile(_LEAD + r"ask me (?P<rest>(?:how|about|what|if|whether|when)\b.*|later|again.*)$", re.I),
        "asked to be asked {rest}",
    ),
    (
        re.compile(_LEAD + r"remind me (?P<rest>(?:to|about|of|that|when)\b.*)$", re.I),
        "asked to be reminded {rest}",
    ),
    (
        re.compile(_LEAD + r"check (?:in|back) (?:with|on) me\b(?P<rest>.*)$", re.I),
        "asked for a check-in {rest}",
    ),
    (
        re.compile(
            _LEAD
            + r"(?:I|we)(?:'ll| will)\s+(?:(?:definitely|totally|surely|be sure to)\s+)?(?:let you know|"
            r"keep you (?:posted|updated|in the loop)|update you|tell you|report back)\b(?P<rest>.*)$",
            re.I,
        ),
        "will report back {rest}",
    ),
)
_PRONOUN_ONLY = frozenset(
    """it that this things them everything went goes go later soon next week weekend month year
    tomorrow today tonight day days""".split()
)
_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")


@attrs.frozen
class FollowUp:
    """A follow-up request: the clause to write, whether it needs a statement to join, and
    where in the sentence it began (what comes before it is a statement of its own: "I'm
    interviewing on Thursday, ask me how it went")."""

    clause: str
    needs_antecedent: bool
    start: int = 0


def follow_up(sentence: str) -> FollowUp | None:
    """The first follow-up this sentence asks for, or ``None``. ``sentence`` is still first
    person."""
    found = follow_ups(sentence)
    return found[0] if found else None


def follow_ups(sentence: str) -> list[FollowUp]:
    """Every follow-up this sentence asks for, in order: "I'll let you know how the exam goes,
    and remind me to book the vet" asks for two. ``sentence`` is still first person."""
    found: list[FollowUp] = []
    offset = 0
    while (first := _first_follow_up(sentence[offset:])) is not None:
        match, template = first
        rest_end = match.end("rest")
        after = _first_follow_up(match["rest"])
        if after is not None:
            rest_end = match.start("rest") + after[0].start()
        rest = sentence[offset + match.start("rest") : offset + rest_end]
        found.append(_render(match, template, rest, offset))
        if after is None:
            break
        offset += rest_end
    return found


_CUES = (
    ("ask me ",),
    ("remind me ",),
    ("check in ", "check back "),
    ("let you know", "keep you ", "update you", "tell you", "report back"),
)
"""Per pattern, the words one of which every match holds: a sentence with none of them skips
the pattern's search (tested on ASCII text only, where case folding cannot turn another
letter into an ASCII one)."""
assert len(_CUES) == len(_PATTERNS)


def _first_follow_up(text: str) -> tuple[re.Match[str], str] | None:
    """The earliest follow-up request in ``text``, with the template that renders it."""
    low = text.lower() if text.isascii() else None
    hits = [
        (m, t)
        for (p, t), cues in zip(_PATTERNS, _CUES)
        if (low is None or any(cue in low for cue in cues)) and (m := p.search(text)) is not None
    ]
    return min(hits, key=lambda hit: hit[0].start()) if hits else None


def _render(match: re.Match[str], template: str, rest: str, offset: int) -> FollowUp:
    """The follow-up ``match`` found (``offset`` characters into the sentence), about ``rest``."""
    rest = rest.strip().rstrip(".!,;:–—- ")
    if template.startswith("will report back") and rest:
        rest = re.sub(r"^(?:about|on|how|what|if|whether)\b", lambda m: "on " + m[0], rest, count=1)
        rest = rest.replace("on on", "on").replace("on about", "about")
    clause = " ".join(template.format(rest=rest).split())
    content = [w.lower() for w in _WORD.findall(rest)]
    meaningful = [w for w in content if w not in STOPWORDS and w not in _PRONOUN_ONLY]
    return FollowUp(clause=clause, needs_antecedent=not meaningful, start=match.start() + offset)
