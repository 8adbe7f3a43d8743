"""Settings (saved to the config file, run by the proxy), driven through the dialog's
widgets on the window's qasync loop. (The "Connect Cherry Studio" helper, which shares
this file's helpers: tests/gui/test_connect_dialog.py.)"""

from __future__ import annotations

import asyncio
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractItemView, QComboBox, QLineEdit, QWidget

from streamscope.config import Config, load_config
from streamscope.gui.proxy_control import ProxyControl
from streamscope.gui.settings import SettingsDialog
from streamscope.redact import mask
from tests.gui.support import open_window, wait_until
from tests.proxy.harness import KEY, make_config

SECRET = "sk-upstream-secret-1234"
CONFIG = f"""\
# my proxy
[proxy]
host = "127.0.0.1"
port = 0                              # any free port
api_keys = ["{KEY}"]   # the test key

# offline
[[upstreams]]
name = "demo"
protocol = "demo"
default = true

[[upstreams.accounts]]
name = "healthy"
api_key = "{SECRET}"   # the demo ignores it

[aliases]
"claude-sonnet-4-6" = "demo/demo-chat"  # for Cherry
"""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def comment_lines(text: str) -> list[str]:
    return [line.split("#", 1)[1] for line in text.splitlines() if "#" in line]


def texts(widget: QWidget) -> Iterator[str]:
    """Every text the dialog shows: widgets' texts, tooltips, and every item view cell."""
    for w in [widget, *widget.findChildren(QWidget)]:
        yield w.windowTitle()
        yield w.toolTip()
        for name in ("text", "placeholderText", "currentText"):
            value = getattr(w, name, None)
            if callable(value):
                yield str(value())
        if isinstance(w, QComboBox):
            yield from (w.itemText(i) for i in range(w.count()))
        if isinstance(w, QAbstractItemView) and w.model() is not None:
            model = w.model()
            for r in range(model.rowCount(QModelIndex())):
                c = 0
                while (index := model.index(r, c)).isValid():
                    for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                        yield str(index.data(role) or "")
                    c += 1


def shows(widget: QWidget, secret: str) -> bool:
    return any(secret in t for t in texts(widget))


def on_replaced(control: ProxyControl) -> asyncio.Future[object]:
    """Resolves with ``control.app`` when ``replaced`` is emitted (docs/stack-notes.md: await
    signals through a future, never qtbot.waitSignal, in an async test)."""
    fired: asyncio.Future[object] = asyncio.get_running_loop().create_future()
    control.replaced.connect(lambda: fired.done() or fired.set_result(control.app))
    return fired


def editing(dialog: SettingsDialog) -> bool:
    return dialog.accounts.state() == QAbstractItemView.State.EditingState


async def type_key(dialog: SettingsDialog, row: int, key: str) -> None:
    """Type a key into an account's key cell, as a user does (the cell's editor; Qt
    commits it from a queued call, so the loop has to run)."""
    table = dialog.accounts
    if table.findChild(QLineEdit) is None:
        table.setCurrentCell(row, 1)
        table.editItem(table.item(row, 1))
    editor = table.findChild(QLineEdit)
    assert editor is not None
    assert editor.echoMode() == QLineEdit.EchoMode.Password and editor.text() == ""
    editor.setText(key)
    QTest.keyClick(editor, Qt.Key.Key_Return)
    await wait_until(lambda: not editing(dialog))


