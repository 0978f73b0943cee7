"""The installed version of persona-memory (``pyproject.toml``'s, as pip recorded it)."""

from __future__ import annotations

from importlib import metadata


def installed_version() -> str:
    """The version pip installed, or say how to install it."""
    try:
        return metadata.version("persona-memory")
    except metadata.PackageNotFoundError:
        return "(not installed: run `make` or `pip install -e .`)"
