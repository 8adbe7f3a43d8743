"""The config file: where it lives, defaults, first-run key generation, clear errors."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from streamscope.config import (
    Config,
    ConfigError,
    DemoSettings,
    ProxyConfig,
    default_config_path,
    generate_local_key,
    load_config,
    parse_config,
)
from streamscope.config.save import ensure_local_key, render_config
from streamscope.demo.upstream import DemoUpstream

EXAMPLE = """
# my proxy
[proxy]
host = "127.0.0.1"
port = 8787
keepalive_seconds = 15

[[upstreams]]
name = "deepseek"
protocol = "openai-chat"     # openai-chat | anthropic | responses | lmstudio | demo
base_url = "https://api.deepseek.com/v1/"
mode = "repair"
default = false
models = ["deepseek-chat"]

[[upstreams.accounts]]
name = "main"
api_key = "sk-upstream-secret-1234"

[aliases]
"claude-sonnet-4-6" = "deepseek/deepseek-chat"
"""


def test_the_example_config_parses() -> None:
    config = parse_config(EXAMPLE)
    up = config.upstreams[0]
    assert (up.name, up.protocol, up.answers_in, up.base_url) == (
        "deepseek",
        "openai-chat",
        "openai-chat",
        "https://api.deepseek.com/v1",  # trailing slash dropped
    )
    assert config.aliases == {"claude-sonnet-4-6": "deepseek/deepseek-chat"}
    # Secrets never show in a repr (and so never in a log line that prints a config).
    assert "sk-upstream-secret-1234" not in repr(config)
    assert up.accounts[0].api_key.get_secret_value() == "sk-upstream-secret-1234"


def test_missing_file_gives_defaults_that_route_to_the_demo(tmp_path: Path) -> None:
    config = load_config(tmp_path / "nope.toml")
    assert config.upstreams == [] and config.proxy.port == 8787
    defaults = config.with_defaults()
    assert [(u.name, u.protocol, u.default) for u in defaults.upstreams] == [("demo", "demo", True)]
    assert defaults.upstreams[0].answers_in == "openai-chat"  # when no client protocol is given


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[proxy]\nport = 70000\n", "proxy.port"),
        ("[proxy]\nkeepalive_seconds = -1\n", "proxy.keepalive_seconds"),
        ("[proxy]\nsurprise = 1\n", "proxy.surprise"),
        (
            '[[upstreams]]\nname = "x"\nprotocol = "bedrock"\nbase_url = "http://h"\n',
            "upstreams[0].protocol",
        ),
        ('[[upstreams]]\nname = "x"\nprotocol = "openai-chat"\n', "base_url is required"),
        ('[[upstreams]]\nname = "a/b"\nprotocol = "demo"\n', "upstreams[0].name"),
        (
            '[[upstreams]]\nname = "x"\nkind = "openai"\nprotocol = "anthropic"\nbase_url = "http://h"\n',
            "disagree: keep only protocol",
        ),
        ("[proxy\n", "not valid TOML"),
    ],
)
def test_bad_config_names_the_key(text: str, where: str) -> None:
    with pytest.raises(ConfigError, match=None) as info:
        parse_config(text, "c.toml")
    assert where in str(info.value) and str(info.value).startswith("c.toml: ")


def test_first_start_generates_saves_and_returns_a_key(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "config.toml"
    config = load_config(path)
    key = ensure_local_key(config, path)
    assert key is not None and key.startswith("sk-local-") and len(key) == 41
    assert key[9:].isalnum()
    assert load_config(path).proxy.api_keys[0].get_secret_value() == key
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600  # a file holding keys
    assert ensure_local_key(load_config(path), path) is None  # only once


def test_generated_key_goes_under_proxy_and_keeps_comments(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(EXAMPLE)
    key = ensure_local_key(load_config(path), path)
    text = path.read_text()
    assert "# my proxy" in text and "# openai-chat | anthropic" in text
    config = load_config(path)
    assert [k.get_secret_value() for k in config.proxy.api_keys] == [key]
    assert config.upstreams[0].name == "deepseek"


def test_generated_key_adds_a_proxy_table_when_missing(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[aliases]\n"a" = "b/c"\n')
    key = ensure_local_key(load_config(path), path)
    config = load_config(path)
    assert config.proxy.api_keys[0].get_secret_value() == key and config.aliases == {"a": "b/c"}


def test_keys_are_random() -> None:
    assert len({generate_local_key() for _ in range(50)}) == 50


def test_config_path_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STREAMSCOPE_CONFIG", str(tmp_path / "x.toml"))
    assert default_config_path() == tmp_path / "x.toml"
    monkeypatch.delenv("STREAMSCOPE_CONFIG")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_config_path() == tmp_path / "streamscope" / "config.toml"


def test_demo_defaults_a_steady_60_tokens_per_second_and_a_silence_past_the_keepalive() -> None:
    demo = DemoSettings()
    assert demo.tokens_per_second == 60
    assert demo.slow_seconds > ProxyConfig().keepalive_seconds
    # And so with the config a user gets with no file.
    config = Config().with_defaults()
    (upstream,) = config.upstreams
    assert upstream.demo.silence_seconds(config.proxy.keepalive_seconds) == demo.slow_seconds
    assert demo.slow_seconds == 20


def _demo_config(keepalive: float, slow: float | None = None) -> Config:
    settings = "" if slow is None else f"\n[upstreams.demo]\nslow_seconds = {slow}\n"
    text = f'[proxy]\nkeepalive_seconds = {keepalive}\n\n[[upstreams]]\nname = "demo"\n'
    return parse_config(text + f'protocol = "demo"\n{settings}')


@pytest.mark.parametrize(
    ("keepalive", "slow", "silence"),
    [
        (15, None, 20),  # the defaults: 20 s > 15 s
        (30, None, 31),  # a keepalive past the default silence: 1 s more than it
        (20, None, 21),  # as long as the silence: no keepalive would be seen either
        (5, 3, 6),  # slow_seconds set, but not above the keepalive
        (2, 3, 3),  # slow_seconds above the keepalive: as set
        (0, 3, 3),  # keepalive off: as set
        (0.2, 0.7, 0.7),
    ],
)
def test_demo_slow_outlasts_the_keepalive(
    keepalive: float, slow: float | None, silence: float
) -> None:
    config = _demo_config(keepalive, slow)
    (upstream,) = config.upstreams
    assert upstream.demo.silence_seconds(keepalive) == pytest.approx(silence)
    # What demo-slow waits for: the timing of the demo upstream the proxy builds.
    demo = DemoUpstream(upstream, keepalive_seconds=config.proxy.keepalive_seconds)
    assert demo.timing.slow_seconds == pytest.approx(silence)
    # Not a setting: slow_seconds stays what the file says, and a save writes nothing new.
    assert upstream.demo.slow_seconds == (20 if slow is None else slow)
    assert set(upstream.demo.model_dump()) == set(DemoSettings.model_fields)
    saved = parse_config(render_config(config))
    assert saved.upstreams[0].demo.slow_seconds == upstream.demo.slow_seconds


def test_the_default_demo_outlasts_a_long_keepalive_too() -> None:
    config = Config(proxy=ProxyConfig(keepalive_seconds=45)).with_defaults()
    (upstream,) = config.upstreams
    assert upstream.demo.silence_seconds(45) == 46
    assert DemoUpstream(upstream, keepalive_seconds=45).timing.slow_seconds == 46


def test_capture_defaults_keep_2000_flows_and_500_mib() -> None:
    # Retention by count and by size, 2,000 flows and 500 MiB unless configured.
    capture = parse_config("", "empty config").capture
    assert capture.enabled is True
    assert (capture.max_flows, capture.max_megabytes) == (2000, 500)
    custom = parse_config("[capture]\nmax_flows = 10\nmax_megabytes = 1.5\n", "t").capture
    assert (custom.max_flows, custom.max_megabytes) == (10, 1.5)


@pytest.mark.parametrize(
    ("kind", "protocol"),
    [
        ("openai", "openai-chat"),
        ("anthropic", "anthropic"),
        ("lmstudio", "lmstudio"),
        ("responses", "responses"),
        ("demo", "demo"),
    ],
)
def test_an_older_configs_kind_reads_as_its_protocol(kind: str, protocol: str) -> None:
    text = f'[[upstreams]]\nname = "x"\nkind = "{kind}"\nbase_url = "http://h/v1"\n'
    (up,) = parse_config(text).upstreams
    assert up.protocol == protocol
    both = text + f'protocol = "{protocol}"\n'  # both words, agreeing: fine
    assert parse_config(both).upstreams[0].protocol == protocol


@pytest.mark.parametrize("key", ["", "x", "sk-1234"])
@pytest.mark.parametrize("field", ["api_keys", "admin_keys"])
def test_an_empty_or_short_key_is_refused(field: str, key: str) -> None:
    """Refused as too short, and the file's error line does not repeat the key."""
    text = f'[proxy]\n{field} = ["sk-local-long-enough", "{key}"]\n'
    with pytest.raises(ConfigError, match="shorter than 8 characters") as refused:
        parse_config(text, "config.toml")
    assert "sk-local-long-enough" not in str(refused.value)
    assert key == "" or f"'{key}'" not in str(refused.value)
    parse_config(text.replace(f'"{key}"', '"sk-12345"'), "config.toml")  # 8 is enough
