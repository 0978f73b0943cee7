"""Settings: the embedded defaults, a TOML file over them, then ``overrides`` over both.

Rules:
- ``defaults.toml`` beside this module is the single source of every key and its default; the
  project's ``config.toml`` is a commented copy of it.
- A key that the defaults do not have is refused, and so is a value of the wrong type or out of
  range. The ``ConfigError`` names the key and says what it accepts; for an unknown key or
  section, the nearest valid ones.
- Settings are frozen once loaded.
- ``storage.url`` and ``storage.path`` are one choice, where the memory is kept: a layer (the
  file, then the overrides) that sets ``storage.path`` alone also clears a ``storage.url`` an
  earlier layer set, so ``--db`` always means that file; a layer that sets both, with a
  non-empty URL, is refused. Once loaded, an SQLite choice reads ``url == ""`` with the file in
  ``path``; a PostgreSQL one keeps its ``postgresql://`` URL in ``url``.
- ``cluster.renew_seconds`` is at most half of ``cluster.lease_seconds``: a worker renews each
  lease at least twice before it could run out. The ``[cluster]`` keys do nothing unless the
  store is PostgreSQL and the caller starts a worker (``cluster/worker.py``).
"""

from __future__ import annotations

import difflib
import ipaddress
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Mapping

import attrs

from .errors import ConfigError
from .storage.location import BadLocation, PostgresServer, SqliteFile, parse_location, redacted


@attrs.frozen
class StorageSettings:
    url: str
    path: str
    busy_timeout_ms: int
    read_connections: int

    @property
    def backend(self) -> str:
        """``"sqlite"`` (the file at ``path``) or ``"postgresql"`` (the server at ``url``)."""
        return "postgresql" if self.url else "sqlite"

    @property
    def place(self) -> str:
        """Where the memory is, to show a person: the file, or the URL without its password."""
        return redacted(self.url) if self.url else self.path


@attrs.frozen
class BlockSettings:
    char_limit: int
    per_human: int
    per_kind_first: int
    riders_per_human: int
    topic_per_human: int
    topic_per_kind_first: int
    topic_riders_per_human: int


@attrs.frozen
class RankingSettings:
    recency_weight: float
    importance_weight: float
    topic_recency_weight: float
    topic_importance_weight: float
    relevance_weight: float
    lexical_share: float
    recency_decay_per_day: float


@attrs.frozen
class RecallSettings:
    limit: int
    char_limit: int
    min_score: float


@attrs.frozen
class ScopeSettings:
    v1_proven: bool


@attrs.frozen
class EmbedderSettings:
    kind: str
    dim: int
    base_url: str
    model: str
    api_key_env: str


# How the http mind asks for its answers (``minds.http``): constrained to the answers' JSON
# schemas (``minds.schema``), or only to some JSON object.
RESPONSE_FORMATS = ("json_schema", "json_object")


@attrs.frozen
class MindSettings:
    kind: str
    base_url: str
    model: str
    api_key_env: str
    response_format: str
    timeout_seconds: float
    pronouns: dict[str, str]
    offline_processes: int


@attrs.frozen
class HttpSettings:
    timeout_seconds: float
    connect_timeout_seconds: float
    max_retries: int
    retry_initial_seconds: float
    retry_max_seconds: float
    max_concurrent_requests: int


@attrs.frozen
class WriteSettings:
    importance_min: int
    daily_cap_per_human: int
    neighbours: int
    neighbour_min_cosine: float
    sweep_interval_seconds: float
    park_backoff_initial_seconds: float
    park_backoff_max_seconds: float
    max_slice_lines: int
    max_slice_chars: int


@attrs.frozen
class WebSettings:
    host: str
    port: int
    public_url: str
    secret_env: str
    api_token_env: str
    runtime_token_env: str
    login_link_minutes: float
    session_hours: float
    secure_cookies: bool
    allowed_hosts: tuple[str, ...] = attrs.field(default=(), converter=tuple)


