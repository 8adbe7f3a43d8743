"""Any base URL a user is likely to paste works, or the 404 says what is wrong.

Unit tests of :mod:`streamscope.proxy.paths`, then the same through a real proxy on a
real port with the official SDKs given each form of base URL (with and without ``/v1``,
with a trailing slash), and the 404s a doubled ``/v1`` produces, read by the SDK itself.
"""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import httpx
import openai
import pytest

from streamscope.proxy.paths import (
    ENDPOINTS,
    GEMINI_COUNT,
    GEMINI_GENERATE,
    GEMINI_MODELS,
    GEMINI_STREAM,
    MODELS,
    endpoint,
    endpoint_codec,
    gemini_call,
    miss,
    normalize,
)
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import Running, proxied

# -- the path table --------------------------------------------------------------------------


@pytest.mark.parametrize("canonical", [*ENDPOINTS, MODELS])
def test_each_endpoint_is_itself(canonical: str) -> None:
    assert endpoint(canonical) == canonical
    assert endpoint(canonical + "/") == canonical


@pytest.mark.parametrize(
    ("path", "meant"),
    [
        ("/chat/completions", "/v1/chat/completions"),
        ("/messages", "/v1/messages"),
        ("/responses", "/v1/responses"),
        ("/models", "/v1/models"),
        ("/v1//chat/completions", "/v1/chat/completions"),  # base URL pasted with a slash
        ("//messages", "/v1/messages"),
        # Azure OpenAI's shapes
        ("/openai/deployments/gpt-4o/chat/completions", "/v1/chat/completions"),
        ("/v1/deployments/gpt-4o/chat/completions", "/v1/chat/completions"),
        ("/deployments/gpt-4o/chat/completions", "/v1/chat/completions"),
        ("/openai/v1/chat/completions", "/v1/chat/completions"),
        ("/openai/v1/responses", "/v1/responses"),
        ("/openai/responses", "/v1/responses"),
        ("/openai/deployments/gpt-4o/responses", "/v1/responses"),
        ("/openai/v1/models", "/v1/models"),
    ],
)
def test_without_v1_or_with_extra_slashes(path: str, meant: str) -> None:
    assert endpoint(path) == meant


@pytest.mark.parametrize(
    "path",
    [
        "/v1/v1/messages",
        "/v1/chat",
        "/api/chat/completions",
        "/v2/responses",
        "/",
        "/v1",
        "/openai/deployments/x",
        "/openai/messages/extra",
    ],
)
def test_no_endpoint(path: str) -> None:
    assert endpoint(path) is None


@pytest.mark.parametrize(
    ("path", "canonical", "model"),
    [
        ("/v1beta/models/gemini-2.5-flash:generateContent", GEMINI_GENERATE, "gemini-2.5-flash"),
        ("/v1/models/demo-chat:streamGenerateContent", GEMINI_STREAM, "demo-chat"),
        ("/v1beta/models/up/m:countTokens", GEMINI_COUNT, "up/m"),  # upstream/model routes
        ("//v1beta/models/m:generateContent/", GEMINI_GENERATE, "m"),
        # @ai-sdk/google puts a model id that has a slash in the path as it is, without
        # models/ (Cherry Studio's Gemini type asking for an upstream/model route)
        ("/v1beta/up/m:streamGenerateContent", GEMINI_STREAM, "up/m"),
        ("/v1beta/up/org/m:generateContent", GEMINI_GENERATE, "up/org/m"),
    ],
)
def test_a_gemini_path_names_its_model_and_method(path: str, canonical: str, model: str) -> None:
    call = gemini_call(path)
    assert call is not None and (call.path, call.model) == (canonical, model)
    assert call.stream is (canonical == GEMINI_STREAM) and call.counts is (
        canonical == GEMINI_COUNT
    )
    assert endpoint(path) == canonical and endpoint_codec(canonical).name == "gemini"


def test_geminis_models_list_and_what_is_no_gemini_call() -> None:
    assert endpoint("/v1beta/models") == endpoint("/v1beta/models/") == GEMINI_MODELS
    assert endpoint_codec(GEMINI_MODELS).name == "gemini"
    for path in (
        "/v1beta/models/m:embedContent",
        "/v1beta/models/:generateContent",
        "/v1beta/m:generateContent",  # no model path: neither models/ nor a route
        "/v1beta/up/:generateContent",
        "/v2/models/m:generateContent",
    ):
        assert gemini_call(path) is None and endpoint(path) is None
        assert miss("POST", path).protocol == "gemini"  # its 404 in Google's envelope


def test_normalize() -> None:
    assert normalize("//v1///messages//") == "/v1/messages"
    assert normalize("/") == "/"


