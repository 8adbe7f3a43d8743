"""``/admin/flows/{id}`` and the flow list keep the provider's doing apart from a broken
wire (``analysis/view.py``): a captured flow whose answer Anthropic cut by max_tokens
inside a tool call has, in its leg's lint JSON, the cut under ``outcomes`` (kind
``provider``), no error among ``findings``, and a verdict that says what happened; the
flow list's summary counts no error or warning for it."""

from __future__ import annotations

import time

from streamscope.analysis.view import flow_verdict, flow_view, summarize
from streamscope.capture.flow import CapturedFrame, Flow, Leg
from streamscope.capture.info import FlowInfo
from streamscope.capture.outcome import Outcome
from streamscope.capture.raw import from_flow
from streamscope.capture.summary import FlowSummary
from streamscope.lint.checks_provider import CUT_LEAD
from streamscope.wire import decode_all
from tests.lint.provider_cases import ANT_CUT_CALL
from tests.lint.streams import native

MS = 1_000_000
HEADERS = [
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache"),
    ("x-accel-buffering", "no"),
]


def cut_flow() -> Flow:
    raw = native(ANT_CUT_CALL).rstrip(b"\n") + b"\n\n"  # as the API sent it
    frames = [CapturedFrame(f.raw, (10 + n) * MS) for n, f in enumerate(decode_all(raw))]
    leg = Leg("anthropic", 200, HEADERS, sent_ns=0, headers_ns=5 * MS, frames=frames)
    return Flow(
        "f",
        time.time(),
        0,
        "anthropic",
        FlowInfo(outcome=Outcome.COMPLETE),
        client_leg=leg,
        upstream_leg=leg,
    )


def test_the_admin_json_has_the_cut_as_an_outcome_not_a_finding() -> None:
    data = flow_view(cut_flow())
    for name in ("client", "upstream"):
        lint = data["legs"][name]["lint"]
        assert lint["errors"] == 0
        assert all(f["kind"] == "wire" and f["severity"] != "error" for f in lint["findings"])
        (outcome,) = lint["outcomes"]
        assert outcome["rule"] == "provider.length-in-tool-call"
        assert outcome["kind"] == "provider" and outcome["frame"] == 14
        assert outcome["breaks"]["claude-code"]["effect"] == "error"
        assert lint["happened"].startswith(f"{CUT_LEAD}`max_tokens` inside the arguments")
        assert lint["verdict"] == lint["happened"]


def test_the_flow_list_says_what_happened_and_counts_no_error() -> None:
    flow = cut_flow()
    assert flow_verdict(flow).startswith(CUT_LEAD)
    summary = summarize(from_flow(flow), FlowSummary("f"))
    assert summary.verdict == flow_verdict(flow)
    assert summary.lint.errors == 0 and summary.lint.warnings == 0
