"""What a memory row may say, whichever mind wrote it (design §2.1, §7). Pure: no I/O.

Every candidate — from the offline reader, an HTTP model or a test's scripted mind — passes
through ``refusal`` from ``validation.check_candidates`` after its fields are checked. A refusal
is a short reason that starts with a stable category word, so dropped rows can be counted.

Rules, checked in this order (the first that fails is the reason). Rules 1–3 read the text
``plain`` (``text.plain``: NFKC, no zero-width characters, look-alike dots, slashes, colons and
Cyrillic or Greek letters written the ASCII way), so a dressed-up link or order is the same
link or order:

1. ``secret:`` — a secret is never stored, whatever the subject: a password, passcode, PIN or
   door code next to its value ("the wifi password is hunter2", "PIN is 4821"); a card number
   (13–19 digits, bare or in groups of four, passing the Luhn check); a bank account, IBAN,
   routing number or sort code with its value, or an IBAN itself; an API key or token
   (``sk-…``, ``ghp_…``, ``AKIA…``, ``xoxb-…``, ``AIza…``, or any 20+ character run of
   letters and digits mixed, as hex and base64 secrets are); a government id (a US SSN
   ``ddd-dd-dddd``, or "passport", "social security", "national insurance", "driver's
   licence", "tax id" next to a value); and a promise or a request to hand one over, even
   without its value ("Warren said he would send u:42 the admin password", "… text u:42 the
   API key", "… share the access token"), while talk about one stays ("u:42 reset the admin
   password at work", "notes on password managers").
2. ``order or authority claim:`` — a memory is a fact about a person, never an order to the
   persona or a claim of power over it: "from now on…", "ignore previous…", "in every reply…",
   "disregard", "system prompt", "new instructions", "act as", "pretend to be", "you
   must always…", "always tell people to…", "never mention…" (an always/never order, not a
   habit: "u:42 never says no to dumplings" is a fact), "must obey", "every persona
   must…", "is the administrator/owner/developer of this app/system", "has admin rights",
   and lines dressed as the system ("system:", "[system]", "<system>"). A standing order is
   one in any wording when it is addressed to the persona — by its name, "you" or "the
   persona": a wish or a request that it act always, never or every time ("u:42 always wants
   Warren to mention…", "u:42 expects you to bring up … every time", "u:42's wish is that
   Warren never…"), "make sure you recommend…", "don't forget to mention…", "remember to
   always…", "end each message with…". The same words about someone else are a fact ("u:42's daughter expects
   them to always read her a story", "u:42 always mentions their cat").
3. ``link or domain:`` — no URL (any ``scheme://``, ``javascript:``, ``data:``), ``www.``,
   markdown link or image, HTML tag, e-mail address or bare domain (``evil.example``,
   ``shop.example.com``, ``bit.ly``: labels joined by dots, the last of two or more
   letters), also with its dots spelled out or set apart ("shop [dot] com", "shop(.)com",
   "shop dot com", "shop . com"; ``spelled_domain``). Abbreviations ("e.g.", "Dr.", "St."),
   decimals ("3.5 km"), times ("5.30pm"), a full stop before a space, "a dot-com startup" and
   "polka dot dresses" are not domains.
3b. ``role-play:`` — a row whose text, or one of its evidence lines, sets up a fiction ("let's
   play a game: I'm a dragon…", "in this story I am…", "*acts as a pirate*"; ``fiction.py``)
   is not a fact about anyone. ``validation`` also refuses a row citing any line said inside
   a fiction set up earlier in the slice.
4. ``names another user:`` — the text names no user but the one it is about (a human row's
   subject; a ``self`` row's counterpart; a ``world`` row: nobody): no other ``u:N`` id, and
   no display name the memory knows for another user (whole words, any case; a name that is
   also a common word — "Will", "May" — only when capitalised). The other user could neither
   see nor delete the row on their page. The persona's own name is the persona, not a user,
   even when a user's name shares it ("u:42 will send Warren the catalogue" in Warren's
   memory, with a user called Warren Hale).
5. ``third party's sensitive fact:`` — health (illness, diagnosis, pregnancy, therapy,
   medication, mental health, disability…), sexuality or gender identity, and legal trouble
   (arrested, convicted, lawsuit, jail…) are stored only about the subject. A sentence that
   holds such a term and a third party — a relation ("u:42's sister", "their boss", "a
   friend"), someone in general ("someone", "a woman") or a named person's clause ("Maria
   has…") — is refused. The subject's own facts stay ("u:42 has asthma"), and so does plain
   context about the people in their life ("u:42's sister lives in Boston").
6. ``unsupported by its evidence:`` — the row shares a content word (three or more letters,
   not a stop word, not a name or id of the people in it, compared by a light stem so "moved",
   "moving" and "move" match) with the text of an evidence line said by its author: the
   subject for a human row, the persona for a ``self`` row, anyone for a ``world`` row. A row
   with no content word at all says nothing and is refused too. A row that answers a question
   ("Asked how often they climb, u:42 answered: Twice a week.") is supported when its content
   words are in its evidence lines (the question was said to the author) and its answer is
   the author's own words, every one of them. Words are letters and digits
   of any script; Chinese, Japanese, Korean and Thai, written without spaces, are compared by
   pairs of characters. Skipped when the caller gave no line texts at all.

``own_name_to_id`` is the one place a display name becomes an id. The matchers of rules 1–3
(``secret``, ``order_or_authority``, ``link_or_domain``) and ``name_regex`` live in
``persona_memory.text``, which the offline reader also reads whole chat lines with (there
without the persona's name: "you" and "the persona" still count).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence

from .. import ids
from ..text.folded import Folded
from ..text.links import link_or_domain
from ..text.names import name_regex
from ..text.orders import order_or_authority
from ..text.secrets import secret
from ..text.stopwords import STOPWORDS
from .fiction import role_play


# -- 4. names of other users ------------------------------------------------------------------

_USER_ID = re.compile(r"(?<![\w:])u:(\d+)\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+")
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\u0e00-\u0e7f]")
_POSSESSIVE = re.compile(r"'s\b")
_IRREGULAR = {
    "bought": "buy", "sold": "sell", "went": "go", "gone": "go", "left": "leave", "took": "take",
    "taken": "take", "ran": "run", "met": "meet", "saw": "see", "seen": "see", "began": "begin",
    "begun": "begin", "wrote": "write", "written": "write", "drove": "drive", "driven": "drive",
    "flew": "fly", "flown": "fly", "ate": "eat", "eaten": "eat", "drank": "drink", "swam": "swim",
    "taught": "teach", "caught": "catch", "thought": "think", "brought": "bring", "found": "find",
    "lost": "lose", "won": "win", "spent": "spend", "built": "build", "felt": "feel", "kept": "keep",
    "slept": "sleep", "paid": "pay", "sent": "send", "read": "read", "broke": "break",
    "broken": "break", "chose": "choose", "gave": "give", "given": "give", "held": "hold",
    "children": "child", "kids": "child", "kid": "child", "men": "man", "women": "woman",
    "people": "person", "mice": "mouse", "feet": "foot", "teeth": "tooth",
}


def own_name_to_id(text: str, uid: int, known_names: Mapping[int, str]) -> str:
    """``text`` with the display name of user ``uid`` written as ``u:<uid>`` (ids survive a
    rename). The full name first, then each of its words that no other known user's name shares."""
    name = (known_names.get(uid) or "").strip()
    if not name:
        return text
    ref = ids.user_ref(uid)
    if _may_hold_name(text, name):
        text = name_regex(name).sub(ref, text)
    others = None
    for part in name.split():
        if len(part) < 2 or not _may_hold_name(text, part):
            continue
        if others is None:
            others = {p.casefold() for other, n in known_names.items() if other != uid and n for p in n.split()}
        if part.casefold() not in others:
            text = name_regex(part).sub(ref, text)
    return text


