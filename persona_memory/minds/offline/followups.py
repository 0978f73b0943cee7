"""Follow-ups a human asks for: "ask me how it went", "remind me to call the bank", "I'll let you
know".

Rules:
- A follow-up is a request the speaker makes of the listener, at the start of a sentence or
  clause ("Ask me how it went", "…, so remind me to call the bank") — not "it reminds me of
  home". It is rendered as what the speaker asked, without "you": "asked to be asked how it
  went", "asked to be reminded to call the bank", "will report back on how it goes".
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
    """The follow-up this sentence asks for, or ``None``. ``sentence`` is still first person."""
    for pattern, template in _PATTERNS:
        match = pattern.search(sentence)
        if match is None:
            continue
        rest = match["rest"].strip().rstrip(".!")
        if template.startswith("will report back") and rest:
            rest = re.sub(r"^(?:about|on|how|what|if|whether)\b", lambda m: "on " + m[0], rest, count=1)
            rest = rest.replace("on on", "on").replace("on about", "about")
        clause = " ".join(template.format(rest=rest).split())
        content = [w.lower() for w in _WORD.findall(rest)]
        meaningful = [w for w in content if w not in STOPWORDS and w not in _PRONOUN_ONLY]
        return FollowUp(clause=clause, needs_antecedent=not meaningful, start=match.start())
    return None
