"""The relay form of Check an upstream… (gui/check_upstream_form.py), with the window's
real proxy over the demo: this window's proxy as the relay (its URL as each protocol's
SDKs take it, its key hidden), List models asking the relay (and a refused key said
without the key), a configured upstream's fields, and what a form without a URL or a
model says."""

from __future__ import annotations

import pytest

from streamscope.gui.check_upstream_form import RelayForm
from streamscope.gui.proxy_control import ProxyControl
from tests.gui.support import open_window
from tests.proxy.harness import KEY, make_config

DEMO = {"name": "demo", "protocol": "demo", "default": True}


@pytest.mark.qasync
async def test_this_windows_proxy_as_the_relay_and_its_models_listed() -> None:
    async with open_window(make_config([DEMO])) as window:
        form = RelayForm(window.control)
        try:
            root = window.control.url
            assert root is not None
            form.choose_source("proxy")
            assert form.url.text() == root + "/v1"  # the openai SDKs' base URL
            assert form.key.text() == KEY and form.key.displayText() != KEY
            form.protocol.setCurrentText("anthropic")
            assert form.url.text() == root  # the anthropic SDKs' own: the root
            form.protocol.setCurrentText("openai-chat")
            said: list[str] = []
            form.said.connect(said.append)
            models = await form.fetch_models()
            assert "demo-chat" in models
            assert "replay/broken/chat-usage-chunk-without-choices" in models
            listed = [form.model.itemText(i) for i in range(form.model.count())]
            assert listed == models and form.model.currentText() == models[0]
            assert said == [f"The relay lists {len(models)} models."]
            # a model typed stays chosen when the list comes
            form.model.setCurrentText("demo-tools")
            await form.fetch_models()
            assert form.model.currentText() == "demo-tools"
            # a refused key: said with its status, never with the key
            wrong = "sk-wrong-key-0123456789abcdef"
            form.key.setText(wrong)
            assert await form.fetch_models() == []
            assert "HTTP 401" in said[-1] and wrong not in said[-1]
            assert form.list_models.isEnabled()
        finally:
            form.deleteLater()


@pytest.mark.qasync
async def test_a_configured_upstream_fills_the_form() -> None:
    secret = "sk-relay-secret-0f1e2d3c4b5a69788796"
    relay = {
        "name": "gateway",
        "protocol": "responses",
        "base_url": "https://gateway.example/v1",
        "models": ["gpt-x"],
        "accounts": [{"name": "a", "api_key": secret}],
    }
    keyless = {"name": "local", "protocol": "lmstudio", "base_url": "http://localhost:1234"}
    control = ProxyControl(make_config([DEMO, relay, keyless]))  # (not started)
    form = RelayForm(control)
    try:
        labels = [form.source.itemText(i) for i in range(form.source.count())]
        assert labels == [
            "A URL typed here",
            "This window's proxy",
            "gateway (responses, https://gateway.example/v1)",
            "local (lmstudio, http://localhost:1234)",
        ]  # the demo has no URL of its own: not offered
        form.choose_source("upstream", "gateway")
        target = form.target()
        assert (target.url, target.protocol, target.key, target.model) == (
            "https://gateway.example/v1",
            "responses",
            secret,
            "gpt-x",
        )
        assert form.key.displayText() != secret
        texts = [w.toolTip() for w in form.findChildren(type(form.key))]
        assert not any(secret in t for t in texts)
        form.choose_source("upstream", "local")  # no account: no key
        assert form.key.text() == "" and form.model.count() == 0
        with pytest.raises(ValueError, match="model"):
            form.target()
        form.url.setText("relay.example/v1")
        with pytest.raises(ValueError, match="http"):
            form.target()
        with pytest.raises(ValueError, match="no such relay"):
            form.choose_source("upstream", "nowhere")
    finally:
        form.deleteLater()
        await control.close()
