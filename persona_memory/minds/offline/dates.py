"""Dates in a sentence, resolved against the moment the line was said.

"I'm interviewing at Tencent on Thursday", said on Monday 2026-08-10, means 2026-08-13; a memory
read weeks later must say so. ``resolve_dates`` finds the time phrases of a sentence, writes the
date into the text where a reader would need it, and reports the first one as ``valid_from``.

Rules:
- ``valid_from`` has the precision the speaker used: ``YYYY-MM-DD`` for a day ("yesterday",
  "on Thursday", "July 17", "2026-07-17", "three days ago"), ``YYYY-MM`` for a month ("next
  month", "last July", "in March", "July 2023") and for a week or weekend ("last week",
  "last weekend" — the text carries its first day), ``YYYY`` for a year ("in 2019", "last
  year", "two years ago"). No time stated, no ``valid_from`` (Graphiti's rule).
- Relative phrases are rewritten with the date ("tomorrow" → "on 2026-08-11", "tomorrow's
  launch" → "the launch on 2026-08-11", "last week's match" → "the match in the week of
  2026-08-03" — a thing of up to five words to its clause's end, after the sentence's first
  word and with no verb in it; otherwise the date keeps its possessive —, "on Thursday" →
  "on Thursday 2026-08-13", "last week" → "in the week of 2026-08-03", "next month" → "in
  September 2026"); phrases that already name their year stay as they are.
- A bare weekday, month or day-and-month looks back in a past-tense sentence and ahead in a
  future one. In a present-tense sentence a single weekday is the coming one ("my daughter
  turns 5 on Saturday"), but a month or day-and-month ("my birthday is in March"), a plural
  ("I swim on Mondays") or a time after "every" is recurring, not a date, and is left alone;
  so is a weekday after "the", "a" or a possessive with no preposition before it ("the Sunday
  concerts", "my Saturday job"), or before a word that is not a time of day or a function word
  ("for the Friday train"): it names a thing.
- "for four years" in a present-perfect sentence ("I've known them for 4 years") states a
  start: "(since 2019)" is added and ``valid_from`` is that year.
- Vague spans ("a few weeks ago", "recently") resolve to nothing.
- A sentence that opens with its date ("Last Friday I went…") gets the date moved behind its
  first clause, so the memory can begin with whom it is about.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import Literal

import attrs

from ...text.folded import Folded
from .lexicon import NUMBER_WORDS, STOPWORDS

Tense = Literal["past", "present", "future"]

MONTHS = (
    "January February March April May June July August September October November December".split()
)
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
_MONTH_FORMS = {
    **{m.lower(): i for i, m in enumerate(MONTHS, 1)},
    **{m[:3].lower(): i for i, m in enumerate(MONTHS, 1) if m != "May"},
    "sept": 9,
}
_WEEKDAY_FORMS = {
    **{d.lower(): i for i, d in enumerate(WEEKDAYS)},
    "mon": 0,
    "tue": 1,
    "tues": 1,
    "wed": 2,
    "thu": 3,
    "thur": 3,
    "thurs": 3,
    "fri": 4,
    "sat": 5,
    "sun": 6,
}


@attrs.frozen
class Dated:
    """A sentence with its time phrases resolved, and the first one as ``valid_from``."""

    text: str
    valid_from: str | None = None


@attrs.frozen
class _Hit:
    start: int
    end: int
    replacement: str
    valid_from: str


def resolve_dates(sentence: str, today: date, tense: Tense) -> Dated:
    """Resolve every time phrase of ``sentence`` against ``today`` (see the module rules)."""
    hits: list[_Hit] = []
    cues = _cues(sentence)
    for (pattern, handler), needs in zip(_RULES, _NEEDS):
        if not needs <= cues:
            continue  # a word every match of this rule holds is not in the sentence
        for match in pattern.finditer(sentence):
            if any(match.start() < hit.end and hit.start < match.end() for hit in hits):
                continue
            resolved = handler(match, today, tense)
            if resolved is None:
                continue
            shown, valid_from, natural = resolved
            owned = _POSSESSED.match(sentence, match.end()) if match.start() > 0 else None
            if owned is not None and not _VERB_IN.search(owned["thing"]):
                # "tomorrow's grand opening" → "the grand opening on 2026-08-11"
                said = (match["pre"] or "") if "pre" in match.re.groupindex else ""
                shown = f"{said}the {owned['thing']} {natural} {shown}".replace("  ", " ")
                hits.append(_Hit(match.start(), owned.end(), shown, valid_from))
                continue
            # a date that keeps its possessive takes no preposition: "2026-08-11's show"
            pre = "" if sentence.startswith("'s", match.end()) else _keep_preposition(match, natural)
            hits.append(_Hit(match.start(), match.end(), f"{pre}{shown}", valid_from))
    if not hits:
        return Dated(sentence)
    hits.sort(key=lambda h: h.start)
    text = sentence
    for hit in reversed(hits):
        text = text[: hit.start] + hit.replacement + text[hit.end :]
    lead = hits[0]
    if lead.start == 0:
        text = _move_lead(text, len(lead.replacement))
    return Dated(text, lead.valid_from)


# the thing a time phrase owns ("tomorrow's grand opening", "last week's match to Leeds"):
# up to five words, to the end of its clause
_POSSESSED = re.compile(
    r"'s (?P<thing>(?:[A-Za-z-]+ ){0,4}?[A-Za-z-]+)"
    r"(?=\s*(?:[,.;:!?]|$)|\s+(?:and|but|so|because|which|that|when|with|where|if|as)\b)"
)


_VERB_IN = re.compile(
    r"\b(?:is|was|are|were|be|been|has|have|had|will|would|can|could|should|may|might|must|do|does|did)\b", re.I
)


def _keep_preposition(match: re.Match[str], natural: str) -> str:
    """The preposition the phrase is shown with: the speaker's, else its natural one."""
    if "pre" not in match.re.groupindex:
        return f"{natural} " if natural else ""
    said = (match["pre"] or "").split()
    word = said[0] if said else natural
    if said and word.lower() in ("in", "on", "during"):
        word = natural if natural else word
        if said[0][0].isupper():
            word = word.capitalize()
    return f"{word} " if word else ""


