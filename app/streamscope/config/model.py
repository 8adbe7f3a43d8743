"""The TOML configuration: pydantic models, where the file lives, loading and first-run setup.

Path: ``--config``, else ``$STREAMSCOPE_CONFIG``, else the platform's config dir
(``$XDG_CONFIG_HOME/streamscope/config.toml`` or ``~/.config/...`` on Linux,
``~/Library/Application Support/StreamScope`` on macOS, ``%APPDATA%\\StreamScope`` on
Windows). A missing file is fine: the defaults route everything to the built-in demo
upstream. A bad file is a :class:`ConfigError` whose message names the key and the problem.

Secrets (local keys, account keys) are ``SecretStr``: they never show in a repr or a log.
"""

from __future__ import annotations

import os
import secrets
import string
import sys
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

UpstreamProtocol = Literal["openai-chat", "anthropic", "responses", "lmstudio", "gemini", "demo"]
"""What an upstream speaks: a protocol (its codec's name, as everywhere in StreamScope), or
``demo``, the built-in backend, which answers each client in the client's own."""
DEMO_PROTOCOL = "openai-chat"  # the demo's answers when no client protocol is given
OLD_KIND = {"openai": "openai-chat"}
"""Configs of 0.1 said ``kind`` (the same names but ``openai``): read as ``protocol``, and
rewritten so when the config is next saved."""


# -- the account pool's failure rules ([[pool.rules]]; the table: pool/rules.py) ------

Action = Literal["return", "next", "disable"]

NETWORK_STATUS = 0  # the status recorded for a failure with no HTTP answer


class Rule(BaseModel):
    """One row of the table (a ``[[pool.rules]]`` entry in the config)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    failure_class: str = Field(alias="class", pattern=r"^[a-z0-9_]+$")
    status: list[int] = Field(default_factory=list)
    body: list[str] = Field(default_factory=list)
    network: bool = False
    action: Action
    cooldown_seconds: float | None = Field(default=None, gt=0)
    retry_after: bool = True

    @model_validator(mode="after")
    def _sensible(self) -> Rule:
        if self.network and (self.status or self.body):
            raise ValueError("a network rule matches no status or body")
        if any(not 400 <= s <= 599 for s in self.status):
            raise ValueError("status values must be HTTP error statuses (400-599)")
        return self

    def matches(self, status: int, body_lower: str) -> bool:
        if self.network:
            return status == NETWORK_STATUS
        if status < 400 or (self.status and status not in self.status):
            return False
        return not self.body or any(s.lower() in body_lower for s in self.body)

    def describe(self) -> str:
        """The rule as one line (for the admin API and the docs)."""
        if self.network:
            when = "no HTTP answer (refused, reset, timeout before any byte)"
        else:
            when = "status " + ("/".join(map(str, self.status)) if self.status else "any")
            if self.body:
                when += " with " + " or ".join(repr(s) for s in self.body)
        return f"{when} -> {self.failure_class}: {self.action}"


class ConfigError(ValueError):
    """The config file cannot be used; the message says which key and why."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


Fault = Literal["401", "429", "402", "403-insufficient", "403-too-large", "network", "slow"]


class AccountConfig(_Model):
    """One credential of an upstream. Unnamed accounts are named by position (``account1``)."""

    name: str = Field(default="", pattern=r"^[^/\s]*$")
    api_key: SecretStr = SecretStr("")
    weight: float = Field(default=1.0, gt=0)  # for the ``weighted`` strategy
    balance: float | None = None  # known credit, for the ``balance`` strategy
    # Demo upstreams only: how this account fails, to watch the pool without a provider.
    fault: Fault | None = None


