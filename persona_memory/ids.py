"""Identifiers, and the one place they are checked.

Rules:
- A human is a positive ``int`` user id that fits SQLite's 64-bit integer (at most
  ``MAX_USER_ID``), written ``u:42`` inside memory rows. Rows never name a
  human by display name: an id survives a rename.
- A persona is a slug: lower-case ASCII letters, digits, ``-`` and ``_``, starting with a letter,
  at most 64 characters (``"warren"``).
- A room id is a non-empty string of at most 200 characters.
- A row's subject is ``"world"``, ``"self"`` or a ``u:`` id.
- Every string that crosses the boundary is valid Unicode (no lone surrogates: SQLite stores
  UTF-8), checked here with a message, never left to fail later on a writer.
"""

from __future__ import annotations

import re

from .errors import InvalidInput

WORLD = "world"
SELF = "self"

MAX_USER_ID = 2**63 - 1  # SQLite's INTEGER

_SLUG = re.compile(r"[a-z][a-z0-9_-]{0,63}")
_USER_DIGITS = "[1-9][0-9]{0,17}"
# A ``u:`` id as a regular expression that Python, JSON Schema (ECMA 262) and llama.cpp's
# grammar converter read alike: the mind's answer schema (``minds.schema``) uses it as is.
USER_REF = f"u:{_USER_DIGITS}"
_USER_REF = re.compile(f"u:({_USER_DIGITS})")


def check_user_id(value: object, field: str = "user_id") -> int:
    """Return ``value`` if it is a positive int user id; else raise ``InvalidInput``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_USER_ID:
        raise InvalidInput(
            f"{field} must be a positive int user id (like 42) of at most {MAX_USER_ID}, "
            f"got {value!r}"
        )
    return value


def check_row_id(value: object, field: str = "memory_id") -> int:
    """Return ``value`` if it is an int a stored id can be (a memory or notice id); else raise
    ``InvalidInput``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_USER_ID:
        raise InvalidInput(f"{field} must be a positive int (an id the page or API gave), got {value!r}")
    return value


def check_persona(value: object, field: str = "persona") -> str:
    """Return ``value`` if it is a persona slug like ``"warren"``; else raise ``InvalidInput``."""
    if not isinstance(value, str) or not _SLUG.fullmatch(value):
        raise InvalidInput(
            f"{field} must be a persona slug (lower-case letters, digits, '-' or '_', starting "
            f"with a letter, at most 64 chars), got {value!r}"
        )
    return value


def check_room_id(value: object, field: str = "room_id") -> str:
    """Return ``value`` if it is a usable room id; else raise ``InvalidInput``."""
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise InvalidInput(f"{field} must be a non-empty string of at most 200 chars, got {value!r}")
    check_unicode(value, field)
    return value


def check_unicode(value: str, field: str) -> str:
    """Return ``value`` if SQLite can store it; refuse a lone surrogate (broken UTF-16
    upstream) with ``InvalidInput``."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(
            f"{field} holds a character that is not valid Unicode at position {exc.start}; "
            "re-encode the text as UTF-8"
        ) from None
    return value


def persona_name(slug: str) -> str:
    """How a persona's slug reads in a sentence: ``warren`` → ``Warren``, ``mr_lee`` → ``Mr Lee``."""
    return slug.replace("_", " ").replace("-", " ").title()


def user_ref(user_id: int) -> str:
    """``42`` → ``"u:42"``, the form rows use."""
    return f"u:{check_user_id(user_id)}"


def parse_user_ref(ref: str | None) -> int | None:
    """``"u:42"`` → ``42``; anything else (``"world"``, ``"self"``, ``None``) → ``None``."""
    if ref is None:
        return None
    m = _USER_REF.fullmatch(ref)
    if m is None:
        return None
    uid = int(m.group(1))
    return uid if uid <= MAX_USER_ID else None


def check_subject(value: object, field: str = "subject") -> str:
    """Return a valid subject (``world``, ``self`` or ``u:<id>``); else raise ``InvalidInput``."""
    if value in (WORLD, SELF) or (isinstance(value, str) and parse_user_ref(value) is not None):
        return value  # type: ignore[return-value]
    raise InvalidInput(f"{field} must be 'world', 'self' or a user ref like 'u:42', got {value!r}")


def check_speaker(value: object) -> str:
    """A transcript speaker is a human (``u:42``) or a persona slug."""
    if isinstance(value, str) and parse_user_ref(value) is not None:
        return value
    if isinstance(value, str) and _SLUG.fullmatch(value):
        return value
    raise InvalidInput(f"speaker must be a user ref like 'u:42' or a persona slug, got {value!r}")
