"""Verdicts of flows through a real proxy on a real socket, read from
``/admin/flows`` as a user's tools read them: a non-streamed answer (the official SDKs'
``create()`` without ``stream``) is not flagged; an Anthropic flow's verdict never names
openai-python; a stream that ends in the upstream's error (the demo's ``demo-error``)
says so, with the upstream's message; a stream the client gave up on is not blamed for
the end it never got."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from streamscope.analysis.view import flow_verdict
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import KEY, Running, proxied

ADMIN = {"x-api-key": KEY}
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def running() -> Iterator[Running]:
    with proxied(demo_config()) as r:
        yield r


def _summary(running: Running, flow_id: str, *, settle: float = 5.0) -> dict[str, Any]:
    """The flow's summary from /admin/flows (the proxy stores a flow when it ends)."""
    flows = running.server.app.flows
    assert flows is not None
    deadline = time.monotonic() + settle
    while True:
        flows.flush()
        listed = httpx.get(f"{running.url}/admin/flows", headers=ADMIN, timeout=10).json()
        found = [s for s in listed["flows"] if s["id"] == flow_id]
        if found or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert found, f"flow {flow_id} not listed"
    return dict(found[0])


def _openai(running: Running) -> openai.OpenAI:
    return openai.OpenAI(api_key=running.key, base_url=running.v1, max_retries=0, timeout=30)


def _anthropic(running: Running) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=running.key, base_url=running.url, max_retries=0, timeout=30)


def test_non_streamed_answers_through_the_sdks_are_not_flagged(running: Running) -> None:
    ids: dict[str, str] = {}
    raw = _openai(running).chat.completions.with_raw_response.create(model="demo-chat", messages=HI)
    assert raw.parse().choices[0].message.content
    ids["chat"] = raw.headers["x-request-id"]
    raw_r = _openai(running).responses.with_raw_response.create(model="demo-chat", input="hi")
    assert raw_r.parse().output_text  # the README's own example
    ids["responses"] = raw_r.headers["x-request-id"]
    raw_m = _anthropic(running).messages.with_raw_response.create(
        model="demo-chat", max_tokens=200, messages=HI
    )
    assert raw_m.parse().content
    ids["messages"] = raw_m.headers["x-request-id"]
    for client, flow_id in ids.items():
        summary = _summary(running, flow_id)
        assert summary["verdict"] == "ok", (client, summary["verdict"])
        assert summary["upstream_verdict"] == "ok", (client, summary["upstream_verdict"])
        assert summary["lint"]["errors"] == 0
        # The flow's detail says the same of its client leg: its body, read as a response.
        detail = httpx.get(f"{running.url}/admin/flows/{flow_id}", headers=ADMIN).json()
        lint = detail["legs"]["client"]["lint"]
        assert lint is not None and lint["verdict"] == "ok" and lint["findings"] == []


def test_an_anthropic_flow_never_names_openai_python(running: Running) -> None:
    ids = []
    for stream in (False, True):
        body = {"model": "demo-chat", "max_tokens": 100, "messages": HI, "stream": stream}
        r = httpx.post(
            running.url + "/v1/messages",
            json=body,
            headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"},
            timeout=30,
        )
        assert r.status_code == 200
        ids.append(r.headers["x-request-id"])
    # A body where a stream was asked for (a real break): still only Anthropic's clients.
    r = httpx.post(
        running.url + "/v1/messages",
        json={"model": "replay/broken/chat-non-sse-body", "max_tokens": 9, "messages": HI},
        headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"},
        timeout=30,
    )
    ids.append(r.headers["x-request-id"])
    for flow_id in ids:
        summary = _summary(running, flow_id)
        detail = httpx.get(f"{running.url}/admin/flows/{flow_id}", headers=ADMIN).json()
        # The client leg is Anthropic's (the upstream leg speaks the upstream's protocol,
        # whose clients its own verdict names).
        text = json.dumps([summary["verdict"], detail["legs"]["client"]["lint"]])
        assert "openai-python" not in text and "openai-node" not in text


@pytest.mark.parametrize("client", ["chat", "messages", "responses"])
def test_a_stream_ending_in_the_upstreams_error_says_so(running: Running, client: str) -> None:
    headers: dict[str, str] = {}
    if client == "messages":
        # The clients are closed when their blocks end: the caught error holds this frame,
        # so a client left open here is freed with its socket by the garbage collector, in
        # some later test, as an unclosed socket.
        with _anthropic(running) as ac, pytest.raises(anthropic.APIStatusError) as caught:
            with ac.messages.stream(model="demo-error", max_tokens=200, messages=HI) as s:
                s.get_final_message()
        headers = dict(caught.value.response.headers)
    else:
        with _openai(running) as oc, pytest.raises((openai.APIError, RuntimeError)) as caught_o:
            if client == "chat":
                with oc.chat.completions.stream(model="demo-error", messages=HI) as s:
                    s.get_final_completion()
            else:
                with oc.responses.stream(model="demo-error", input="hi") as rs:
                    rs.get_final_response()
        assert "demo-error" in str(caught_o.value) or client == "responses"
    flow_id = headers.get("x-request-id") or _latest(running, "demo-error")
    summary = _summary(running, flow_id)
    verdict = summary["verdict"]
    assert verdict.startswith("the stream ends in the upstream's error: "), verdict
    assert "demo-error: the upstream failed" in verdict
    detail = httpx.get(f"{running.url}/admin/flows/{flow_id}", headers=ADMIN).json()
    lint = detail["legs"]["client"]["lint"]  # the provider's doing: an outcome, not a finding
    assert all(f["rule"] != "stream.upstream-error" for f in lint["findings"])
    error = next(f for f in lint["outcomes"] if f["rule"] == "stream.upstream-error")
    assert error["kind"] == "provider" and lint["happened"].startswith(verdict.split(";")[0])
    assert "demo-error: the upstream failed" in error["message"]
    assert error["shows"], "it says what the clients show"


def _latest(running: Running, model: str) -> str:
    flows = running.server.app.flows
    assert flows is not None
    flows.flush()
    items, _ = flows.summaries(0, 50)
    return next(s.id for s in items if s.model == model)


def test_a_stream_the_client_gave_up_on_is_not_blamed(running: Running) -> None:
    body = {"model": "demo-long", "stream": True, "messages": HI}
    headers = {"authorization": f"Bearer {KEY}"}
    with httpx.Client(timeout=30) as http:
        with http.stream("POST", running.v1 + "/chat/completions", json=body, headers=headers) as r:
            flow_id = r.headers["x-request-id"]
            for _ in r.iter_bytes():
                break  # the first bytes, then the client goes away
    summary = _summary(running, flow_id)
    deadline = time.monotonic() + 10
    while summary.get("outcome") in (None, "", "done", "complete") and time.monotonic() < deadline:
        time.sleep(0.1)  # the proxy notices the client is gone at its next write
        summary = _summary(running, flow_id)
    assert "client" in str(summary["outcome"]), summary["outcome"]
    assert summary["verdict"].startswith("cancelled by the client"), summary["verdict"]
    flow = running.server.app.flows.get(flow_id)  # type: ignore[union-attr]
    assert flow is not None and flow_verdict(flow) == summary["verdict"]
