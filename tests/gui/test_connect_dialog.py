"""The "Connect Cherry Studio" helper (app/streamscope/gui/connect_dialog.py), driven
through its widgets on the window's qasync loop: what Cherry Studio and the SDKs need
shown (the key masked), copied whole, reaching the proxy as copied, and following the
proxy as it stops and starts again."""

from __future__ import annotations

import httpx
import pytest
from PySide6.QtGui import QGuiApplication

from streamscope.client.cherry import BY_ID, MODEL, TYPES
from streamscope.gui.connect_dialog import ConnectDialog
from streamscope.redact import mask
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
        # Every provider type the client tests drove Cherry Studio's provider layer with
        # (tests/clients/test_cherry_types.py), with the API host they typed: the root.
        for t in TYPES:
            assert f"<b>{t.name}</b>" in labels and dialog.values[t.id].text() == url
        assert dialog.values["azure:version"].text() == BY_ID["azure"].api_version
        assert dialog.values["azure-responses:version"].text() == "v1"
        assert dialog.values["model"].text() == MODEL
        assert dialog.values["anthropic-sdks"].text() == url
        assert dialog.values["openai-sdks"].text() == url + "/v1"
        assert dialog.values["key"].text() == mask(KEY) and not shows(dialog, KEY)
        assert url in dialog.state.text()

        clipboard = QGuiApplication.clipboard()
        dialog.copy["key"].click()
        key = clipboard.text()
        assert key == KEY
        dialog.copy["openai-response"].click()
        assert clipboard.text() == url
        dialog.copy["openai-sdks"].click()
        assert clipboard.text() == url + "/v1"
        dialog.copy["model"].click()
        model = clipboard.text()
        dialog.copy["anthropic"].click()
        host = clipboard.text()
        # What was copied reaches the proxy as each provider type sends it: its base URL
        # made of the host, the key in its header, listing the model copied.
        async with httpx.AsyncClient() as client:
            for t in TYPES:
                value = f"Bearer {key}" if t.key_header == "authorization" else key
                got = await client.get(t.base_url(host) + "/models", headers={t.key_header: value})
                assert got.status_code == 200 and model in got.text, (t.id, got.text[:200])

        window.proxy_bar.toggle.click()  # stop
        await wait_until(lambda: not control.running)
        assert "stopped" in dialog.state.text()
        assert not dialog.rows.isEnabled() and dialog.values["openai-chat"].text() == ""
        dialog.copy["key"].click()  # a disabled button does nothing
        assert clipboard.text() == host
        window.proxy_bar.toggle.click()
        await wait_until(lambda: control.running)
        assert dialog.values["openai-chat"].text() == control.url