def _may_hold_name(text: str, name: str) -> bool:
    """False only when ``name_regex(name)`` cannot match ``text``: both ASCII, and the text's
    lowercase does not hold the name's (a match, in any case or capitalised, holds it)."""
    return not (text.isascii() and name.isascii()) or name.lower() in text.lower()


def other_user_named(text: str, allowed: int | None, known_names: Mapping[int, str]) -> str | None:
    """The ``u:`` id or display name of a user other than ``allowed`` in ``text`` (rule 4)."""
    for match in _USER_ID.finditer(text):
        if allowed is None or int(match[1]) != allowed:
            return match[0]
    for uid, name in known_names.items():
        if uid == allowed or not name or not name.strip():
            continue
        for form in (name.strip(), *name.split()):
            if len(form) < 2 or not _may_hold_name(text, form):
                continue
            match = name_regex(form).search(text)
            if match:
                return match[0]
    return None



# -- 5. third parties' sensitive facts -------------------------------------------------------

_SENSITIVE = Folded(
    # health
    r"\b(?:ill|illness(?:es)?|sick|sickness|diseases?|disorders?|syndrome|diagnos(?:is|ed|es)|"
    r"cancer|tumou?rs?|chemo(?:therapy)?|radiotherapy|therapy|medications?|meds|prescriptions?|"
    r"antidepressants?|antipsychotics?|insulin|"
    r"pregnan(?:t|cy|cies)|expecting a baby|miscarr(?:iage|ied|iages)|abortion|infertil(?:e|ity)|ivf|"
    r"disabilit(?:y|ies)|disabled|mental(?:ly)? (?:health|illness|ill)|depress(?:ion|ed)|anxiety|"
    r"panic attacks?|bipolar|schizophreni[ac]|ptsd|ocd|adhd|autis(?:m|tic)|dementia|alzheimer'?s|"
    r"parkinson'?s|diabet(?:es|ic)|hiv|std|stds|hepatitis|epilep(?:sy|tic)|seizures?|stroke|"
    r"heart attack|surger(?:y|ies)|hospitali[sz]ed|in (?:the )?hospital|icu|hospice|"
    r"terminal(?:ly ill)?|rehab|addict(?:ion|ed)?|alcoholi(?:c|sm)|overdos(?:e|ed)|suicid(?:e|al)|"
    r"self-harm|eating disorder|anorexi[ac]|bulimi[ac]|covid|infected|infection|"
    # sexuality and gender identity
    r"gay|lesbian|bisexual|queer|homosexual|asexual|pansexual|lgbt\w*|transgender|"
    r"trans (?:man|woman|men|women|person|people|kid|teen)|non-?binary|"
    r"(?:came|comes|coming) out (?:as|to)|sexual orientation|sexuality|gender identity|"
    r"transition(?:ed|ing)? (?:to (?:a )?(?:man|woman|male|female))|gender transition|"
    # legal trouble
    r"arrest(?:ed|s)?|criminal(?! (?:law|lawyers?|justice|defen[cs]e|psychology|investigations?|"
    r"investigators?))|committed a crime|convict(?:ed|ion)?|lawsuits?|sued|suing|"
    r"(?:in|to|from|out of) (?:jail|prison)|jailed|imprisoned|(?:jail|prison) (?:time|sentence|term)|"
    r"charged with|indicted|on trial|probation|parole|deport(?:ed|ation)|custody battle|"
    r"police custody|felony|misdemeanou?r|dui|dwi|restraining order)\b",
    re.IGNORECASE,
)
_RELATION = (
    r"sisters?|brothers?|siblings?|moms?|mums?|mothers?|dads?|fathers?|parents?|husbands?|wives|wife|"
    r"partners?|spouses?|boyfriends?|girlfriends?|fianc[eé]e?s?|exes|ex|sons?|daughters?|kids?|"
    r"child|children|twins|bab(?:y|ies)|family|families|relatives?|grandma|grandpa|grandmothers?|"
    r"grandfathers?|grandparents?|grandchild(?:ren)?|grand(?:son|daughter)s?|aunts?|uncles?|"
    r"cousins?|nieces?|nephews?|in-laws?|step\w+|friends?|bestie|buddy|buddies|mates?|roommates?|"
    r"flatmates?|housemates?|neighbou?rs?|boss(?:es)?|managers?|colleagues?|co-?workers?|"
    r"teammates?|employees?|employers?|clients?|classmates?|students?|teachers?|mentors?|"
    r"landlord|landlady|tenants?|acquaintances?"
)
_THIRD_PARTY = Folded(
    rf"\b(?:{_RELATION})\b|\b(?:someone|somebody|other people)\b|"
    r"\b(?:a|an|another|some|this|that|the) (?:man|woman|guy|girl|boy|lady|person|kid|teen)\b",
    re.IGNORECASE,
)
_NOT_A_NAME = (
    r"The|A|An|This|That|These|Those|It|Its|There|Their|His|Her|They|He|She|We|Our|My|In|On|At|For|"
    r"And|But|So|Mr|Mrs|Ms|Dr|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|January|"
    r"February|March|April|May|June|July|August|September|October|November|December|Today|Yesterday"
)
_NAMED_CLAUSE = re.compile(
    rf"(?<![\w:])(?!(?:{_NOT_A_NAME})\b)[A-Z][a-z]+\s+(?:just |recently |also |has been |was |is |"
    r"had |have )?(?:is|was|has|had|got|gets|suffers|suffered|died|passed|became|tested|needs|"
    r"started|been|diagnosed)\b"
)
_OWN_PREGNANCY = re.compile(
    r"\b(?:pregnant|expecting) with (?:a |their |his |her |u:\d+'s )?(?:\w+ )?(?:bab(?:y|ies)|child|"
    r"kid|twins|son|daughter|girl|boy)\b",
    re.IGNORECASE,
)
_CHILDHOOD = re.compile(
    r"\b(?:as|when (?:they were|he was|she was|u:\d+ was)) an? (?:kid|child|baby|boy|girl|teen|teenager)\b",
    re.IGNORECASE,
)


