"""Links, tags, e-mail addresses and bare domains in a text. Pure.

``link_or_domain`` is the third rule of what a memory row may say (``write.guards``), and the
offline reader runs it on whole chat lines (``minds.offline.sentences``: a line with a link
yields nothing). The text is read ``plain``, so look-alike letters, dots and slashes count as
theirs.

What counts: any ``scheme://``, ``javascript:``, ``data:``, ``www.``, a markdown link or image,
an HTML tag, an e-mail address, a bare domain (``evil.example``, ``shop.example.com``,
``bit.ly``: labels joined by dots, the last of two or more letters), also with its dots
spelled out or set apart ("shop [dot] com", "shop(.)com", "shop dot com", "shop . com";
``spelled_domain``). Abbreviations ("e.g.", "Dr.", "St."), decimals ("3.5 km"), times
("5.30pm"), a full stop before a space, "a dot-com startup" and "polka dot dresses" are not
domains.
"""

from __future__ import annotations

import re

from .plain import plain
from .stopwords import STOPWORDS
from .user_ids import SHORT_USER_ID

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

A short user id (``SHORT_USER_ID``) is looked through: its colon is followed by a digit and
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
        and _LINK_HINT.search(SHORT_USER_ID.sub(" ", text) if "u:" in text else text) is None
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
        if len(label) > 1 and label not in STOPWORDS and label not in _NOT_A_LABEL and label != "dot":
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