def _move_lead(text: str, length: int) -> str:
    """Move a date that opens the sentence behind its first clause."""
    phrase, rest = text[:length], text[length:].lstrip(" ,")
    if not rest or not rest[0].isalpha():
        return text
    phrase = phrase[0].lower() + phrase[1:]
    boundary = _CLAUSE_END.search(rest)
    cut = boundary.start() if boundary else len(rest)
    head = rest[:cut].rstrip()
    return f"{head[0].upper() if head[0] != 'i' else head[0]}{head[1:]} {phrase}{rest[cut:]}"


_CLAUSE_END = re.compile(
    r"\s+[-–—]+\s+|;|,\s+(?:and|but|so|which|it|it's|that|this|where|because)\b|[.!]+\s*$"
)


# -- the phrase rules -----------------------------------------------------------------------
#
# A handler returns the date as a reader should see it, the preposition it naturally takes,
# and ``valid_from``; ``None`` when the phrase is not a date here. A preposition the speaker
# used ("since last week", "by Friday") is kept instead of the natural one.

_Resolved = tuple[str, str, str]
_Handler = Callable[[re.Match[str], date, Tense], _Resolved | None]

_PRE = r"(?P<pre>\b(?i:in|on|during|by|since|until|till|before|after|from|for) (?:the )?)?"
_NUM = (
    r"(?P<n>a couple of|a couple|couple of|a|an|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve|\d{1,2})"
)
_MONTH = (
    r"(?P<month>January|February|March|April|May|June|July|August|September|October|November|"
    r"December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)(?![A-Za-z])\.?"
)
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?(?![\d:])"
_YEAR = r"(?P<year>(?:19|20)\d\d)(?!\d)"
_WEEKDAY = (
    r"(?P<weekday>Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Tues|Tue|Wed|"
    r"Thurs|Thur|Thu|Fri|Mon|Sat|Sun)(?P<plural>s)?(?![A-Za-z])"
)


