"""The client pane's model list: ``GET /v1/models`` of the embedded proxy (Gemini's
``/v1beta/models``), over a real socket, with each protocol's auth headers; the shapes of
a listing; errors as reasons."""

from __future__ import annotations

import pytest

from streamscope.client.compose import Composition
from streamscope.client.models import fetch_models, model_ids, models_url
from tests.proxy.harness import KEY, make_config, proxied


def test_the_listing_url_follows_the_base_url() -> None:
    assert models_url("http://h:1/v1") == "http://h:1/v1/models"
    assert models_url("http://h:1/v1/") == "http://h:1/v1/models"
    assert models_url("http://h:1") == "http://h:1/v1/models"


def test_geminis_listing_is_at_its_own_version() -> None:
    assert models_url("http://h:1", "gemini") == "http://h:1/v1beta/models"
    assert models_url("http://h:1/v1beta/", "gemini") == "http://h:1/v1beta/models"
    assert models_url("http://h:1/v1", "gemini") == "http://h:1/v1/models"
    google = "https://generativelanguage.googleapis.com/v1beta"
    assert models_url(google, "gemini") == google + "/models"
    # The others as before: Anthropic's /v1/models from the root or /v1.
    assert models_url("http://h:1", "anthropic") == models_url("http://h:1/v1", "anthropic")
    assert models_url("http://h:1", "anthropic") == "http://h:1/v1/models"
    assert models_url("http://h:1", "lmstudio") == "http://h:1/v1/models"


def test_every_listing_shape_gives_its_ids_in_order() -> None:
    assert model_ids({"data": [{"id": "a"}, {"id": "b"}]}) == ["a", "b"]
    assert model_ids({"models": [{"key": "q/7b"}, {"id": "c"}, "d", 3, {}]}) == ["q/7b", "c", "d"]
    assert model_ids([1, 2]) == [] and model_ids({"data": "x"}) == []


@pytest.mark.parametrize(
    ("protocol", "suffix"),
    [
        ("openai-chat", "/v1"),
        ("anthropic", ""),
        ("responses", "/v1"),
        ("lmstudio", ""),
        ("gemini", ""),  # (GET /v1beta/models, "models/<id>" names, x-goog-api-key)
        ("gemini", "/v1beta"),
    ],
)
async def test_the_proxy_lists_the_demo_models_to_each_protocol(protocol: str, suffix: str) -> None:
    demo = {"name": "demo", "protocol": "demo", "default": True}
    with proxied(make_config([demo])) as running:
        url = running.url
        c = Composition(url=url + suffix, protocol=protocol, model="", key=KEY)
        ids = await fetch_models(c)
        assert "demo-chat" in ids and "demo-tools" in ids
        assert any(i.startswith("replay/") for i in ids)
        with pytest.raises(ValueError, match="HTTP 401"):
            await fetch_models(Composition(url=url + suffix, protocol=protocol, model="", key="x"))


async def test_an_unreachable_target_is_a_reason_not_a_traceback() -> None:
    c = Composition(url="http://127.0.0.1:9", protocol="openai-chat", model="", key="k")
    with pytest.raises(ValueError, match="cannot list models at http://127.0.0.1:9/v1/models"):
        await fetch_models(c, timeout_seconds=2)
