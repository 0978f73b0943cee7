"""How a memory line reads to the person it is shown to: "u:42 sells…" becomes "You sell…". Pure.

Rows name humans by ``u:`` id (an id survives a rename). The page shows them to one signed-in
person, the reader, who should read about themself as the toasts speak to them: in the second
person. Everybody else is named by the latest display name the runtime gave (the id when it
never gave one).

Rules:
- The reader's id becomes "you"; ``u:42's`` becomes "your". "You"/"Your" are capitalised at the
  start of a sentence.
- Where the reader is the subject of a verb, the verb agrees: "u:42 sells" → "You sell",
  ``is``/``was``/``has``/``does`` → ``are``/``were``/``have``/``do`` (and their ``n't``
  forms), past adverbs such as "also", "still", "no longer" or any "-ly" word in between
  ("u:42 no longer works" → "You no longer work"). A past form or a modal stays ("You sold",
  "You will"). The reader is taken as a subject at the start of a clause (the start of a
  sentence, after a comma or a word such as "and", "that", "because") or before one of the
  unambiguous verbs above; anywhere else the id is an object and becomes "you" with nothing
  else changed ("Warren promised to send u:42 the letter" → "…send you the letter").
- A second verb of the same subject, after "and"/"or"/"but", agrees too when it is one of the
  unambiguous verbs ("u:42 loves hiking and has a dog" → "…and have a dog") or an "-s" word
  followed by an article, a pronoun, "to" or a particle such as "home"/"early"/"out"
  ("…and teaches themself Italian" → "…and teach yourself…"; "cats and dogs" stays), until the sentence ends or another subject may have
  begun (a relative word, a pronoun, a name, another id).
- ``their``/``theirs``/``themselves``/``themself`` become ``your``/``yours``/``yourself``
  only when the row is about the reader and names no other person (no other ``u:`` id, no
  persona or other name the caller lists). ``they``/``them`` (and ``they're``, ``they've``,
  ``they'll``, ``they'd``) become ``you`` under the same condition and only while no plural
  word has come before them: "the commute was killing them" is the reader, but in "bakes cakes
  and sells them" or "has two dogs; they are huskies" they are the things, and stay.
- Another person's id becomes their display name (``u:17's`` → "Cara's"), or stays the id.
- Nothing else in the text is touched; escaping is the template's job.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_TOKEN = re.compile(r"u:(\d+)(['’]s\b)?|[A-Za-z]+(?:['’][A-Za-z]+)*|\s+|.", re.DOTALL)
_USER = re.compile(r"u:(\d+)")

AGREEMENT = {
    "is": "are",
    "was": "were",
    "has": "have",
    "does": "do",
    "goes": "go",
    "isn't": "aren't",
    "wasn't": "weren't",
    "hasn't": "haven't",
    "doesn't": "don't",
}
"""Third-person forms that are verbs wherever they follow the reader's id."""

ADVERBS = frozenset(
    """also still often usually always never sometimes rarely seldom just now recently finally
    already actually currently even only mostly generally normally typically probably
    definitely certainly apparently clearly truly especially occasionally regularly frequently
    constantly hardly barely nearly almost soon then once first secretly really""".split()
)
"""Words that may stand between a subject and its verb (any word ending in "-ly" may too)."""

_NOT_VERBS = frozenset(
    """always sometimes perhaps afterwards nevertheless towards besides thus plus less unless
    across yes its his hers ours yours theirs whereas this was""".split()
)
_BASE_EXCEPTIONS = {"focuses": "focus", "buses": "bus", "biases": "bias"}

CLAUSE_WORDS = frozenset(
    """and but or so because since when while if that though although after before until as
    once where whether unless than which who""".split()
)
"""Words after which the reader's id starts a clause (so it is a subject)."""

_CLAUSE_MARKS = frozenset(",;:()—–\"“”")
_SENTENCE_ENDS = frozenset(".!?")

