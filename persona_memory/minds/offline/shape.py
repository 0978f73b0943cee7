"""The final form of a memory's text: one plain sentence of at most 200 characters.

Rules:
- Spaces are folded, emoticons and stray quotes dropped, a conjunction left hanging at the end
  (", but.") taken off, and the sentence ends with one full stop;
  it begins with a capital letter (or a ``u:`` id, which is written as it is).
- A text longer than the limit is cut at the last clause boundary that fits (", ", "; ", " - ",
  " and ", " but ", " because ", " which "), else at the last space: never inside a word.
- A time adverb before the subject ("Lately u:42 has been…", "Now, u:42 is…") moves after it:
  after its first auxiliary when it has one ("u:42 has lately been…", "u:42 is now…"), else to
  the end ("u:42 moved to Leeds recently"), so the row opens on whom it is about.
- So does a sentence adverb ("Maybe u:42 will…" → "u:42 will maybe…"; a filler such as
  "Overall," or "Honestly," is dropped), and a short phrase of place or time before a comma
  ("At the fair, u:42 met…", "Last season, u:42 hurt…") moves to the end of the row's first
  clause ("u:42 met … at the fair").
- A leading clause that names the subject ("When u:42 was younger, they had…", "In u:42's
  free time, they…") goes after the main clause, which then opens on the subject: "u:42 had
  … when u:42 was younger", "u:42 … in their free time" ("As for me," only turns the talk to
  the speaker and is peeled before the row is made: ``sentences``). "For u:42, adoption is…"
  is their view: "u:42 thinks
  adoption is…". "Some friends and u:42 went…" names them first: "u:42 and some friends
  went…".
- A row led by what its person does or owns opens on them instead: "Playing chess is u:42's
  escape" → "u:42's escape is playing chess"; "Dancing helps u:42 unwind" → "u:42 thinks
  dancing helps them unwind"; "Staying fit is important to u:42" → "u:42 thinks staying fit
  is important to them"; "Losing u:42's job was hard" → "u:42 found that losing their job was hard"
  (what the person said of it is what they think — or, in the past, what they found).
- A verdict before the person's clause ("Was wild, u:42 got noticed…", "It was busy, u:42…")
  is dropped: the row opens on them.
- Inner sentence ends ("!" or "?" followed by more words) become commas, initials lose their
  dots ("J. K. Rowling" → "J K Rowling"), and any other full stop inside ends the text there:
  a memory is one sentence.
"""

from __future__ import annotations

import re

from .lexicon import PAST_PARTICIPLES
from .person import third_singular

LIMIT = 200

_EMOTICON = re.compile(r"(?:^|\s)(?:[:;=8][-']?[()DPpOo3/\\|\]\[]+|<3|xD|XD|:\w+:)(?=\s|$)")
_SYMBOLS = re.compile(r"[^\w\s.,;:!?'\"()&%$€£¥+/@#–—-]")
_INNER_END = re.compile(r"\s*[!?]+\s+(?=\w)")
_INITIAL = re.compile(r"\b([A-Z])\.\s*(?=[A-Z])")
_INNER_STOP = re.compile(r"\.\s+(?=[\"'(]?[A-Za-z0-9])")
_KNOWN_ABBREVIATION = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|vs|etc|e\.g|i\.e|No|Mt|Prof|Inc|Ltd)\.$", re.I)
_TRAILING_JOIN = re.compile(r"(?:[\s,;:–—-]+(?:and|but|or|so|because|though|plus))+[\s,;:–—-]*$", re.IGNORECASE)
_BOUNDARY = re.compile(r",\s|;\s|\s[-–—]+\s|\s(?:and|but|because|which|while|so|though)\s")


_SPACE_BEFORE_MARK = re.compile(r"\s+([,.;:!?])")
_DOTS = re.compile(r"\.{2,}")
_JOINS = ("and", "but", "or", "so", "because", "though", "plus")
"""What a text ends with when ``_TRAILING_JOIN`` can take something off it (once stripped of
the marks it may end with; beyond ASCII the case-insensitive search always runs). So a text
ending otherwise, and one with no "!"/"?" (``_INNER_END``) or no "." (``_DOTS``, ``_INITIAL``,
``_INNER_STOP``), skips those searches: the same text, sooner."""


