"""Role-play and make-believe in a chat: what is said inside a game is not a fact about the
person saying it. Pure: no I/O.

Rules:
- ``role_play(text)`` finds the words that set up a fiction: "let's play a game", "let's
  pretend", "pretend I'm…" or "imagine you're…" at the head of a clause, "in this story I
  am…", "for our game you're…" (this or our story, game, scene…, then who is what), "role-play
  time", "in character", and an acted line between
  asterisks ("*acts as a ship's captain*", "*draws a sword*"). A hobby told as a fact is not
  one: "u:42 plays a dragon in a community theatre show", "u:42 plays tabletop role-playing
  games on Fridays", "u:42 scored twice in the game", "*sighs* I failed my exam".
- ``in_fiction(lines)``: the ids of the lines said inside a fiction, in a slice read in order.
  A fiction starts at the line that sets it up, whoever says it (a human or a persona), and
  runs to the end of the slice, or to a line that steps out of it ("out of character",
  "ooc", "back to real life", "game over", "end of the story", "for real now", "irl").
  That line itself is outside again.
- Each text is read ``plain`` (look-alike letters written the ASCII way).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..text.folded import Folded
from ..text.plain import plain

_HEAD = r"(?:^|[\[.!?:;,*(]\s*|\b(?:ok|okay|now|so|just|and|then|please)\s+)"
_WHO = r"(?:I|I'm|I am|you|you're|you are|we|we're|we are|u:\d+|the persona|(?:he|she|they) (?:is|are))"
_ACTED = (
    r"acts?|acting|plays?|playing|pretends?|pretending|becomes?|transforms?|turns? into|morphs?|"
    r"shape-?shifts?|roleplays?|role-plays?|casts?|draws?|unsheathes?|summons?|kneels?|curtsies|"
    r"salutes?|bows?|enters? the|steps? into|puts? on (?:a|the|my|his|her|their) (?:crown|cloak|armou?r|mask|costume)"
)
_BE = (
    r"(?:I'm|I am|I was|I play|I'll be|you're|you are|you play|you'll be|we're|we are|u:\d+ (?:is|was|plays)|"
    r"the persona (?:is|plays))"
)
_ROLE_PLAY = Folded(
    r"\blet'?s (?:play )?(?:a |the |some |another |our )?game(?=\s*[:!-]|\s+(?:where|in which|of pretend|"
    r"of make-?believe|called)\b)|"
    r"\blet'?s (?:play|do|start|begin)?\s?(?:a |the |some |another |our )?(?:role-?play|rp|scene|"
    r"make-?believe)\b|\blet'?s (?:play )?pretend\b|\blet'?s (?:imagine|make-?believe)\b|"
    rf"{_HEAD}(?:pretend|imagine|suppose|picture)\s+(?:that\s+)?{_WHO}\b|"
    rf"\b(?:in|for) (?:this|our) (?:story|tale|fiction|fantasy|role-?play|rp|scene|make-?believe|game|"
    rf"scenario|world|universe|adventure),?\s+{_BE}|\bin the (?:fiction|fantasy|role-?play|rp|make-?believe),?\s+{_BE}|"
    r"\brole-?play (?:time|mode|with me|as)\b|\b(?:start|begin|do|try) (?:a |the |some |our )?role-?play\b|"
    r"\bin(?:-| )character\b|"
    rf"\*\s*(?:{_ACTED})\b[^*]{{0,80}}\*",
    re.IGNORECASE,
)
_STEP_OUT = re.compile(
    r"\b(?:out of character|ooc|back to (?:reality|real life|the real world)|game over|"
    r"end (?:of )?(?:the |our |this )?(?:game|story|role-?play|rp|scene)|"
    r"(?:stop|quit|done|finished) (?:pretending|playing|the game|role-?playing|the role-?play)|"
    r"for real (?:now|though)|seriously (?:now|though)|in real life|irl)\b",
    re.IGNORECASE,
)
_HINTS = ("let's", "lets", "pretend", "imagine", "suppose", "picture", "fiction", "fantasy", "believe", "role",
          "character", "*", " rp")
_FRAMES = ("story", "tale", "scene", "game", "scenario", "world", "universe", "adventure")


def _may_set_up(low: str) -> bool:
    """False only when ``_ROLE_PLAY`` cannot match the lowercase ASCII ``low``: each of its
    alternatives holds a word of ``_HINTS``, but "in this story…" and its like, which hold "this"
    or "our" and a word of ``_FRAMES``."""
    return any(map(low.__contains__, _HINTS)) or (
        ("this " in low or "our " in low) and any(map(low.__contains__, _FRAMES))
    )


def role_play(text: str) -> str | None:
    """The words in ``text`` that set up a fiction, or ``None`` (see the module rules)."""
    text = plain(text)
    if text.isascii() and not _may_set_up(text.lower()):
        return None
    match = _ROLE_PLAY.search(text)
    return " ".join(match[0].split()) if match else None


def in_fiction(lines: Iterable[tuple[int, str]]) -> frozenset[int]:
    """The ids of ``lines`` (id, text; in the order said) that are said inside a fiction."""
    inside: list[int] = []
    playing = False
    for line_id, text in lines:
        if role_play(text):
            playing = True
        elif playing and _STEP_OUT.search(plain(text)):
            playing = False
        if playing:
            inside.append(line_id)
    return frozenset(inside)
