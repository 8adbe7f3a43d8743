"""The window's status bar (gui/proxy_bar.py): the embedded proxy on the window's qasync
loop, shown and controlled from the bar — URL and key, copy, stop/start, who wants /v1
(as the README says), and a taken port that is reported with a way to choose another,
never a crash."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest
from PySide6.QtGui import QGuiApplication

from streamscope.client import sdk_base_url
from streamscope.client.cherry import api_host
from streamscope.gui.proxy_bar import v1_hint
from streamscope.proxy.ports import is_free
from tests.gui.support import open_window, wait_until
from tests.proxy.harness import KEY, make_config

DEMO = [{"name": "demo", "protocol": "demo", "default": True}]


@pytest.mark.qasync
async def test_the_window_runs_the_proxy_and_shows_how_to_reach_it() -> None:
    async with open_window(make_config(DEMO)) as window:
        control = window.control
        url = control.url
        assert url is not None and url in window.proxy_bar.state.text()
        assert KEY not in window.proxy_bar.state.text()  # masked: its last 4 only
        assert KEY[-4:] in window.proxy_bar.state.text()
        async with httpx.AsyncClient() as client:
            r = await client.get(url + "/v1/models", headers={"x-api-key": KEY})
        assert r.status_code == 200 and "demo-chat" in r.text

        # Copy URL copies exactly what the bar shows (it once copied …/v1, which
        # Cherry Studio's API host doubles), and beside it the bar says who wants /v1.
        window.proxy_bar.copy_url.click()
        copied = QGuiApplication.clipboard().text()
        assert copied == url and f"Proxy on {copied} " in window.proxy_bar.state.text()
        hint = window.proxy_bar.hint
        assert hint.isVisible() and hint.text() == v1_hint(url)
        said = "Cherry Studio, anthropic SDKs: as shown · openai SDKs: add /v1"
        assert hint.text() == said
        assert api_host(copied) == copied and sdk_base_url(copied, "openai-chat") == url + "/v1"
        window.proxy_bar.copy_key.click()
        assert QGuiApplication.clipboard().text() == KEY

        window.proxy_bar.toggle.click()  # stop
        await wait_until(lambda: window.proxy_bar.state.text() == "Proxy stopped")
        assert not control.running
        assert window.proxy_bar.toggle.text() == "Start"
        window.proxy_bar.toggle.click()  # and start again
        await wait_until(lambda: control.running)
    assert not control.running


@pytest.mark.qasync
async def test_a_taken_port_is_reported_and_another_one_can_be_chosen() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        async with open_window(make_config(DEMO, port=port)) as window:
            control = window.control
            await wait_until(lambda: control.error is not None)
            bar = window.proxy_bar
            assert not control.running
            assert "choose another port" in bar.state.text() and str(port) in bar.state.text()
            # The port box offers a port that is free, never the taken one again.
            offered = bar.port.value()
            assert not bar.port.isHidden() and offered not in (port, 0)
            assert is_free("127.0.0.1", offered)
            assert f"{offered} is free" in bar.state.text()
            bar.use_port.click()
            await wait_until(lambda: control.running)
            assert bar.port.isHidden() and control.url is not None
            assert control.url in bar.state.text() and control.url.endswith(f":{offered}")
            # Stopped, then started from the bar: it listens again, no error left.
            await control.stop()
            bar.port.setValue(0)  # any free port still works
            bar.use_port.click()
            await wait_until(lambda: control.running)


def test_the_readme_says_what_the_bar_says_about_v1() -> None:
    """The README's words for the bar's hint are the bar's own, at the default port, in
    the first run and where clients are pointed at the proxy."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    said = f"`{v1_hint('http://127.0.0.1:8787')}`"
    for section in ("## First run: the demo backend", "## Point your clients at the proxy"):
        body = readme.split(f"\n{section}\n", 1)[1].split("\n## ", 1)[0]
        assert said in " ".join(body.split()), section
        assert "**Copy URL** copies `http://127.0.0.1:8787`" in " ".join(body.split())
