"""JSON over HTTP to an OpenAI-compatible endpoint: timeouts, retries, one shared gate.

``JsonEndpoint.post_json(path, payload)`` sends one JSON request and returns the JSON object
the endpoint answered. Everything that can go wrong on the way is translated here, at the
boundary, into the package's own errors (``errors.py``); nothing from httpx leaks out::

    answer                                   what post_json does
    2xx with a JSON object                   returns it
    2xx with anything else                   ProviderNonsense (no retry: asking again rarely helps)
    408, 429, 5xx, timeout, network error    retries, then ProviderUnreachable
    Retry-After longer than the cap          ProviderUnreachable now (the writer parks, tries later)
    any other status (400, 401, 403, 404...) ProviderRefused at once, with the endpoint's message

Rules:
- Attempts: ``1 + max_retries``. Between them, exponential backoff with full jitter: a uniform
  draw from ``[0, min(retry_max_seconds, retry_initial_seconds * 2**n)]`` after failure ``n``
  (AWS's "full jitter", so many actors that failed together do not retry together).
- ``Retry-After`` (seconds or an HTTP date) and OpenAI's ``retry-after-ms`` replace the draw:
  the endpoint said when to come back, so we wait exactly that. A wait longer than
  ``retry_max_seconds`` is not shortened (that would only earn another 429): ``post_json``
  gives up with ``ProviderUnreachable`` and the caller's own, slower backoff takes over.
- Every attempt holds one token of the ``trio.CapacityLimiter`` passed in, and only while the
  request is on the wire: backoff sleeps hold none. Share one limiter between every endpoint
  of a process to cap its requests in flight (``http.max_concurrent_requests``).
- Each attempt has an overall deadline of ``timeout_seconds`` (a trio cancel scope, on top of
  httpx's per-phase timeouts), so a server that trickles bytes cannot hold a slot forever.
  Connecting has its own, shorter limit (``connect_seconds``): a host that is down is known
  to be down at once, while a model that is slow to answer (a local one loading its weights
  on its first call) gets the whole deadline. A timeout's message names the setting that
  holds the deadline (``timeout_key``), so a person knows what to raise.
- Sleeps are ``trio.sleep``: on a virtual clock the retries take no real time.
- The key is read from the environment variable whose *name* the config holds; it goes only
  into the ``Authorization`` header, never into a log line or an error message.
"""

from __future__ import annotations

import json
import logging
import os
import random as _random
import re
from collections.abc import Mapping
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any

import attrs
import httpx
import trio

from persona_memory.clock import SystemClock, WallClock
from persona_memory.errors import (
    ConfigError,
    ProviderInputTooLong,
    ProviderNonsense,
    ProviderRefused,
    ProviderUnreachable,
)
from persona_memory.settings import HttpSettings

log = logging.getLogger(__name__)

RETRYABLE_STATUS = frozenset({408, 429}) | frozenset(range(500, 600))
_USER_AGENT = "persona-memory/0.1"
_SNIPPET = 300


@attrs.frozen
class RetryPolicy:
    """How long one attempt may take, and how often and how patiently to try again."""

    timeout_seconds: float
    max_retries: int
    initial_seconds: float
    max_seconds: float
    connect_seconds: float = 10.0
    timeout_key: str = "http.timeout_seconds"

    @classmethod
    def from_settings(
        cls, http: HttpSettings, *, timeout_seconds: float | None = None, timeout_key: str = "http.timeout_seconds"
    ) -> RetryPolicy:
        """The ``[http]`` numbers; ``timeout_seconds`` (read from the setting ``timeout_key``)
        replaces ``http.timeout_seconds`` for an endpoint with a deadline of its own."""
        return cls(
            timeout_seconds=http.timeout_seconds if timeout_seconds is None else timeout_seconds,
            max_retries=http.max_retries,
            initial_seconds=http.retry_initial_seconds,
            max_seconds=http.retry_max_seconds,
            connect_seconds=http.connect_timeout_seconds,
            timeout_key=timeout_key,
        )

    def backoff(self, failures: int, rng: _random.Random) -> float:
        """Seconds to wait after the ``failures``-th failure (1-based): full jitter."""
        ceiling = min(self.max_seconds, self.initial_seconds * 2.0 ** (failures - 1))
        return rng.uniform(0.0, ceiling)