_LEADING_TIME = re.compile(
    r"^(?P<adverb>lately|recently|now|nowadays|currently|sometimes|these days)\s*,?\s+(?P<subject>u:\d+)\s+",
    re.IGNORECASE,
)
# an auxiliary, not a main verb: "has" and "had" only before a participle ("had a setback" owns one)
_AUXILIARY = re.compile(
    rf"^(?:(?:has|have|had)(?=\s+(?:[a-z]+ed|run|begun|{'|'.join(sorted(PAST_PARTICIPLES))})\b)|"
    r"is|was|are|were|will|would|can|could|may|might)\b\s+(?!been\b\s*$)"
)


_LEADING_ADVERB = re.compile(
    r"^(?P<adverb>maybe|perhaps|hopefully|luckily|thankfully|fortunately|unfortunately|sadly|"
    r"finally|honestly|overall|basically|anyway|still|also)\s*,?\s+(?P<subject>u:\d+)\s+",
    re.IGNORECASE,
)
_FILLER_ADVERBS = frozenset({"honestly", "overall", "basically", "anyway", "also", "still"})
_LEADING_PHRASE = re.compile(
    r"^(?P<phrase>(?:at|in|on|during|after|before|over|for|from|with|since|last|this|the|one|a)\b"
    r"[^,;:\-–—]{0,40}?),\s+(?P<subject>u:\d+)\s+(?P<rest>.+)$",
    re.IGNORECASE,
)
# "On Sundays u:42 bakes…": a phrase of time or place needs no comma before the subject
_LEADING_PHRASE_BARE = re.compile(
    r"^(?P<phrase>(?:on|in|at|during|after|before|over|since|every|last)\s[^,;:\-–—]{0,30}?)\s+"
    r"(?P<subject>u:\d+)\s+(?P<rest>.+)$",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r";\s|\s[-–—]\s")


_LEADING_CLAUSE = re.compile(
    r"^(?P<sub>(?:when|whenever|after|before|since|while|as soon as|once|even though|although|though|"
    r"because|especially (?:when|after|since|because)|as for|in|during|with|growing up)(?:\s+[^,;]{0,90}?)?(?P<id>u:\d+)?[^,;]{0,60}),\s+"
    r"(?P<main>(?:they|they're|they've|they'd|they'll|u:\d+)\b.+)$",
    re.IGNORECASE,
)
# "For u:42, rowing is how they clear their head": what the person holds — their view
_FOR_THEM = re.compile(r"^For\s+(?P<id>u:\d+),\s+(?P<view>(?!they\b|it\b)[a-z][^;]+)$", re.S)
# "Some friends from church and u:42 went camping": the person first
_AND_THEM = re.compile(
    r"^(?P<others>(?:Some|Two|Three|Four|Five|Several|Many|A few|My|Our|Their|A couple of)\s[^,;:]{0,40}?)\s+and\s+"
    r"(?P<id>u:\d+)\s+(?P<rest>[a-z].*)$",
    re.S,
)
_THEY_VERB = re.compile(r"^(?:(?P<contracted>they're|they've|they'd|they'll)|they\s+(?P<verb>[a-z']+))\b", re.IGNORECASE)
_SINGULAR_OF = {"they're": "is", "they've": "has", "they'd": "would", "they'll": "will",
                "are": "is", "were": "was", "have": "has", "do": "does", "don't": "doesn't", "aren't": "isn't",
                "weren't": "wasn't", "haven't": "hasn't"}


def _main_clause_first(text: str) -> str:
    """"When u:42 was younger, they had money problems." → "u:42 had money problems when u:42
    was younger." (see the module rules); other texts unchanged."""
    lead = _LEADING_CLAUSE.match(text)
    if lead is None:
        return text
    main = lead["main"].rstrip(" .!")
    named = re.search(r"u:\d+", lead["sub"])
    subject = lead["id"] or (named[0] if named else main.split(" ", 1)[0])
    if not subject.startswith("u:"):
        return text  # "When …, they…" with no id: who "they" is stays unsaid
    if not main.startswith(subject):
        they = _THEY_VERB.match(main)
        if they is None:
            return text
        if they["contracted"]:
            main = f"{subject} {_SINGULAR_OF[they['contracted'].lower()]}{main[they.end():]}"
        else:
            verb = they["verb"]
            singular = _SINGULAR_OF.get(verb.lower()) or third_singular(verb)
            main = f"{subject} {singular}{main[they.end():]}"
    sub = lead["sub"][0].lower() + lead["sub"][1:]
    if main.startswith(subject):
        sub = their(sub, subject)  # "…in their free time"
    end = _CLAUSE_END.search(main)
    if end is None:
        return f"{main} {sub}"
    return f"{main[: end.start()]} {sub}{main[end.start():]}"


