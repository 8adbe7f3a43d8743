"""One redactor at every exit: a hostile upstream echoes the account key everywhere it can
(whole 200 bodies in both modes, a key split across two stream deltas — streamed, and
assembled into a whole answer — a body that is no
response, response headers, a ``set-cookie``), the client sends it in a header of its own,
and a short key and a ``base_url`` password are echoed too. Then every byte that left the
proxy is searched: the client's answers, the capture (``flows.get`` and the SQLite file
with its WAL), the HAR export, a re-imported HAR and the log.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamscope.capture.flow import Flow
from streamscope.capture.har import to_har
from streamscope.config import Config
from streamscope.proxy.server import ProxyServer
from tests.proxy.harness import KEY, make_config
from tests.support import running_in_thread
from tests.upstream_server import RecordedRequest, Script, run_in_thread

MODEL = "exit-model"
LONG = "sk-upstream-exit-SECRET-0123456789abcdef-zzzz"  # 45 characters
SHORT = "k3Y9"  # a key shorter than MIN_SECRET: masked as a whole token
PASSWORD = "pw-Hunter2-secret"
# A JSON value long enough that the error preview (80 characters) cuts the key.
PAD = "x" * 39 + " "


def _sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _delta(text: str) -> bytes:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
    return _sse({"id": "c", "object": "chat.completion.chunk", "model": MODEL, "choices": [choice]})


def _hostile(req: RecordedRequest) -> Script:
    """Echo the key the proxy sent (whatever its form) as the request's ``user`` asks."""
    key = req.headers.get("authorization", "").removeprefix("Bearer ")
    how = (req.json or {}).get("user", "body")
    headers = {"x-debug-key": key, "set-cookie": f"sess={key}; HttpOnly"}
    if how == "split":  # the key in two deltas: whole only once assembled
        half = len(key) // 2
        done = {"index": 0, "delta": {}, "finish_reason": "stop"}
        chunks: list[bytes | float] = [
            _delta(key[:half]),
            _delta(key[half:]),
            _sse({"id": "c", "object": "chat.completion.chunk", "model": MODEL, "choices": [done]}),
            b"data: [DONE]\n\n",
        ]
        return Script(headers={"content-type": "text/event-stream", **headers}, chunks=chunks)
    if how == "not-sse":
        return Script(body_json={"hello": PAD + key}, headers=headers)
    message = {"role": "assistant", "content": f"your key is {key}"}
    body = {
        "id": "chatcmpl-x",
        "object": "chat.completion",
        "created": 1700000000,
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    return Script(body_json=body, headers=headers)


def _config(url: str, mode: str, key: str) -> Config:
    upstream = {
        "name": "up",
        "protocol": "openai-chat",
        "base_url": url + "/v1",
        "default": True,
        "mode": mode,
        "accounts": [{"name": "a", "api_key": key}],
        "models": [MODEL],
    }
    return make_config([upstream], keepalive_seconds=2.0)


@contextmanager
def _proxy(config: Config, capture: Path) -> Iterator[ProxyServer]:
    async def start() -> ProxyServer:
        server = ProxyServer(config, capture_path=capture)
        await server.start()
        return server

    async def stop(server: ProxyServer) -> None:
        await server.stop()

    with running_in_thread(start, stop, "proxy") as (server, _):
        yield server


def _chat(url: str, how: str, stream: bool, extra: dict[str, str] | None = None) -> httpx.Response:
    body = {
        "model": MODEL,
        "stream": stream,
        "user": how,
        "messages": [{"role": "user", "content": "hi"}],
    }
    headers = {"authorization": f"Bearer {KEY}", **(extra or {})}
    return httpx.post(url + "/v1/chat/completions", json=body, headers=headers, timeout=10)


def _found(data: bytes, secret: str) -> bool:
    if len(secret) >= 8:
        return secret.encode() in data
    # A short key: as a whole token (it may occur inside other words)
    import re

    return (
        re.search(
            rb"(?<![A-Za-z0-9_\-])" + re.escape(secret.encode()) + rb"(?![A-Za-z0-9_\-])", data
        )
        is not None
    )


def _joined_deltas(content: bytes) -> bytes:
    """The text a client shows of a Chat stream: every delta's content, joined."""
    text = ""
    for line in content.split(b"\n"):
        if line.startswith(b"data: {"):
            try:
                chunk = json.loads(line[6:])
            except ValueError:  # not a stream (a JSON body quoting one)
                continue
            for choice in chunk.get("choices") or []:
                text += (choice.get("delta") or {}).get("content") or ""
    return text.encode()


def _disk(capture: Path) -> bytes:
    out = b""
    for path in capture.parent.iterdir():
        if path.name.startswith(capture.name):
            out += path.read_bytes()
    return out


@pytest.mark.parametrize("key", [LONG, SHORT])
@pytest.mark.parametrize("mode", ["repair", "passthrough"])
def test_an_echoed_key_leaves_through_no_exit(
    mode: str, key: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    capture = tmp_path / "flows.sqlite3"
    seen: list[bytes] = []
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", _hostile)
        with _proxy(_config(up.url, mode, key), capture) as server:
            cases = [("body", False), ("body", True), ("split", False)]
            if len(key) >= 16:  # split in two parts of 8 characters or more: masked
                cases.append(("split", True))
            if mode == "repair":
                cases.append(("not-sse", True))
            ids = []
            for how, stream in cases:
                r = _chat(
                    server.url, how, stream, {"x-upstream-key": key, "anthropic-beta": f"b,{key}"}
                )
                assert r.status_code in (200, 502), r.text
                if how == "not-sse":
                    assert r.status_code == 502 and "upstream_not_sse" in r.text
                seen += [r.content, str(r.headers).encode(), _joined_deltas(r.content)]
                ids.append(r.headers["x-request-id"])
            flows = server.app.flows
            assert flows is not None
            flows.flush()
            stored = [flows.get(i) for i in ids]
            assert all(f is not None for f in stored)
            for flow in stored:
                assert flow is not None
                seen.append(json.dumps(flow.to_json()).encode())
                seen.append(repr(flow).encode())
            har = json.dumps(to_har([f for f in stored if f is not None])).encode()
            seen.append(har)
            auth = {"authorization": f"Bearer {KEY}"}
            for i in ids:
                seen.append(httpx.get(f"{server.url}/admin/flows/{i}.har", headers=auth).content)
            seen.append(_disk(capture))
        seen.append(caplog.text.encode())
    # The key really was echoed (the upstream saw it), and reached no exit.
    assert any(r.headers.get("authorization") == f"Bearer {key}" for r in up.requests)
    leaks = [i for i, data in enumerate(seen) if _found(data, key)]
    assert leaks == [], [_around(seen[i], key) for i in leaks]


def _imported(server: ProxyServer, content: bytes, content_type: str) -> Flow:
    """The one flow ``content`` gives when imported through the admin API, as stored."""
    auth = {"authorization": f"Bearer {KEY}", "content-type": content_type}
    r = httpx.post(server.url + "/admin/flows/import", content=content, headers=auth)
    assert r.status_code == 201, r.text
    (summary,) = r.json()["flows"]
    flows = server.app.flows
    assert flows is not None
    flows.flush()
    flow = flows.get(summary["id"])
    assert flow is not None
    return flow


def test_an_imported_har_is_masked_by_value(tmp_path: Path) -> None:
    capture = tmp_path / "flows.sqlite3"
    entry = {
        "startedDateTime": "2024-01-01T00:00:00.000Z",
        "time": 1,
        "request": {
            "method": "POST",
            "url": "http://127.0.0.1/v1/chat/completions",
            "httpVersion": "HTTP/1.1",
            "headers": [{"name": "x-upstream-key", "value": LONG}],
            "queryString": [],
            "cookies": [],
            "headersSize": -1,
            "bodySize": 2,
            "postData": {"mimeType": "application/json", "text": "{}"},
        },
        "response": {
            "status": 200,
            "statusText": "OK",
            "httpVersion": "HTTP/1.1",
            "headers": [{"name": "set-cookie", "value": f"sess={LONG}"}],
            "cookies": [],
            "content": {"size": 2, "mimeType": "application/json", "text": "{}"},
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": 2,
        },
        "cache": {},
        "timings": {"send": 0, "wait": 1, "receive": 0},
    }
    har = json.dumps(
        {"log": {"version": "1.2", "creator": {"name": "x", "version": "1"}, "entries": [entry]}}
    )
    with run_in_thread() as up, _proxy(_config(up.url, "repair", LONG), capture) as server:
        flow = _imported(server, har.encode(), "application/har+json")
        text = json.dumps(flow.to_json()) + json.dumps(to_har([flow]))
        assert LONG not in text and LONG[-4:] in text
        assert LONG.encode() not in _disk(capture)


def test_an_imported_sse_recording_is_masked_and_its_export_too(tmp_path: Path) -> None:
    # A recording made elsewhere, with the key whole in one delta and split across two.
    capture = tmp_path / "flows.sqlite3"
    half = len(LONG) // 2
    sse = _delta(f"key {LONG}") + _delta(LONG[:half]) + _delta(LONG[half:]) + b"data: [DONE]\n\n"
    with run_in_thread() as up, _proxy(_config(up.url, "repair", LONG), capture) as server:
        flow = _imported(server, sse, "text/event-stream")
        assert len(flow.client_leg.frames) == 4
        auth = {"authorization": f"Bearer {KEY}"}
        exported = b"".join(
            httpx.get(f"{server.url}/admin/flows/{flow.id}/{leg}.sse", headers=auth).content
            for leg in ("client", "upstream")
        )
        assert len(flow.client_leg.raw()) == len(sse)  # masked in place: sizes stay true
        seen = [
            flow.client_leg.raw(),
            exported,
            _joined_deltas(flow.client_leg.raw()),
            _disk(capture),
        ]
    for data in seen:
        assert LONG.encode() not in data
        assert LONG[: half - 1].encode() not in data and LONG[half + 1 :].encode() not in data


def test_a_base_url_password_stays_out_of_logs_and_captured_urls(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    capture = tmp_path / "flows.sqlite3"
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", _hostile)
        url = up.url.replace("http://", f"http://bob:{PASSWORD}@")
        upstream = {
            "name": "up",
            "protocol": "openai-chat",
            "base_url": url + "/v1",
            "default": True,
            "models": [MODEL],
        }
        config = make_config([upstream])
        with _proxy(config, capture) as server:
            r = _chat(server.url, "body", False)
            assert r.status_code == 200
            flows = server.app.flows
            assert flows is not None
            flows.flush()
            flow = flows.get(r.headers["x-request-id"])
            assert flow is not None
            exported = json.dumps(to_har([flow]))
            assert "bob:***@" in exported or "bob" not in exported
            seen = [
                r.content,
                json.dumps(flow.to_json()).encode(),
                exported.encode(),
                _disk(capture),
            ]
        seen.append(caplog.text.encode())
    assert [s[:200] for s in seen if PASSWORD.encode() in s] == []


def _around(data: bytes, secret: str) -> bytes:
    at = data.find(secret.encode())
    return data[max(0, at - 150) : at + 50]


def test_a_cookie_one_upstream_answer_sets_is_never_sent_for_another(tmp_path: Path) -> None:
    # One upstream client serves every account and every local client: a session cookie
    # set in the answer to account a's request must not ride along with account b's.
    def answer(req: RecordedRequest) -> Script:
        body = {
            "id": "chatcmpl-x",
            "object": "chat.completion",
            "created": 1700000000,
            "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}],
        }
        key = req.headers.get("authorization", "")[-6:]
        return Script(body_json=body, headers={"set-cookie": f"sess={key}; Path=/"})

    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", answer)
        config = _config(up.url, "repair", LONG)
        upstream = config.upstreams[0]
        upstream.accounts.append(upstream.accounts[0].model_copy(update={"name": "b"}))
        upstream.strategy = "round_robin"
        with _proxy(config, tmp_path / "flows.sqlite3") as server:
            for _ in range(3):
                assert _chat(server.url, "body", False).status_code == 200
    assert len(up.requests) == 3
    assert [r.headers.get("cookie") for r in up.requests] == [None, None, None]
