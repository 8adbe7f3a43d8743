"""The upstreams of a config, made in one place (proxy/upstreams.py)."""

from __future__ import annotations

from streamscope.config import Config, UpstreamConfig
from streamscope.demo.upstream import DemoUpstream
from streamscope.proxy.upstream import HttpUpstream
from streamscope.proxy.upstreams import UpstreamClients, make_upstreams


def _config(*upstreams: UpstreamConfig) -> Config:
    return Config(upstreams=list(upstreams))


async def test_each_upstream_by_name_and_protocol() -> None:
    config = _config(
        UpstreamConfig(name="demo", protocol="demo"),
        UpstreamConfig(name="ds", protocol="openai-chat", base_url="https://api.deepseek.com/v1"),
        UpstreamConfig(name="claude", protocol="anthropic", base_url="https://api.anthropic.com"),
    )
    clients = UpstreamClients(config.proxy)
    try:
        made = make_upstreams(config, clients)
        assert list(made) == ["demo", "ds", "claude"]
        assert isinstance(made["demo"], DemoUpstream)
        ds, claude = made["ds"], made["claude"]
        assert isinstance(ds, HttpUpstream) and isinstance(claude, HttpUpstream)
        assert (ds.codec.name, claude.codec.name) == ("openai-chat", "anthropic")
        # One wire client and one listing client, shared by every HTTP upstream.
        assert ds.wire is claude.wire is clients.wire()
        assert ds.client is claude.client is clients.http()
    finally:
        await clients.aclose()


async def test_a_config_of_demos_opens_no_client_and_closing_twice_is_fine() -> None:
    config = _config(UpstreamConfig(name="demo", protocol="demo"))
    clients = UpstreamClients(config.proxy)
    made = make_upstreams(config, clients)
    assert isinstance(made["demo"], DemoUpstream)
    assert clients._http is None and clients._wire is None  # nothing was opened
    first = clients.wire()
    await clients.aclose()
    await clients.aclose()
    assert clients.wire() is not first  # a fresh one after a close
    await clients.aclose()