@attrs.frozen
class ActorSettings:
    mailbox_size: int
    write_queue_size: int
    idle_retire_seconds: float


@attrs.frozen
class SupervisorSettings:
    backoff_initial_seconds: float
    backoff_max_seconds: float
    healthy_after_seconds: float
    max_restarts: int
    restart_period_seconds: float
    shutdown_deadline_seconds: float


@attrs.frozen
class ClusterSettings:
    """Workers sharing one PostgreSQL (``cluster/worker.py``); unused unless a worker is started."""

    lease_seconds: float
    renew_seconds: float


@attrs.frozen
class Webhook:
    """One webhook of ``[events]``: where events go, the NAME of the environment variable that
    holds its signing secret, which kinds it gets, and whether memory text rides along.
    ``name`` keys its delivery cursor in the store (its URL unless given)."""

    url: str
    secret_env: str
    kinds: frozenset[str]
    include_text: bool = False
    name: str = ""

    @classmethod
    def from_table(cls, table: object, where: str) -> "Webhook":
        """A webhook from one TOML table, or a ``ConfigError`` naming what to fix."""
        from .events.kinds import KINDS, check_kinds

        if not isinstance(table, dict):
            raise ConfigError(f"{where} must be a table like {{url = \"https://…\", secret_env = \"…\", kinds = [\"memory.noted\"]}}")
        unknown = sorted(set(table) - {"url", "secret_env", "kinds", "include_text", "name"})
        if unknown:
            raise ConfigError(f"{where}: unknown key {unknown[0]!r}; a webhook has url, secret_env, kinds, include_text and name")
        url = table.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError(f"{where}.url must be an http:// or https:// URL, got {url!r}")
        secret_env = table.get("secret_env")
        if not isinstance(secret_env, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", secret_env):
            raise ConfigError(
                f"{where}.secret_env must be the NAME of an environment variable holding the signing "
                f"secret (like \"PERSONA_MEMORY_HOOK_SECRET\"), got {secret_env!r}"
            )
        try:
            kinds = check_kinds(table.get("kinds", list(KINDS)), f"{where}.kinds")
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        include_text = table.get("include_text", False)
        if not isinstance(include_text, bool):
            raise ConfigError(f"{where}.include_text must be true or false, got {include_text!r}")
        name = table.get("name", url)
        if not isinstance(name, str) or not name.strip():
            raise ConfigError(f"{where}.name must be a non-empty string, got {name!r}")
        return cls(url, secret_env, kinds, include_text, name)


def _webhooks(value: object) -> tuple[Webhook, ...]:
    if isinstance(value, tuple) and all(isinstance(w, Webhook) for w in value):
        return value
    hooks = tuple(Webhook.from_table(t, f"events.webhooks[{i}]") for i, t in enumerate(value))  # type: ignore[arg-type]
    names = [h.name for h in hooks]
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise ConfigError(f"events.webhooks[{i}] has the name {name!r} of an earlier one; give each a distinct name")
    return hooks


@attrs.frozen
class EventsSettings:
    """``[events]``: the webhooks events are pushed to, and the numbers of their delivery and
    of the ``GET /api/events`` stream (``events/``)."""

    webhooks: tuple[Webhook, ...] = attrs.field(converter=_webhooks)
    retry_initial_seconds: float
    retry_max_seconds: float
    timeout_seconds: float
    poll_seconds: float
    heartbeat_seconds: float
    keep_days: float


@attrs.frozen
class ExamSettings:
    """``persona-memory exam``: the chat model of the leak exam's model half (design §4)."""

    kind: str
    base_url: str
    model: str
    api_key_env: str
    runs: int
    turns: int
    temperature: float


@attrs.frozen
class Settings:
    storage: StorageSettings
    block: BlockSettings
    ranking: RankingSettings
    recall: RecallSettings
    scope: ScopeSettings
    embedder: EmbedderSettings
    mind: MindSettings
    http: HttpSettings
    write: WriteSettings
    actors: ActorSettings
    supervisor: SupervisorSettings
    web: WebSettings
    cluster: ClusterSettings
    exam: ExamSettings
    events: EventsSettings


_SECTIONS: dict[str, type] = {
    "storage": StorageSettings,
    "block": BlockSettings,
    "ranking": RankingSettings,
    "recall": RecallSettings,
    "scope": ScopeSettings,
    "embedder": EmbedderSettings,
    "mind": MindSettings,
    "http": HttpSettings,
    "write": WriteSettings,
    "actors": ActorSettings,
    "supervisor": SupervisorSettings,
    "web": WebSettings,
    "cluster": ClusterSettings,
    "exam": ExamSettings,
    "events": EventsSettings,
}


def _between(lo: float, hi: float) -> tuple[Callable[[Any], bool], str]:
    return (lambda v: lo <= v <= hi), f"between {lo} and {hi}"


_POSITIVE = ((lambda v: v > 0), "greater than 0")
_NON_NEGATIVE = ((lambda v: v >= 0), "0 or more")

_RANGES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "storage.path": ((lambda v: bool(v.strip())), "a non-empty file path (or ':memory:')"),
    "storage.busy_timeout_ms": _NON_NEGATIVE,
    "storage.read_connections": _between(1, 16),
    "block.char_limit": _between(100, 20000),
    "block.per_human": _between(1, 100),
    "block.per_kind_first": _between(1, 100),
    "block.riders_per_human": _between(0, 100),
    "block.topic_per_human": _between(1, 1000),
    "block.topic_per_kind_first": _between(0, 100),
    "block.topic_riders_per_human": _between(0, 100),
    "ranking.recency_weight": _NON_NEGATIVE,
    "ranking.importance_weight": _NON_NEGATIVE,
    "ranking.topic_recency_weight": _NON_NEGATIVE,
    "ranking.topic_importance_weight": _NON_NEGATIVE,
    "ranking.relevance_weight": _NON_NEGATIVE,
    "ranking.lexical_share": _between(0.0, 1.0),
    "recall.limit": _between(0, 100),
    "recall.char_limit": _between(0, 20000),
    "recall.min_score": _between(0.0, 1.0),
    "ranking.recency_decay_per_day": ((lambda v: 0 < v <= 1), "in (0, 1]"),
    "embedder.kind": ((lambda v: v in ("wordllama", "hashing", "http")), "'wordllama', 'hashing' or 'http'"),
    "embedder.dim": _between(8, 4096),
    "mind.kind": ((lambda v: v in ("offline", "http")), "'offline' or 'http'"),
    "mind.pronouns": (
        (lambda v: all(isinstance(p, str) and p in ("he", "she", "they", "it") for p in v.values())),
        'a table of persona = "he" | "she" | "they" | "it"',
    ),
    "mind.offline_processes": _between(0, 64),
    "mind.response_format": (
        (lambda v: v in RESPONSE_FORMATS), " or ".join(repr(f) for f in RESPONSE_FORMATS)
    ),
    "mind.timeout_seconds": _POSITIVE,
    "http.timeout_seconds": _POSITIVE,
    "http.connect_timeout_seconds": _POSITIVE,
    "http.max_retries": _between(0, 20),
    "http.retry_initial_seconds": _POSITIVE,
    "http.retry_max_seconds": _POSITIVE,
    "http.max_concurrent_requests": _between(1, 1000),
    "write.importance_min": _between(1, 10),
    "write.daily_cap_per_human": _between(1, 10000),
    "write.neighbours": _between(1, 50),
    "write.neighbour_min_cosine": _between(-1.0, 1.0),
    "write.sweep_interval_seconds": _POSITIVE,
    "write.park_backoff_initial_seconds": _POSITIVE,
    "write.park_backoff_max_seconds": _POSITIVE,
    "write.max_slice_lines": _between(1, 100_000),
    "write.max_slice_chars": _between(200, 10_000_000),
    "actors.mailbox_size": _between(1, 1_000_000),
    "actors.write_queue_size": _between(1, 1_000_000),
    "actors.idle_retire_seconds": _POSITIVE,
    "supervisor.backoff_initial_seconds": _POSITIVE,
    "supervisor.backoff_max_seconds": _POSITIVE,
    "supervisor.healthy_after_seconds": _POSITIVE,
    "supervisor.max_restarts": _between(0, 1000),
    "supervisor.restart_period_seconds": _POSITIVE,
    "supervisor.shutdown_deadline_seconds": _NON_NEGATIVE,
    "web.port": _between(0, 65535),
    "web.public_url": (
        (lambda v: v == "" or v.startswith(("http://", "https://"))),
        'an http:// or https:// URL, or "" for http://host:port',
    ),
    "web.allowed_hosts": (
        (lambda v: all(isinstance(h, str) and _is_host_name(h) for h in v)),
        'a list of host names or addresses, without scheme or port (like ["memory.example.com", "10.0.0.2"])',
    ),
    "web.login_link_minutes": _POSITIVE,
    "web.session_hours": _POSITIVE,
    "cluster.lease_seconds": ((lambda v: 0 < v <= 3600), "more than 0 and at most 3600"),
    "cluster.renew_seconds": _POSITIVE,
    "exam.kind": ((lambda v: v in ("off", "http")), "'off' or 'http'"),
    "events.retry_initial_seconds": _POSITIVE,
    "events.retry_max_seconds": _POSITIVE,
    "events.timeout_seconds": _POSITIVE,
    "events.poll_seconds": _POSITIVE,
    "events.heartbeat_seconds": _POSITIVE,
    "events.keep_days": _POSITIVE,
    "exam.runs": _between(1, 100),
    "exam.turns": _between(1, 8),
    "exam.temperature": _between(0.0, 2.0),
}


