"""A silent upstream never leaves a client silent.

Over real sockets: the scriptable upstream accepts each request and never sends its
headers. ``first_byte_timeout_seconds`` is one budget per request, shared by all the
accounts tried; a streaming client gets its stream started (SSE headers and a keepalive)
after ``keepalive_seconds`` without an answer, and the budget's end as the protocol's
error frame and terminator; a non-streaming client gets a 504 within the budget.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import pytest

from streamscope.wire import decode_all
from tests.proxy.harness import Running, proxied
from tests.proxy.pool_support import (
    MODEL,
    TEXT,
    Behaviour,
    error_script,
    keyed,
    ok_script,
    order,
    pool_config,
    streamed_text,
)
from tests.proxy.test_relay_streaming import assert_outcome
from tests.upstream_server import RecordedRequest, Script, UpstreamServer, run_in_thread

BUDGET = 1.5
KEEPALIVE = 0.3
SLACK = 1.0
SILENT = Script(delay=60)  # accepts, reads the request, never answers


@dataclass
class Timed:
    status: int
    request_id: str
    content_type: str
    first: float  # seconds to the first body byte
    total: float  # seconds to the end of the response
    body: bytes


def post(running: Running, stream: bool) -> Timed:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": stream}
    with httpx.Client(timeout=30) as http:
        t0 = time.monotonic()
        with http.stream(
            "POST",
            running.v1 + "/chat/completions",
            json=body,
            headers={"authorization": f"Bearer {running.key}"},
        ) as r:
            first: float | None = None
            out = bytearray()
            for chunk in r.iter_raw():
                if first is None and chunk:
                    first = time.monotonic() - t0
                out += chunk
            total = time.monotonic() - t0
            return Timed(
                r.status_code,
                r.headers["x-request-id"],
                r.headers.get("content-type", ""),
                first if first is not None else total,
                total,
                bytes(out),
            )


@contextmanager
def proxy(
    behaviour: dict[str, Behaviour], mode: str = "repair"
) -> Iterator[tuple[Running, UpstreamServer]]:
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", keyed(behaviour))
        config = pool_config(up.url, "ab", mode=mode, keepalive=KEEPALIVE)
        config.proxy.first_byte_timeout_seconds = BUDGET
        with proxied(config) as running:
            yield running, up


@pytest.fixture(params=["repair", "passthrough"])
def silent(request: pytest.FixtureRequest) -> Iterator[tuple[Running, UpstreamServer]]:
    with proxy({"a": SILENT, "b": SILENT}, mode=request.param) as setup:
        yield setup


def test_streaming_client_hears_keepalives_then_the_error_frame(
    silent: tuple[Running, UpstreamServer],
) -> None:
    running, _ = silent
    got = post(running, stream=True)
    print(f"streaming: first byte {got.first:.3f} s, error frame at {got.total:.3f} s")
    assert got.status == 200
    assert got.content_type.startswith("text/event-stream")
    assert got.first < KEEPALIVE + 0.5, got.first
    assert got.total <= BUDGET + SLACK, got.total
    frames = decode_all(got.body)
    assert any("keepalive" in c for f in frames for c in f.comments)
    data = [f.data for f in frames if f.data is not None]
    assert data[-1] == "[DONE]", data
    error = json.loads(data[-2])["error"]
    assert error["code"] == "upstream_timeout", error
    assert "first-byte budget" in error["message"]
    assert "sk-upstream" not in got.body.decode()
    assert_outcome(running, got.request_id, "proxy-timeout", "first-byte budget")


def test_non_streaming_client_gets_504_within_the_budget(
    silent: tuple[Running, UpstreamServer],
) -> None:
    running, _ = silent
    got = post(running, stream=False)
    print(f"non-streaming: 504 at {got.total:.3f} s")
    assert got.status == 504, got.body
    assert got.total <= BUDGET + SLACK, got.total
    error = json.loads(got.body)["error"]
    assert error["code"] == "upstream_timeout"
    assert "first-byte budget" in error["message"]
    assert_outcome(running, got.request_id, "proxy-timeout", "first-byte budget")


def test_an_error_after_the_stream_began_is_its_error_frame() -> None:
    late_bad = error_script(400, "bad request from the upstream")
    late_bad.delay = KEEPALIVE * 2
    with proxy({"a": late_bad, "b": late_bad}) as (running, _):
        got = post(running, stream=True)
        assert got.status == 200
        data = [f.data for f in decode_all(got.body) if f.data is not None]
        assert data[-1] == "[DONE]", data
        assert json.loads(data[-2])["error"]["message"].endswith("bad request from the upstream")
        assert_outcome(running, got.request_id, "error-answer", "answered 400")


def test_a_fast_error_keeps_its_http_status() -> None:
    """Before the keepalive interval nothing is committed: an error answer is a status."""
    bad = error_script(400, "bad request from the upstream")
    with proxy({"a": bad, "b": bad}) as (running, _):
        got = post(running, stream=True)
        assert got.status == 400, got.body
        assert json.loads(got.body)["error"]["message"].endswith("bad request from the upstream")


def _late(delay: float) -> Behaviour:
    def script(req: RecordedRequest) -> Script:
        answer = ok_script(req)
        answer.delay = delay
        return answer

    return script


def test_slow_headers_within_the_budget_still_answer() -> None:
    """Headers after the keepalive interval: the client already had keepalives, then the
    whole answer; a failed account before them stays invisible (the retry goes on)."""
    slow_fail = error_script(429, "rate limited")
    slow_fail.delay = KEEPALIVE * 2
    with proxy({"a": slow_fail, "b": _late(KEEPALIVE)}) as (running, up):
        got = post(running, stream=True)
        assert got.status == 200
        assert got.first < KEEPALIVE + 0.5, got.first
        frames = decode_all(got.body)
        assert any("keepalive" in c for f in frames for c in f.comments)
        assert streamed_text(httpx.Response(200, content=got.body)) == TEXT
        assert order(up) == ["a", "b"]
        assert_outcome(running, got.request_id, "complete")
