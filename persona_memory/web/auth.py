"""Who is asking: login links, the session cookie, CSRF tokens and the runtime's bearer token.

Rules:
- The chat runtime hands a person a login link (``/login?token=…``): their user id and a fresh
  nonce, signed with the web secret and stamped with the time. It works for
  ``web.login_link_minutes`` and only once; a link whose signature does not match, that is too
  old (or from the future), or that was used already is refused.
- Redeeming a link starts a session: a cookie holding the user id and a random session id,
  signed and stamped the same way, valid for ``web.session_hours``. The cookie is
  ``HttpOnly``, ``SameSite=Lax``, and ``Secure`` when ``web.secure_cookies`` is set. Logging
  out ends the session id for good, so a copied cookie stops working too.
- A used link's nonce and an ended session's id are revoked through the ``Revocations`` port:
  the web app passes its memory's store (``storage/revocations.py``), so a revocation holds
  after a restart and on every cluster worker sharing the database, and is kept until the link
  or session would have expired anyway (plus ``CLOCK_SKEW``, for workers whose clocks differ).
  Redeeming is one compare-and-set: of two redemptions of one link, anywhere, one wins.
- Every state-changing request carries a CSRF token, an HMAC of the session id: a token from
  another session (or none) is refused.
- The JSON API is for the chat runtime only: a bearer token compared in constant time.
- Secrets come from the environment variables named in ``[web]``; a missing or short one is a
  ``ConfigError`` that names the variable. The secrets themselves never enter config files.
- Time comes from the injected wall clock, so tests expire links without waiting.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

import attrs
from itsdangerous import BadData, SignatureExpired, TimestampSigner, URLSafeTimedSerializer

from .. import ids
from ..clock import SystemClock, WallClock
from ..errors import ConfigError, PersonaMemoryError
from ..settings import WebSettings

SESSION_COOKIE = "pm_session"
CSRF_FIELD = "csrf"
MIN_SECRET_CHARS = 32

CLOCK_SKEW = timedelta(minutes=5)
"""How long a revocation outlives the link or session it revokes: a worker whose clock runs
behind still takes the link or cookie as unexpired for that long."""

_LOGIN_SALT = "persona-memory.login"
_SESSION_SALT = "persona-memory.session"


class LinkRefused(PersonaMemoryError):
    """A login link that cannot start a session. ``reason`` is ``"expired"``, ``"used"`` or
    ``"invalid"`` (tampered, truncated, or signed with another secret)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the login link is {reason}")
        self.reason = reason


@attrs.frozen
class WebSecrets:
    """The secrets of the web app: the signing key, the human-controls API's token and the
    runtime API's token (``""``: that API refuses every request)."""

    signing_key: str = attrs.field(repr=False)
    api_token: str = attrs.field(repr=False)
    runtime_token: str = attrs.field(default="", repr=False)

    @classmethod
    def from_env(
        cls, web: WebSettings, environ: Mapping[str, str] | None = None, *, api: bool = True
    ) -> WebSecrets:
        """Read the secrets from the variables ``web.secret_env``, ``web.api_token_env`` and
        ``web.runtime_token_env``.

        Args:
            api: ``False`` reads the signing key only (enough to print a login link); both
                APIs then refuse every request.

        Raises:
            ConfigError: a variable is unset, or holds fewer than 32 characters.
        """
        env = os.environ if environ is None else environ
        return cls(
            signing_key=_secret(env, web.secret_env, "signs login links and session cookies"),
            api_token=_secret(env, web.api_token_env, "is the bearer token of the JSON API") if api else "",
            runtime_token=(
                _secret(env, web.runtime_token_env, "is the bearer token of the runtime API") if api else ""
            ),
        )


