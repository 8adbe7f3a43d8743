"""The window's shell: the embedded proxy on the window's qasync loop, shown and
controlled from the status bar — URL and key, copy, stop/start, and a taken port that
is reported with a way to choose another, never a crash."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from streamscope.client import sdk_base_url
from streamscope.client.cherry import api_host
from streamscope.gui.proxy_control import ProxyControl
from streamscope.gui.theme import Theme
from streamscope.gui.window import MainWindow, v1_hint
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


@pytest.mark.qasync
async def test_the_last_request_and_the_layout_come_back_after_a_restart(tmp_path: Path) -> None:
    state = tmp_path / "window.ini"
    async with open_window(make_config(DEMO), state_file=state) as window:
        pane = window.client
        pane.protocol.setCurrentText("anthropic")
        pane.model.setCurrentText("demo-reasoning")
        pane.system.setPlainText("You are terse.")
        pane.prompt.setPlainText("What changed?")
        pane.max_tokens.setValue(99)
        pane.use_tools.setChecked(True)
        # The offscreen screen is 800 px wide: a window that fits comes back the same.
        window.resize(780, 700)
        await wait_until(lambda: window.width() == 780)
        pane.splitter.setSizes([420, 340])
        sizes = pane.splitter.sizes()
        window.tabs.setCurrentIndex(2)
        window.set_theme("dark")
    async with open_window(make_config(DEMO), state_file=state) as again:
        pane = again.client
        assert again.width() == 780
        assert pane.protocol.currentText() == "anthropic"
        assert pane.model.currentText() == "demo-reasoning"
        assert pane.system.toPlainText() == "You are terse."
        assert pane.prompt.toPlainText() == "What changed?"
        assert pane.max_tokens.value() == 99 and pane.use_tools.isChecked()
        assert again.tabs.currentIndex() == 2
        again.tabs.setCurrentIndex(0)  # a hidden tab is not laid out
        await wait_until(lambda: pane.splitter.sizes() == sizes, 3)  # once laid out
    # No key is ever written to the state file.
    assert KEY not in state.read_text()


@pytest.mark.qasync
async def test_the_theme_follows_the_choice(qapp: QApplication) -> None:
    theme = Theme(qapp, "light")
    light = qapp.palette().color(QPalette.ColorRole.Window).lightness()
    control = ProxyControl(make_config(DEMO))
    window = MainWindow(control, theme=theme)
    try:
        window.set_theme("dark")
        dark = qapp.palette().color(QPalette.ColorRole.Window).lightness()
        assert dark < 80 < light
        assert [a.data() for a in window.theme_actions.actions() if a.isChecked()] == ["dark"]
        window.set_theme("system")  # offscreen reports no dark scheme: light again
        assert qapp.palette().color(QPalette.ColorRole.Window).lightness() == light
    finally:
        theme.apply("light")
        window.deleteLater()
        await control.app.aclose()


def test_the_readme_says_what_the_bar_says_about_v1() -> None:
    """The README's words for the bar's hint are the bar's own, at the default port, in
    the first run and where clients are pointed at the proxy."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    said = f"`{v1_hint('http://127.0.0.1:8787')}`"
    for section in ("## First run: the demo backend", "## Point your clients at the proxy"):
        body = readme.split(f"\n{section}\n", 1)[1].split("\n## ", 1)[0]
        assert said in " ".join(body.split()), section
        assert "**Copy URL** copies `http://127.0.0.1:8787`" in " ".join(body.split())