def _is_host_name(value: str) -> bool:
    """A DNS name, an IPv4 address or an IPv6 address (no brackets, scheme, port or path)."""
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return bool(re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})", value))
    return True


def default_values() -> dict[str, dict[str, Any]]:
    """The embedded defaults, as nested dicts (a fresh copy each call)."""
    text = resources.files(__package__).joinpath("defaults.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def load_settings(
    path: str | Path | None = None, overrides: Mapping[str, Any] | None = None
) -> Settings:
    """Load settings: embedded defaults, then the TOML file at ``path``, then ``overrides``.

    Args:
        path: a TOML file with any subset of the keys in ``defaults.toml``; ``None`` for the
            embedded defaults alone.
        overrides: ``{"section.key": value}``, applied last (``{"storage.path": "memory.db"}``).

    Raises:
        ConfigError: the file is missing or not TOML, or a key is unknown, mistyped or out of
            range. The message names the file and the key.
    """
    values = default_values()
    url_from = "defaults"  # the layer that last set storage.url, for its errors
    if path is not None:
        source = Path(path)
        try:
            loaded = tomllib.loads(source.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"config file {str(source)!r} does not exist") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"config file {str(source)!r} is not valid TOML: {exc}") from None
        given: dict[str, Any] = {}
        for section, table in loaded.items():
            if section not in values:
                raise ConfigError(f"{source}: unknown section [{section}]; {_nearest_section(section, values)}")
            if not isinstance(table, dict):
                raise ConfigError(f"{source}: [{section}] must be a table of settings")
            given.update({f"{section}.{key}": value for key, value in table.items()})
        if _apply(values, given, where=str(source)):
            url_from = str(source)
    if _apply(values, dict(overrides or {}), where="overrides"):
        url_from = "overrides"
    _resolve_storage(values["storage"], where=url_from)
    for section in ("embedder", "mind", "exam"):
        table = values[section]
        if table["kind"] == "http" and not (table["base_url"].strip() and table["model"].strip()):
            raise ConfigError(
                f"{section}.kind is 'http': set {section}.base_url (ending in /v1) and "
                f"{section}.model too"
            )
    cluster = values["cluster"]
    if cluster["renew_seconds"] * 2 > cluster["lease_seconds"]:
        raise ConfigError(
            f"cluster.renew_seconds ({cluster['renew_seconds']:g}) must be at most half of "
            f"cluster.lease_seconds ({cluster['lease_seconds']:g}), so a worker renews its leases "
            "at least twice before they run out; lease/3 is a good choice"
        )
    web = values["web"]
    if not web["public_url"]:
        host = web["host"] if ":" not in web["host"] else f"[{web['host']}]"
        web["public_url"] = f"http://{host}:{web['port']}"
    return Settings(**{name: cls(**values[name]) for name, cls in _SECTIONS.items()})