def their(text: str, subject: str) -> str:
    """``text`` with the row's person's possessive said again as a pronoun: "u:42's free time"
    → "their free time", and one that stands for a thing ("even though u:42's is small") →
    "theirs"."""
    return re.sub(rf"{re.escape(subject)}'s(?P<alone>{_STANDS_ALONE})?", lambda m: "theirs" if m["alone"] is not None else "their", text)


# a possessive with no noun after it: a verb, or the clause's end, follows
_STANDS_ALONE = r"(?=\s+(?:is|was|are|were|has|had|will|would|isn't|wasn't|too)\b|\s*[,.;:!?]|\s*$)"


# The row's person inside a sentence led by what they do or own ("Dancing helps u:42 unwind",
# "Playing chess is u:42's escape", "Staying fit is important to u:42", "Losing u:42's job was
# hard"): the head clause runs to the first ";" or " - ".
_GERUND_HEAD = r"(?P<head>(?:[A-Z][a-z]+ing|The)\b[^,;:–—]*?)"
_IS_THEIRS = re.compile(rf"^{_GERUND_HEAD}\s+(?P<verb>is|was|are|were)\s+(?P<id>u:\d+)'s\s+(?P<what>[^,;:–—]+?)(?P<rest>(?:[,;:.!]|\s[-–—]\s|$).*)$", re.S)
_DOES_TO_THEM = re.compile(
    rf"^{_GERUND_HEAD}\s+(?P<verb>(?:always\s+)?(?:helps|helped|makes|made|brings|brought|gives|gave|keeps|kept|lets|reminds|reminded))\s+"
    r"(?P<id>u:\d+)\b(?P<rest>.*)$",
    re.S,
)
_MATTERS_TO_THEM = re.compile(
    rf"^{_GERUND_HEAD}\s+(?P<verb>is|was|are|were|has been|have been|had been|has become|have become)\s+"
    r"(?P<what>[^,;:–—]{1,60}?)\s+(?P<prep>to|for)\s+(?P<id>u:\d+)\b(?!')(?P<rest>.*)$",
    re.S,
)
_THEIR_DEED = re.compile(
    r"^(?P<head>[A-Z][a-z]+ing\b[^,;:–—]*?\b(?P<id>u:\d+)'s\b[^,;:–—]*?)\s+"
    r"(?P<verb>is|was|has been|had been|can be|could be|were|are)\b(?P<rest>.*)$",
    re.S,
)
_PAST_VERBS = frozenset("was were had made brought gave kept helped reminded".split())
_PAST_VIEW = re.compile(r"^[^,;]*?\b(?:was|were|had)\b")
_NOT_PEOPLE_OPENERS = frozenset("the this that these those it there here when if since after before as".split())


def _speaker_first(text: str) -> str:
    """A row led by what its person does or owns, turned to open on them (see the module
    rules); other texts unchanged."""
    if text.startswith("u:") or not text[:1].isupper():
        return text
    held = _FOR_THEM.match(text)
    if held is not None:
        past = _PAST_VIEW.search(held["view"]) is not None
        return f"{held['id']} {'found that' if past else 'thinks'} {held['view']}"
    others = _AND_THEM.match(text)
    if others is not None and others["others"].split()[0].lower() not in _NOT_PEOPLE_OPENERS:
        return f"{others['id']} and {others['others'][0].lower()}{others['others'][1:]} {others['rest']}"
    theirs = _IS_THEIRS.match(text)
    if theirs is not None:
        head = theirs["head"][0].lower() + theirs["head"][1:]
        return f"{theirs['id']}'s {theirs['what']} {theirs['verb']} {head}{theirs['rest']}"
    for shape in (_DOES_TO_THEM, _MATTERS_TO_THEM, _THEIR_DEED):
        found = shape.match(text)
        if found is None:
            continue
        verb = found["verb"]
        past = verb.split()[-1] in _PAST_VERBS or verb.startswith("had ")
        frame = "found that" if past else "thinks"
        head = their(found["head"], found["id"])
        head = head[0].lower() + head[1:]
        if shape is _DOES_TO_THEM:
            return f"{found['id']} {frame} {head} {verb} them{found['rest']}"
        if shape is _MATTERS_TO_THEM:
            return f"{found['id']} {frame} {head} {verb} {found['what']} {found['prep']} them{found['rest']}"
        return f"{found['id']} {frame} {head} {verb}{found['rest']}"
    return text


