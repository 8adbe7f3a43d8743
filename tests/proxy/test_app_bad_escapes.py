"""Lone surrogate escapes and deep nesting, over real sockets.

Python's ``json`` accepts ``"\\ud800"``, but such a string cannot be encoded again (for
the upstream, the capture, an export): it used to surface as a 500 with a traceback.
Deeply nested imports did the same. Both must get the protocol's 400 envelope.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.proxy.harness import Running, make_config, proxied
from tests.proxy.test_app_request_errors import CLIENTS, ENDPOINTS, envelope
from tests.upstream_server import UpstreamServer, fast_stream_script, run_in_thread


@pytest.fixture(scope="module")
def up() -> Iterator[UpstreamServer]:
    with run_in_thread() as server:
        server.route("POST", "/ok/v1/chat/completions", fast_stream_script(2))
        yield server


@pytest.fixture(scope="module")
def proxy(up: UpstreamServer) -> Iterator[Running]:
    table = {
        "name": "ok",
        "protocol": "openai-chat",
        "base_url": up.url + "/ok/v1",
        "models": ["gpt-ok"],
        "accounts": [{"api_key": "sk-upstream-ok"}],
    }
    with proxied(make_config([table])) as running:
        yield running


@pytest.fixture(scope="module")
def http(proxy: Running) -> Iterator[httpx.Client]:
    headers = {"authorization": f"Bearer {proxy.key}", "content-type": "application/json"}
    with httpx.Client(base_url=proxy.url, timeout=20, trust_env=False, headers=headers) as c:
        yield c


def request(text: bytes, key: bytes = b'"metadata"') -> bytes:
    return (
        b'{"model":"gpt-ok","max_tokens":5,"input":"hi",'
        b'"messages":[{"role":"user","content":' + text + b"}]," + key + b":{}}"
    )


LONE = [b'"\\ud800"', b'"x\\udc00"', b'"\\uDBFF."', b'"\xed\xa0\x80"']


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("text", LONE, ids=["high", "low", "upper", "utf8-bytes"])
def test_lone_surrogate_in_a_request_is_400(
    http: httpx.Client, up: UpstreamServer, client: str, text: bytes
) -> None:
    n = len(up.requests)
    r = http.post(ENDPOINTS[client], content=request(text))
    err = envelope(r, client, 400)
    assert "surrogate" in err["message"]
    assert err["type"] in ("invalid_request_error", "invalid_request")
    assert len(up.requests) == n, "the request reached the upstream"


@pytest.mark.parametrize("client", ["chat", "messages"])
def test_lone_surrogate_in_a_key_is_400(http: httpx.Client, client: str) -> None:
    r = http.post(ENDPOINTS[client], content=request(b'"hi"', key=b'"\\ud800"'))
    envelope(r, client, 400)


@pytest.mark.parametrize("text", [b'"\\ud83d\\ude00"', b'"\\\\ud800"', '"\U0001f600"'.encode()])
def test_pairs_and_escaped_backslashes_still_pass(http: httpx.Client, text: bytes) -> None:
    r = http.post(ENDPOINTS["chat"], content=request(text))
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("depth", [990, 5000, 100_000])
def test_deep_request_is_400(http: httpx.Client, depth: int) -> None:
    raw = request(b'"hi"', key=b'"metadata":' + b'{"a":' * depth + b"1" + b"}" * depth + b',"x"')
    err = envelope(http.post(ENDPOINTS["chat"], content=raw), "chat", 400)
    assert "deep" in err["message"]


def deep_har(depth: int) -> bytes:
    return b'{"log":{"entries":' + b"[" * depth + b"]" * depth + b"}}"


@pytest.mark.parametrize("depth", [990, 5000, 100_000])
@pytest.mark.parametrize(
    "body",
    [
        deep_har,
        lambda d: b"data: " + b"[" * d + b"]" * d + b"\n\n",
        lambda d: b'{"choices":' + b"[" * d + b"]" * d + b"}",
    ],
    ids=["har", "sse", "json"],
)
def test_deeply_nested_import_is_400(http: httpx.Client, depth: int, body: object) -> None:
    assert callable(body)
    r = http.post("/admin/flows/import", content=body(depth))
    err = envelope(r, "chat", 400)
    assert "deep" in err["message"]
    assert r.json()["error"]["type"] == "invalid_request_error"


def test_import_with_a_lone_surrogate_never_500s(http: httpx.Client) -> None:
    for body in [
        b'{"log":"\\ud800"}',
        b'data: {"a":"\\ud800"}\n\n',
        b'{"log":{"entries":[\xed\xa0\x80]}}',
    ]:
        r = http.post("/admin/flows/import", content=body)
        assert r.status_code in (201, 400), r.text
        if r.status_code == 400:
            envelope(r, "chat", 400)
        assert "Traceback" not in r.text
