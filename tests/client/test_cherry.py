"""Cherry Studio's provider types (app/streamscope/client/cherry.py): the base URL each
makes of the API host lands on the proxy's endpoint of its protocol. (That each type
streams through the proxy with these values is proven by running Cherry Studio's provider
layer: tests/clients/test_cherry_types.py.)"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from streamscope.client.cherry import BY_ID, TYPES, CherryType, api_host
from streamscope.proxy.paths import endpoint, endpoint_codec

# What each type's SDK appends to its base URL (as tests/clients/test_cherry_types.py
# saw them send), and the protocol of that endpoint.
TAILS = {
    "openai-compatible": ("/chat/completions", "openai-chat"),
    "openai-chat": ("/chat/completions", "openai-chat"),
    "openai-response": ("/responses", "responses"),
    "anthropic": ("/messages", "anthropic"),
    "gemini": ("/up/m:streamGenerateContent", "gemini"),
    "azure": ("/chat/completions", "openai-chat"),
    "azure-responses": ("/responses", "responses"),
    "deepseek": ("/chat/completions", "openai-chat"),
    "xai": ("/chat/completions", "openai-chat"),
    "openrouter": ("/chat/completions", "openai-chat"),
}


def test_every_type_is_listed_once() -> None:
    assert len(BY_ID) == len(TYPES) and set(BY_ID) == set(TAILS)


@pytest.mark.parametrize("t", TYPES, ids=[t.id for t in TYPES])
@pytest.mark.parametrize("host", ["http://127.0.0.1:8787", "http://127.0.0.1:8787/"])
def test_the_base_url_made_of_the_host_reaches_the_endpoint(t: CherryType, host: str) -> None:
    base = t.base_url(host)
    assert base.startswith("http://127.0.0.1:8787/") and "//" not in base.split("://")[1]
    tail, protocol = TAILS[t.id]
    path = endpoint(urlsplit(base).path + tail)
    assert path is not None and endpoint_codec(path).name == protocol


def test_only_azure_types_take_an_api_version_and_each_names_a_different_api() -> None:
    versions = {t.id: t.api_version for t in TYPES if t.api_version}
    assert set(versions) == {"azure", "azure-responses"}
    # Cherry Studio uses the Responses API for v1 and preview, Chat Completions otherwise
    assert versions["azure-responses"] in ("v1", "preview")
    assert versions["azure"] not in ("v1", "preview")


@pytest.mark.parametrize("url", ["http://127.0.0.1:8787", "http://127.0.0.1:8787/"])
def test_the_api_host_to_paste_is_the_proxy_url_as_shown_and_reaches_every_type(url: str) -> None:
    host = api_host(url)
    assert host == "http://127.0.0.1:8787"  # the status bar's form: no /v1, no slash
    for t in TYPES:
        base = t.base_url(host)
        assert "/v1/v1" not in base  # the doubled /v1 a host with /v1 would make
        tail, protocol = TAILS[t.id]
        path = endpoint(urlsplit(base).path + tail)
        assert path is not None and endpoint_codec(path).name == protocol