def _number(text: str) -> int:
    text = text.lower().replace("a couple of", "couple").replace("couple of", "couple")
    text = text.replace("a couple", "couple")
    return int(text) if text.isdigit() else NUMBER_WORDS[text]


def _month_of(text: str) -> int:
    return _MONTH_FORMS[text.lower().rstrip(".")]


def _month_iso(year: int, month: int) -> str:
    return f"{year:04d}-{month:02d}"


def _month_name(year: int, month: int) -> str:
    return f"{MONTHS[month - 1]} {year}"


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def _as_written(match: re.Match[str]) -> str:
    return match[0][len(match["pre"] or "") :] if "pre" in match.re.groupindex else match[0]


def _iso(match: re.Match[str], today: date, tense: Tense) -> _Resolved | None:
    try:
        day = date(int(match["year"]), int(match["m"]), int(match["d"]))
    except ValueError:
        return None
    return match[0], day.isoformat(), ""


def _day_month(match: re.Match[str], today: date, tense: Tense) -> _Resolved | None:
    month, day_number = _month_of(match["month"]), int(match["day"])
    if match["year"]:
        try:
            return _as_written(match), date(int(match["year"]), month, day_number).isoformat(), "on"
        except ValueError:
            return None
    if tense == "present":
        return None
    candidates = []
    for year in (today.year - 1, today.year, today.year + 1):
        try:
            candidates.append(date(year, month, day_number))
        except ValueError:
            continue
    if tense == "past":
        day = max((d for d in candidates if d <= today), default=None)
    else:
        day = min((d for d in candidates if d >= today), default=None)
    if day is None:
        return None
    return day.isoformat(), day.isoformat(), "on"


def _month_year(match: re.Match[str], today: date, tense: Tense) -> _Resolved | None:
    return match[0], _month_iso(int(match["year"]), _month_of(match["month"])), ""


def _named_month(match: re.Match[str], today: date, tense: Tense) -> _Resolved | None:
    month = _month_of(match["month"])
    which = (match["which"] or "").lower()
    if not which and not match["pre"] or _recurring(match):
        return None
    if which == "last" or (not which and tense == "past"):
        year = today.year if month < today.month else today.year - 1
        if not which and month == today.month:
            year = today.year
    elif which == "this":
        year = today.year
    elif which == "next" or (not which and tense == "future"):
        year = today.year if month > today.month else today.year + 1
        if not which and month == today.month:
            year = today.year
    else:
        return None
    return _month_name(year, month), _month_iso(year, month), "in"


def _year(match: re.Match[str], today: date, tense: Tense) -> _Resolved | None:
    return match[0], match["year"], ""


def _relative_day(match: re.Match[str], today: date, tense: Tense) -> _Resolved | None:
    offsets = {
        "the day before yesterday": -2,
        "the day after tomorrow": 2,
        "yesterday": -1,
        "last night": -1,
        "today": 0,
        "tonight": 0,
        "this morning": 0,
        "this afternoon": 0,
        "this evening": 0,
        "tomorrow": 1,
    }
    day = today + timedelta(days=offsets[" ".join(match["word"].lower().split())])
    return day.isoformat(), day.isoformat(), "on"


def _recurring(match: re.Match[str]) -> bool:
    """True for "every Saturday", "most Mondays": a habit, not a date."""
    return bool(_EVERY.search(match.string[: match.start()]))


_EVERY = re.compile(r"\b(?:every|each|most|all|some)\s+(?:other\s+)?$", re.I)