def _apply(values: dict[str, dict[str, Any]], layer: Mapping[str, Any], *, where: str) -> bool:
    """Set one layer's keys, keeping ``storage.url``/``storage.path`` one choice (see the rules).

    Returns whether the layer set ``storage.url``.
    """
    for dotted, value in layer.items():
        _set(values, dotted, value, where=where)
    if "storage.path" in layer:
        if "storage.url" in layer and values["storage"]["url"].strip():
            raise ConfigError(
                f"{where}: set storage.url or storage.path, not both: storage.url "
                f"({redacted(values['storage']['url'])!r}) names the store, storage.path "
                "only an SQLite file when storage.url is empty"
            )
        values["storage"]["url"] = ""
    return "storage.url" in layer


def _resolve_storage(storage: dict[str, Any], *, where: str) -> None:
    """Read ``storage.url`` into ``path`` (SQLite) or keep it (PostgreSQL); see the rules."""
    try:
        location = parse_location(storage["url"])
    except BadLocation as exc:
        raise ConfigError(f"{where}: storage.url: {exc}") from None
    if location is None:
        storage["url"] = ""
    elif isinstance(location, SqliteFile):
        storage["url"], storage["path"] = "", location.path
    else:
        assert isinstance(location, PostgresServer)
        storage["url"] = location.url


