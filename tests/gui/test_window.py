"""The window's shell (gui/window.py): the last request, the layout and the tab come back
after a restart (never a key), and the theme follows the choice."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from streamscope.gui.proxy_control import ProxyControl
from streamscope.gui.theme import Theme
from streamscope.gui.window import MainWindow
from tests.gui.support import open_window, wait_until
from tests.proxy.harness import KEY, make_config

DEMO = [{"name": "demo", "protocol": "demo", "default": True}]


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
