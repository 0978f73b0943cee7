"""psycopg, the PostgreSQL driver: an optional extra that only a PostgreSQL store loads.

Rules:
- The base install has no psycopg; ``pip install 'persona-memory[postgres]'`` brings it (its
  binary build, which ships libpq). An SQLite user never imports it.
- Only ``postgres_connection``, ``postgres_session`` and ``postgres_schema`` import psycopg at
  their top, and only a PostgreSQL store imports them, after ``require_psycopg`` has passed.
  Elsewhere psycopg is imported inside the function that needs it.
- Without the driver, a PostgreSQL URL fails where it is first read (``storage.url`` in the
  settings, or ``open_postgres_store``) with a ``ConfigError`` that names the extra to install.
"""

from __future__ import annotations

from types import ModuleType

from ..errors import ConfigError

EXTRA = "persona-memory[postgres]"
INSTALL = f"pip install '{EXTRA}'"


def require_psycopg() -> ModuleType:
    """The ``psycopg`` module, imported now.

    Raises:
        ConfigError: psycopg is not installed, or is installed but cannot load (no libpq);
            the message says which and how to install the extra.
    """
    try:
        import psycopg
    except ModuleNotFoundError as exc:
        if exc.name != "psycopg":
            raise _cannot_load(exc) from None
        raise ConfigError(
            f"psycopg, the PostgreSQL driver, is not installed: {INSTALL} (or leave storage.url "
            "empty to keep the memory in the SQLite file at storage.path)"
        ) from None
    except ImportError as exc:
        raise _cannot_load(exc) from None
    return psycopg


def _cannot_load(exc: ImportError) -> ConfigError:
    return ConfigError(
        f"psycopg, the PostgreSQL driver, is installed but cannot load ({exc}): {INSTALL} "
        "installs its binary build, which ships libpq"
    )