PRONOUNS = {
    "their": "your",
    "theirs": "yours",
    "themselves": "yourself",
    "themself": "yourself",
}
PLURAL_PRONOUNS = {
    "them": "you",
    "they": "you",
    "they're": "you're",
    "they've": "you've",
    "they'll": "you'll",
    "they'd": "you'd",
}
"""Pronouns that may as well mean things: turned only while no plural word came before."""

_NOT_PLURAL = frozenset(
    """this his hers its was has does goes yours ours theirs thanks plus thus whereas sometimes
    always perhaps afterwards towards besides less unless across news series yes bus gas
    focus bonus status campus virus chaos""".split()
)


def looks_plural(word: str) -> bool:
    """A word that may be a plural noun (``cakes``, ``dogs``, ``children``); crude on purpose:
    a false "plural" only keeps a pronoun as written."""
    lower = word.lower()
    if lower in ("children", "people", "men", "women", "friends", "kids", "parents"):
        return True
    return len(lower) >= 4 and lower.endswith("s") and not lower.endswith(("ss", "us", "'s", "’s")) and lower not in _NOT_PLURAL


def base_form(verb: str) -> str:
    """The form a third-person-singular verb takes after "you": ``sells`` → ``sell``,
    ``tries`` → ``try``, ``watches`` → ``watch``, ``has`` → ``have``. Other words unchanged."""
    lower = verb.lower().replace("’", "'")
    if lower in AGREEMENT:
        return AGREEMENT[lower]
    if not looks_third_person(lower):
        return verb
    if lower in _BASE_EXCEPTIONS:
        return _BASE_EXCEPTIONS[lower]
    if lower.endswith("ies") and len(lower) > 4:
        return verb[:-3] + "y"
    if lower.endswith(("sses", "shes", "ches", "xes", "zzes", "oes")):
        return verb[:-2]
    return verb[:-1]


def looks_third_person(word: str) -> bool:
    """Whether ``word`` (lower case) can be a verb agreeing with "he"/"she": ``sells``."""
    return (
        word.isalpha()
        and len(word) >= 3
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is"))
        and word not in _NOT_VERBS
    )


def _is_adverb(word: str) -> bool:
    lower = word.lower()
    return lower in ADVERBS or (lower.endswith("ly") and len(lower) > 4 and lower not in ("apply", "reply", "supply"))


def names_another_person(text: str, reader: int, others: Iterable[str] = ()) -> bool:
    """Whether ``text`` names someone besides the reader: another ``u:`` id, or one of
    ``others`` (personas' and people's names) as a word."""
    if any(int(m.group(1)) != reader for m in _USER.finditer(text)):
        return True
    words = {w.replace("’", "'").removesuffix("'s") for w in re.findall(r"[A-Za-z]+(?:['’][A-Za-z]+)*", text)}
    return any(name in words for name in others)


