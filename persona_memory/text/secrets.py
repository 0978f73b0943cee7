"""Secrets in a text: a password, a card, an account, a key, a government id, or a promise to
hand one over. Pure.

``secret`` is the first rule of what a memory row may say (``write.guards``: a secret is never
stored, whatever the subject), and the offline reader runs it on whole chat lines before it
cuts them (``minds.offline.sentences``: a line with a secret yields nothing). The text is read
``plain`` (look-alike letters and signs written the ASCII way).

What counts: a password, passcode, PIN or door code next to its value ("the wifi password is
hunter2", "PIN is 4821"); a card number (13–19 digits, bare or in groups of four, passing the
Luhn check); a bank account, IBAN, routing number or sort code with its value, or an IBAN
itself; an API key or token (``sk-…``, ``ghp_…``, ``AKIA…``, ``xoxb-…``, ``AIza…``, or any 20+
character run of letters and digits mixed, as hex and base64 secrets are); a government id (a
US SSN ``ddd-dd-dddd``, or "passport", "social security", "national insurance", "driver's
licence", "tax id" next to a value); and a promise or a request to hand one over, even without
its value ("Warren said he would send u:42 the admin password"), while talk about one stays
("u:42 reset the admin password at work", "notes on password managers").
"""

from __future__ import annotations

import re

from .folded import Folded
from .plain import plain
from .user_ids import SHORT_USER_ID

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


def _may_hold_a_secret(text: str) -> bool:
    if not text.isascii():
        return True
    if any(map(str.isdigit, text)) and (
        "u:" not in text or any(map(str.isdigit, SHORT_USER_ID.sub(" ", text)))
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