def _set(values: dict[str, dict[str, Any]], dotted: str, value: Any, *, where: str) -> None:
    section, _, key = dotted.partition(".")
    if section not in values or key not in values[section]:
        raise ConfigError(f"{where}: unknown setting {dotted!r}; {_nearest_keys(dotted, values)}")
    default = values[section][key]
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    else:
        ok = isinstance(value, type(default))
    if not ok:
        raise ConfigError(
            f"{where}: {dotted} must be {type(default).__name__} (like {default!r}), got {value!r}"
        )
    check = _RANGES.get(dotted)
    if check is not None and not check[0](value):
        raise ConfigError(f"{where}: {dotted} must be {check[1]}, got {value!r}")
    values[section][key] = value


def _nearest_keys(dotted: str, values: Mapping[str, Mapping[str, Any]]) -> str:
    """What to say after an unknown key: the nearest valid keys, not all eighty of them.

    The same key in another section comes first (``storage.port`` is ``web.port``), then the
    keys spelled most alike (difflib). With none near, the section's own keys, or the sections.
    """
    known = [f"{s}.{k}" for s in values for k in values[s]]
    section, _, key = dotted.partition(".")
    near = [d for d in known if d.partition(".")[2] == key]
    near += [d for d in difflib.get_close_matches(dotted, known, n=3, cutoff=0.7) if d not in near]
    if near:
        return f"did you mean {_either(near[:3])}?"
    if section in values:
        return f"[{section}] has {', '.join(values[section])}"
    return f"the sections are {', '.join(values)}; a key is written section.key"


def _nearest_section(section: str, values: Mapping[str, Any]) -> str:
    near = difflib.get_close_matches(section, list(values), n=2, cutoff=0.6)
    if near:
        return f"did you mean {_either([f'[{s}]' for s in near], quote=False)}?"
    return f"the sections are {', '.join(f'[{s}]' for s in values)}"


def _either(names: list[str], *, quote: bool = True) -> str:
    shown = [repr(n) if quote else n for n in names]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"