def _secret(env: Mapping[str, str], name: str, purpose: str) -> str:
    value = env.get(name, "")
    if len(value.strip()) < MIN_SECRET_CHARS:
        state = "is not set" if not value else f"holds only {len(value.strip())} characters"
        raise ConfigError(
            f"the environment variable {name} {state}; it {purpose} and needs at least "
            f"{MIN_SECRET_CHARS} random characters. Make one with: "
            "python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )
    return value


@attrs.frozen
class Session:
    """A signed-in person: their user id, this session's random id, and when its cookie was
    signed (``None``: not known; signing out then keeps the revocation a whole session long)."""

    user_id: int
    session_id: str
    signed_at: datetime | None = attrs.field(default=None, eq=False)


class Revocations(Protocol):
    """Where used login links and ended sessions are kept (``kind`` ``"link"`` or
    ``"session"``): a store's ``store.revocations`` (``storage/revocations.py``), or
    ``ProcessRevocations``."""

    async def revoke(
        self, kind: Literal["link", "session"], secret: str, expires_at: datetime, now: datetime
    ) -> bool:
        """Revoke ``secret`` until ``expires_at``; ``False`` if it was revoked already."""
        ...

    async def is_revoked(self, kind: Literal["link", "session"], secret: str) -> bool: ...


class ProcessRevocations:
    """Revocations kept in this process only, forgotten when it ends: for an ``Auth`` that
    only mints links (``persona-memory login-link``) and for tests of ``Auth`` alone. A web
    app keeps them in its memory's store instead."""

    def __init__(self) -> None:
        self._until: dict[tuple[str, str], datetime] = {}

    async def revoke(
        self, kind: Literal["link", "session"], secret: str, expires_at: datetime, now: datetime
    ) -> bool:
        for key in [key for key, until in self._until.items() if until < now]:
            del self._until[key]
        if (kind, secret) in self._until:
            return False
        self._until[(kind, secret)] = expires_at
        return True

    async def is_revoked(self, kind: Literal["link", "session"], secret: str) -> bool:
        return (kind, secret) in self._until


def _clocked_signer(clock: WallClock) -> type[TimestampSigner]:
    class ClockedSigner(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(clock.now().timestamp())

    return ClockedSigner


class Auth:
    """Mints and checks login links, session cookies and CSRF tokens for one web app."""

    def __init__(
        self,
        secrets_: WebSecrets,
        web: WebSettings,
        clock: WallClock | None = None,
        revocations: Revocations | None = None,
    ) -> None:
        self._clock = clock or SystemClock()
        self._revoked: Revocations = revocations if revocations is not None else ProcessRevocations()
        self._web = web
        self._api_token = secrets_.api_token.encode()
        self._runtime_token = secrets_.runtime_token.encode()
        self._csrf_key = hashlib.sha256(b"persona-memory.csrf\0" + secrets_.signing_key.encode()).digest()
        signer = _clocked_signer(self._clock)
        self._links = URLSafeTimedSerializer(secrets_.signing_key, salt=_LOGIN_SALT, signer=signer)
        self._sessions = URLSafeTimedSerializer(secrets_.signing_key, salt=_SESSION_SALT, signer=signer)

    @property
    def link_seconds(self) -> int:
        return int(self._web.login_link_minutes * 60)

    @property
    def session_seconds(self) -> int:
        return int(self._web.session_hours * 3600)

    # ---- login links -------------------------------------------------------------------

    def login_token(self, user_id: int) -> str:
        """A fresh single-use token for ``user_id``'s login link."""
        ids.check_user_id(user_id)
        return self._links.dumps({"u": user_id, "n": secrets.token_urlsafe(16)})

    def login_url(self, user_id: int) -> str:
        """The whole login link, on ``web.public_url``."""
        return f"{self._web.public_url.rstrip('/')}/login?token={self.login_token(user_id)}"

    async def check_login(self, token: str) -> int:
        """The user id a login token is for, without using it up.

        Raises:
            LinkRefused: expired, used, or not ours.
        """
        user_id, nonce, _ = self._read_login(token)
        if await self._revoked.is_revoked("link", nonce):
            raise LinkRefused("used")
        return user_id

    async def redeem_login(self, token: str) -> Session:
        """Use up a login token and start a session.

        Raises:
            LinkRefused: expired, used (here or by another worker), or not ours.
        """
        user_id, nonce, signed_at = self._read_login(token)
        now = self._clock.now()
        until = signed_at + timedelta(seconds=self.link_seconds) + CLOCK_SKEW
        if not await self._revoked.revoke("link", nonce, until, now):
            raise LinkRefused("used")
        return Session(user_id=user_id, session_id=secrets.token_urlsafe(18), signed_at=now)

    def _read_login(self, token: str) -> tuple[int, str, datetime]:
        payload, signed_at = self._load(self._links, token, self.link_seconds)
        if not isinstance(payload, dict) or set(payload) != {"u", "n"}:
            raise LinkRefused("invalid")
        user_id, nonce = payload["u"], payload["n"]
        if not _is_user_id(user_id) or not isinstance(nonce, str):
            raise LinkRefused("invalid")
        return user_id, nonce, signed_at

    def _load(self, serializer: URLSafeTimedSerializer, token: str, max_age: int) -> tuple[Any, datetime]:
        try:
            return serializer.loads(token, max_age=max_age, return_timestamp=True)
        except SignatureExpired:
            raise LinkRefused("expired") from None
        except (BadData, UnicodeError, ValueError):
            raise LinkRefused("invalid") from None

    # ---- sessions ----------------------------------------------------------------------

    def session_cookie(self, session: Session) -> str:
        """The signed cookie value for ``session``."""
        return self._sessions.dumps({"u": session.user_id, "s": session.session_id})

    def cookie_options(self) -> dict[str, Any]:
        """Keyword arguments for Starlette's ``Response.set_cookie``."""
        return {
            "max_age": self.session_seconds,
            "path": "/",
            "httponly": True,
            "samesite": "lax",
            "secure": self._web.secure_cookies,
        }

    async def read_session(self, cookie: str | None) -> Session | None:
        """The session a cookie proves, or ``None`` (absent, tampered, expired or ended)."""
        if not cookie:
            return None
        try:
            payload, signed_at = self._load(self._sessions, cookie, self.session_seconds)
        except LinkRefused:
            return None
        if not isinstance(payload, dict) or set(payload) != {"u", "s"}:
            return None
        user_id, session_id = payload["u"], payload["s"]
        if not _is_user_id(user_id) or not isinstance(session_id, str):
            return None
        if await self._revoked.is_revoked("session", session_id):
            return None
        return Session(user_id=user_id, session_id=session_id, signed_at=signed_at)

    async def end_session(self, session: Session) -> None:
        """Log out: this session id is refused from now on, by every app over the same store."""
        now = self._clock.now()
        until = (session.signed_at or now) + timedelta(seconds=self.session_seconds) + CLOCK_SKEW
        await self._revoked.revoke("session", session.session_id, until, now)

    # ---- CSRF and the API token --------------------------------------------------------

    def csrf_token(self, session: Session) -> str:
        """The CSRF token every form of ``session`` carries."""
        return hmac.new(self._csrf_key, session.session_id.encode(), hashlib.sha256).hexdigest()

    def csrf_ok(self, session: Session, token: object) -> bool:
        """True when ``token`` is ``session``'s own CSRF token."""
        if not isinstance(token, str):
            return False
        return hmac.compare_digest(self.csrf_token(session).encode(), token.encode("utf-8", "replace"))

    def bearer_ok(self, authorization: str | None) -> bool:
        """True when an ``Authorization`` header carries the human-controls API's token."""
        return _bearer_is(authorization, self._api_token)

    def runtime_bearer_ok(self, authorization: str | None) -> bool:
        """True when an ``Authorization`` header carries the runtime API's token."""
        return _bearer_is(authorization, self._runtime_token)


def _bearer_is(authorization: str | None, expected: bytes) -> bool:
    if not authorization or not expected:
        return False
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(token.strip().encode("utf-8", "replace"), expected)


def _is_user_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
