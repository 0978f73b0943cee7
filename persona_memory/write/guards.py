"""What a memory row may say, whichever mind wrote it (design §2.1, §7). Pure: no I/O.

Every candidate — from the offline reader, an HTTP model or a test's scripted mind — passes
through ``refusal`` from ``validation.check_candidates`` after its fields are checked. A refusal
is a short reason that starts with a stable category word, so dropped rows can be counted.

Rules, checked in this order (the first that fails is the reason). Rules 1–3 read the text
``plain`` (``plain.py``: NFKC, no zero-width characters, look-alike dots, slashes, colons and
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
   see nor delete the row on their page.
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
   with no content word at all says nothing and is refused too. Words are letters and digits
   of any script; Chinese, Japanese, Korean and Thai, written without spaces, are compared by
   pairs of characters. Skipped when the caller gave no line texts at all.

``own_name_to_id`` is the one place a display name becomes an id; ``link_or_domain``,
``order_or_authority`` and ``secret`` are the matchers the offline reader also runs on whole
chat lines (there without the persona's name: "you" and "the persona" still count).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence

from .. import ids
from .fiction import role_play
from .folded import Folded
from .plain import plain

# -- 1. secrets ------------------------------------------------------------------------------

_SECRET_KEYWORD = re.compile(
    r"\b(?:pass(?:word|code|phrase)|pwd|wi-?fi (?:key|code)|(?:security|access|door|gate|alarm|"
    r"lock|entry|verification|one-time|login|unlock|garage) code|otp|cvv|cvc|pin code|pin number)s?"
    r"(?:\s+(?:for|to|of|on|at)\s+(?:[^\s:=.!?]+\s+){0,3}?)?\s*(?:is|was|=|:|reads)\s*[\"'`]?"
    r"(?P<value>[^\s\"'`,;]{3,})",
    re.IGNORECASE,
)
_PIN_VALUE = re.compile(
    r"\b(?:pin|passcode|(?:door|gate|alarm|access|security|lock|garage) code)s?"
    r"(?:\s+(?:for|to|of|on|at)\s+(?:[^\s.!?]+\s+){0,4}?(?=(?:is|was)\b|=|:))?"
    r"\s*(?:is|was|=|:)?\s*(?P<value>\d{3,12})\b",
    re.IGNORECASE,
)
_NOT_A_VALUE = frozenset(
    """the a an their his her my our your its same still also too very easy hard simple long short
    weak strong secure insecure new old wrong right correct incorrect different secret private
    written saved stored somewhere needed required missing unknown forgotten changed reset stolen
    leaked hacked expired""".split()
)
_CARD = re.compile(
    r"(?<![\d-])(?:\d{13,19}|\d{4}(?:[ -]\d{4}){2,3}(?:[ -]\d{1,3})?|\d{4}[ -]\d{6}[ -]\d{4,5})(?![\d-])"
)
_BANK = Folded(
    r"\b(?:(?:bank )?account (?:number|no\.?|#)|acct(?: no\.?| number| #)?|routing (?:number|no\.?)|"
    r"sort code|iban|swift(?: code)?|bic|aba)\b[^0-9]{0,12}\d[\d -]{4,}\d",
    re.IGNORECASE,
)
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}(?: ?[A-Z0-9]{1,3})?\b")
_API_KEY = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{12,}|sk_(?:live|test)_[A-Za-z0-9]{10,}|gh[pousr]_[A-Za-z0-9]{20,}|"
    r"github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|xox[abposr]-[A-Za-z0-9-]{10,}|"
    r"AIza[0-9A-Za-z_-]{30,})"
)
_TOKEN_WORD = re.compile(
    r"\b(?:api[ _-]?key|access token|auth token|bearer token|secret key|private key|token)s?\s*"
    r"(?:is|was|=|:)\s*[\"'`]?[^\s\"'`]{8,}",
    re.IGNORECASE,
)
_RANDOM_RUN = re.compile(r"(?<![\w/+=-])[A-Za-z0-9+/_=-]{20,}(?![\w/+=-])")
_SSN = re.compile(r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])")
_GOVERNMENT_ID = re.compile(
    r"\b(?:passport|social security|national insurance|national id|id card|identity card|"
    r"driver'?s? licen[cs]e|tax (?:id|file|number)|ssn)\b(?: (?:number|no\.?|#|card))?"
    r"[^0-9A-Za-z]{0,4}(?:is |was |reads )?"
    r"(?P<value>(?=[A-Za-z0-9-]*\d)[A-Za-z0-9][A-Za-z0-9-]{4,}|\d[\d -]{4,}\d|"
    r"[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-D])\b",
    re.IGNORECASE,
)


_HANDED_OVER = Folded(
    r"\b(?:will|would|'ll|'d|shall|could|can|may|might|going to|gonna|about to|promised? to|promises to|agreed to|"
    r"offered to|plans? to|planned to|to)\s+(?:(?:also|just|quickly|finally|happily|gladly|definitely|"
    r"then|later|soon|securely|privately|secretly|personally)\s+)?"
    r"(?:send|share|give|hand(?: over)?|pass(?: on| along)?|tell|text|e-?mail|dm|message|forward|post|"
    r"reveal|leak|provide|show|read out|whisper|slip|write down|spell out|unlock|lend)\b"
    r"(?:\s+[^\s.!?;,]+){0,8}?\s+"
    r"(?P<what>pass(?:word|code|phrase)s?|pwds?|pin(?: code| number)?|logins?|login (?:details|info|data)|"
    r"credentials|creds|(?:api|access|secret|private|ssh|license|licence|product|recovery|encryption|"
    r"admin|root) keys?|seed phrases?|recovery (?:codes?|phrases?)|"
    r"(?:access|auth|api|bearer|session|refresh|security|admin|login|github|slack) tokens?|"
    r"(?:access|door|gate|alarm|security|verification|2fa|two-factor|auth|authentication|one-time|"
    r"login|unlock|reset|backup|garage|entry|safe) codes?|otps?|cvv|cvc)\b"
    r"(?!\s+(?:managers?|resets?|rules?|polic(?:y|ies)|strength|hygiene|tips?|advice|requirements?))",
    re.IGNORECASE,
)
"""A promise (or a request) to hand over a password, a key, a token, a login or a code: even
without its value, a memory that commits the persona to send one is a lever to get it."""

_SECRET_WORDS = ("pass", "pwd", "code", "otp", "cvv", "cvc", "pin", "key", "token", "sk-", "_",
                 "akia", "xox", "aiza", "login", "cred", "phrase")
"""Without a digit, only the keyword, API key and token patterns can match (every other one
needs a digit), and each of those holds one of these: an ASCII text with no digit and none of
them holds no secret, and is cleared without running the eleven patterns.

