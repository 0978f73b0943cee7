"""A short user id in a text, as the matchers look through it: ``u:`` and at most five digits,
ending where a key-like run could not go on. Its digits alone complete no secret
(``text.secrets``) and its colon and ``u`` no link or domain (``text.links``), so a row about
``u:42`` with nothing else of the kind is cleared without running their patterns."""

from __future__ import annotations

import re

SHORT_USER_ID = re.compile(r"(?<![\w:])u:\d{1,5}(?![\w/+=-])")
