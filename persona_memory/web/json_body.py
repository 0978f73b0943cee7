"""Reading a request body as JSON, its nesting bounded before the parser sees it. Pure.

Python's ``json`` parser recurses once per array or object it enters, so a body of a few
kilobytes of ``[`` — far under the 64 KiB cap — exhausts the interpreter's recursion limit and
fails the request with ``RecursionError``. Every JSON route of the web app reads its body here
instead, and a body nested deeper than ``MAX_DEPTH`` is refused before it is parsed.

Rules:
- The body is UTF-8 (RFC 8259 §8.1); anything else is ``NotJson``, as is text that is not JSON.
- The depth is measured by a scan of the brackets outside strings (``"…"``, escapes
  honoured): no recursion, one pass of two regular expressions over at most 64 KiB. More than
  ``MAX_DEPTH`` arrays and objects inside one another is ``TooDeep``, which names the limit. No
  body of this API nests deeper than 3.
- Both errors are ``shapes.ShapeRefused`` (``InvalidInput``): the caller's to fix, a 400.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .shapes import ShapeRefused

MAX_DEPTH = 32

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


class NotJson(ShapeRefused):
    """The body is not UTF-8 JSON text."""


class TooDeep(ShapeRefused):
    """The body nests arrays and objects deeper than ``MAX_DEPTH``."""


def parse(raw: bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of ``raw``, once its nesting is known to be at most ``max_depth``.

    Raises:
        NotJson: not UTF-8, or not JSON.
        TooDeep: arrays and objects nested more than ``max_depth`` deep.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise NotJson("the body must be JSON (UTF-8)") from None
    if nesting_over(text, max_depth):
        raise TooDeep(
            f"the body nests arrays and objects more than {max_depth} deep; send the flat object "
            "this route takes (its fields are in /api/openapi.json or API.md)"
        )
    try:
        return json.loads(text)
    except ValueError:
        raise NotJson("the body must be JSON (UTF-8)") from None


def nesting_over(text: str, max_depth: int) -> bool:
    """Whether ``text`` opens more than ``max_depth`` arrays or objects inside one another,
    counting only brackets outside JSON strings (an unclosed string's brackets count: such a
    text is not JSON either way)."""
    if text.count("[") + text.count("{") <= max_depth:
        return False
    depth = 0
    for bracket in _BRACKET.findall(_STRING.sub('""', text)):
        if bracket in "[{":
            depth += 1
            if depth > max_depth:
                return True
        else:
            depth -= 1
    return False
