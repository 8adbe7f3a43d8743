"""Reading a flow for the flow detail (gui/flow_load.py): a flow given is judged here
when no stored summary has its verdict (its verdict and TTFT as linting sets them); a
flow the store no longer holds reads as None beside an empty summary."""

from __future__ import annotations

from streamscope.analysis.view import flow_judgement, flow_leg_lint
from streamscope.capture.sse import import_sse
from streamscope.capture.store import FlowStore
from streamscope.capture.summary import FlowSummary
from streamscope.gui.flow_load import NOT_LINTED, load_flow, verdict_text
from streamscope.redact import Redactor
from tests.gui.support import no_account_flow

HI = b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n'


def test_a_flow_given_without_a_store_gets_its_verdict_and_ttft_here() -> None:
    flow = import_sse(HI)
    found, summary = load_flow(None, flow.id, flow)
    assert found is flow and summary.id == flow.id
    judged = flow_judgement(flow, flow_leg_lint(flow))
    assert judged is not None and summary.verdict == judged.text
    assert summary.ttft_ms is not None


def test_an_error_answer_reads_as_what_its_client_gets() -> None:
    flow = no_account_flow()
    _, summary = load_flow(None, flow.id, flow)
    assert summary.verdict is not None and "no account available" in summary.verdict
    assert verdict_text(flow, None) == NOT_LINTED


def test_a_flow_the_store_no_longer_holds_reads_as_none() -> None:
    store = FlowStore(None, Redactor([]))
    try:
        assert load_flow(store, "gone") == (None, FlowSummary("gone"))
    finally:
        store.close()