_NEXT_WORD = re.compile(r"\s+([a-z][a-z'-]*)\b")
_TIME_OF_DAY = frozenset("morning afternoon evening night nights lunchtime noon midnight".split())
_ATTRIBUTIVE = re.compile(r"\b(?:the|a|my|our|his|her|their|your)\s+$", re.I)


def _weekday(match: re.Match[str], today: date, tense: Tense) -> _Resolved | None:
    if match["plural"] or _recurring(match):
        return None
    if not match["pre"] and _ATTRIBUTIVE.search(match.string[: match.start()]):
        return None  # "the Sunday concerts", "my Saturday job": the name of a thing, not a date
    following = _NEXT_WORD.match(match.string, match.end())
    if following is not None and following[1] not in _TIME_OF_DAY and following[1] not in STOPWORDS:
        return None  # "for the Friday train": the weekday names the thing after it
    target = _WEEKDAY_FORMS[match["weekday"].lower()]
    which = " ".join((match["which"] or "").lower().split())
    if match["weekday"] in ("Sat", "Sun", "Mon") and not (which or match["pre"]):
        return None
    back = (today.weekday() - target) % 7 or 7
    ahead = (target - today.weekday()) % 7 or 7
    if which in ("last", "past") or (not which and tense == "past"):
        day = today - timedelta(days=back)
    elif which == "next":
        day = _monday(today) + timedelta(days=7 + target)
    elif which in ("this", "this coming", "coming"):
        day = today + timedelta(days=(target - today.weekday()) % 7)
    elif tense in ("future", "present"):
        day = today + timedelta(days=ahead)
    else:
        return None
    return f"{WEEKDAYS[target]} {day.isoformat()}", day.isoformat(), "on"


def _span(match: re.Match[str], today: date, tense: Tense) -> _Resolved | None:
    which = " ".join(match["which"].lower().split())
    steps = {"last": -1, "past": -1, "previous": -1, "this": 0, "earlier this": 0,
             "later this": 0, "next": 1, "coming": 1}
    return _shift(today, match["unit"].lower(), steps[which])


def _ago(match: re.Match[str], today: date, tense: Tense) -> _Resolved | None:
    return _shift(today, match["unit"].lower().rstrip("s"), -_number(match["n"]))


def _ahead(match: re.Match[str], today: date, tense: Tense) -> _Resolved | None:
    return _shift(today, match["unit"].lower().rstrip("s"), _number(match["n"]))


def _shift(today: date, unit: str, step: int) -> _Resolved:
    if unit == "day":
        day = today + timedelta(days=step)
        return day.isoformat(), day.isoformat(), "on"
    if unit == "week":
        monday = _monday(today) + timedelta(weeks=step)
        return f"the week of {monday.isoformat()}", _month_iso(monday.year, monday.month), "in"
    if unit == "weekend":
        saturday = _monday(today) + timedelta(days=5)
        if step < 0:
            saturday -= timedelta(weeks=-step)
        elif step > 0:
            saturday += timedelta(weeks=step - 1 if today.weekday() < 5 else step)
        return f"the weekend of {saturday.isoformat()}", _month_iso(saturday.year, saturday.month), "on"
    if unit == "month":
        year, month = _add_months(today.year, today.month, step)
        return _month_name(year, month), _month_iso(year, month), "in"
    return str(today.year + step), str(today.year + step), "in"


def _duration(match: re.Match[str], today: date, tense: Tense) -> _Resolved | None:
    if not _PERFECT.search(match.string) or not match["unit"].lower().startswith("year"):
        return None
    year = today.year - _number(match["n"])
    return f"{match[0]} (since {year})", str(year), ""


_PERFECT = Folded(
    r"\b(?:I've|we've|have|has|'ve)\s+(?:\w+\s+)?(?:been|known|had|lived|worked|loved|done|"
    r"played|wanted|dated|owned|run|taught|studied|practiced|practised)\b",
    re.I,
)