_CHILDHOOD_WORDS = ("kid", "child", "baby", "boy", "girl", "teen")
"""Every match of ``_CHILDHOOD`` ends with one of these, every match of ``_OWN_PREGNANCY``
starts with "pregnant" or "expecting": an ASCII text without them is left as it is, unsearched."""


def third_partys_sensitive_fact(text: str, persona_name: str = "") -> str | None:
    """The third party and the sensitive term in ``text`` when both are there (rule 5)."""
    low = text.lower() if text.isascii() else None
    if low is None or "pregnant" in low or "expecting" in low:
        text = _OWN_PREGNANCY.sub("pregnant", text)
    if low is None or any(map(low.__contains__, _CHILDHOOD_WORDS)):
        text = _CHILDHOOD.sub("", text)
    sensitive = _SENSITIVE.search(text)
    if sensitive is None:
        return None
    party = _THIRD_PARTY.search(text)
    who = party[0] if party else None
    if who is None:
        for match in _NAMED_CLAUSE.finditer(text):
            name = match[0].split()[0]
            if name != persona_name:
                who = name
                break
    return f"{who!r} and {sensitive[0]!r}" if who else None


# -- 6. support by the evidence ---------------------------------------------------------------


def content_stems(text: str, *, leave_out: Iterable[str] = ()) -> set[str]:
    """The stems of ``text``'s content words (see rule 6); ``leave_out``: names not to count."""
    text = _USER_ID.sub(" ", text.casefold().replace("’", "'"))
    text = _POSSESSIVE.sub(" ", text)
    left = {w for name in leave_out for w in _WORD.findall(name.casefold())}
    stems = set()
    unspaced = _UNSPACED.search(text) is not None  # none in the text: none in any of its words
    for word in _WORD.findall(text):
        if unspaced and _UNSPACED.search(word):
            stems |= {word[i : i + 2] for i in range(len(word) - 1)} or {word}
        elif len(word) >= 3 and word not in STOPWORDS and word not in left:
            stems.add(_stem(word))
    return stems


