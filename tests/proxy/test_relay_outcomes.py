"""Every flow's outcome says what happened, and the capture keeps every byte.

Over real sockets (the scriptable upstream of ``tests.upstream_server``, the proxy on its
own port): each outcome is recorded on the flow (``/admin/flows`` lists and filters it,
the request log line says it); the demo backend's ``demo-error`` and ``demo-slow`` too.
After an upstream error event the upstream's later frames (Responses' ``response.failed``)
are still read into the capture, without holding up the client, so the captured upstream
leg is the upstream's bytes to the last one and the client leg is the client's bytes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from streamscope.capture.flow import Flow
from streamscope.capture.outcome import DESCRIPTIONS, Outcome
from streamscope.wire import decode_all
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import Running, proxied
from tests.proxy.test_relay_streaming import (
    BOOM,
    CLIENT_TIMEOUT,
    CLIENTS,
    ENDPOINT,
    _config,
    assert_outcome,
    broken_script,
    error_frames,
    head_of,
    recorded,
    requests_for,
    scenario,
    scripted_upstream,
    stream,
    wait_cancelled,
)
from tests.support import FIXTURES
from tests.upstream_server import (
    Script,
    UpstreamServer,
    fast_stream_script,
    script_from_recording,
)

ERROR_THEN_FAILED = FIXTURES / "responses" / "vercel_openai_error-then-response-failed.jsonl"
IDLE = 0.5


@pytest.fixture(scope="module")
def up() -> Iterator[UpstreamServer]:
    with scripted_upstream() as server:
        yield server


@pytest.fixture(scope="module")
def proxy(up: UpstreamServer) -> Iterator[Running]:
    with proxied(_config(up, keepalive_seconds=0, idle_timeout_seconds=IDLE)) as p:
        yield p


def flow_of(p: Running, request_id: str) -> Flow:
    recorded(p, request_id)  # stored
    assert p.server.app.flows is not None
    flow = p.server.app.flows.get(request_id)
    assert flow is not None
    return flow


def sent_bytes(script: Script) -> bytes:
    return b"".join(c for c in script.chunks if isinstance(c, bytes))


# -- the capture keeps every byte -----------------------------------------------------------


@pytest.mark.parametrize(
    ("client", "upstream"),
    [(c, "responses") for c in CLIENTS] + [("responses", "responses-pt")],
)
def test_frames_after_an_upstream_error_are_captured_to_the_last_byte(
    proxy: Running, client: str, upstream: str
) -> None:
    # error, then response.failed 50 ms later (another read): the repaired client stream
    # ends at the error, but the upstream's response.failed is captured all the same.
    script = script_from_recording(ERROR_THEN_FAILED, pace=0.05)
    got = stream(proxy, client, f"{upstream}/{scenario(script)}")
    assert got.status == 200
    flow = flow_of(proxy, got.headers["x-request-id"])
    sent = sent_bytes(script)
    assert flow.upstream_leg.raw() == sent  # the upstream leg: the upstream's bytes, exactly
    assert b"".join(f.raw for f in flow.upstream_leg.frames) == sent
    assert [f.raw for f in flow.upstream_leg.frames] == [
        c for c in script.chunks if isinstance(c, bytes)
    ]
    assert decode_all(flow.upstream_leg.frames[-1].raw)[0].event == "response.failed"
    assert not flow.upstream_leg.truncated
    # the client leg: exactly the bytes the client read off the socket
    assert flow.client_leg.raw() == got.body
    assert b"".join(f.raw for f in flow.client_leg.frames) == got.body
    assert flow.info.outcome == "upstream-error"
    assert "insufficient_quota" in flow.info.outcome_detail


def test_the_client_is_not_kept_waiting_for_the_upstreams_tail(
    proxy: Running, up: UpstreamServer
) -> None:
    # The upstream sends its error, then response.failed 0.3 s later, then hangs: the
    # client's repaired stream ends at the error; the capture still gets response.failed
    # (within the idle timeout) and then lets the upstream go.
    error, failed = error_frames("responses")
    head = list(head_of("responses"))
    name = scenario(Script(chunks=[*head, error, 0.3, failed], stall=30))
    got = stream(proxy, "openai-chat", f"responses/{name}")
    assert got.data_frames[-1].data == "[DONE]"
    (req,) = requests_for(up, name)
    assert got.t_end - req.received_at < 0.25  # not 0.3 s later, nor the idle timeout
    wait_cancelled(up, name, timeout=3.0)
    flow = flow_of(proxy, got.headers["x-request-id"])
    assert flow.upstream_leg.raw() == b"".join(head) + error + failed
    assert flow.client_leg.raw() == got.body
    assert flow.info.outcome == "upstream-error" and BOOM in flow.info.outcome_detail


@pytest.mark.parametrize("client", CLIENTS)
def test_a_whole_stream_is_complete_and_captured_exactly(proxy: Running, client: str) -> None:
    script = script_from_recording(ERROR_THEN_FAILED.parent / "vercel_openai-gpt41nano_text.jsonl")
    got = stream(proxy, client, f"responses/{scenario(script)}")
    flow = flow_of(proxy, got.headers["x-request-id"])
    assert flow.upstream_leg.raw() == sent_bytes(script)
    assert flow.client_leg.raw() == got.body
    assert (flow.info.outcome, flow.info.outcome_detail) == ("complete", "")


# -- each outcome, listed, filtered and logged -------------------------------------------


def test_every_outcome_is_listed_filtered_and_logged(
    up: UpstreamServer, caplog: pytest.LogCaptureFixture
) -> None:
    bad = {"error": {"message": "bad thing", "type": "invalid_request_error", "code": "bad_p"}}
    denied = {"error": {"message": "key revoked", "type": "authentication_error"}}
    cases = {
        "complete": fast_stream_script(3),
        "upstream-error": broken_script("openai", "error"),
        "upstream-cut": broken_script("openai", "drop"),
        "proxy-timeout": broken_script("openai", "stall"),
        "error-answer": Script(status=400, body_json=bad),
        "no-account": Script(status=401, body_json=denied),
    }
    names = {outcome: scenario(script) for outcome, script in cases.items()}
    config = _config(up, keepalive_seconds=0, idle_timeout_seconds=IDLE)
    ids: dict[str, str] = {}
    with caplog.at_level(logging.INFO, logger="streamscope.proxy"):
        with proxied(config) as p:  # a store of its own: only these flows
            for outcome, name in names.items():
                if outcome == "no-account":
                    # a client that hangs up while the stream is under way (before the
                    # 401 switches the only account off)
                    first, *rest = fast_stream_script(3).chunks
                    slow = scenario(Script(chunks=[first, 1.0, *rest]))
                    ids["client-cancelled"] = hang_up(p, f"openai/{slow}")
                    wait_cancelled(up, slow)
                got = stream(p, "openai-chat", f"openai/{name}")
                ids[outcome] = got.headers["x-request-id"]
            for request_id in ids.values():
                recorded(p, request_id)
            listed = admin(p, "/admin/flows")
            by_id = {f["id"]: f for f in listed["flows"]}
            only = admin(p, "/admin/flows?outcome=upstream-error")
            several = admin(p, "/admin/flows?outcome=upstream-cut,proxy-timeout")
            unknown = httpx.get(
                p.url + "/admin/flows?outcome=done",
                headers={"x-api-key": p.key},
                timeout=CLIENT_TIMEOUT,
            )
    expected = {
        "complete": ("complete", ""),
        "upstream-error": ("upstream-error", BOOM),
        "upstream-cut": ("upstream-cut", "failed mid-stream"),
        "proxy-timeout": ("proxy-timeout", f"nothing for {IDLE:g} s"),
        "error-answer": ("error-answer", "answered 400: bad_p: bad thing"),
        "no-account": ("error-answer", "503 no_account_available"),
        "client-cancelled": ("client-cancelled", "went away mid-answer"),
    }
    assert set(by_id) == set(ids.values())
    for case, (outcome, detail) in expected.items():
        summary = by_id[ids[case]]
        assert summary["outcome"] == outcome, (case, summary)
        assert detail in summary["outcome_detail"], (case, summary)
    assert [f["id"] for f in only["flows"]] == [ids["upstream-error"]]
    assert only["total"] == 1
    assert {f["id"] for f in several["flows"]} == {ids["upstream-cut"], ids["proxy-timeout"]}
    assert unknown.status_code == 400 and "upstream-error" in unknown.text
    lines = [r.getMessage() for r in caplog.records if r.name == "streamscope.proxy"]
    flow_lines = [x for x in lines if x.startswith("POST /v1/") and "outcome=" in x]
    assert len(flow_lines) == len(ids), lines
    error_line = next(x for x in flow_lines if "outcome=upstream-error" in x)
    assert f'detail="boom: {BOOM}"' in error_line, error_line
    assert sum("outcome=client-cancelled" in x for x in flow_lines) == 1


def hang_up(p: Running, model: str) -> str:
    """Start a stream, read its first bytes, close the connection; its request id."""
    body = {"model": model, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    headers = {"authorization": f"Bearer {p.key}"}
    with httpx.Client(timeout=CLIENT_TIMEOUT) as http:
        with http.stream("POST", p.url + ENDPOINT["openai-chat"], json=body, headers=headers) as r:
            next(r.iter_raw())
            return r.headers["x-request-id"]


def admin(p: Running, path: str) -> Any:
    r = httpx.get(p.url + path, headers={"x-api-key": p.key}, timeout=CLIENT_TIMEOUT)
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize("client", ["openai-chat", "anthropic"])
def test_a_non_streaming_client_of_an_errored_stream_gets_an_error_and_the_outcome(
    proxy: Running, client: str
) -> None:
    from tests.proxy.test_relay_streaming import assert_error_envelope, post_json

    r = post_json(proxy, client, f"anthropic/{scenario(broken_script('anthropic', 'error'))}")
    assert_error_envelope(client, r)
    assert BOOM in json.dumps(r.json())
    assert_outcome(proxy, r.headers["x-request-id"], "upstream-error", BOOM)


# -- the demo backend ------------------------------------------------------------------------


@pytest.mark.parametrize("keepalive", [0, 0.1])  # 0.1: the client's stream began early
def test_demo_error_and_demo_slow_are_recorded_as_what_they_are(keepalive: float) -> None:
    config = demo_config(keepalive=keepalive)
    # demo-slow is silent for 0.7 s before its first frame
    config.proxy.idle_timeout_seconds = config.proxy.first_byte_timeout_seconds = 0.3
    with proxied(config) as p:
        outcomes = {}
        for model in ("demo-chat", "demo-error", "demo-slow"):
            got = stream(p, "responses", model, {"model": model, "input": "hi", "stream": True})
            outcomes[model] = recorded(p, got.headers["x-request-id"])
            slow_got = got
    assert outcomes["demo-chat"].outcome == "complete"
    assert outcomes["demo-error"].outcome == "upstream-error"
    assert "demo-error: the upstream failed" in outcomes["demo-error"].outcome_detail
    assert outcomes["demo-slow"].outcome == "proxy-timeout"
    assert "no frame for 0.3 s" in outcomes["demo-slow"].outcome_detail
    slow = slow_got  # the client heard of it: an error status, or its stream's error ending
    if keepalive:
        assert slow.status == 200 and b"no frame for 0.3 s" in slow.body
        assert [f.event for f in slow.data_frames][-2:] == ["error", "response.failed"]
    else:
        assert slow.status == 504 and "no frame for 0.3 s" in slow.body.decode()


def test_every_outcome_has_a_description() -> None:
    assert set(DESCRIPTIONS) == set(Outcome)
    assert [str(o) for o in Outcome] == [
        "complete",
        "client-cancelled",
        "upstream-error",
        "upstream-cut",
        "proxy-timeout",
        "error-answer",
    ]