class DemoSettings(_Model):
    """``[upstreams.demo]`` of a demo upstream: the scenarios' pace and the replays'."""

    tokens_per_second: float = Field(default=60.0, gt=0)
    first_token_seconds: float = Field(default=0.25, ge=0)
    slow_seconds: float = Field(default=20.0, ge=0)  # demo-slow's silence (see below)
    long_tokens: int = Field(default=300, ge=1)  # demo-long's length
    replay_pace_seconds: float = Field(default=0.02, ge=0)  # between replayed frames
    replay_dirs: list[str] = Field(default_factory=list)  # more folders of recordings

    def silence_seconds(self, keepalive_seconds: float) -> float:
        """demo-slow's silence before its first token behind a proxy whose keepalive
        interval is ``keepalive_seconds`` (0: off): ``slow_seconds``, unless the interval
        is as long or longer, then the interval + 1 s — the scenario is there to show
        keepalives, so it always outlasts one."""
        if keepalive_seconds > 0 and self.slow_seconds <= keepalive_seconds:
            return keepalive_seconds + 1.0
        return self.slow_seconds


Strategy = Literal["lru", "balance", "round_robin", "weighted"]


class UpstreamConfig(_Model):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    protocol: UpstreamProtocol
    base_url: str = ""
    mode: Literal["repair", "passthrough"] = "repair"
    default: bool = False
    models: list[str] | None = None
    models_ttl_seconds: float = Field(default=300.0, ge=0)
    accounts: list[AccountConfig] = Field(default_factory=list)
    strategy: Strategy = "lru"
    max_retries: int = Field(default=10, ge=1)  # distinct accounts tried per request
    demo: DemoSettings = Field(default_factory=DemoSettings)

    @model_validator(mode="before")
    @classmethod
    def _kind_was_the_old_word(cls, data: object) -> object:
        if not isinstance(data, dict) or "kind" not in data:
            return data
        data = dict(data)
        kind = data.pop("kind")
        said = OLD_KIND.get(kind, kind) if isinstance(kind, str) else kind
        if data.setdefault("protocol", said) != said:
            raise ValueError(
                f"kind = {kind!r} (the old word for protocol) and protocol = "
                f"{data['protocol']!r} disagree: keep only protocol"
            )
        return data

    @property
    def is_demo(self) -> bool:
        return self.protocol == "demo"

    @property
    def answers_in(self) -> str:
        """The protocol of its answers: its own (the demo's: OpenAI Chat when no client
        protocol is given)."""
        return DEMO_PROTOCOL if self.is_demo else self.protocol

    @model_validator(mode="after")
    def _base_url_needed(self) -> UpstreamConfig:
        if not self.is_demo and not self.base_url:
            raise ValueError(f"base_url is required for a {self.protocol} upstream")
        if self.base_url and not self.base_url.startswith(("http://", "https://")):
            raise ValueError("base_url must start with http:// or https://")
        self.base_url = self.base_url.rstrip("/")
        for i, account in enumerate(self.accounts, 1):
            account.name = account.name or f"account{i}"
        names = [a.name for a in self.accounts]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"account names must be unique: {', '.join(dupes)}")
        if not self.is_demo and any(a.fault for a in self.accounts):
            raise ValueError("only accounts of a demo upstream can have a fault")
        return self


LOCAL_KEY_MIN = 8
"""The shortest key the proxy takes (``api_keys``, ``admin_keys``)."""