def second_person(
    text: str,
    reader: int,
    *,
    names: Mapping[int, str] | None = None,
    about_reader: bool = False,
    others: Iterable[str] = (),
) -> str:
    """``text`` as ``reader`` should read it (see the rules above).

    Args:
        reader: the signed-in person's user id.
        names: display names by user id, for everyone else.
        about_reader: the row's subject is the reader (so "their"/"them" may be the reader).
        others: names of people and personas who would make "they" ambiguous.
    """
    names = names or {}
    turn_pronouns = about_reader and not names_another_person(text, reader, others)
    tokens = list(_TOKEN.finditer(text))
    out: list[str] = []
    replace_at: dict[int, str] = {}
    subject = False  # the reader is the subject of the sentence's verbs so far
    plural_seen = False  # a plural word came before: "they"/"them" may mean it
    for i, match in enumerate(tokens):
        if i in replace_at:
            out.append(replace_at.pop(i))
            continue
        piece = match.group(0)
        user = match.group(1)
        if user is not None:
            uid = int(user)
            possessive = match.group(2) is not None
            if uid != reader:
                subject = False
                out.append(names.get(uid, f"u:{uid}") + (match.group(2) or ""))
                continue
            capital = _sentence_start(out)
            if possessive:
                subject = False
                out.append("Your" if capital else "your")
                continue
            verb_at = _verb_after(tokens, i)
            subject = _clause_start(out)
            if verb_at is not None:
                word = tokens[verb_at].group(0)
                if _key(word) in AGREEMENT or subject:
                    replace_at[verb_at] = _keep_case(word, base_form(word))
                    subject = True
            out.append("You" if capital else "you")
            continue
        key = _key(piece)
        if subject:
            if key in ("and", "or", "but"):
                verb_at = _verb_after(tokens, i)
                if verb_at is not None and (
                    _key(tokens[verb_at].group(0)) in AGREEMENT or _next_word(tokens, verb_at) in _OBJECT_STARTS
                ):
                    word = tokens[verb_at].group(0)
                    replace_at[verb_at] = _keep_case(word, base_form(word))
            elif piece in _SENTENCE_ENDS or key in _NEW_SUBJECT or (piece[:1].isupper() and piece != "I"):
                subject = False
        if turn_pronouns and key in PRONOUNS:
            out.append(_keep_case(piece, PRONOUNS[key]))
            continue
        if turn_pronouns and key in PLURAL_PRONOUNS and not plural_seen:
            out.append(_keep_case(piece, PLURAL_PRONOUNS[key]))
            continue
        if match.group(0)[:1].isalpha() and looks_plural(piece) and _next_word(tokens, i) not in _OBJECTS:
            plural_seen = True  # (an "-s" word before an object is a verb: "tires them out")
        out.append(piece)
    return "".join(out)


_OBJECT_STARTS = frozenset(
    """the a an their them themself themselves his her it its my your yourself every each some
    this that these those to home early late back out up down away off together""".split()
)
_OBJECTS = frozenset("them it the a an you me her him us out up their his my your our".split())
_NEW_SUBJECT = frozenset("who which that whose whom he she it they we i there this these those".split())


def _key(word: str) -> str:
    return word.lower().replace("’", "'")


def _verb_after(tokens: list[re.Match[str]], at: int) -> int | None:
    """The index of the word that would be the verb of a subject at ``at``, past adverbs."""
    i = at + 1
    while i < len(tokens):
        piece = tokens[i].group(0)
        if piece.isspace():
            i += 1
            continue
        if tokens[i].group(1) is not None or not piece[:1].isalpha():
            return None
        lower = piece.lower()
        if lower == "no" and _next_word(tokens, i) == "longer":
            i = _index_of_next_word(tokens, i) + 1
            continue
        if _is_adverb(piece):
            i += 1
            continue
        if lower.replace("’", "'") in AGREEMENT or looks_third_person(lower):
            return i
        return None
    return None


def _index_of_next_word(tokens: list[re.Match[str]], at: int) -> int:
    i = at + 1
    while i < len(tokens) and tokens[i].group(0).isspace():
        i += 1
    return i


def _next_word(tokens: list[re.Match[str]], at: int) -> str | None:
    i = _index_of_next_word(tokens, at)
    return tokens[i].group(0).lower() if i < len(tokens) else None


def _last_piece(out: list[str]) -> str | None:
    for piece in reversed(out):
        if not piece.isspace():
            return piece
    return None


def _sentence_start(out: list[str]) -> bool:
    last = _last_piece(out)
    return last is None or last in _SENTENCE_ENDS


def _clause_start(out: list[str]) -> bool:
    last = _last_piece(out)
    return (
        last is None
        or last in _SENTENCE_ENDS
        or last in _CLAUSE_MARKS
        or last.lower() in CLAUSE_WORDS
    )


def _keep_case(original: str, replacement: str) -> str:
    if original[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement
