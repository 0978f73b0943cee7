"""Case-insensitive patterns that search ASCII text several times faster. Pure.

Python's ``re`` runs a long alternation with ``IGNORECASE`` several times slower than without
it (measured on the write path's rows and lines: the guards' sensitive-fact pattern 35–50 µs a
text, against 8 µs lowercased; the offline reader's hobby and life-event patterns 12–16 µs
against 3–4 µs). ``Folded`` keeps the answers of the case-insensitive pattern and finds them the
faster way where that is provably the same.

Rules:
- A ``Folded`` is made from a case-insensitive pattern and searches with the same pattern, its
  letters lowercased, compiled without ``IGNORECASE``. Only a literal letter outside a character
  class is lowercased: an escape (``\\S``, ``\\W``, ``\\u00C9``, …) and a group's name stay as
  they are. Refused with ``ValueError`` at import: an uppercase letter inside a class
  (``[A-Z]``: a range between a capital and a small letter would change), a character written
  by its code (``\\x41``), a letter beyond ASCII that case folds to an ASCII one (``K``, the
  Kelvin sign, matches ``k``), and a flag set inside the pattern (``(?-i:...)``).
- ``search(text)`` on an ASCII text searches ``text.lower()`` with that pattern, then matches the
  case-insensitive pattern on ``text`` at the position found, so the match, its groups and its
  span are the case-insensitive pattern's own. The two agree: for an ASCII character, a
  case-insensitive test against a literal letter or a lowercase class is the plain test of its
  lowercase against the lowercase letter; escapes, ``\\b`` and a group's name do not depend on
  the text's case; and lowercasing ASCII keeps every position.
- Any other text (beyond ASCII, where case folding is not ``str.lower``), and ``sub``, go to the
  case-insensitive pattern itself, ``ignoring_case`` (also there for anything else a caller needs).
"""

from __future__ import annotations

import re
from typing import Any


class Folded:
    """A case-insensitive pattern with a fast ``search`` (see the module rules)."""

    __slots__ = ("ignoring_case", "_lowercase")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.ignoring_case = re.compile(pattern, flags | re.IGNORECASE)
        self._lowercase = re.compile(lowercase_letters(pattern), flags & ~re.IGNORECASE)

    @property
    def pattern(self) -> str:
        return self.ignoring_case.pattern

    def search(self, text: str) -> re.Match[str] | None:
        """``ignoring_case.search(text)``, the same match, found faster on ASCII text."""
        if not text.isascii():
            return self.ignoring_case.search(text)
        found = self._lowercase.search(text.lower())
        if found is None:
            return None
        return self.ignoring_case.match(text, found.start()) or self.ignoring_case.search(text)

    def sub(self, repl: Any, text: str, count: int = 0) -> str:
        """``ignoring_case.sub``: the case-insensitive pattern's own."""
        return self.ignoring_case.sub(repl, text, count)


_CODED = frozenset("xuUN0")  # escapes that write a character by its code or name
_INLINE_FLAGS = frozenset("aiLmsux-")  # "(?-i:...)" would match the lowercased text, not the text


def lowercase_letters(pattern: str) -> str:
    """``pattern`` with its literal letters outside character classes lowercased (see the
    module rules).

    Raises:
        ValueError: an uppercase letter inside a character class, a character written by its
            code (``\\x41``, ``\\u00e9``, ``\\N{...}``, ``\\0``), or a letter beyond ASCII that case
            folds to an ASCII one (the Kelvin sign, the long s): none of them is lowercased here.
    """
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            if pattern[i + 1 : i + 2] in _CODED:
                raise ValueError(f"a Folded pattern writes its letters as letters, not {pattern[i : i + 2]!r}")
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if not char.isascii() and any(c.isascii() for c in char.lower() + char.upper() + char.casefold()):
            raise ValueError(f"a Folded pattern holds no letter beyond ASCII that folds to an ASCII one, got {char!r}")
        if pattern.startswith("(?", i) and pattern[i + 2 : i + 3] in _INLINE_FLAGS:
            raise ValueError(f"a Folded pattern sets no flags inside it, got {pattern[i : i + 4]!r}")
        if pattern.startswith(("(?P<", "(?P="), i):
            end = pattern.index(">" if pattern[i + 3] == "<" else ")", i)
            out.append(pattern[i : end + 1])
            i = end + 1
            continue
        if in_class:
            if char.isupper():
                raise ValueError(
                    f"a Folded pattern keeps its character classes lowercase, got {char!r} in {pattern[:80]!r}"
                )
            in_class = char != "]" or pattern[i - 1] == "["  # "[]" opens with a literal ]
        elif char == "[":
            in_class = True
            if pattern.startswith("[^", i):
                out.append("[^")
                i += 2
                if i < len(pattern) and pattern[i] == "]":
                    out.append("]")
                    i += 1
                continue
        else:
            char = char.lower()
        out.append(char)
        i += 1
    return "".join(out)
