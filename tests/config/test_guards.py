"""Where the proxy may listen (config/guards.py): an address other machines reach needs
admin keys of 24 characters or more that are not client keys, and named hosts;
loopback needs none of it."""

from __future__ import annotations

import pytest

from streamscope.config import ProxyConfig, exposure_problem

LONG_ADMIN = "sk-admin-" + "q7" * 12


@pytest.mark.parametrize(
    ("host", "extra", "missing"),
    [
        ("127.0.0.1", {}, None),
        ("localhost", {}, None),
        ("::1", {}, None),
        ("0.0.0.0", {}, "[proxy] admin_keys and [proxy] allowed_hosts"),
        ("::", {"admin_keys": ["sk-admin-x"]}, "[proxy] allowed_hosts first"),
        ("192.168.1.20", {"allowed_hosts": ["ss.lan"]}, "[proxy] admin_keys first"),
        ("0.0.0.0", {"admin_keys": [LONG_ADMIN], "allowed_hosts": ["ss.lan"]}, None),
        # long enough, distinct from the client keys, and hosts named
        ("0.0.0.0", {"admin_keys": ["sk-admin-x"], "allowed_hosts": ["ss.lan"]}, "shorter than 24"),
        (
            "10.0.0.2",
            {"admin_keys": [LONG_ADMIN, "a" * 23], "allowed_hosts": ["ss.lan"]},
            "1 of [proxy] admin_keys is shorter than 24 characters",
        ),
        (
            "0.0.0.0",
            {"admin_keys": [LONG_ADMIN], "api_keys": [LONG_ADMIN], "allowed_hosts": ["ss.lan"]},
            "in both [proxy] admin_keys and [proxy] api_keys",
        ),
        (
            "0.0.0.0",
            {"admin_keys": [LONG_ADMIN], "allowed_hosts": ["ss.lan", "*"]},
            'allowed_hosts = ["*"] accepts any Host',
        ),
        # on loopback none of these matter: only this machine connects
        (
            "127.0.0.1",
            {"admin_keys": ["sk-k1234"], "api_keys": ["sk-k1234"], "allowed_hosts": ["*"]},
            None,
        ),
    ],
)
def test_a_reachable_address_needs_admin_keys_and_allowed_hosts(
    host: str, extra: dict[str, list[str]], missing: str | None
) -> None:
    proxy = ProxyConfig.model_validate({"host": host, **extra})
    problem = exposure_problem(proxy)
    if missing is None:
        assert problem is None
    else:
        assert problem is not None and f"host = {host!r}" in problem and missing in problem
