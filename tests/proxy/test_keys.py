"""The local key where Google's clients put it (``streamscope.proxy.keys``), over real
sockets.

Gemini CLI, google-genai, @google/genai and @ai-sdk/google send their key as
``x-goog-api-key`` or as a ``?key=`` query parameter. Covers: the proxy's local key sent
either way is answered on the existing endpoints (a stream, a whole body, the model
list, in each endpoint's protocol); a wrong key either way gets the endpoint's own 401
envelope; no key at all gets a 401 that names both ways; a percent-encoded ``?key=``
is read decoded; a key header wins over the query (a wrong header is not rescued by a
right query); ``/admin`` never reads ``?key=`` (its keys stay out of URLs); and the
refusal list shows only the wrong key's masked suffix.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest

from streamscope.proxy.keys import sent_key
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import KEY, Running, proxied

WRONG = "AIzaSyWRONG-wrongWRONGwrongWRONGwrong_0"  # a real Google key's shape, not ours
CHAT = {"model": "demo-chat", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES = {**CHAT, "max_tokens": 50}


@pytest.fixture(scope="module")
def running() -> Iterator[Running]:
    with proxied(demo_config()) as proxy:
        yield proxy


def _post(running: Running, path: str, body: dict[str, object], **headers: str) -> httpx.Response:
    return httpx.post(running.url + path, json=body, headers=headers, timeout=30)


def test_the_local_key_in_x_goog_api_key_is_answered(running: Running) -> None:
    r = _post(running, "/v1/chat/completions", {**CHAT, "stream": True}, **{"x-goog-api-key": KEY})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.text.rstrip().endswith("data: [DONE]")
    headers = {"x-goog-api-key": KEY, "anthropic-version": "2023-06-01"}
    r = _post(running, "/v1/messages", MESSAGES, **headers)
    assert r.status_code == 200, r.text
    assert r.json()["type"] == "message" and r.json()["content"][0]["text"]
    # A models list asked with Google's key header is Google's (google-genai lists there).
    models = httpx.get(running.v1 + "/models", headers={"x-goog-api-key": KEY}, timeout=10)
    assert models.status_code == 200
    assert "models/demo-chat" in {m["name"] for m in models.json()["models"]}


def test_the_local_key_as_a_key_query_parameter_is_answered(running: Running) -> None:
    r = _post(running, f"/v1/chat/completions?alt=sse&key={KEY}", {**CHAT, "stream": True})
    assert r.status_code == 200, r.text
    assert r.text.rstrip().endswith("data: [DONE]")
    r = _post(running, f"/v1/responses?key={quote(KEY, safe='')}", {**CHAT, "input": "hi"})
    assert r.status_code == 200, r.text
    assert r.json()["object"] == "response"
    models = httpx.get(running.v1 + f"/models?key={KEY}", timeout=10)
    assert models.status_code == 200 and models.json()["models"]  # (Google's way, its list)


def test_a_percent_encoded_query_key_is_read_decoded(running: Running) -> None:
    encoded = "".join(f"%{b:02X}" for b in KEY.encode())  # every character escaped
    r = httpx.get(running.v1 + f"/models?key={encoded}", timeout=10)
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("way", ["header", "query"])
def test_a_wrong_key_either_way_gets_the_endpoints_401(running: Running, way: str) -> None:
    headers = {"x-goog-api-key": WRONG} if way == "header" else {}
    query = f"?key={WRONG}" if way == "query" else ""
    chat = _post(running, "/v1/chat/completions" + query, CHAT, **headers)
    assert chat.status_code == 401
    assert chat.json()["error"]["type"] == "authentication_error"
    assert chat.json()["error"]["code"] == "invalid_api_key"
    messages = _post(
        running, "/v1/messages" + query, MESSAGES, **headers, **{"anthropic-version": "2023-06-01"}
    )
    assert messages.status_code == 401
    assert messages.json()["type"] == "error"
    assert messages.json()["error"]["type"] == "authentication_error"
    for r in (chat, messages):
        assert "not one of the proxy's local keys" in r.text
        assert WRONG not in r.text


def test_no_key_gets_a_401_naming_the_google_ways(running: Running) -> None:
    r = _post(running, "/v1/chat/completions", CHAT)
    assert r.status_code == 401
    message = r.json()["error"]["message"]
    assert "'x-goog-api-key: <key>'" in message and "'?key=<key>'" in message


def test_a_key_header_wins_over_the_query(running: Running) -> None:
    wrong_header = _post(running, f"/v1/chat/completions?key={KEY}", CHAT, **{"x-api-key": WRONG})
    assert wrong_header.status_code == 401
    right_header = _post(running, f"/v1/chat/completions?key={WRONG}", CHAT, **{"x-api-key": KEY})
    assert right_header.status_code == 200


def test_admin_never_reads_a_query_key(running: Running) -> None:
    r = httpx.get(running.url + f"/admin/pool?key={KEY}", timeout=10)
    assert r.status_code == 401
    by_header = httpx.get(running.url + "/admin/pool", headers={"x-goog-api-key": KEY})
    assert by_header.status_code == 200


def test_the_refusal_list_shows_the_wrong_keys_masked_suffix_only(running: Running) -> None:
    admin = {"authorization": f"Bearer {KEY}"}
    httpx.delete(running.url + "/admin/refusals", headers=admin, timeout=10)
    _post(running, f"/v1/chat/completions?key={WRONG}", CHAT)
    _post(running, "/v1/chat/completions", CHAT, **{"x-goog-api-key": WRONG})
    listed = httpx.get(running.url + "/admin/refusals", headers=admin, timeout=10)
    assert WRONG not in listed.text
    suffixes = [r.get("key_suffix") for r in listed.json()["refusals"]]
    assert suffixes == ["…" + WRONG[-4:]] * 2


def test_sent_key_reads_each_place_in_order() -> None:
    def scope(query: bytes = b"", **headers: str) -> dict[str, object]:
        pairs = [(k.replace("_", "-").encode(), v.encode()) for k, v in headers.items()]
        return {"path": "/v1/x", "headers": pairs, "query_string": query}

    assert sent_key(scope(x_goog_api_key="g")) == "g"
    assert sent_key(scope(x_api_key="a", x_goog_api_key="g")) == "a"
    assert sent_key(scope(authorization="Bearer b", x_goog_api_key="g")) == "g"
    assert sent_key(scope(b"alt=sse&key=q&key=second")) == "q"
    assert sent_key(scope(b"monkey=no&apikey=no")) is None  # only a parameter named key
    assert sent_key(scope(b"key=q", authorization="Bearer   ")) == "q"
    assert sent_key(scope(b"key=q"), query=False) is None
    assert sent_key(scope(b"key=")) is None
