"""Saving the config: what is saved reads back equal, the user's comments and layout
survive for what did not change, and the write is atomic and private."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr, ValidationError

from streamscope.config import (
    AccountConfig,
    Config,
    ConfigError,
    UpstreamConfig,
    load_config,
    parse_config,
)
from streamscope.config.save import render_config, save_config

COMMENTED = """\
# StreamScope, my setup
[proxy]
host = "127.0.0.1"
port = 8787                      # the port Cherry Studio knows
api_keys = ["sk-local-first"]
keepalive_seconds = 15           # ": keepalive" during silence
allowed_hosts = ["box.lan"]      # a name the dialog does not show

# the paid one
[[upstreams]]
name = "deepseek"
protocol = "openai-chat"
base_url = "https://api.deepseek.com/v1/"
models = ["deepseek-chat"]       # fixed list, no fetching

# personal
[[upstreams.accounts]]
name = "main"
api_key = "sk-main-1234"         # renewed in June

# work (unnamed on purpose)
[[upstreams.accounts]]
api_key = "sk-work-5678"
weight = 2

# spare
[[upstreams.accounts]]
name = "spare"
api_key = "sk-spare-9999"

# the offline one
[[upstreams]]
name = "demo"
protocol = "demo"

[upstreams.demo]
long_tokens = 50                 # keep demo-long short

[pool]
probe_seconds = 0

# my own rule, read before the defaults
[[pool.rules]]
class = "quota"
status = [403]
body = ["quota exceeded"]
action = "disable"
cooldown_seconds = 3600

[capture]
max_flows = 500                  # small disk

