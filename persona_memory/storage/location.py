"""Where the memory is stored: ``storage.url`` read into an SQLite file or a PostgreSQL server.

Rules:
- ``""`` (or only spaces) names no place: the caller falls back to ``storage.path``.
- ``postgresql://…`` or ``postgres://…`` (libpq's two spellings) selects PostgreSQL. The URL
  must name its database (``postgresql://host/persona_memory``); libpq's own parser checks the
  rest (host, port, ``?sslmode=…``), so a URL accepted here is one libpq accepts.
- ``sqlite:PATH`` names an SQLite file, ``PATH`` as written (relative to the working
  directory, or absolute); ``sqlite:///abs/file.db`` is the URL form of ``/abs/file.db``.
- Anything else without ``://`` is a plain file path, SQLite's (``memory.db``, ``C:\\pm.db``).
  Any other ``scheme://`` is refused: it is a URL of a store we do not speak.
- A PostgreSQL URL is checked by psycopg, the optional driver; without it the URL is refused
  with the extra to install (``postgres_driver``).
- Errors never repeat a password written into the URL: it is shown as ``***``.
- Pure: nothing is opened or connected here.
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit, urlunsplit

import attrs

POSTGRES_SCHEMES = ("postgresql", "postgres")


@attrs.frozen
class SqliteFile:
    """An SQLite database file."""

    path: str


@attrs.frozen
class PostgresServer:
    """A database on a PostgreSQL server, as a libpq connection URL."""

    url: str = attrs.field(repr=lambda url: redacted(url))

    @property
    def database(self) -> str:
        return unquote(urlsplit(self.url).path.lstrip("/"))


Location = SqliteFile | PostgresServer


class BadLocation(ValueError):
    """``storage.url`` names no place we can store in; the message says what to write instead."""


def parse_location(url: str) -> Location | None:
    """Read ``storage.url``; ``None`` when it is empty (then ``storage.path`` applies).

    Raises:
        BadLocation: an unknown scheme, an ``sqlite:`` URL without a path or with a host, or
            a PostgreSQL URL that names no database or that libpq refuses.
    """
    text = url.strip()
    if not text:
        return None
    scheme, sep, rest = text.partition(":")
    scheme = scheme.lower()
    if names_postgres(text):
        return _postgres(text)
    if scheme == "sqlite" and sep:
        return SqliteFile(_sqlite_path(text, rest))
    if "://" in text:
        raise BadLocation(
            f"{redacted(text)!r} is a {scheme}:// URL; storage.url takes postgresql://…, "
            "sqlite:PATH or a plain file path (empty: the file at storage.path)"
        )
    return SqliteFile(text)


def names_postgres(url: str) -> bool:
    """Whether ``url`` is written as a PostgreSQL URL (checked no further, and without psycopg)."""
    scheme, _, rest = url.strip().partition(":")
    return scheme.lower() in POSTGRES_SCHEMES and rest.startswith("//")


def _sqlite_path(text: str, rest: str) -> str:
    if rest.startswith("//"):
        host, _, path = rest[2:].partition("/")
        if host:
            raise BadLocation(
                f"{text!r} names a host ({host!r}); an SQLite file is local: write "
                "sqlite:relative/file.db or sqlite:///absolute/file.db"
            )
        rest = "/" + path
    if not rest.strip() or rest.strip() == "/":
        raise BadLocation(f"{text!r} names no file; write sqlite:memory.db or sqlite:///var/lib/pm/memory.db")
    return unquote(rest)


def _postgres(text: str) -> PostgresServer:
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 — urlsplit checks the port only when asked
    except ValueError as exc:
        raise BadLocation(f"{redacted(text)!r} is not a valid PostgreSQL URL: {exc}") from None
    if not unquote(parts.path.lstrip("/")):
        raise BadLocation(
            f"{redacted(text)!r} names no database; add it after the host, like "
            "postgresql://host:5432/persona_memory"
        )
    from ..errors import ConfigError
    from .postgres_driver import require_psycopg

    try:
        psycopg = require_psycopg()  # only for a PostgreSQL URL; SQLite users never import it
    except ConfigError as exc:
        raise BadLocation(f"{redacted(text)!r} names a PostgreSQL database, and {exc}") from None
    try:
        psycopg.conninfo.conninfo_to_dict(text)
    except Exception as exc:  # psycopg.ProgrammingError: libpq's own words about the URL
        raise BadLocation(f"{redacted(text)!r} is not a URL libpq accepts: {_without_secrets(exc, text)}") from None
    return PostgresServer(text)


def redacted(url: str) -> str:
    """``url`` with any password in it replaced by ``***``."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url.split("@", 1)[-1] if "@" in url else url
    if not password:
        return url
    user = parts.username or ""
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, f"{user}:***@{host}", parts.path, parts.query, parts.fragment))


def _without_secrets(exc: Exception, url: str) -> str:
    message = str(exc).strip()
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    return message.replace(password, "***") if password else message