# "Was wild, u:42 got noticed…": a verdict left without its "it" (its time was read out as a
# date) before the person's own clause says nothing
_LEADING_VERDICT = re.compile(
    r"^(?:was|is|it was|it's)\s+(?:so |really |pretty |super |kinda |a bit )?[a-z]+\s*[,;]\s+(?=u:\d)", re.IGNORECASE
)


def _subject_first(text: str) -> str:
    """``text`` opening on its subject (see the module rules)."""
    text = _LEADING_VERDICT.sub("", text)
    moved = _main_clause_first(text)
    if moved is not text:
        return moved
    fronted = _speaker_first(text)
    if fronted is not text:
        return fronted
    adverb = _LEADING_ADVERB.match(text)
    if adverb is not None:
        word, rest = adverb["adverb"].lower(), text[adverb.end() :]
        if word in _FILLER_ADVERBS:
            return f"{adverb['subject']} {rest}"
        aux = _AUXILIARY.match(rest)
        if aux is not None:
            return f"{adverb['subject']} {rest[: aux.end()]}{word} {rest[aux.end() :]}"
        return f"{adverb['subject']} {word} {rest}"
    phrase = _LEADING_PHRASE.match(text) or _LEADING_PHRASE_BARE.match(text)
    if phrase is not None and len(phrase["phrase"].split()) <= 6:
        rest = phrase["rest"].rstrip(" .!")
        lead = phrase["phrase"][0].lower() + phrase["phrase"][1:]
        end = _CLAUSE_END.search(rest)
        if end is None:
            return f"{phrase['subject']} {rest} {lead}"
        return f"{phrase['subject']} {rest[: end.start()]} {lead}{rest[end.start() :]}"
    lead = _LEADING_TIME.match(text)
    if lead is None:
        return text
    adverb, subject, rest = lead["adverb"].lower(), lead["subject"], text[lead.end() :]
    aux = _AUXILIARY.match(rest)
    if aux is not None:
        return f"{subject} {rest[: aux.end()]}{adverb} {rest[aux.end() :]}"
    body = rest.rstrip(" .!")
    return f"{subject} {body} {adverb}"


# a quotation that ends the row keeps its words; the row's own full stop follows it
_MARK_IN_CLOSING_QUOTE = re.compile(r'[.!?,;:]+"$')


def as_memory_text(text: str, limit: int = LIMIT) -> str:
    """``text`` shaped by the module rules."""
    text = _subject_first(text)
    text = _EMOTICON.sub(" ", text)
    text = _SYMBOLS.sub(" ", text)
    if "!" in text or "?" in text:
        text = _INNER_END.sub(", ", text)
    if text.count('"') % 2:
        text = text.replace('"', "")
    text = " ".join(text.split())
    text = _SPACE_BEFORE_MARK.sub(r"\1", text)
    text = _MARK_IN_CLOSING_QUOTE.sub('"', text).rstrip(" .,;:!?-–—")
    if not text.isascii() or text.lower().endswith(_JOINS):
        text = _TRAILING_JOIN.sub("", text)
    if "." in text:
        text = _DOTS.sub(",", text)
        text = _INITIAL.sub(r"\1 ", text)
    for stop in _INNER_STOP.finditer(text) if "." in text else ():
        if not _KNOWN_ABBREVIATION.search(text[: stop.start() + 1]):
            text = text[: stop.start()].rstrip(" ,;:")
            break
    if len(text) + 1 > limit:
        text = _shorten(text, limit - 1)
    if text[:1].islower() and not text.startswith("u:"):
        text = text[0].upper() + text[1:]
    return text + "." if text else ""


def _shorten(text: str, limit: int) -> str:
    head = text[: limit + 1]
    cuts = [m.start() for m in _BOUNDARY.finditer(head) if m.start() >= limit // 3]
    if cuts:
        return text[: cuts[-1]].rstrip(" ,;-–—")
    space = head.rfind(" ")
    return text[: space if space > 0 else limit].rstrip(" ,;-–—")
