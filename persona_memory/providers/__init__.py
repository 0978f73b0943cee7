"""Talking to model providers over HTTP: the one client the HTTP mind and embedder share.

See ``http`` for the retry, timeout and concurrency rules.
"""

from __future__ import annotations

from persona_memory.providers.http import (
    JsonEndpoint,
    RetryPolicy,
    api_key_from_env,
    error_message,
    retry_after_seconds,
)

__all__ = [
    "JsonEndpoint",
    "RetryPolicy",
    "api_key_from_env",
    "error_message",
    "retry_after_seconds",
]
