"""Call B without a model: ADD, UPDATE, CLOSE or NONE, by slots, word overlap and change cues.

Rules, first that applies:
0. Slots (``slots``) — the candidate fills a slot that holds one value at a time, and a
   neighbour fills the same slot with another value: UPDATE that neighbour ("u:42 now works at
   Globex" after "u:42 works at Acme Corp", "u:42 hates opera now" after "u:42 loves opera"),
   or CLOSE it when the candidate only says the value ended with nothing in its place ("u:42
   quit smoking" after "u:42 smokes a pack a day", "u:42 is no longer vegetarian"). An ending
   that is an event of its own ("u:42 sold the flat in Xuhui", "u:42 graduated", "u:42 quit
   their job at Google") is an UPDATE: the old row closes and the event is kept, so the arc
   stays readable. Relationship status and diet are such slots ("u:42 got engaged" after
   "u:42 is single", "u:42 started eating meat again" after "u:42 has been vegetarian for ten
   years"); an event that only touches one ("u:42 went to a wedding", "u:42 ate a steak at a
   barbecue") fills no slot and changes nothing here. Neighbours are tried in the order
   offered. The same value in the same slot is left to the rules below.
1. NONE — a neighbour already says it: every content word of the candidate is in the
   neighbour, or the two overlap by at least ``SAME`` (Jaccard of content stems), and both say
   it with the same polarity ("plays" vs "no longer plays").
2. CLOSE — the candidate only ends something ("no longer", "not … anymore", "stopped", "gave
   up") with nothing in its place, and shares its object with a neighbour ("u:42 no longer plays
   tennis" closes "u:42 plays tennis on Sundays").
3. UPDATE — the candidate carries a change ("sold", "quit", "moved out", "moved to", "now works
   at", "left", "broke up", "divorced", "changed", or an ending with a replacement: "no longer
   works at Google, now at Tencent") and shares its object with a neighbour. Sharing is a
   common content word that is not a generic verb ("sold the flat in Xuhui" updates "owns a
   flat in Xuhui"; "sold their old bike" leaves "owns a flat" alone). A change of job, home or
   partner said in other words is rule 0's; a cue and a topic word alone ("left their keys at
   the office") change nothing.
   A contradiction — the same words with the opposite polarity ("u:42 is vegetarian" after
   "u:42 is not vegetarian", "u:42 does not drink coffee" after "u:42 drinks coffee") — is an
   UPDATE too, unless it is a pure ending (rule 2).
   Rules 2 and 3 never end a row that fills a slot of the human's own by a sentence about
   someone of theirs: "u:42's sister divorced her husband" leaves "u:42 is married to their
   husband Tom" alone.
4. UPDATE — the neighbour is the same fact, better said: all of its words are in the candidate,
   which adds to them, and they overlap by at least ``BETTER_SAID`` — or the two give a state
   the same value ("u:42 has been vegetarian since 2016" after "u:42 is vegetarian").
5. ADD — anything else, and always when there are no neighbours.
Only labels that were offered are ever returned.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ...text.folded import Folded
from ..port import Neighbour, RoutingRequest
from .slots import Reading, about_someone_else, conflicts, readings, same_value
from .states import ATTRIBUTES
from .stems import content_stems, likeness

SAME = 0.7
BETTER_SAID = 0.5

_ENDING = Folded(
    r"\bno longer\b|(?:\bnot|n't|\bnever)\b(?:\s+\S+){0,6}?\s+any ?more\b|\bstopped\b|\bgave up\b",
    re.IGNORECASE,
)
_REPLACEMENT = re.compile(
    r"\bnow\b|\binstead\b|\bmoved to\b|\bnew\b|\bswitched to\b|\breplaced\b", re.IGNORECASE
)
_CHANGE = Folded(
    r"\b(?:sold|sells|selling|quit|quits|resigned|moved out|moved to|moved away|moving to|moving out|"
    r"now works?|now lives?|now at|left|leaves|leaving|broke up|breaking up|split up|divorced|"
    r"divorcing|changed|switched|got fired|was fired|was laid off|laid off|retired|dropped out|"
    r"is now|are now|has a new|got a new|new job)\b",
    re.IGNORECASE,
)
_CUE_WORDS = content_stems(
    "sold sell quit resigned moved move out left leave broke break up split divorced changed "
    "switched fired laid off retired dropped now new no longer stopped gave anymore instead"
) | {"not"}
_GENERIC = content_stems(
    "go goes went do does did have has had get got make made be is was play plays played like "
    "likes love loves enjoy enjoys use uses take took want wants new now still year years time "
    "day days thing things really lot"
)



_stems = functools.lru_cache(maxsize=1 << 14)(content_stems)
"""``content_stems``, remembered: the same neighbours come back for every candidate about one
person, slice after slice."""


def route_candidate(request: RoutingRequest) -> dict[str, Any]:
    """The router's answer for one candidate (see the module rules)."""
    if not request.neighbours:
        return {"event": "ADD"}
    by_slot = _slot_change(request)
    if by_slot is not None:
        return by_slot
    text = request.text
    stems = _stems(text)
    negated = "not" in stems
    for neighbour in request.neighbours:
        theirs = _stems(neighbour.text)
        if negated != ("not" in theirs):
            continue
        if stems and (stems <= theirs or likeness(stems, theirs) >= SAME):
            return {"event": "NONE"}
    ending = bool(_ENDING.search(text)) and not _REPLACEMENT.search(text)
    # a sentence about someone of theirs ("u:42's sister got divorced") changes none of the
    # person's own slots, whatever words it shares with them
    changeable = (
        tuple(n for n in request.neighbours if not readings(n.text)) if about_someone_else(text) else request.neighbours
    )
    for neighbour in changeable:
        theirs = _stems(neighbour.text)
        if negated != ("not" in theirs) and stems ^ theirs == {"not"} and len(stems | theirs) >= 2:
            return {"event": "CLOSE" if ending else "UPDATE", "old_id": neighbour.label}
    if _ENDING.search(text) or _CHANGE.search(text):
        target = _sharing_object(text, stems, changeable)
        if target is not None:
            return {"event": "CLOSE" if ending else "UPDATE", "old_id": target.label}
    mine = readings(text)
    for neighbour in request.neighbours:
        theirs = _stems(neighbour.text)
        if theirs < stems and (
            len(theirs) >= 2 and likeness(stems, theirs) >= BETTER_SAID or _same_state(mine, readings(neighbour.text))
        ):
            return {"event": "UPDATE", "old_id": neighbour.label}
    return {"event": "ADD"}


