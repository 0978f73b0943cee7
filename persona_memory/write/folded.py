"""Case-insensitive patterns that search ASCII text several times faster. Pure.

Python's ``re`` runs a long alternation with ``IGNORECASE`` several times slower than without
it (measured on the write path's rows and lines: the guards' sensitive-fact pattern 35–50 µs a
text, against 8 µs lowercased; the offline reader's hobby and life-event patterns 12–16 µs
against 3–4 µs). ``Folded`` keeps the answers of the case-insensitive pattern and finds them the
faster way where that is provably the same.

Rules:
- A ``Folded`` is made from a pattern whose text equals its own lowercase: no uppercase letter
  in a literal or a class, no named group (its ``(?P`` is uppercase), and no ``\\W``, ``\\S``,
  ``\\D``, ``\\B``, ``\\A`` or ``\\Z`` escape (a conservative test: any other pattern is refused
  with ``ValueError`` at import).
- ``search(text)`` on an ASCII text searches ``text.lower()`` with the pattern compiled without
  ``IGNORECASE``, then matches the case-insensitive pattern on ``text`` at the position found,
  so the match, its groups and its span are the case-insensitive pattern's own. The two agree:
  for an ASCII character, a case-insensitive test against a lowercase literal or class is the
  plain test of its lowercase; ``\\w``, ``\\d``, ``\\s`` and ``\\b`` do not depend on case; and
  lowercasing ASCII keeps every position.
- Any other text (beyond ASCII, where case folding is not ``str.lower``), and ``sub``, go to the
  case-insensitive pattern, ``ignoring_case`` (also there for anything else a caller needs).
"""

from __future__ import annotations

import re
from typing import Any


class Folded:
    """A case-insensitive pattern with a fast ``search`` (see the module rules)."""

    __slots__ = ("ignoring_case", "_lowercase")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        if pattern != pattern.lower():
            raise ValueError(
                "a Folded pattern must equal its own lowercase (no uppercase letter, no \\W \\S "
                f"\\D \\B \\A \\Z escape): {pattern[:80]!r}"
            )
        self.ignoring_case = re.compile(pattern, flags | re.IGNORECASE)
        self._lowercase = re.compile(pattern, flags & ~re.IGNORECASE)

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