@pytest.mark.parametrize(
    ("path", "protocol", "meant", "says"),
    [
        ("/v1/v1/messages", "anthropic", "/v1/messages", "remove /v1 from the base URL"),
        ("/v1/v1/chat/completions", "openai-chat", "/v1/chat/completions", "adds /v1 again"),
        ("/v1/v1/responses", "responses", "/v1/responses", "adds /v1 again"),
        ("/v1/v1/models", "openai-chat", "/v1/models", "adds /v1 again"),
        ("/openai/v1/chat/completions", "openai-chat", "/v1/chat/completions", "'/openai/v1'"),
        ("/v1/anthropic/messages", "anthropic", "/v1/messages", "'/anthropic'"),
        ("/v1/completions", "openai-chat", "/v1/chat/completions", "legacy completions"),
    ],
)
def test_a_miss_names_what_was_meant_and_why(
    path: str, protocol: str, meant: str, says: str
) -> None:
    found = miss("POST", path)
    assert (found.protocol, found.meant) == (protocol, meant)
    assert path in found.message and says in found.message
    assert meant in found.message


def test_a_miss_with_no_likely_endpoint_lists_what_is_served() -> None:
    found = miss("GET", "/status")
    assert found.meant is None and found.protocol == "openai-chat"
    for served in [*ENDPOINTS, MODELS]:
        assert served in found.message


# -- through the proxy, with the SDKs --------------------------------------------------------


@pytest.fixture(scope="module")
def proxy() -> Iterator[Running]:
    with proxied(demo_config()) as running:
        yield running


def _chat_text(base_url: str, key: str) -> str:
    client = openai.OpenAI(base_url=base_url, api_key=key, max_retries=0)
    answer = client.chat.completions.create(
        model="demo-chat", messages=[{"role": "user", "content": "hi"}]
    )
    return answer.choices[0].message.content or ""


@pytest.mark.parametrize("suffix", ["/v1", "/v1/", ""])
def test_openai_sdk_with_any_base_url(proxy: Running, suffix: str) -> None:
    """openai-python appends /chat/completions: with, without /v1, and a trailing slash."""
    assert _chat_text(proxy.url + suffix, proxy.key)
    client = openai.OpenAI(base_url=proxy.url + suffix, api_key=proxy.key, max_retries=0)
    assert "demo-chat" in {m.id for m in client.models.list()}
    with client.responses.stream(model="demo-chat", input="hi") as stream:
        assert stream.get_final_response().output_text


@pytest.mark.parametrize("suffix", ["", "/"])
def test_anthropic_sdk_with_its_base_url(proxy: Running, suffix: str) -> None:
    client = anthropic.Anthropic(base_url=proxy.url + suffix, api_key=proxy.key, max_retries=0)
    with client.messages.stream(
        model="demo-chat", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
    ) as stream:
        message = stream.get_final_message()
    assert message.content and message.content[0].type == "text"
    assert message.usage.output_tokens > 0


def test_anthropic_sdk_with_a_doubled_v1_gets_a_404_it_can_read(proxy: Running) -> None:
    """The Anthropic SDK given .../v1 asks for /v1/v1/messages: the 404 is Anthropic's
    envelope, so the SDK raises NotFoundError with the proxy's explanation."""
    client = anthropic.Anthropic(base_url=proxy.v1, api_key=proxy.key, max_retries=0)
    with pytest.raises(anthropic.NotFoundError) as raised:
        client.messages.create(
            model="demo-chat", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
        )
    body = raised.value.body
    assert isinstance(body, dict) and body["type"] == "error"
    assert body["error"]["type"] == "not_found_error"
    message = body["error"]["message"]
    assert "/v1/v1/messages" in message and "remove /v1 from the base URL" in message


def test_openai_sdk_with_a_doubled_v1_gets_a_404_it_can_read(proxy: Running) -> None:
    client = openai.OpenAI(base_url=proxy.v1 + "/v1", api_key=proxy.key, max_retries=0)
    with pytest.raises(openai.NotFoundError) as raised:
        client.chat.completions.create(
            model="demo-chat", messages=[{"role": "user", "content": "hi"}]
        )
    assert "did you mean POST /v1/chat/completions" in str(raised.value)


@pytest.mark.parametrize("header", ["authorization", "x-api-key", "api-key"])
def test_the_local_key_in_each_header(proxy: Running, header: str) -> None:
    value = f"Bearer {proxy.key}" if header == "authorization" else proxy.key
    r = httpx.post(
        proxy.url + "/chat/completions",
        json={"model": "demo-chat", "messages": [{"role": "user", "content": "hi"}]},
        headers={header: value},
    )
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["content"]


def test_azure_style_client_with_api_key_header(proxy: Running) -> None:
    """openai-python's AzureOpenAI sends the key as ``api-key``; pointed at the proxy
    with the OpenAI-style deployment path it is refused only for the path, not the key.
    With the plain OpenAI client and ``default_headers={"api-key": …}`` it works."""
    client = openai.OpenAI(
        base_url=proxy.v1,
        api_key="unused",  # the proxy reads api-key first, as Azure clients send it
        default_headers={"api-key": proxy.key},
        max_retries=0,
    )
    answer = client.chat.completions.create(
        model="demo-chat", messages=[{"role": "user", "content": "hi"}]
    )
    assert answer.choices[0].message.content
