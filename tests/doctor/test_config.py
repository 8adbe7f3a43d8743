"""The config checks of ``streamscope doctor`` (:mod:`streamscope.doctor.config`)."""

from __future__ import annotations

from streamscope.config import parse_config
from streamscope.doctor.config import config_warnings


def test_config_warnings_name_what_validation_lets_through() -> None:
    config = parse_config(
        """
        [proxy]
        host = "0.0.0.0"
        api_keys = ["sk-local-abcdefghijklmnop1234"]
        [[upstreams]]
        name = "cloud"
        protocol = "anthropic"
        base_url = "https://api.anthropic.com"
        [[upstreams]]
        name = "paid"
        protocol = "openai-chat"
        base_url = "https://api.example.com/v1"
        models = ["gpt-x"]
        accounts = [{name = "blank"}]
        [[upstreams]]
        name = "local"
        protocol = "openai-chat"
        base_url = "http://127.0.0.1:11434/v1"
        [aliases]
        fast = "quick"
        quick = "paid/gpt-x"
        """
    )
    found = [(c.name, c.status, c.detail) for c in config_warnings(config)]
    assert found[0] == ("key", "ok", "1 local key: …1234")
    details = [d for _, status, d in found if status == "warn"]
    assert any("upstream cloud" in d and "has no accounts" in d for d in details)
    assert "account paid/blank has an empty api_key" in details
    assert not any("local" in d for d in details if d.startswith("upstream"))  # no key needed
    assert "alias fast points at alias quick, and aliases are resolved only once" in details
    # Without admin_keys and allowed_hosts, serve refuses that address: a failure.
    (exposed,) = [d for _, status, d in found if status == "fail"]
    assert exposed.startswith("the proxy listens on 0.0.0.0: other machines can reach it;")
    assert "[proxy] admin_keys and [proxy] allowed_hosts" in exposed


def test_a_shared_proxy_with_its_guards_is_only_a_warning() -> None:
    config = parse_config(
        """
        [proxy]
        host = "0.0.0.0"
        api_keys = ["sk-local-abcdefghijklmnop1234"]
        admin_keys = ["sk-admin-abcdefghijklmnop1234"]
        allowed_hosts = ["streamscope.team.internal"]
        """
    )
    found = [(c.status, c.detail) for c in config_warnings(config) if c.name == "config"]
    assert found == [("warn", "the proxy listens on 0.0.0.0: other machines can reach it")]