The digits of a short user id (``u:`` and at most five digits, ending where a key-like run
could not go on) do not count: no pattern that needs a digit can be met by them alone — a
card, an account, an SSN or an id number needs more digits in a row or around them, an IBAN
a letter right before its digits, a key-like run a character the id's end excludes — so a
row about ``u:1042`` with no other digit is cleared too. Longer ids count as digits."""


_SECRET_WORD = re.compile("|".join(map(re.escape, _SECRET_WORDS)))  # a substring search, in C
_SHORT_USER_ID = re.compile(r"(?<![\w:])u:\d{1,5}(?![\w/+=-])")


def _may_hold_a_secret(text: str) -> bool:
    if not text.isascii():
        return True
    if any(map(str.isdigit, text)) and (
        "u:" not in text or any(map(str.isdigit, _SHORT_USER_ID.sub(" ", text)))
    ):
        return True
    return _SECRET_WORD.search(text.lower()) is not None


_KEYWORDS_OF = {
    "keyword": ("pass", "pwd", "key", "code", "otp", "cvv", "cvc", "pin"),
    "pin": ("pin", "code"),
    "bank": ("account", "acct", "routing", "code", "iban", "swift", "bic", "aba"),
    "token": ("key", "token"),
    "government": ("passport", "social", "national", "card", "licen", "tax", "ssn"),
    "handed": ("pass", "pwd", "pin", "login", "cred", "key", "token", "phrase", "code", "otp", "cvv", "cvc"),
}
"""Every match of ``_SECRET_KEYWORD``, ``_PIN_VALUE``, ``_BANK``, ``_TOKEN_WORD``,
``_GOVERNMENT_ID`` and ``_HANDED_OVER`` holds one of its words here (each pattern's alternatives, read literally:
"passcode" holds "code", "wi-fi key" "key", "id card" "card"), so an ASCII text whose lowercase
holds none of them is not searched for it: the answer is the same, without the
case-insensitive search (4–10 µs each, most of ``secret`` for a row with a date in it). A
card needs 13 digits (the Luhn check's least), an SSN a dash. A text that is not ASCII runs
every pattern, as case-insensitive matching beyond ASCII is not ``str.lower``."""


def _lowered(text: str) -> str | None:
    """``text`` lowercased for the keyword checks, or ``None`` beyond ASCII (search it all)."""
    return text.lower() if text.isascii() else None


def _may_match(low: str | None, family: str) -> bool:
    return low is None or any(map(low.__contains__, _KEYWORDS_OF[family]))


def secret(text: str) -> str | None:
    """What kind of secret ``text`` holds (rule 1), or ``None``; ``text`` is read ``plain``."""
    text = plain(text)
    if not _may_hold_a_secret(text):
        return None
    low = _lowered(text)
    handed = _HANDED_OVER.search(text) if _may_match(low, "handed") else None
    if handed:
        return f"a promise to hand over a secret ({handed['what'].lower()})"
    if _may_match(low, "keyword"):
        for match in _SECRET_KEYWORD.finditer(text):
            value = match["value"].casefold().rstrip(".!?")
            if value not in _NOT_A_VALUE and not (value.isalpha() and value.endswith(("ed", "ly"))):
                return f"a password or code ({match[0].split()[0].lower()} …)"
    if _may_match(low, "pin") and _PIN_VALUE.search(text):
        return "a PIN or code with its value"
    if low is None or sum(map(str.isdigit, text)) >= 13:
        for match in _CARD.finditer(text):
            if _luhn(re.sub(r"\D", "", match[0])):
                return "a card number"
    if (_may_match(low, "bank") and _BANK.search(text)) or _IBAN.search(text):
        return "a bank account number"
    if _API_KEY.search(text) or (_may_match(low, "token") and _TOKEN_WORD.search(text)):
        return "an API key or token"
    for match in _RANDOM_RUN.finditer(text):
        if _key_like(match[0]):
            return "a key-like string"
    if "-" in text and _SSN.search(text):
        return "a social security number"
    if _may_match(low, "government") and _GOVERNMENT_ID.search(text):
        return "a government id number"
    return None


def _key_like(run: str) -> bool:
    """Letters and digits mixed, not just words and numbers joined by dashes."""
    if not (re.search(r"\d", run) and re.search(r"[A-Za-z]", run)):
        return False
    parts = re.split(r"[-_]", run)
    return not all(len(p) <= 12 and (p.isalpha() or p.isdigit()) for p in parts)


def _luhn(digits: str) -> bool:
    if not 13 <= len(digits) <= 19 or len(set(digits)) == 1:
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


# -- 2. orders and claims of authority ------------------------------------------------------

_PERSONAS = r"(?:personas?|assistants?|bots?|chatbots?|ais?|the ai)"
_PLACE = r"(?:app|application|system|platform|site|website|server|service|chat|bot|product|network)"
_ORDER_VERBS = (
    r"(?:respond|reply|answer|say|call|end|start|mention|tell|talk|speak|use|write|recommend|"
    r"include|bring up|refer|promote|reveal|discuss|share|link|send|direct|remind|ask|obey)"
)
_ORDER = re.compile(
    r"\bfrom now on\b|\bfrom this (?:moment|point) (?:on|forward)\b|\bhenceforth\b|"
    r"\b(?:in|on) (?:every|each|all|your) (?:reply|replies|response|responses|answer|answers|"
    r"message|messages)\b|"
    r"\bignore (?:all |any |every )?(?:of )?(?:the |your |my |these |those )?(?:previous|prior|above|"
    r"earlier|preceding|other)\b|\bignore (?:your|the|all) (?:rules|instructions|guidelines)\b|"
    r"\bdisregard\b|\bforget (?:all |your |the )?(?:previous |prior )?(?:instructions|rules|guidelines)\b|"
    r"\bsystem prompt\b|\bnew instructions?\b|\bjailbreak\b|\bdeveloper mode\b|"
    r"\byou (?:must|should|will|shall|have to|need to|are to)(?: now)? (?:always|never|obey|"
    r"only (?:answer|reply|respond|speak|talk))\b|"
    rf"(?:^|[.!?,:;]\s*|\b(?:you|please|should|must|shall)\s+)(?:always|never)\s+{_ORDER_VERBS}\b|"
    r"\b(?:to|that|will) (?:always|never) (?:mention|recommend|promote|advertise|plug|respond|reply|"
    r"answer|bring up|refer|link|obey)\b|"
    r"(?<!\bi )(?<!\bwe )(?<!\bthey )(?<!\bpeople )(?<!\bfamily )\b(?:always|never) "
    r"(?:respond|reply|answer|say|mention)\b|"
    r"\balways (?:tell|remind|send|direct|refer|point|urge|encourage|ask) (?:people|everyone|"
    r"everybody|users|others|anyone|visitors|the user|customers|them) to\b|"
    r"\bremember to always\b|\bact as\b|\bpretend (?:to be|you)\b|\brole-?play as\b|"
    r"\b(?:must|shall|should) (?:always )?obey\b|\bobey (?:him|her|them|me|u:\d+|their|his|my|every)\b|"
    rf"\b(?:every|each|all|any) {_PERSONAS}\b(?: here| in this \w+)? (?:must|should|shall|will|has to|"
    r"have to|is required to|are required to|needs? to)\b|"
    rf"\b{_PERSONAS} (?:must|shall|are required to|is required to)\b|"
    r"\b(?:every|each|all) (?:reply|replies|response|responses|answer|answers|message|messages) "
    r"(?:must|should|shall|has to|have to|needs? to|will|to (?:end|start|begin|include|mention|"
    r"contain|close|carry|link))\b|"
    r"\b(?:admin|administrator|owner|developer|creator|operator|moderator|maker|programmer|staff|"
    rf"staff member|employee|team member) (?:of|at) (?:this|your|our|the persona's) {_PLACE}\b|"
    r"\b(?:verified|official|authori[sz]ed) (?:as )?(?:an? )?(?:staff|admin|administrator|developer|"
    r"moderator|operator)\b|"
    r"\b(?:has|have|with|holds?|got|gets) (?:full |root |special |superuser |elevated )?"
    r"(?:admin|administrator|root|superuser|moderator|elevated) (?:rights|access|privileges|powers|"
    r"permissions|mode|status)\b|"
    r"\b(?:authori[sz]ed|allowed|permitted) to (?:command|instruct|override|control|reprogram) "
    rf"(?:you|the persona|personas|the ai|{_PERSONAS})\b|"
    r"(?:^|[.!?]\s+)[\[(<{]?\s*(?:system|assistant|developer|admin)\s*[\]>)}]?\s*:|"
    r"[\[<{]\s*/?\s*(?:system|sys|inst|admin|developer)\s*[\]>}]|<<\s*sys\s*>>",
    re.IGNORECASE,
)


_ORDER_WORDS = (
    "from", "henceforth", "repl", "respons", "answer", "message", "ignore", "disregard", "forget",
    "sys", "inst", "jailbreak", "developer", "always", "never", "obey", "only", "act as",
    "pretend", "role", "persona", "assistant", "bot", "admin", "owner", "creator", "operator",
    "moderator", "maker", "programmer", "staff", "employee", "team member", "root", "superuser",
    "elevated", "command", "override", "control", "reprogram",
)
"""Every alternative of ``_ORDER`` holds one of these (or the word "ai"/"ais"): an ASCII text
with none of them cannot match, and is cleared without running ``_ORDER`` (90 µs a sentence;
this check, 6 µs). A text that is not ASCII always runs the full pattern, as case-insensitive
matching beyond ASCII is not ``str.casefold``."""
_AI_WORD = re.compile(r"\bais?\b", re.IGNORECASE)


def _may_be_an_order(text: str) -> bool:
    if not text.isascii():
        return True
    return any(map(text.lower().__contains__, _ORDER_WORDS)) or _AI_WORD.search(text) is not None


_PERSONA_REF = r"(?:you|ya|the persona|the assistant|the bot|the ai|the chatbot|(?:every |each |all |any )?personas?)"
_REQUEST = (
    r"(?:wants?|wanted|asks?|asked|expects?|expected|needs?|needed|requires?|required|would like|'d like|"
    r"would love|'d love|would prefer|'d prefer|told|tells|instructs?|instructed|insists?|insisted|"
    r"demands?|demanded|begs?|begged|reminds?|reminded|wish(?:es|ed)?|prefers?|preferred|orders?|"
    r"ordered|urges?|urged|requests?|requested|counts? on|relies on|rely on|trusts?|get|gets|got|hopes?|"
    r"hoped|(?:wish|hope|request|demand|preference|rule|instruction|order|dream) (?:is|was))"
)
_STANDING = (
    r"(?:always|never|whenever|constantly|forever|without fail|no matter what|all the time|"
    r"at all times|from now on|going forward|in (?:the )?future|"
    r"(?:every|each) (?:single )?(?:time|reply|message|answer|response|conversation|chat|day|session|"
    r"turn|post|text|sentence|greeting|talk)|"
    r"(?:at|in) the (?:start|end|beginning|top|bottom) of (?:every|each|all|your) \w+)"
)
_NEW_CLAUSE = r"(?:i|we|they|he|she|u:\d+|because|since|although|though|while|if|but)"
_GAP = rf"(?:\s+(?!{_NEW_CLAUSE}\b)[\w'-]+){{0,10}}?\s+"
"""Up to ten words of the same clause: no punctuation, no new subject or conjunction."""
_MODAL = r"(?:to|should|must|will|would|'d|'ll|shall|could|can|is to|are to)"
_STANDING_ORDER = Folded(
    # a wish or a request that the persona do something every time ("u:42 wants Warren to
    # always mention…", "u:42 asked that you never…", "u:42 expects the persona to … every time")
    rf"\b{_REQUEST}\s+(?:(?:that|for|it if|it when)\s+)?{_PERSONA_REF}(?:\s+|(?='))"
    rf"(?:(?:{_MODAL}\s+)?(?:always|never)\b|{_MODAL}\b{_GAP}{_STANDING}\b)|"
    # the same with the habit first ("u:42 always wants Warren to …")
    rf"\b(?:always|never|constantly)\s+(?:\w+\s+)?{_REQUEST}\s+(?:(?:that|for)\s+)?{_PERSONA_REF}\s+"
    r"(?:to|should|must|will|would|shall)\b|"
    # an order addressed to the persona ("you must bring it up every time", "the persona will
    # always recommend…")
    rf"\b{_PERSONA_REF}(?:\s+|(?='))(?:must|should|shall|has to|have to|needs? to|is to|are to|ought to|"
    r"(?:is|are) (?:expected|required|supposed) to|will|'ll|would|'d|to)\s+"
    rf"(?:(?:always|never)\s+{_ORDER_VERBS}\b|{_ORDER_VERBS}\b{_GAP}{_STANDING}\b)|"
    # "make sure you recommend…", "Don't forget to mention…", at the head of a clause, with a
    # verb of what the persona says ("make sure you take breaks" is advice, not an order)
    r"(?:^|[.!?:;,*(]\s*|\b(?:please|just|and|so|to)\s+)(?:make sure|be sure|make certain)\s+(?:that\s+)?"
    rf"(?:{_PERSONA_REF}\s+|to\s+)(?:(?:always|never)\s+)?{_ORDER_VERBS}\b|"
    r"(?:^|[.!?:;,*(]\s*|\bplease\s+)(?:remember|don't forget|do not forget|never forget)\s+to\s+"
    rf"(?:(?:always|never)\s+)?{_ORDER_VERBS}\b|"
    r"\b(?:remember|forget) to (?:always|never)\b|"
    # the shape of every reply ("end each message with…", "sign every answer as…")
    r"\b(?:end|start|begin|open|close|finish|sign(?: off)?|fill|pepper|sprinkle|prefix|suffix)\s+"
    r"(?:every|each|all|any|your)\s+(?:single\s+)?(?:reply|replies|response|responses|answer|answers|"
    r"message|messages|sentence|sentences|post|posts|text|texts|greeting|greetings)\b",
    re.IGNORECASE,
)
_PERSONA_THEN = re.compile(
    r"(?:you|ya|persona|assistant|bot|\bai)s?(?:\s+|(?='))(?:to|should|must|will|would|'d|'ll|shall|"
    r"could|can|is|are|always|never|has|have|needs?|ought)\b"
)
_PERSONA_WORDS = ("you", "ya", "persona", "assistant", "bot", " ai", "ai ", "ais ")
_ORDER_HEADS = ("sure", "certain", "forget", "remember")
_EVERY = ("every", "each", "all", "any", "your")
_REPLY = ("repl", "respons", "answer", "message", "sentence", "post", "text", "greeting")


def _may_be_a_standing_order(low: str) -> bool:
    """False only when ``_STANDING_ORDER`` cannot match the lowercase ASCII ``low``: each
    alternative that names the persona has it followed by a modal, "to", "always" or "never"
    (``_PERSONA_THEN``); the others hold "make sure" or its like, "remember" or "forget", or
    a word of ``_EVERY`` and one of ``_REPLY``."""
    return (
        any(map(low.__contains__, _ORDER_HEADS))
        or (any(map(low.__contains__, _REPLY)) and any(map(low.__contains__, _EVERY)))
        or (any(map(low.__contains__, _PERSONA_WORDS)) and _PERSONA_THEN.search(low) is not None)
    )


def order_or_authority(text: str, persona_name: str = "") -> str | None:
    """The words that make ``text`` an order or a claim of authority (rule 2), or ``None``.

    ``text`` is read ``plain`` (look-alike letters and signs written the ASCII way). A standing
    order to the persona — a wish or a request that it do something always, never or every
    time, "make sure you mention…", "remember to always…" — counts in any wording when it addresses
    "you", "the persona" or the persona by ``persona_name``.
    """
    text = plain(text)
    if _may_be_an_order(text):
        match = _ORDER.search(text)
        if match:
            return " ".join(match[0].split())
    if persona_name and persona_name.casefold() in text.casefold():
        text = name_regex(persona_name).sub("the persona", text)
    if not text.isascii() or _may_be_a_standing_order(text.lower()):
        match = _STANDING_ORDER.search(text)
        if match:
            return " ".join(match[0].split())
    return None


# -- 3. links and domains ---------------------------------------------------------------------

_LINK = re.compile(
    r"\b[a-z][a-z0-9+.-]{1,15}://|\b(?:javascript|vbscript|mailto):|\bdata:[a-z]+/|\bfile:/|"
    r"\bwww\d?\.|!\[|\]\(|\[[^\]]*\]\s*\[|<\s*/?\s*[a-z][a-z0-9-]*(?:\s[^<>]*)?/?\s*>|"
    r"<\s*(?:script|img|a|iframe)\b|&lt;|\b[\w.+-]+@[\w-]+\.[\w.-]+",
    re.IGNORECASE,
)
_DOMAIN = re.compile(
    r"(?<![A-Za-z0-9_.@/-])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?P<tld>[a-z]{2,63})(?![A-Za-z0-9_-])"
    r"(?!\.[a-z0-9])",
    re.IGNORECASE,
)
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_BRACKETED_DOT = re.compile(
    rf"(?<![A-Za-z0-9_-]){_LABEL}\s*[\[({{<]\s*(?:dot|\.)\s*[\])}}>]\s*[a-z]{{2,63}}(?![A-Za-z0-9_-])",
    re.IGNORECASE,
)
_SPOKEN_TLD = (
    r"com|net|org|info|biz|edu|gov|io|co|uk|us|me|tv|ai|ly|gg|app|dev|xyz|shop|store|site|online|"
    r"blog|example|test|de|fr|es|nl|ru|cn|jp|ca|au|eu|ch|se|no|pl|br|mx|club|link|page|tech|live|"
    r"website|web|email"
)
_SPOKEN_DOT = re.compile(
    rf"(?<![A-Za-z0-9_.-])(?P<label>{_LABEL})\s+(?:dot|\.)\s+(?P<tld>{_SPOKEN_TLD})(?![A-Za-z0-9_-])",
    re.IGNORECASE,
)
_NOT_A_LABEL = frozenset(
    """polka red black white blue green yellow pink purple orange grey gray brown little tiny small
    big large single one final decimal laser""".split()
)
_DEGREE = re.compile(r"[A-Z]\.[A-Z][a-z]{1,4}")
_NOT_DOMAIN_TLD = frozenset(
    "js ts py txt pdf doc docx jpg jpeg png gif mp3 mp4 mov csv xls xlsx ppt pptx md json".split()
)


_LINK_HINT = re.compile(r"[:\[\]<&@]|\.[A-Za-z]|www", re.IGNORECASE)
"""What every link, tag, address or domain above holds: a colon, a bracket, ``<``, ``&``,
``@``, "www", a dot right before a letter (a domain's last label), or a dot spelled out or set
apart ("dot", "(.)", " . "). An ASCII text with none of them is cleared without running the
patterns; any other text runs them all.

A short user id (``_SHORT_USER_ID``) is looked through: its colon is followed by a digit and
comes after a lone ``u``, so it is never a scheme's ``://`` nor a ``mailto:``/``data:``/``file:``
word's; and a dot right before its ``u`` is no domain's last label, as that needs two letters
and the ``u`` is followed by the colon. So every match above keeps a hint outside the ids, and
a row about ``u:42`` (every row the offline mind writes) no longer runs both patterns."""
_SET_APART_DOT = re.compile(r"[({]\s*\.|\s\.\s")


def link_or_domain(text: str) -> str | None:
    """The link, tag or bare domain in ``text`` (rule 3), or ``None``; ``text`` is read
    ``plain``, so look-alike letters, dots and slashes count as theirs."""
    text = plain(text)
    if (
        text.isascii()
        and _LINK_HINT.search(_SHORT_USER_ID.sub(" ", text) if "u:" in text else text) is None
        and "dot" not in text.lower()
        and ("." not in text or _SET_APART_DOT.search(text) is None)
    ):
        return None
    match = _LINK.search(text)
    if match:
        return _token_around(text, match.start(), match.end())
    for match in _DOMAIN.finditer(text):
        if match["tld"].lower() not in _NOT_DOMAIN_TLD and not _DEGREE.fullmatch(match[0]):
            return match[0]
    return spelled_domain(text)


def spelled_domain(text: str) -> str | None:
    """A domain written with its dots spelled out or set apart: "shop [dot] com", "shop(.)com",
    "shop dot com", "shop . com". A bracketed dot between two words is always one; a dot said
    as a word, or standing alone between spaces, only before a common top-level label, and
    after a word that is not an adjective or a stop word ("polka dot shop", "a dot com
    startup" and "connect the dot to" are not domains, nor is "dot-com")."""
    match = _BRACKETED_DOT.search(text)
    if match:
        return match[0]
    for match in _SPOKEN_DOT.finditer(text):
        label = match["label"].lower()
        if len(label) > 1 and label not in _STOPWORDS and label not in _NOT_A_LABEL and label != "dot":
            return match[0]
    return None


def _token_around(text: str, start: int, end: int, limit: int = 60) -> str:
    """The run of non-spaces around ``text[start:end]``, cut to ``limit`` chars (for a reason)."""
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    token = text[start:end].rstrip(".,;:!?")
    if token.count(")") > token.count("("):
        token = token.rstrip(")")
    return token[:limit]


# -- 4. names of other users ------------------------------------------------------------------

_USER_ID = re.compile(r"(?<![\w:])u:(\d+)\b", re.IGNORECASE)
_STOPWORDS = frozenset(
    """a an the and or but if then so of to in on at by for with from about into onto over under
    up down out off as than that this these those there here it its is are was were be been being
    am do does did doing done have has had having will would can could should shall may might must
    not no nor very too just really also still me my mine myself we us our ours you your yours he
    him his she her hers they them their theirs themself themselves what which who whom whose when
    where why how all any some each every more most much many such own same other again once only
    now then yet ever even lot lots thing things something anything everything someone anyone way
    said says say told tell tells get gets got make makes made go goes went gone come comes came
    like likes one two three new old good great nice well back since ago last next week weeks
    day days today yesterday tomorrow month months year years time times recently currently soon
    per via because while though although after before during until around quite doesn didn
    isn wasn aren weren don won can couldn wouldn shouldn haven hasn hadn""".split()
)
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


@functools.lru_cache(maxsize=4096)
def name_regex(name: str) -> re.Pattern[str]:
    """How a display name (or one word of it) is found in a text: as a whole word, in any case —
    except a name that is also a common word ("Will", "May", "Hope"), found only capitalised.

    Cached per name: ``re``'s own cache (512 patterns, oldest out first) is shared by every
    slice in flight, and a hundred personas' names overran it, so each sentence compiled its
    names again (a third of the offline reader's time in the write benchmark)."""
    if name.casefold() in _STOPWORDS or name.casefold() in _WORD_NAMES:
        return re.compile(rf"(?<![\w:]){re.escape(name[:1].upper() + name[1:])}(?!\w)")
    return re.compile(rf"(?<![\w:]){re.escape(name)}(?!\w)", re.IGNORECASE)


_WORD_NAMES = frozenset(
    """will may mark bill rose grace hope joy faith frank june april august summer autumn dawn sky
    rich jack art chase pat sue bob max ray ruby pearl amber iris lily daisy holly ivy rob don
    gene guy victor major nick drew wade reed cliff glen dale rock sunny honey angel""".split()
)


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
        elif len(word) >= 3 and word not in _STOPWORDS and word not in left:
            stems.add(_stem(word))
    return stems


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


def unsupported(text: str, authors: Sequence[str], leave_out: Iterable[str] = ()) -> str | None:
    """Why ``text`` is not supported by the evidence lines ``authors`` said (rule 6), or ``None``."""
    stems = content_stems(text, leave_out=leave_out)
    if not stems:
        return "it has no content word to check against its evidence"
    said: set[str] = set()
    for line in authors:
        said |= _line_stems(line)
    if stems & said:
        return None
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
    found = other_user_named(text, about, names)
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
        found = unsupported(text, lines, leave_out)
        if found:
            return f"unsupported by its evidence: {found}"
    return None