class ProxyConfig(_Model):
    host: str = "127.0.0.1"
    port: int = Field(default=8787, ge=0, le=65535)
    api_keys: list[SecretStr] = Field(default_factory=list)
    # When set, /admin accepts only these (and the client endpoints do not, unless a key
    # is in api_keys too); when empty, the local keys grant /admin as well.
    admin_keys: list[SecretStr] = Field(default_factory=list)
    keepalive_seconds: float = Field(default=15.0, ge=0)
    # A streaming client's stream starts (SSE headers, a keepalive) when the upstream has
    # sent no frame this long (or keepalive_seconds, if shorter): the proxy then commits
    # to the stream, and a first frame that never comes is the stream's error, not a retry.
    commit_window_seconds: float = Field(default=2.0, ge=0)
    allowed_hosts: list[str] = Field(default_factory=list)
    max_body_bytes: int = Field(default=32 * 1024 * 1024, gt=0)
    connect_timeout_seconds: float = Field(default=10.0, gt=0)
    # One budget per request for the first byte, shared by every account tried.
    first_byte_timeout_seconds: float = Field(default=300.0, gt=0)
    idle_timeout_seconds: float = Field(default=300.0, gt=0)
    # Limits against local exhaustion (proxy/limits.py): bytes of a request head (431
    # beyond), seconds to send a complete head, open connections at once.
    max_header_bytes: int = Field(default=64 * 1024, ge=1024)
    header_timeout_seconds: float = Field(default=10.0, gt=0)
    max_connections: int = Field(default=1000, ge=1)

    @field_validator("api_keys", "admin_keys")
    @classmethod
    def _keys_long_enough(cls, keys: list[SecretStr]) -> list[SecretStr]:
        """An empty key, or one of a few characters, is no guard: any program on the
        machine guesses it in moments."""
        short = [k.get_secret_value() for k in keys if len(k.get_secret_value()) < LOCAL_KEY_MIN]
        if short:
            raise ValueError(
                f"{len(short)} key(s) shorter than {LOCAL_KEY_MIN} characters (an empty or "
                "short key is guessed in moments); use a long random one"
            )
        return keys


class PoolConfig(_Model):
    """``[pool]``: classification rules read before the defaults, and the probe."""

    rules: list[Rule] = Field(default_factory=list)
    # Every this many seconds, accounts the rules disabled are tried with a model
    # listing; one that answers is enabled again. 0: off.
    probe_seconds: float = Field(default=0.0, ge=0)


class CaptureConfig(_Model):
    """``[capture]``: every request through the proxy kept as a flow (in the data dir)."""

    enabled: bool = True
    max_flows: int = Field(default=2000, ge=1)
    max_megabytes: float = Field(default=500.0, gt=0)
    # One leg's bytes kept per flow at most; beyond it the flow is marked truncated.
    max_flow_megabytes: float = Field(default=64.0, gt=0)
    # Flows waiting to be written, at most; beyond it (a disk or a machine that cannot
    # keep up) a flow is stored without its parts over 64 KiB, and the log says so.
    backlog_megabytes: float = Field(default=64.0, gt=0)


class ConversationConfig(_Model):
    """``[conversation]``: the proxy's recent Responses answers, kept so that a client's
    ``item_reference`` and ``previous_response_id`` resolve (``streamscope.conversation``;
    in the shared database with ``[storage]``, else in memory). The oldest go first."""

    max_answers: int = Field(default=2000, ge=1)
    max_hours: float = Field(default=168.0, gt=0)
    max_megabytes: float = Field(default=128.0, gt=0)


class StorageConfig(_Model):
    """``[storage]``: where the pool's state and the flows live. No ``url``: SQLite files
    on this machine (the default). ``url = "postgresql://user:password@host:5432/db"``, or
    ``url_env`` naming an environment variable that holds it (the password stays out of
    the file): a PostgreSQL database, shared by every ``serve`` replica given the same."""

    url: SecretStr | None = None
    url_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")

    @model_validator(mode="after")
    def _one_url(self) -> StorageConfig:
        if self.url is not None and self.url_env is not None:
            raise ValueError("give [storage] url or url_env, not both")
        if self.url is not None:
            _postgres_url(self.url.get_secret_value())
        return self

    def database_url(self) -> str | None:
        """The PostgreSQL URL, or None for the SQLite files; ConfigError when ``url_env``
        names a variable that is unset or not such a URL."""
        if self.url is not None:
            return self.url.get_secret_value()
        if self.url_env is None:
            return None
        value = os.environ.get(self.url_env, "")
        if not value:
            raise ConfigError(f"[storage] url_env: ${self.url_env} is not set")
        try:
            return _postgres_url(value)
        except ValueError as exc:
            raise ConfigError(f"[storage] url_env: ${self.url_env}: {exc}") from None


