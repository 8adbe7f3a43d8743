"""Reading one captured flow for the flow detail (:mod:`streamscope.gui.flow_detail`),
in a worker thread: the store is blocking SQLite and linting decodes every frame, so
neither runs on the window's loop (the loop the embedded proxy serves on).

:func:`load_flow` gives the flow and its summary; a flow the store has not linted yet
gets its verdict and TTFT here, as linting would set them."""

from __future__ import annotations

from dataclasses import replace

from streamscope.analysis.view import flow_judgement, flow_reading, flow_ttft_ms
from streamscope.capture.flow import Flow
from streamscope.capture.source import FlowSource
from streamscope.capture.summary import FlowSummary
from streamscope.lint.report import LintReport

NOT_LINTED = "not linted"


def load_flow(
    store: FlowSource | None, flow_id: str, flow: Flow | None = None
) -> tuple[Flow | None, FlowSummary]:
    """The flow (``flow``, else the store's; None: gone) and its summary (worker thread:
    SQLite, and linting decodes frames)."""
    if flow is None and store is not None:
        flow = store.get(flow_id)
    summary = (store.summary(flow_id) if store is not None else None) or FlowSummary(flow_id)
    if flow is not None and summary.verdict is None:  # not linted: TTFT as linting sets it
        client = flow_reading(flow, "client")  # one decoding for both
        summary = replace(
            summary,
            verdict=verdict_text(flow, client.lint),
            ttft_ms=flow_ttft_ms(client.timing, summary.ttft_ms),
        )
    return flow, summary


def verdict_text(flow: Flow, report: LintReport | None) -> str:
    """The flow's verdict as a summary holds it (:data:`NOT_LINTED` without a report)."""
    judged = flow_judgement(flow, report) if report is not None else None
    return judged.text if judged is not None else NOT_LINTED


__all__ = ["NOT_LINTED", "load_flow", "verdict_text"]
