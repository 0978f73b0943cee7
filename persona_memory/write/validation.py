"""Checking what the mind extracted (design §2.1, §7): a model's JSON becomes a candidate only
after code has checked every field. Pure: no I/O.

A candidate is dropped — with its reason — unless:
1. its subject is ``world``; ``self`` with a counterpart present; or the ``u:`` id of a human
   present (and writable: memory on, this persona not muted);
2. its kind is one of the six;
3. its text is one sentence of at most 200 characters;
4. its importance is an int 1..10 and at least ``importance_min`` (3: the mundane is dropped);
5. its evidence is a non-empty list of ids of lines of this slice;
6. its ``valid_from``, if any, parses as a date;
7. a row about a human is backed by a line that human said: what one person states about
   another is not a memory about that other person; a ``self`` row (the persona's promise) is
   backed by a line the persona said;
8. the group evidence rule: a row about a human cites only lines in which that human speaks
   or is spoken to — their own lines, lines that call them by name (``addressed``), and
   lines that call nobody by name and do not speak of them in the third person (no name or
   id of theirs) when the subject answers the line or the line answers the subject (the line
   next to it is theirs), or, a persona's, when they are the only human in the slice. A row
   built on anyone else's line is refused: when one of its content words
   (``guards.content_stems``) is in such a line and in none of the lines said by or to its
   subject — "As Cara said, I'm moving to Lisbon" is u:42's claim, and "Cara is moving to
   Lisbon" built on it is not Cara's fact, even beside a line of Cara's that says "Lisbon".
   A row that takes nothing from such a line keeps only the lines said by or to its subject
   as evidence (a mind may cite the line its subject answered: Cara's "I run marathons every
   spring" after u:42's gossip about her is still Cara's fact, and no longer cites the
   gossip);
9. what its text says passes the content rules of ``guards`` — no secret, no order or claim
   of authority, no link or domain, no role-play, no other user named, no third party's
   sensitive fact, and words its evidence lines support. Those rules live in ``guards.py``,
   for every mind;
10. it cites no line said inside a role-play or a game (``fiction.in_fiction``, read over the
   whole slice): what is said in a fiction is not a fact about anyone;
11. it does not repeat an earlier candidate of the same answer (same subject, same text).
The display name of the human a row is about (a ``self`` row: its counterpart) is replaced by
their ``u:`` id first (ids survive renames); any other user's name refuses the row (rule 9).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

import attrs

from .. import ids
from ..rows import IMPORTANCE_HIGHEST, IMPORTANCE_LOWEST, KINDS, TEXT_LIMIT
from . import guards
from .addressed import called
from .fiction import in_fiction


@attrs.frozen
class Candidate:
    """A checked memory, ready for routing."""

    subject: str
    kind: str
    text: str
    importance: int
    evidence: tuple[int, ...]
    counterpart: str | None = None
    valid_from: str | None = None

    @property
    def about_user(self) -> int | None:
        return ids.parse_user_ref(self.counterpart if self.subject == ids.SELF else self.subject)


@attrs.frozen
class Dropped:
    """A candidate refused, and why (logged and counted, never silently lost)."""

    reason: str
    raw: object = attrs.field(eq=False, repr=False)


@attrs.frozen
class SliceFacts:
    """What validation checks a candidate against.

    ``names`` are the display names of the present, writable humans (a row's own subject's is
    replaced by its id); ``known_names`` every display name the memory knows, present or not
    (any of them but the subject's refuses a row). ``line_texts`` are the slice's lines by id,
    for the evidence rule; left empty, that rule is skipped.
    """

    persona: str
    line_speakers: Mapping[int, str]
    writable: frozenset[int]
    names: Mapping[int, str] = attrs.field(factory=dict)
    importance_min: int = 3
    known_names: Mapping[int, str] = attrs.field(factory=dict)
    line_texts: Mapping[int, str] = attrs.field(factory=dict)


_ABBREVIATIONS = re.compile(
    r"(\b(Mr|Mrs|Ms|Dr|St|Jr|Sr|vs|etc|e\.g|i\.e|No|Mt|Prof|Inc|Ltd)|(?<![\w.])[A-Z])\.$", re.IGNORECASE
)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[\"'(]?(?:[A-Z0-9]|u:\d))")
_DATE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")


def check_candidates(answer: Any, facts: SliceFacts) -> tuple[list[Candidate], list[Dropped]]:
    """Split a mind's extraction answer into checked candidates and dropped ones."""
    items = answer.get("memories") if isinstance(answer, dict) else answer
    if not isinstance(items, list):
        return [], [Dropped('the answer was not {"memories": [...]}', answer)]
    kept: list[Candidate] = []
    dropped: list[Dropped] = []
    seen: set[tuple[str, str]] = set()
    fiction = in_fiction(sorted(facts.line_texts.items())) if items else frozenset()
    for raw in items:
        try:
            candidate = _check(raw, facts, fiction)
        except _Refused as refusal:
            dropped.append(Dropped(str(refusal), raw))
            continue
        key = (candidate.subject, normalise_text(candidate.text))
        if key in seen:
            dropped.append(Dropped("repeats another candidate of this answer", raw))
            continue
        seen.add(key)
        kept.append(candidate)
    return kept, dropped


class _Refused(Exception):
    pass


def _check(raw: Any, facts: SliceFacts, fiction: frozenset[int] = frozenset()) -> Candidate:
    if not isinstance(raw, dict):
        raise _Refused("a candidate must be a JSON object")
    subject, counterpart = _subject(raw, facts)
    kind = raw.get("kind")
    if kind not in KINDS:
        raise _Refused(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    about = ids.parse_user_ref(counterpart if subject == ids.SELF else subject)
    text = _text(raw.get("text"), about, facts)
    importance = raw.get("importance")
    if (
        isinstance(importance, bool)
        or not isinstance(importance, int)
        or not IMPORTANCE_LOWEST <= importance <= IMPORTANCE_HIGHEST
    ):
        raise _Refused(f"importance {importance!r} is not an int from {IMPORTANCE_LOWEST} to {IMPORTANCE_HIGHEST}")
    if importance < facts.importance_min:
        raise _Refused(f"importance {importance} is below the bar of {facts.importance_min}")
    evidence = _evidence(raw.get("evidence"), facts)
    _check_source(subject, counterpart, evidence, facts)
    if ids.parse_user_ref(subject) is not None and facts.line_texts:
        evidence = _by_or_to_subject(subject, text, evidence, facts)
    refusal = guards.refusal(
        text,
        subject=subject,
        counterpart=counterpart,
        evidence=[(facts.line_speakers[i], facts.line_texts.get(i, "")) for i in evidence]
        if facts.line_texts
        else None,
        persona=facts.persona,
        known_names=_known_names(facts),
    )
    if refusal is not None:
        raise _Refused(refusal)
    played = next((i for i in evidence if i in fiction), None)
    if played is not None:
        raise _Refused(f"role-play: evidence line {played} is said inside a role-play or a game")
    return Candidate(
        subject=subject,
        counterpart=counterpart,
        kind=kind,
        text=text,
        importance=importance,
        evidence=evidence,
        valid_from=parse_valid_from(raw.get("valid_from")),
    )


def _subject(raw: dict, facts: SliceFacts) -> tuple[str, str | None]:
    subject = raw.get("subject")
    if subject == ids.WORLD:
        return subject, None
    if subject == ids.SELF:
        counterpart = raw.get("counterpart")
        uid = ids.parse_user_ref(counterpart) if isinstance(counterpart, str) else None
        if uid is None or uid not in facts.writable:
            raise _Refused(f"a self memory needs a counterpart present in the room, got {counterpart!r}")
        return subject, counterpart
    uid = ids.parse_user_ref(subject) if isinstance(subject, str) else None
    if uid is None:
        raise _Refused(f"subject {subject!r} is not 'world', 'self' or a u: id")
    if uid not in facts.writable:
        raise _Refused(f"subject {subject} is not a present human this persona may remember")
    return subject, None


def _known_names(facts: SliceFacts) -> dict[int, str]:
    return {**facts.known_names, **{uid: name for uid, name in facts.names.items() if name}}


def _text(text: Any, about: int | None, facts: SliceFacts) -> str:
    if not isinstance(text, str) or not text.strip():
        raise _Refused("text must be a non-empty sentence")
    text = " ".join(text.split())
    if about is not None and about in facts.writable:
        text = guards.own_name_to_id(text, about, _known_names(facts))
    if len(text) > TEXT_LIMIT:
        raise _Refused(f"text is {len(text)} chars; the limit is {TEXT_LIMIT}")
    if not is_one_sentence(text):
        raise _Refused("text is more than one sentence")
    return text


def _evidence(evidence: Any, facts: SliceFacts) -> tuple[int, ...]:
    if not isinstance(evidence, list) or not evidence:
        raise _Refused("evidence must be a non-empty list of line ids")
    out = []
    for line_id in evidence:
        if isinstance(line_id, bool) or not isinstance(line_id, int) or line_id not in facts.line_speakers:
            raise _Refused(f"evidence {line_id!r} is not a line of this slice")
        if line_id not in out:
            out.append(line_id)
    return tuple(out)


def _check_source(subject: str, counterpart: str | None, evidence: tuple[int, ...], facts: SliceFacts) -> None:
    speakers = {facts.line_speakers[i] for i in evidence}
    if subject == ids.SELF:
        if facts.persona not in speakers:
            raise _Refused("a self memory must come from a line the persona said")
    elif subject != ids.WORLD and subject not in speakers:
        raise _Refused(
            f"no evidence line was said by {subject}: what others say about a person is not a "
            "memory about them"
        )


def _by_or_to_subject(subject: str, text: str, evidence: tuple[int, ...], facts: SliceFacts) -> tuple[int, ...]:
    """The evidence of a row about a human, kept to the lines said by or to them (rule 8);
    ``_Refused`` when the row is built on another line."""
    kept = tuple(i for i in evidence if _said_by_or_to(subject, i, facts))
    if len(kept) == len(evidence):
        return evidence
    theirs: set[str] = set()
    for i in kept:
        theirs |= guards.content_stems(facts.line_texts.get(i, ""))
    about = ids.parse_user_ref(subject)
    leave_out = [ids.persona_name(facts.persona), _known_names(facts).get(about, "") if about else ""]
    words = guards.content_stems(text, leave_out=leave_out) - theirs
    for i in evidence:
        if i not in kept:
            taken = words & guards.content_stems(facts.line_texts.get(i, ""))
            if taken:
                raise _Refused(
                    f"evidence not said by or to {subject}: the row takes {', '.join(sorted(taken)[:4])} "
                    f"from line {i}, {facts.line_speakers[i]}'s, which does not speak to them; what "
                    "others say about a person is not a memory about them"
                )
    return kept


def _said_by_or_to(subject: str, line_id: int, facts: SliceFacts) -> bool:
    """The group evidence rule (rule 8) for one cited line of a row about ``subject``."""
    speaker = facts.line_speakers[line_id]
    if speaker == subject:
        return True
    text = facts.line_texts.get(line_id, "")
    about = ids.parse_user_ref(subject)
    known = _known_names(facts)
    people: dict[str, tuple[str, ...]] = {ids.user_ref(uid): (name,) for uid, name in known.items() if name}
    people.setdefault(subject, ())
    for other in set(facts.line_speakers.values()):
        if ids.parse_user_ref(other) is None:
            people[other] = (ids.persona_name(other),)
    names = called(text, people)
    if subject in names:
        return True
    if names or _speaks_of(text, subject, known.get(about, "") if about else ""):
        return False  # it speaks to someone else, or of the subject in the third person
    if ids.parse_user_ref(speaker) is None and facts.writable == {about}:
        return True
    order = sorted(facts.line_speakers)
    at = order.index(line_id)
    return any(0 <= i < len(order) and facts.line_speakers[order[i]] == subject for i in (at - 1, at + 1))


def _speaks_of(text: str, ref: str, name: str) -> bool:
    """Whether ``text`` names ``ref`` — their id, display name or a word of it."""
    if re.search(rf"(?<![\w:]){re.escape(ref)}(?!\d)", text):
        return True
    forms = (name.strip(), *name.split()) if name.strip() else ()
    return any(len(f) >= 2 and guards.name_regex(f).search(text) for f in forms)


def is_one_sentence(text: str) -> bool:
    """True when ``text`` has no line break and no sentence break inside it."""
    if "\n" in text or "\r" in text:
        return False
    for match in _SENTENCE_BREAK.finditer(text):
        if not _ABBREVIATIONS.search(text[: match.start()]):
            return False
    return True


def parse_valid_from(value: Any) -> str | None:
    """``None``, or a date as ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` (a datetime is cut to its
    date). Anything else raises ``_Refused``."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _Refused(f"valid_from {value!r} is not a date")
    value = value.strip()
    try:
        if len(value) > 10:
            return datetime.fromisoformat(value).date().isoformat()
        m = _DATE.fullmatch(value)
        if m is None:
            raise ValueError(value)
        year, month, day = m.group(1), m.group(2), m.group(3)
        date(int(year), int(month or 1), int(day or 1))
    except ValueError:
        raise _Refused(f"valid_from {value!r} is not a date like 2026-07 or 2026-07-17") from None
    return value


_NOT_KEPT = re.compile(r"[^\w:' ]+")


def normalise_text(text: str) -> str:
    """Case, spacing and final punctuation folded: the key of an exact duplicate."""
    return " ".join(_NOT_KEPT.sub(" ", text.casefold()).split())
