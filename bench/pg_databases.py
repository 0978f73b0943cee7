"""Fresh PostgreSQL databases for the benches: one per run, created beside a given one, dropped after.

Rules:
- ``fresh_database(url, suffix)`` creates ``<db>_<suffix>`` on the server ``url`` reaches
  (user, host, port and options kept; ``<db>`` is the database ``url`` names), yields its URL,
  and drops it when the block ends — also on an error or Ctrl-C. The database ``url`` names
  is connected to (to run ``CREATE``/``DROP DATABASE``), never written; its user needs
  ``CREATEDB``.
- A database of that name left by an earlier run that died is dropped first: the bench always
  starts from an empty database.
- ``server_version(url)``: the server's version, as PostgreSQL reports it.
- Only the benches use this; psycopg is imported here, so an SQLite run never needs it.
"""

from __future__ import annotations

import contextlib
import re
from typing import Iterator
from urllib.parse import quote, unquote, urlsplit, urlunsplit

NAME_LIMIT = 63  # PostgreSQL's longest identifier, in bytes


def database_url(url: str, database: str) -> str:
    """``url`` with its database replaced by ``database`` (user, host and options kept)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + quote(database), parts.query, parts.fragment))


def database_of(url: str) -> str:
    return unquote(urlsplit(url).path.lstrip("/"))


def fresh_name(url: str, suffix: str) -> str:
    """``<db>_<suffix>``, checked to be a plain identifier PostgreSQL keeps whole.

    Raises:
        ValueError: the name would hold characters other than letters, digits and ``_``, or
            pass 63 bytes — name a shorter database in the URL.
    """
    name = f"{database_of(url)}_{suffix}"
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) or len(name.encode()) > NAME_LIMIT:
        raise ValueError(
            f"cannot make a bench database named {name!r} beside the URL's database: name a "
            f"database of letters, digits and _ (at most {NAME_LIMIT - len(suffix) - 1} of them) in the URL"
        )
    return name


@contextlib.contextmanager
def fresh_database(url: str, suffix: str) -> Iterator[str]:
    """Create ``<db>_<suffix>`` on ``url``'s server, yield its URL, drop it afterwards."""
    import psycopg

    name = fresh_name(url, suffix)
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield database_url(url, name)
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def server_version(url: str) -> str:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return str(conn.execute("SHOW server_version").fetchone()[0])