def api_key_from_env(variable: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The key held by the environment variable named ``variable``, or ``None`` for no key.

    No key is a legitimate setup (a local endpoint such as llama.cpp or Ollama needs none), so
    an unset variable, or an empty ``variable`` name, gives ``None``; the unset case is logged
    once, naming the variable, so a forgotten ``export`` is easy to spot. A variable that is set
    but empty is almost always a mistake (``export KEY=`` in a script) and is refused.

    Raises:
        ConfigError: the variable is set to an empty or blank value.
    """
    if not variable:
        return None
    env = os.environ if environ is None else environ
    value = env.get(variable)
    if value is None:
        log.warning(
            "environment variable %s is not set: sending no API key (fine for a local endpoint)",
            variable,
        )
        return None
    if not value.strip():
        raise ConfigError(
            f"environment variable {variable} is set but empty: put the API key in it, or unset "
            "it for an endpoint that needs no key"
        )
    return value.strip()


def retry_after_seconds(headers: Mapping[str, str], now: datetime) -> float | None:
    """How long the endpoint asked us to wait, from ``retry-after-ms`` or ``Retry-After``.

    Args:
        headers: The response headers (case-insensitive mapping, as httpx gives them).
        now: The wall-clock time, to turn an HTTP date into seconds.

    Returns:
        Seconds (never negative), or ``None`` when neither header is present and readable.
    """
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - now).total_seconds())


def error_message(response: httpx.Response) -> str:
    """The endpoint's own explanation of a refusal, cut short; OpenAI puts it in error.message."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            for key in ("message", "detail", "error"):
                if isinstance(error.get(key), str):
                    return error[key][:_SNIPPET]
        elif isinstance(error, str):
            return error[:_SNIPPET]
    text = " ".join(response.text.split())
    return text[:_SNIPPET] or "(no message)"


class JsonEndpoint:
    """One OpenAI-compatible base URL, spoken to in JSON. Close it with ``aclose()``.

    Args:
        base_url: Everything before the operation's path, e.g. ``https://api.openai.com/v1``.
        limiter: The gate every attempt passes; share one across the process.
        policy: Timeout and retry numbers (``RetryPolicy.from_settings(settings.http)``).
        api_key: Sent as ``Authorization: Bearer …``; ``None`` sends no such header.
        key_source: Where the key came from (an environment variable's name), for messages.
        clock: Wall clock, to read ``Retry-After`` given as an HTTP date.
        rng: Source of the backoff jitter; pass a seeded ``random.Random`` in tests.
        transport: An httpx transport to use instead of the network (``httpx.MockTransport``).

    Raises:
        ConfigError: ``base_url`` is not an http(s) URL with a host.

    httpx's own connection cap is lifted: ``limiter`` is the one limit on requests in flight.
    """

    def __init__(
        self,
        base_url: str,
        *,
        limiter: trio.CapacityLimiter,
        policy: RetryPolicy,
        api_key: str | None = None,
        key_source: str = "",
        clock: WallClock | None = None,
        rng: _random.Random | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        url = base_url.strip().rstrip("/")
        try:
            host = httpx.URL(url).host if url.startswith(("http://", "https://")) else ""
        except httpx.InvalidURL:
            host = ""
        if not host:
            raise ConfigError(
                f"base_url must be an http:// or https:// URL with a host, got {base_url!r}"
            )
        self.base_url = url
        self._limiter = limiter
        self._policy = policy
        self._key_source = key_source
        self._has_key = api_key is not None
        self._clock = clock or SystemClock()
        self._rng = rng or _random.Random()
        headers = {"user-agent": _USER_AGENT, "content-type": "application/json"}
        if api_key is not None:
            headers["authorization"] = f"Bearer {api_key}"
        self._client = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(
                policy.timeout_seconds, connect=min(policy.connect_seconds, policy.timeout_seconds)
            ),
            transport=transport,
            follow_redirects=False,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=20),
        )

    @classmethod
    def from_settings(
        cls,
        base_url: str,
        api_key_env: str,
        http: HttpSettings,
        limiter: trio.CapacityLimiter,
        *,
        environ: Mapping[str, str] | None = None,
        policy: RetryPolicy | None = None,
        **kwargs: Any,
    ) -> JsonEndpoint:
        """An endpoint from the ``[mind]`` or ``[embedder]`` keys and the shared ``[http]``.

        The key is read now, from the variable named ``api_key_env`` (see ``api_key_from_env``).
        ``policy`` defaults to ``RetryPolicy.from_settings(http)``.

        Raises:
            ConfigError: ``base_url`` is not http(s), or the key variable is set but empty.
        """
        return cls(
            base_url,
            limiter=limiter,
            policy=policy or RetryPolicy.from_settings(http),
            api_key=api_key_from_env(api_key_env, environ),
            key_source=api_key_env,
            **kwargs,
        )

    async def post_json(self, path: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        """POST ``payload`` as JSON to ``base_url + path`` and return the JSON object answered.

        Raises:
            ProviderRefused: The endpoint refused the request (a 4xx other than 408 and 429, or
                a redirect): retrying will not help; the message carries the status and the
                endpoint's explanation.
            ProviderUnreachable: Timeouts, network errors, 408, 429 or 5xx through every
                attempt, or a ``Retry-After`` longer than ``retry_max_seconds``.
            ProviderNonsense: A 2xx whose body is not a JSON object.
        """
        url = f"{self.base_url}/{path.lstrip('/')}"
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        attempts = self._policy.max_retries + 1
        failure = ""
        for attempt in range(1, attempts + 1):
            response, failure = await self._attempt(url, body)
            wait: float | None = None
            if response is not None:
                if 200 <= response.status_code < 300:
                    return _json_object(response, url)
                if response.status_code not in RETRYABLE_STATUS:
                    refusal = self._refusal(url, response)
                    status, detail = response.status_code, error_message(response)
                    if input_too_long(status, refusal):
                        raise ProviderInputTooLong(refusal, status=status, detail=detail)
                    raise ProviderRefused(refusal, status=status, detail=detail)
                failure = f"answered {response.status_code}: {error_message(response)}"
                wait = retry_after_seconds(response.headers, self._clock.now())
            if attempt == attempts:
                break
            if wait is not None and wait > self._policy.max_seconds:
                raise ProviderUnreachable(
                    f"POST {url} {failure}; it asked to retry after {wait:.0f} s, longer than "
                    f"http.retry_max_seconds ({self._policy.max_seconds:g} s): try again later"
                )
            delay = wait if wait is not None else self._policy.backoff(attempt, self._rng)
            log.info(
                "POST %s %s; retry %d of %d in %.2f s",
                url, failure, attempt, attempts - 1, delay,
            )
            await trio.sleep(delay)
        raise ProviderUnreachable(f"POST {url} failed {attempts} time(s); last: {failure}")

    async def _attempt(self, url: str, body: bytes) -> tuple[httpx.Response | None, str]:
        """One request under the limiter and the deadline: the response, or why there is none."""
        policy = self._policy
        timeout = policy.timeout_seconds
        async with self._limiter:
            with trio.move_on_after(timeout) as deadline:
                try:
                    return await self._client.post(url, content=body), ""
                except httpx.ConnectTimeout:
                    connect = min(policy.connect_seconds, timeout)
                    return None, f"could not connect within {connect:g} s (http.connect_timeout_seconds)"
                except httpx.TimeoutException:
                    return None, f"timed out after {timeout:g} s ({policy.timeout_key})"
                except httpx.RequestError as exc:
                    return None, f"failed: {type(exc).__name__}: {exc}"
        assert deadline.cancelled_caught
        return None, f"gave no complete answer within {timeout:g} s ({policy.timeout_key})"

    def _refusal(self, url: str, response: httpx.Response) -> str:
        status = response.status_code
        text = f"POST {url} answered {status}: {error_message(response)}"
        if 300 <= status < 400:
            location = response.headers.get("location", "?")
            text += f" (redirected to {location}: fix base_url)"
        elif status in (401, 403):
            if self._has_key:
                text += f" (the key came from ${self._key_source}: check it)"
            elif self._key_source:
                text += f" (no key was sent: ${self._key_source} is not set)"
        return text

    async def aclose(self) -> None:
        """Close the connection pool. Safe to call more than once."""
        await self._client.aclose()


_TOO_LONG = re.compile(
    r"context.{0,20}(length|window)|too (long|large|many tokens)|maximum.{0,30}(tokens|length)|"
    r"token limit|reduce the length",
    re.IGNORECASE,
)


def input_too_long(status: int, message: str) -> bool:
    """Whether a refusal says the request was too long for the model (413, or a 400 that
    names the context length): the caller should send less, not the same again."""
    return status == 413 or (status == 400 and _TOO_LONG.search(message) is not None)


def _json_object(response: httpx.Response, url: str) -> dict[str, Any]:
    try:
        value = json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        snippet = " ".join(response.text.split())[:120]
        raise ProviderNonsense(f"POST {url} answered {response.status_code} with a body that is "
                               f"not JSON: {snippet!r}") from None
    if not isinstance(value, dict):
        raise ProviderNonsense(
            f"POST {url} answered a JSON {type(value).__name__}, not the object the protocol has"
        )
    return value