def _postgres_url(url: str) -> str:
    if not url.startswith(("postgresql://", "postgres://")):
        raise ValueError("a storage url starts with postgresql:// (the only shared store)")
    return url


class TlsConfig(_Model):
    """``[tls]``: CAs trusted besides the usual public roots (PEM files): a team's own CA,
    for a shared proxy a window attaches to over TLS, or an upstream on its network."""

    ca_files: list[str] = Field(default_factory=list)


class Config(_Model):
    proxy: ProxyConfig = Field(default_factory=ProxyConfig)
    pool: PoolConfig = Field(default_factory=PoolConfig)
    capture: CaptureConfig = Field(default_factory=CaptureConfig)
    storage: StorageConfig = Field(default_factory=StorageConfig)
    conversation: ConversationConfig = Field(default_factory=ConversationConfig)
    tls: TlsConfig = Field(default_factory=TlsConfig)
    upstreams: list[UpstreamConfig] = Field(default_factory=list)
    aliases: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> Config:
        names = [u.name for u in self.upstreams]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"upstream names must be unique: {', '.join(dupes)}")
        if sum(u.default for u in self.upstreams) > 1:
            raise ValueError("at most one upstream may have default = true")
        return self

    def upstream(self, name: str) -> UpstreamConfig | None:
        return next((u for u in self.upstreams if u.name == name), None)

    def with_defaults(self) -> Config:
        """The config a user gets with no upstreams: the built-in demo, as default, with
        a healthy account and an exhausted one (so the pool has something to show)."""
        if self.upstreams:
            return self
        demo = UpstreamConfig(
            name="demo",
            protocol="demo",
            default=True,
            accounts=[AccountConfig(name="healthy"), AccountConfig(name="exhausted", fault="429")],
        )
        return self.model_copy(update={"upstreams": [demo]})


def default_config_path() -> Path:
    env = os.environ.get("STREAMSCOPE_CONFIG")
    if env:
        return Path(env)
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
        return base / "StreamScope" / "config.toml"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "StreamScope" / "config.toml"
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "streamscope" / "config.toml"


def default_data_dir() -> Path:
    """Where StreamScope keeps data (replays, captures): ``$STREAMSCOPE_DATA_DIR``, else
    ``$XDG_DATA_HOME/streamscope`` (``~/.local/share/streamscope``) on Linux,
    ``~/Library/Application Support/StreamScope`` on macOS, ``%LOCALAPPDATA%\\StreamScope``
    on Windows."""
    env = os.environ.get("STREAMSCOPE_DATA_DIR")
    if env:
        return Path(env)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "StreamScope"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "StreamScope"
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "streamscope"


def pool_state_path(config_path: Path) -> Path:
    """The account pool's SQLite file: beside the config, named after it
    (``config.toml`` -> ``config.pool.sqlite3``), so two configs never share a pool."""
    return config_path.with_name(config_path.stem + ".pool.sqlite3")


def describe_errors(exc: ValidationError) -> str:
    """A validation error as one line: each problem at its path (`upstreams[0].protocol: ...`)."""
    problems = []
    for err in exc.errors():
        loc = ".".join(
            f"[{part}]" if isinstance(part, int) else str(part) for part in err["loc"]
        ).replace(".[", "[")
        msg = err["msg"].removeprefix("Value error, ")
        problems.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(problems)


def parse_config(text: str, source: str = "config") -> Config:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML ({exc})") from None
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{source}: {describe_errors(exc)}") from None


def load_config(path: Path) -> Config:
    """The config at ``path``; defaults if the file does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config()
    except UnicodeDecodeError as exc:
        where = f"byte {exc.start}: {exc.reason}"
        raise ConfigError(f"{path}: not UTF-8 text ({where}); save it as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    return parse_config(text, str(path))


_KEY_ALPHABET = string.ascii_letters + string.digits


def generate_local_key() -> str:
    """``sk-local-`` and 32 random characters."""
    return "sk-local-" + "".join(secrets.choice(_KEY_ALPHABET) for _ in range(32))
