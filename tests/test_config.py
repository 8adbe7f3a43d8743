"""The config file: where it lives, defaults, first-run key generation, clear errors."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from streamscope.config import (
    ConfigError,
    default_config_path,
    ensure_local_key,
    generate_local_key,
    load_config,
    mask,
    parse_config,
)

EXAMPLE = """
# my proxy
[proxy]
host = "127.0.0.1"
port = 8787
keepalive_seconds = 15

[[upstreams]]
name = "deepseek"
kind = "openai"          # openai | anthropic | responses | lmstudio | demo
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


def test_the_issue_example_parses() -> None:
    config = parse_config(EXAMPLE)
    up = config.upstreams[0]
    assert (up.name, up.kind, up.protocol, up.base_url) == (
        "deepseek",
        "openai",
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
    assert [(u.name, u.kind, u.default) for u in defaults.upstreams] == [("demo", "demo", True)]


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[proxy]\nport = 70000\n", "proxy.port"),
        ("[proxy]\nkeepalive_seconds = -1\n", "proxy.keepalive_seconds"),
        ("[proxy]\nsurprise = 1\n", "proxy.surprise"),
        (
            '[[upstreams]]\nname = "x"\nkind = "gemini"\nbase_url = "http://h"\n',
            "upstreams[0].kind",
        ),
        ('[[upstreams]]\nname = "x"\nkind = "openai"\n', "base_url is required"),
        ('[[upstreams]]\nname = "a/b"\nkind = "demo"\n', "upstreams[0].name"),
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
    assert "# my proxy" in text and "# openai | anthropic" in text
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


def test_mask_shows_only_the_last_four() -> None:
    assert mask("sk-abcdefgh1234") == "…1234"
    assert mask("abc") == "…"