_RULES: tuple[tuple[re.Pattern[str], _Handler], ...] = (
    (re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<m>[01]\d)-(?P<d>[0-3]\d)\b"), _iso),
    (re.compile(rf"{_PRE}\b{_DAY} (?:of )?{_MONTH}(?:,? {_YEAR})?"), _day_month),
    (re.compile(rf"{_PRE}\b{_MONTH} {_DAY}(?:,? {_YEAR})?"), _day_month),
    (re.compile(rf"\b{_MONTH},? {_YEAR}"), _month_year),
    (
        re.compile(
            rf"{_PRE}\b(?P<word>(?i:the day before yesterday|the day after tomorrow|yesterday|"
            r"last night|today|tonight|this (?:morning|afternoon|evening)|tomorrow))\b"
        ),
        _relative_day,
    ),
    (re.compile(rf"{_PRE}\b(?i:{_NUM} (?P<unit>days?|weeks?|weekends?|months?|years?) ago)\b"), _ago),
    (re.compile(rf"\b(?i:in {_NUM} (?P<unit>days?|weeks?|months?|years?))\b(?! ago)"), _ahead),
    (re.compile(rf"\b(?i:for (?:the (?:past|last) )?{_NUM} (?P<unit>years?|months?))\b"), _duration),
    (
        re.compile(
            rf"{_PRE}\b(?i:(?P<which>last|past|previous|earlier this|later this|this|next|coming) "
            r"(?P<unit>week|weekend|month|year))\b"
        ),
        _span,
    ),
    (re.compile(rf"{_PRE}(?:\b(?P<which>(?i:last|this|next))\s+)?\b{_MONTH}(?! [0-3]?\d\b)"), _named_month),
    (
        re.compile(rf"{_PRE}(?:\b(?P<which>(?i:last|past|this coming|this|next|coming))\s+)?\b{_WEEKDAY}"),
        _weekday,
    ),
    (
        re.compile(rf"\b(?i:in|since|back in|during|from|until|by|of)(?: (?i:early|late|mid))?[ -]{_YEAR}"),
        _year,
    ),
)


# -- what each rule needs ---------------------------------------------------------------------
#
# Every match of a rule holds certain words, so a sentence without them skips the rule's pass
# (most sentences name no time at all). The cues are tested on an ASCII sentence only: with
# other letters about, case-insensitive matching may fold them into ASCII ones ("ſ" into "s"),
# so every rule runs.

_DIGIT = re.compile(r"\d")
_MONTH_STEMS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_WEEKDAY_STEMS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_RELATIVE_DAYS = ("yesterday", "last night", "today", "tonight", "this", "tomorrow")
_UNITS = ("day", "week", "month", "year")
_ALL_CUES = frozenset({"digit", "month", "weekday", "relative", "ago", "unit"})
_NEEDS: tuple[frozenset[str], ...] = tuple(
    frozenset(cues.split())
    for cues in (
        "digit",  # 2026-07-17
        "digit month",  # 17 July
        "digit month",  # July 17
        "digit month",  # July 2023
        "relative",  # yesterday, this morning
        "ago unit",  # three days ago
        "unit",  # in two weeks
        "unit",  # for four years
        "unit",  # last week, next month
        "month",  # in March
        "weekday",  # on Thursday
        "digit",  # in 2019
    )
)
assert len(_NEEDS) == len(_RULES)


def _cues(sentence: str) -> frozenset[str]:
    """The cues of ``_NEEDS`` that ``sentence`` holds."""
    if not sentence.isascii():
        return _ALL_CUES
    low = sentence.lower()
    found = set()
    if _DIGIT.search(sentence):
        found.add("digit")
    if any(stem in sentence for stem in _MONTH_STEMS):
        found.add("month")
    if any(stem in sentence for stem in _WEEKDAY_STEMS):
        found.add("weekday")
    if any(word in low for word in _RELATIVE_DAYS):
        found.add("relative")
    if "ago" in low:
        found.add("ago")
    if any(unit in low for unit in _UNITS):
        found.add("unit")
    return frozenset(found)
