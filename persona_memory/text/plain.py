"""A text as the guards read it: Unicode look-alikes written the plain ASCII way. Pure.

A link, a domain or an order can be dressed so that a pattern written in ASCII misses it while
a reader (and a model) still sees it: full-width letters ("ｅｖｉｌ．ｅｘａｍｐｌｅ"), a dot or a
slash borrowed from another script ("evil。example", "https:⁄⁄"), a character with no width
inside a word ("ev\u200bil.example"), or Cyrillic and Greek letters shaped like Latin ones
("ехаmрlе"). ``plain`` undoes each of these before the guards look; what a row stores is never
changed by it.

Rules, in order:
1. Characters with no width are removed: zero-width space, joiners and non-joiners, the word
   joiner, the byte order mark, the soft hyphen, and the bidirectional marks and controls.
2. NFKC normalisation: full-width and other compatibility forms become their plain letters,
   digits and signs ("ｈｔｔｐｓ：／／" → "https://", "․" → ".").
3. What NFKC leaves but a reader takes for a dot, a slash, a colon or an at sign is written as
   one: the ideographic full stop "。", the hyphenation point "‧", the fraction and division
   slashes "⁄ ∕", the ratio "∶" and their like.
4. Cyrillic and Greek letters drawn like Latin ones become those Latin letters ("о" → "o").
   Words of those scripts keep their other letters, so they do not turn into English.

An ASCII text holds none of these and is returned as it is, unexamined.
"""

from __future__ import annotations

import unicodedata

_NO_WIDTH = dict.fromkeys(
    map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad\u180e\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
             "\u2066\u2067\u2068\u2069\u061c\u2061\u2062\u2063\u2064"),
    None,
)
_LOOK_ALIKES = str.maketrans(
    {
        **dict.fromkeys("。‧⸱⸳ꓸ۔", "."),
        **dict.fromkeys("⁄∕⧸╱⟋", "/"),
        **dict.fromkeys("꞉˸։׃∶⁚", ":"),
        # Cyrillic
        "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "ѕ": "s", "і": "i",
        "ј": "j", "ԁ": "d", "һ": "h", "ӏ": "l", "ԛ": "q", "ԝ": "w", "ѵ": "v",
        "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
        "Т": "T", "Х": "X", "Ѕ": "S", "І": "I", "Ј": "J", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W",
        # Greek
        "ο": "o", "α": "a", "ν": "v", "ρ": "p", "ι": "i", "κ": "k", "υ": "u", "ϲ": "c", "ϳ": "j",
        "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
        "Ο": "O", "Ρ": "P", "Τ": "T", "Χ": "X", "Υ": "Y",
        # Latin letters outside ASCII that NFKC keeps
        "ɡ": "g", "ɑ": "a", "ı": "i", "ȷ": "j",
    }
)


def plain(text: str) -> str:
    """``text`` with its look-alikes written plainly (see the module rules)."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", text.translate(_NO_WIDTH))
    return text.translate(_LOOK_ALIKES)