def _same_state(mine: tuple[Reading, ...], theirs: tuple[Reading, ...]) -> bool:
    """Whether the two give one of ``states``' attributes the same value: "u:42 has been
    vegetarian since 2016" says "u:42 is vegetarian" better, though it shares one word."""
    return any(
        a.slot == b.slot and a.slot.name in ATTRIBUTES and not a.ends and not b.ends and same_value(a.slot.name, a.value, b.value)
        for a in mine
        for b in theirs
    )


def _slot_change(request: RoutingRequest) -> dict[str, Any] | None:
    """Rule 0: the first neighbour whose slot the candidate gives another value or ends."""
    mine = readings(request.text)
    if not mine:
        return None
    for neighbour in request.neighbours:
        theirs = readings(neighbour.text)
        for new in mine:
            if any(conflicts(new, old) for old in theirs):
                closing = new.ends and not new.event
                return {"event": "CLOSE" if closing else "UPDATE", "old_id": neighbour.label}
    return None


def _sharing_object(text: str, stems: frozenset[str], neighbours: tuple[Neighbour, ...]) -> Neighbour | None:
    """The neighbour the change is about: the most object words in common."""
    mine = stems - _CUE_WORDS - _GENERIC
    best, best_shared = None, 0
    for neighbour in neighbours:
        shared = len(mine & (_stems(neighbour.text) - _GENERIC))
        if shared > best_shared:
            best, best_shared = neighbour, shared
    return best
