"""A flow as someone reading it sees it (``analysis/view.py``): each leg read once for what
its own request asked and how the flow ended — its events, timing and lint report — the
proxy's overhead between the legs, and a one-line verdict."""

from __future__ import annotations

import json

from streamscope.analysis.timing import LegTiming
from streamscope.analysis.view import (
    flow_leg_lint,
    flow_sent_by,
    flow_ttft_ms,
    flow_verdict,
    flow_view,
    leg_events,
    verdict,
)
from streamscope.capture.flow import CapturedFrame, Flow, Leg, RequestRecord
from streamscope.capture.info import FlowInfo
from streamscope.capture.outcome import Outcome
from streamscope.capture.sse import import_sse
from streamscope.lint.assembled import IMPORTED
from streamscope.lint.sender import UNKNOWN_SENDER
from streamscope.wire import decode_all
from tests.lint.answers import whole_body
from tests.lint.streams import CHAT_TEXT, native

MS = 1_000_000
SSE = [("content-type", "text/event-stream"), ("cache-control", "no-cache")]
SSE += [("x-accel-buffering", "no")]
ASK = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def stream_leg(start_ms: int, data: bytes = native(CHAT_TEXT)) -> Leg:
    frames = decode_all(data)
    captured = [CapturedFrame(f.raw, (start_ms + n) * MS) for n, f in enumerate(frames)]
    return Leg("openai-chat", 200, list(SSE), headers_ns=start_ms * MS, frames=captured)


def request(stream: bool) -> RequestRecord:
    return RequestRecord(body=json.dumps({**ASK, "stream": stream}).encode())


def flow(upstream: Leg, client: Leg, outcome: Outcome = Outcome.COMPLETE) -> Flow:
    return Flow(
        "f1",
        started=0.0,
        started_ns=0,
        info=FlowInfo(outcome=outcome),
        request=request(True),
        upstream_request=request(True),
        upstream_leg=upstream,
        client_leg=client,
    )


def test_the_view_of_a_streamed_flow_and_the_proxys_overhead() -> None:
    view = flow_view(flow(stream_leg(100), stream_leg(103)))
    assert view["proxy_overhead_ms"] == 3.0  # the client's first data frame 3 ms later
    for name in ("upstream", "client"):
        leg = view["legs"][name]
        assert leg["events"] and leg["events"][0]["frame"] == 0
        assert leg["lint"]["verdict"] == "ok" and leg["lint"]["findings"] == []
        assert leg["timing"]["frames"] == len(decode_all(native(CHAT_TEXT)))
    json.dumps(view)  # the admin API sends it as it is


def test_a_leg_that_never_answered_has_no_events_lint_or_overhead() -> None:
    view = flow_view(flow(Leg("openai-chat"), stream_leg(5)))
    upstream = view["legs"]["upstream"]
    assert upstream["events"] == [] and upstream["lint"] is None
    assert view["proxy_overhead_ms"] is None
    assert verdict(None) == "not linted"


def test_each_leg_is_read_for_what_its_own_request_asked() -> None:
    body = json.dumps(whole_body(CHAT_TEXT)).encode()
    answer = Leg("openai-chat", 200, [("content-type", "application/json")], body=body)
    mixed = flow(answer, answer)
    mixed.upstream_request = request(False)  # the proxy asked the upstream for no stream
    upstream = flow_leg_lint(mixed, "upstream")
    client = flow_leg_lint(mixed, "client")
    assert upstream is not None and upstream.findings == []
    assert client is not None and [f.rule_id for f in client.findings] == ["framing.non-sse-body"]
    assert leg_events(answer) == []  # a body has no frames to number


def test_the_verdict_of_a_flow_the_client_cancelled() -> None:
    half = b"".join(f.raw for f in decode_all(native(CHAT_TEXT))[:10])
    cut = flow(stream_leg(0, half), stream_leg(1, half), outcome=Outcome.CLIENT_CANCELLED)
    assert flow_verdict(cut).startswith("cancelled by the client")
    cut.info.outcome = Outcome.UPSTREAM_CUT  # not the client's doing
    assert flow_verdict(cut).startswith("would ")  # then its missing end breaks clients


def test_a_flows_ttft_is_its_client_legs_as_captured() -> None:
    """The flow list, the header and the Timing pane show one TTFT: the captured client
    leg's first token; the proxy's own measure only when no frame was captured."""
    streamed = LegTiming(streamed=True, frames=4, first_token_ms=600.0)
    assert flow_ttft_ms(streamed, 599.7) == 600.0
    assert flow_ttft_ms(LegTiming(streamed=True, frames=4), 12.0) is None  # no token
    assert flow_ttft_ms(LegTiming(streamed=True, frames=0), 12.0) == 12.0
    assert flow_ttft_ms(LegTiming(streamed=False, frames=0), None) is None


def test_who_sent_a_flow_is_said_from_its_request() -> None:
    sent = flow(stream_leg(0), stream_leg(1))
    assert flow_sent_by(sent) == f"{UNKNOWN_SENDER} (no User-Agent)"
    sent.request = RequestRecord("POST", "/v1/chat/completions", [("user-agent", "curl/8.5.0")])
    assert flow_sent_by(sent) == f"{UNKNOWN_SENDER} (User-Agent: curl/8.5.0)"
    sent.request = RequestRecord(
        "POST", "/v1/chat/completions", [("user-agent", "OpenAI/Python 3.57.0")]
    )
    assert flow_sent_by(sent) == "openai-python (Chat Completions)"
    assert flow_sent_by(import_sse(native(CHAT_TEXT))) == IMPORTED  # no request recorded