# "Asked how often they climb, u:42 answered: Twice a week.": a row that answers a question
_ANSWERED = re.compile(r"^Asked .+?, u:\d+ answered: (?P<answer>.+?)\.?$", re.IGNORECASE)
_ANSWER_FRAME = frozenset({"ask", "answer"})


@functools.lru_cache(maxsize=1 << 12)
def _line_stems(line: str) -> frozenset[str]:
    """``content_stems`` of an evidence line, remembered: a line is the evidence of each row
    made from it."""
    return frozenset(content_stems(line))


@functools.lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    """A light stem: "moved", "moving", "move" and "moves" all give "mov" (remembered: the
    same words come back in every row and evidence line)."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.isdigit():
        return word
    if len(word) > 4 and word.endswith(("ies", "ied")):
        word = word[:-3] + "y"
    else:
        for suffixes in (("ing", "ed", "es", "s"), ("ing", "ed")):
            cut = next((x for x in suffixes if word.endswith(x) and len(word) - len(x) >= 3), None)
            if cut is None or word.endswith("ss"):
                break
            word = word[: -len(cut)]
            if cut in ("ing", "ed"):
                break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]
    return word


def unsupported(
    text: str, authors: Sequence[str], leave_out: Iterable[str] = (), heard: Sequence[str] = ()
) -> str | None:
    """Why ``text`` is not supported by the evidence lines ``authors`` said (rule 6), or
    ``None``. ``heard``: every evidence line, whoever said it (for an answer's question)."""
    stems = content_stems(text, leave_out=leave_out)
    if not stems:
        return "it has no content word to check against its evidence"
    said: set[str] = set()
    for line in authors:
        said |= _line_stems(line)
    if stems & said:
        return None
    answered = _ANSWERED.match(text)
    if answered is not None and heard:
        asked: set[str] = set(_ANSWER_FRAME)
        for line in heard:
            asked |= _line_stems(line)
        spoken = {w for line in authors for w in _WORD.findall(line.casefold())}
        if stems <= asked and set(_WORD.findall(answered["answer"].casefold())) <= spoken:
            return None  # the question's words were said to the author, the answer is theirs word for word
    shown = ", ".join(sorted(stems)[:4])
    return f"none of its words ({shown}) is in the evidence lines"


# -- all rules ---------------------------------------------------------------------------------


def refusal(
    text: str,
    *,
    subject: str,
    counterpart: str | None = None,
    evidence: Sequence[tuple[str, str]] | None = None,
    persona: str = "",
    known_names: Mapping[int, str] | None = None,
) -> str | None:
    """The reason the module rules refuse a row, or ``None`` when it may be stored.

    Args:
        text: the row's text, display names of its subject already written as ids.
        subject: ``"world"``, ``"self"`` or a ``u:`` id.
        counterpart: a ``self`` row's ``u:`` id.
        evidence: ``(speaker, text)`` of each evidence line; ``None`` when the caller has no
            line texts (rule 6 is then skipped).
        persona: the slug of the persona whose memory this is.
        known_names: every display name the memory knows, by user id.
    """
    names = known_names or {}
    found = secret(text)
    if found:
        return f"secret: {found}"
    persona_name = ids.persona_name(persona) if persona else ""
    found = order_or_authority(text, persona_name)
    if found:
        return f"order or authority claim: {found!r}"
    found = link_or_domain(text)
    if found:
        return f"link or domain: {found!r}"
    found = role_play(text) or next(filter(None, (role_play(line) for _, line in evidence or ())), None)
    if found:
        return f"role-play: {found!r}"
    about = ids.parse_user_ref(counterpart if subject == ids.SELF else subject)
    without_persona = name_regex(persona_name).sub("the persona", text) if persona_name else text
    found = other_user_named(without_persona, about, names)
    if found:
        whose = {ids.WORLD: "a world fact", ids.SELF: f"a promise to {counterpart}"}.get(
            subject, f"a row about {subject}"
        )
        return f"names another user: {found!r} in {whose}"
    found = third_partys_sensitive_fact(text, persona_name)
    if found:
        return f"third party's sensitive fact: {found}"
    if evidence is not None:
        author = persona if subject == ids.SELF else None if subject == ids.WORLD else subject
        lines = [line for speaker, line in evidence if author is None or speaker == author]
        leave_out = [persona_name, names.get(about, "") if about else ""]
        found = unsupported(text, lines, leave_out, [line for _, line in evidence])
        if found:
            return f"unsupported by its evidence: {found}"
    return None
