"""The "Connect Cherry Studio" helper (app/streamscope/gui/connect_dialog.py), driven
through its widgets on the window's qasync loop: what Cherry Studio and the SDKs need
shown (the key masked), copied whole, reaching the proxy as copied, and following the
proxy as it stops and starts again."""

from __future__ import annotations

import httpx
import pytest
from PySide6.QtGui import QGuiApplication

from streamscope.config import mask
from streamscope.gui.connect_dialog import ConnectDialog
from tests.gui.support import open_window, wait_until
from tests.gui.test_settings import DEMO, shows, texts
from tests.proxy.harness import KEY, make_config


@pytest.mark.qasync
async def test_the_connect_dialog_gives_cherry_studio_what_it_needs() -> None:
    async with open_window(make_config(DEMO)) as window:
        control = window.control
        await wait_until(lambda: control.running)
        url = control.url
        assert url is not None
        dialog = ConnectDialog(control, window)
        dialog.open()
        labels = " ".join(texts(dialog))
        for provider in ("OpenAI", "Anthropic", "OpenAI-Response"):
            assert f"<b>{provider}</b>" in labels
        for name in ("cherry-openai", "cherry-anthropic", "cherry-responses", "anthropic-sdks"):
            assert dialog.values[name].text() == url
        assert dialog.values["openai-sdks"].text() == url + "/v1"
        assert dialog.values["key"].text() == mask(KEY) and not shows(dialog, KEY)
        assert url in dialog.state.text()

        clipboard = QGuiApplication.clipboard()
        dialog.copy["key"].click()
        key = clipboard.text()
        assert key == KEY
        dialog.copy["cherry-responses"].click()
        assert clipboard.text() == url
        dialog.copy["openai-sdks"].click()
        assert clipboard.text() == url + "/v1"
        dialog.copy["cherry-anthropic"].click()
        host = clipboard.text()
        # What was copied reaches the proxy, as Cherry Studio will send it.
        async with httpx.AsyncClient() as client:
            r = await client.get(host + "/v1/models", headers={"authorization": f"Bearer {key}"})
        assert r.status_code == 200 and "demo-chat" in r.text

        window.proxy_bar.toggle.click()  # stop
        await wait_until(lambda: not control.running)
        assert "stopped" in dialog.state.text()
        assert not dialog.rows.isEnabled() and dialog.values["cherry-openai"].text() == ""
        dialog.copy["key"].click()  # a disabled button does nothing
        assert clipboard.text() == host
        window.proxy_bar.toggle.click()
        await wait_until(lambda: control.running)
        assert dialog.values["cherry-openai"].text() == control.url