@pytest.mark.qasync
async def test_saved_settings_land_in_the_file_and_the_proxy_runs_them(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    async with open_window(load_config(path), config_path=path) as window:
        control = window.control
        await wait_until(lambda: control.running)
        old_app = control.app
        replaced = on_replaced(control)
        dialog = SettingsDialog(control, window)
        dialog.open()
        port = free_port()
        dialog.port.setValue(port)
        dialog.tabs.setCurrentIndex(1)
        dialog.upstream_list.setCurrentRow(0)
        dialog.add_account.click()  # opens the new account's key cell for typing
        row = dialog.accounts.rowCount() - 1
        await type_key(dialog, row, "sk-upstream-new-5678")
        dialog.accounts.cell(row, 0).setText("spare")
        dialog.accounts.cell(row, 2).setText("3")
        assert not shows(dialog, "sk-upstream-new-5678")  # masked as soon as typed
        dialog.save.click()
        assert await asyncio.wait_for(dialog.pending, 20) is True
        assert await asyncio.wait_for(replaced, 1) is control.app
        assert control.app is not old_app
        assert not dialog.isVisible() and dialog.result() == SettingsDialog.DialogCode.Accepted

        text = path.read_text()
        assert f"port = {port}                              # any free port" in text
        assert comment_lines(text) == comment_lines(CONFIG)  # every comment, in place
        assert 'name = "spare"\napi_key = "sk-upstream-new-5678"\nweight = 3.0' in text
        assert load_config(path) == control.config
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        demo = control.app.config.upstream("demo")
        assert demo is not None and [a.name for a in demo.accounts] == ["healthy", "spare"]

        assert control.url == f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient() as client:
            r = await client.get(control.url + "/v1/models", headers={"x-api-key": KEY})
        assert r.status_code == 200 and "demo-chat" in r.text
        assert "claude-sonnet-4-6" in r.text  # the aliases came along
        # The window's panes follow the new app: its pool, and its flows.
        assert window.pool.pool is control.app.pool
        names = {window.pool.model.key_at(i)[1] for i in range(window.pool.model.rowCount())}
        assert names == {"healthy", "spare"}
        await wait_until(lambda: window.traffic.store is control.app.flows)
    assert not control.running


@pytest.mark.qasync
async def test_keys_stay_masked_in_every_widget_until_reveal(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    async with open_window(load_config(path), config_path=path) as window:
        dialog = SettingsDialog(window.control, window)
        dialog.open()
        dialog.generate_key.click()
        generated = dialog.keys.item(1).data(Qt.ItemDataRole.UserRole)
        assert generated.startswith("sk-local-") and generated != KEY
        for page in range(dialog.tabs.count()):
            dialog.tabs.setCurrentIndex(page)
            for secret in (KEY, SECRET, generated):
                assert not shows(dialog, secret), secret
        all_text = list(texts(dialog))
        assert mask(KEY) in all_text and mask(SECRET) in all_text and mask(generated) in all_text

        # Editing a masked key starts blank: the editor never holds the key either.
        dialog.tabs.setCurrentIndex(1)
        dialog.accounts.editItem(dialog.accounts.cell(0, 1))
        editor = dialog.accounts.findChild(QLineEdit)
        assert editor is not None and editor.text() == ""
        QTest.keyClick(editor, Qt.Key.Key_Escape)
        await wait_until(lambda: not editing(dialog))
        assert dialog.accounts.cell(0, 1).data(Qt.ItemDataRole.UserRole) == SECRET

        dialog.reveal.click()
        assert shows(dialog, KEY) and shows(dialog, SECRET) and shows(dialog, generated)
        dialog.reveal.click()
        assert not shows(dialog, KEY) and not shows(dialog, SECRET)
        dialog.reject()


@pytest.mark.qasync
async def test_invalid_settings_show_why_and_write_nothing(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    async with open_window(load_config(path), config_path=path) as window:
        control = window.control
        app, config = control.app, control.config.model_copy(deep=True)
        replaced = on_replaced(control)
        dialog = SettingsDialog(control, window)
        dialog.open()
        dialog.tabs.setCurrentIndex(1)

        def refused(why: str) -> None:
            dialog.save.click()
            assert dialog.pending is None  # nothing was applied
            assert dialog.error.isVisible() and why in dialog.error.text(), dialog.error.text()
            assert dialog.isVisible()
            assert path.read_text() == CONFIG
            assert control.app is app and control.config == config and not replaced.done()

        dialog.add_upstream.click()
        dialog.name.setText("demo")
        dialog.protocol.setCurrentText("demo")
        refused("upstream names must be unique: demo")

        dialog.name.setText("claude")
        dialog.protocol.setCurrentText("anthropic")
        refused("base_url is required for a anthropic upstream")
        dialog.base_url.setText("api.anthropic.com")
        refused("base_url must start with http:// or https://")
        dialog.base_url.setText("https://api.anthropic.com")

        dialog.upstream_list.setCurrentRow(0)  # the form follows the selection
        assert dialog.name.text() == "demo"
        dialog.accounts.cell(0, 2).setText("a lot")
        refused("upstreams[0].accounts[0].weight")
        dialog.accounts.cell(0, 2).setText("1")

        dialog.tabs.setCurrentIndex(2)
        dialog.add_alias.click()
        dialog.aliases.item(1, 0).setText("claude-sonnet-4-6")
        dialog.aliases.item(1, 1).setText("claude/claude-sonnet-4-6")
        refused("listed more than once: claude-sonnet-4-6")
        dialog.aliases.removeRow(1)

        # Fixed: it saves, with the new upstream (and its defaults left unwritten).
        dialog.save.click()
        assert await asyncio.wait_for(dialog.pending, 20) is True
        assert not dialog.error.isVisible()
        text = path.read_text()
        assert '[[upstreams]]\nname = "claude"\nprotocol = "anthropic"\n' in text
        assert "max_retries" not in text and "strategy" not in text
        assert [u.name for u in load_config(path).upstreams] == ["demo", "claude"]
        assert replaced.done()


@pytest.mark.qasync
async def test_a_taken_port_is_saved_and_reported_and_another_one_can_be_saved(
    tmp_path: Path,
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        async with open_window(load_config(path), config_path=path) as window:
            control = window.control
            dialog = SettingsDialog(control, window)
            dialog.open()
            dialog.port.setValue(port)
            dialog.save.click()
            assert await asyncio.wait_for(dialog.pending, 20) is False
            assert not control.running and dialog.isVisible()
            assert "did not start" in dialog.error.text() and str(port) in dialog.error.text()
            assert load_config(path).proxy.port == port  # saved all the same
            dialog.port.setValue(0)
            dialog.save.click()
            assert await asyncio.wait_for(dialog.pending, 20) is True
            assert control.running and not dialog.isVisible()
            assert load_config(path).proxy.port == 0


DEMO = [{"name": "demo", "protocol": "demo", "default": True}]


@pytest.mark.qasync
async def test_a_stopped_proxy_stays_stopped_under_new_settings() -> None:
    async with open_window(make_config(DEMO)) as window:
        control = window.control
        await wait_until(lambda: control.running)
        await control.stop()
        replaced = on_replaced(control)
        new = control.config.model_copy(deep=True)
        new.aliases = {"gpt-4o": "demo/demo-chat"}
        assert await control.apply(new) is True
        assert replaced.done() and control.app.config.aliases == new.aliases
        assert not control.running  # stopped on purpose: it stays so
        await control.start()
        assert control.running


@pytest.mark.qasync
async def test_the_settings_dialog_maps_every_field_back_unchanged() -> None:
    """Opening and saving without a change gives back the same config (the widgets
    hold every field they show, and the rest passes through)."""
    config = Config.model_validate(
        {
            "proxy": {"port": 9123, "api_keys": [KEY], "keepalive_seconds": 0.25},
            "upstreams": [
                {
                    "name": "deepseek",
                    "protocol": "openai-chat",
                    "base_url": "https://api.deepseek.com/v1",
                    "mode": "passthrough",
                    "strategy": "weighted",
                    "max_retries": 3,
                    "models": ["deepseek-chat"],
                    "accounts": [
                        {"name": "a", "api_key": SECRET, "weight": 0.1234567, "balance": 12},
                        {"name": "b", "api_key": "sk-b"},
                    ],
                },
                {
                    "name": "demo",
                    "protocol": "demo",
                    "default": True,
                    "accounts": [{"name": "x", "fault": "429"}],
                    "demo": {"long_tokens": 9},
                },
            ],
            "aliases": {"gpt-4o": "deepseek/deepseek-chat", "x": "demo/demo-chat"},
            "pool": {"rules": [{"class": "quota", "status": [403], "action": "disable"}]},
            "capture": {"max_flows": 10},
        }
    )
    control = ProxyControl(config)
    dialog = SettingsDialog(control)
    dialog.upstream_list.setCurrentRow(1)
    dialog.upstream_list.setCurrentRow(0)
    try:
        assert dialog.result_config() == control.config
    finally:
        dialog.deleteLater()
        await control.app.aclose()


@pytest.mark.qasync
async def test_saving_leaves_the_implicit_demo_out_of_the_file_until_it_is_edited(
    tmp_path: Path,
) -> None:
    """A config with no upstreams runs the built-in demo. Saving other settings keeps
    the file free of an upstream its user never wrote; editing the demo writes it."""
    path = tmp_path / "config.toml"
    path.write_text(f'[proxy]\nport = {free_port()}\napi_keys = ["{KEY}"]\n')
    async with open_window(load_config(path), config_path=path) as window:
        control = window.control
        await wait_until(lambda: control.running)
        implicit = control.config.upstreams
        assert [u.name for u in implicit] == ["demo"]

        dialog = SettingsDialog(control, window)
        dialog.open()
        port = free_port()
        dialog.port.setValue(port)
        dialog.save.click()
        assert await asyncio.wait_for(dialog.pending, 20) is True
        assert f"port = {port}" in path.read_text()
        assert "upstreams" not in path.read_text()
        assert load_config(path).upstreams == []
        assert control.config.upstreams == implicit  # still running the demo

        dialog = SettingsDialog(control, window)  # a second save: the same
        dialog.open()
        dialog.keepalive.setValue(7)
        dialog.save.click()
        assert await asyncio.wait_for(dialog.pending, 20) is True
        assert "upstreams" not in path.read_text()

        dialog = SettingsDialog(control, window)  # the demo edited: now it is the user's
        dialog.open()
        dialog.tabs.setCurrentIndex(1)
        dialog.upstream_list.setCurrentRow(0)
        dialog.accounts.cell(0, 0).setText("primary")
        dialog.save.click()
        assert await asyncio.wait_for(dialog.pending, 20) is True
        saved = load_config(path).upstreams
        assert [a.name for a in saved[0].accounts] == ["primary", "exhausted"]
        assert control.config.upstreams == saved


@pytest.mark.qasync
async def test_the_upstream_form_explains_itself_and_durations_read_plainly() -> None:
    """Durations read ``15.000 s``; no help for Mode, Strategy or Accounts tried; a Base URL
    placeholder on the built-in demo, which has none."""
    config = Config.model_validate(
        {
            "proxy": {"keepalive_seconds": 15},
            "upstreams": [
                {"name": "demo", "protocol": "demo", "default": True},
                {
                    "name": "claude",
                    "protocol": "anthropic",
                    "base_url": "https://api.anthropic.com",
                    "mode": "passthrough",
                    "strategy": "round_robin",
                    "accounts": [{"api_key": SECRET}],
                },
            ],
        }
    )
    control = ProxyControl(config)
    dialog = SettingsDialog(control)
    try:
        assert dialog.keepalive.text() == "15 s"
        dialog.keepalive.setValue(0.25)
        assert dialog.keepalive.text() == "0.25 s"
        dialog.upstream_list.setCurrentRow(0)  # the demo: no URL to give
        assert not dialog.base_url.isEnabled() and "built in" in dialog.base_url.placeholderText()
        help_ = dialog.upstream_help.text()
        assert help_.startswith("repair: ") and "\nlru: " in help_ and "Accounts tried: " in help_
        dialog.upstream_list.setCurrentRow(1)
        assert dialog.base_url.isEnabled()
        assert dialog.base_url.placeholderText() == "https://api.anthropic.com"
        help_ = dialog.upstream_help.text()
        assert help_.startswith("passthrough: ") and "\nround_robin: " in help_
        dialog.strategy.setCurrentText("weighted")
        assert "weight" in dialog.upstream_help.text().split("\n")[1]
        assert (
            dialog.strategy.toolTip()
            == dialog.upstream_help.text().split("\n")[1].split(": ", 1)[1]
        )
        tips = [
            dialog.mode.itemData(i, Qt.ItemDataRole.ToolTipRole) for i in range(dialog.mode.count())
        ]
        assert all(tips)
        assert dialog.result_config() == dialog.result_config()  # still maps back
    finally:
        dialog.deleteLater()
        await control.app.aclose()