# aliases for Cherry Studio
[aliases]
"claude-sonnet-4-6" = "deepseek/deepseek-chat"   # what Cherry asks for
"""


def comment_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


def saved(tmp_path: Path, config: Config, text: str = COMMENTED) -> str:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    save_config(config, path)
    assert load_config(path) == config
    return path.read_text(encoding="utf-8")


# -- round trips ------------------------------------------------------------------------


def test_an_unchanged_config_leaves_the_file_byte_for_byte(tmp_path: Path) -> None:
    assert saved(tmp_path, parse_config(COMMENTED)) == COMMENTED


def test_a_changed_value_is_replaced_in_place_and_every_comment_stays(tmp_path: Path) -> None:
    config = parse_config(COMMENTED)
    config.proxy.port = 9100
    config.proxy.keepalive_seconds = 5
    text = saved(tmp_path, config)
    assert "port = 9100                      # the port Cherry Studio knows" in text
    assert 'keepalive_seconds = 5.0           # ": keepalive" during silence' in text
    assert comment_lines(text) == comment_lines(COMMENTED)
    # Nothing else moved: only the two lines differ.
    changed = [a for a, b in zip(COMMENTED.splitlines(), text.splitlines(), strict=True) if a != b]
    assert len(changed) == 2


def test_keys_the_dialog_does_not_show_are_kept(tmp_path: Path) -> None:
    config = parse_config(COMMENTED)
    config.proxy.port = 9100
    config.aliases["gpt-4o"] = "demo/demo-chat"
    text = saved(tmp_path, config)
    back = parse_config(text)
    assert back.proxy.allowed_hosts == ["box.lan"]
    assert back.upstreams[0].models == ["deepseek-chat"]
    assert back.upstreams[1].demo.long_tokens == 50
    assert back.capture.max_flows == 500
    assert [r.failure_class for r in back.pool.rules] == ["quota"]
    assert back.pool.rules[0].cooldown_seconds == 3600
    assert '"gpt-4o" = "demo/demo-chat"' in text or 'gpt-4o = "demo/demo-chat"' in text


def test_a_removed_account_goes_with_its_lines_and_the_next_keeps_its_comment(
    tmp_path: Path,
) -> None:
    config = parse_config(COMMENTED)
    del config.upstreams[0].accounts[1]  # the unnamed work account
    text = saved(tmp_path, config)
    assert "sk-work-5678" not in text
    assert "# spare" in text and text.index("# spare") < text.index('name = "spare"')
    assert "# personal" in text and 'api_key = "sk-main-1234"         # renewed in June' in text
    assert comment_lines(text) == [
        c for c in comment_lines(COMMENTED) if c != "# work (unnamed on purpose)"
    ]


def test_an_added_account_writes_only_what_is_not_default(tmp_path: Path) -> None:
    config = parse_config(COMMENTED)
    config.upstreams[0].accounts.append(AccountConfig(name="new", api_key=SecretStr("sk-n")))
    text = saved(tmp_path, config)
    block = text[text.index('name = "new"') :]
    block = block[: block.index("[[upstreams]]")]
    assert block.split("\n\n")[0].splitlines() == ['name = "new"', 'api_key = "sk-n"']
    # It is the deepseek upstream's last account, above the comment about the next upstream.
    assert text.index('name = "spare"') < text.index('name = "new"') < text.index("# the offline")
    assert comment_lines(text) == comment_lines(COMMENTED)


def test_a_renamed_account_keeps_its_lines_and_comments(tmp_path: Path) -> None:
    config = parse_config(COMMENTED)
    config.upstreams[0].accounts[0].name = "personal"
    text = saved(tmp_path, config)
    assert 'name = "personal"\napi_key = "sk-main-1234"         # renewed in June' in text
    assert 'name = "main"' not in text
    assert comment_lines(text) == comment_lines(COMMENTED)


def test_an_added_upstream_and_a_new_setting_land_in_their_tables(tmp_path: Path) -> None:
    config = parse_config(COMMENTED)
    config.upstreams[0].strategy = "balance"
    config.upstreams.append(
        UpstreamConfig(name="claude", protocol="anthropic", base_url="https://api.anthropic.com")
    )
    text = saved(tmp_path, config)
    # The new value goes below the upstream's values, above the comment on its accounts.
    assert 'models = ["deepseek-chat"]       # fixed list, no fetching\nstrategy = "balance"' in (
        text
    )
    assert '[[upstreams]]\nname = "claude"\nprotocol = "anthropic"\n' in text
    assert "mode =" not in text and "max_retries" not in text  # defaults stay unwritten
    assert comment_lines(text) == comment_lines(COMMENTED)


def test_a_new_file_holds_only_what_differs_from_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "config.toml"
    config = Config.model_validate(
        {
            "proxy": {"port": 9000, "api_keys": ["sk-local-x"]},
            "upstreams": [{"name": "demo", "protocol": "demo", "accounts": [{"name": "a"}]}],
        }
    )
    save_config(config, path)
    assert load_config(path) == config
    assert path.read_text() == (
        '[proxy]\nport = 9000\napi_keys = ["sk-local-x"]\n\n'
        '[[upstreams]]\nname = "demo"\nprotocol = "demo"\n\n[[upstreams.accounts]]\nname = "a"\n'
    )


def test_an_empty_config_writes_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    save_config(Config(), path)
    assert path.read_text() == "" and load_config(path) == Config()


# Names and keys of every shape the config accepts, in configs that validate; a few
# common names so that two configs share entries (the merge matches them by name).
names = st.sampled_from(["a", "b", "demo"]) | st.from_regex(r"[A-Za-z0-9_.-]{1,12}", fullmatch=True)
account_names = st.sampled_from(["", "main", "account2"]) | st.text(
    st.characters(exclude_categories=["Cs", "Cc", "Z"], exclude_characters="/"), max_size=8
)
texts = st.sampled_from(["", "x", "a.b"]) | st.text(
    st.characters(exclude_categories=["Cs"]), max_size=12
)
# local keys of every shape the config takes: 8 characters or more
local_keys = st.sampled_from(["sk-local", "k" * 8]) | st.text(
    st.characters(exclude_categories=["Cs"]), min_size=8, max_size=16
)
floats = st.floats(allow_nan=False)
accounts = st.fixed_dictionaries(
    {"name": account_names, "api_key": texts},
    optional={
        "weight": st.floats(min_value=0, exclude_min=True, allow_nan=False),
        "balance": floats,
    },
)
upstreams = st.fixed_dictionaries(
    {"name": names, "protocol": st.sampled_from(["openai-chat", "anthropic", "demo"])},
    optional={
        "base_url": st.sampled_from(["https://a.example/v1", "http://127.0.0.1:1234"]),
        "default": st.booleans(),
        "strategy": st.sampled_from(["lru", "balance", "round_robin", "weighted"]),
        "max_retries": st.integers(1, 20),
        "models": st.lists(texts, max_size=3),
        "accounts": st.lists(accounts, max_size=3),
    },
)
configs_data = st.fixed_dictionaries(
    {
        "proxy": st.fixed_dictionaries(
            {},
            optional={
                "port": st.integers(0, 65535),
                "api_keys": st.lists(local_keys, max_size=3),
                "keepalive_seconds": st.floats(min_value=0, allow_nan=False),
            },
        ),
        "upstreams": st.lists(upstreams, max_size=3),
        "aliases": st.dictionaries(texts, texts, max_size=4),
    }
)


def build(data: dict[str, Any]) -> Config:
    for upstream in data["upstreams"]:
        if upstream["protocol"] != "demo":
            upstream.setdefault("base_url", "https://a.example/v1")
    try:
        return Config.model_validate(data)
    except ValidationError:
        assume(False)
        raise


@given(configs_data)
@settings(max_examples=150, deadline=None)
def test_any_config_reads_back_equal_from_a_new_file(data: dict[str, Any]) -> None:
    config = build(data)
    assert parse_config(render_config(config)) == config


@given(configs_data, configs_data)
@settings(max_examples=150, deadline=None)
def test_any_config_reads_back_equal_over_any_other(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    before, after = build(first), build(second)
    for old_text in (render_config(before), COMMENTED):
        text = render_config(after, old_text)
        assert parse_config(text) == after
        assert render_config(after, text) == text  # saving again changes nothing


@given(configs_data)
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_save_then_load_gives_the_config_back(tmp_path: Path, data: dict[str, Any]) -> None:
    config = build(data)
    path = tmp_path / "config.toml"
    save_config(config, path)
    assert load_config(path) == config


# -- the write --------------------------------------------------------------------------


def test_a_failing_write_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(COMMENTED)
    config = parse_config(COMMENTED)
    config.proxy.port = 9100

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)  # the new text is written, not yet synced
    with pytest.raises(OSError, match="No space"):
        save_config(config, path)
    assert path.read_text() == COMMENTED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]  # no temp left


def test_a_file_that_is_not_toml_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[proxy\nport = 1\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        save_config(Config(), path)
    assert path.read_text() == "[proxy\nport = 1\n"


def test_a_file_that_is_not_utf8_is_not_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b"# caf\xe9\n[proxy]\nport = 1\n")
    with pytest.raises(ConfigError, match="not UTF-8"):
        save_config(Config(), path)
    assert path.read_bytes() == b"# caf\xe9\n[proxy]\nport = 1\n"


def test_a_file_with_keys_is_private(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[proxy]\nport = 1\n")
    os.chmod(path, 0o644)
    config = Config.model_validate({"proxy": {"api_keys": ["sk-local-x"]}})
    save_config(config, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    keyless = Config.model_validate({"upstreams": [{"name": "d", "protocol": "demo"}]})
    other = tmp_path / "plain.toml"
    other.write_text("")
    os.chmod(other, 0o644)
    save_config(keyless, other)
    assert stat.S_IMODE(other.stat().st_mode) == 0o644  # no keys: its mode is left alone

    upstream_key = Config.model_validate(
        {"upstreams": [{"name": "d", "protocol": "demo", "accounts": [{"api_key": "sk-up"}]}]}
    )
    save_config(upstream_key, other)
    assert stat.S_IMODE(other.stat().st_mode) == 0o600


def test_a_symlinked_config_stays_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "streamscope.toml"
    real.parent.mkdir()
    real.write_text(COMMENTED)
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    config = parse_config(COMMENTED)
    config.proxy.port = 9100
    save_config(config, link)
    assert link.is_symlink() and load_config(real) == config


def test_windows_line_endings_are_kept(tmp_path: Path) -> None:
    crlf = COMMENTED.replace("\n", "\r\n")
    path = tmp_path / "config.toml"
    path.write_bytes(crlf.encode())
    config = parse_config(COMMENTED)
    config.proxy.port = 9100
    save_config(config, path)
    raw = path.read_bytes().decode()
    assert raw.count("\r\n") == crlf.count("\r\n") and "\n" not in raw.replace("\r\n", "")
    assert load_config(path) == config


def test_an_older_files_kind_is_saved_as_protocol_in_its_place(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[[upstreams]]\nname = "deepseek"\nkind = "openai"   # the provider\n'
        'base_url = "https://api.deepseek.com/v1"\n'
    )
    config = load_config(path)
    assert config.upstreams[0].protocol == "openai-chat"
    changed = config.model_copy(update={"proxy": config.proxy.model_copy(update={"port": 9000})})
    save_config(changed, path)
    text = path.read_text()
    assert 'name = "deepseek"\nprotocol = "openai-chat" # the provider\nbase_url' in text
    assert "kind" not in text and load_config(path) == changed
