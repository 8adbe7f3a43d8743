"""What a flow looks like to someone reading it: the stored flow plus the views computed
from its frames — each leg's decoded canonical events (with the frame each came from),
its timing and its lint report (findings, who breaks, the verdict), all from one reading
of the leg (:class:`~streamscope.analysis.reading.LegReading`), so they number frames
alike. Raw bytes stay the source; all of this is derived.

A leg is linted for what its request asked: a whole body answering a request for no
stream is read against its protocol's non-stream schema, not called a missing stream;
and a flow the client cancelled has the end it never got excused (the verdict says it
was cancelled by the client).
"""

from __future__ import annotations

import json
from typing import Any

from streamscope.analysis.reading import LegReading
from streamscope.analysis.timing import LegTiming, overhead_ms
from streamscope.capture.flow import Flow, Leg, RequestRecord
from streamscope.capture.outcome import is_cancelled
from streamscope.capture.raw import RawFlow, to_flow
from streamscope.capture.summary import FlowSummary, LintCounts
from streamscope.codecs import PROTOCOLS, get_codec, stream_asked
from streamscope.lint.assembled import IMPORTED
from streamscope.lint.report import LintReport
from streamscope.lint.sender import sender_of, sender_said
from streamscope.lint.verdict import ErrorAnswer, FlowVerdict, judge

JSON = dict[str, Any]


def asked_to_stream(request: RequestRecord | None, protocol: str) -> bool | None:
    """Whether the request asked for a stream (:func:`streamscope.codecs.stream_asked`
    over its URL and its JSON body); None when neither tells (an imported file)."""
    if request is None:
        return None
    try:
        body = json.loads(request.body) if request.body else None
    except ValueError:
        body = None
    return stream_asked(body, protocol, request.url)


def leg_events(leg: Leg) -> list[JSON]:
    """The leg's canonical events, each with the number of the frame it came from."""
    if leg.protocol not in PROTOCOLS or not leg.streamed:
        return []
    return LegReading(leg).events_json()


def leg_lint(
    leg: Leg,
    protocol: str | None = None,
    *,
    stream_asked: bool | None = None,
    cancelled: bool = False,
) -> LintReport | None:
    """The linter's findings and verdicts for a leg (None: nothing to lint), read as
    ``protocol`` (default: the leg's own, when it is a known one).

    ``stream_asked``: whether its request asked for a stream (None: not known; a body
    is then linted as a stream that did not come). ``cancelled``: the client cancelled
    it, so its missing end is not its fault. (:attr:`LegReading.lint`.)
    """
    return LegReading(leg, protocol, stream_asked=stream_asked, cancelled=cancelled).lint


def flow_reading(flow: Flow, name: str = "client") -> LegReading:
    """A flow's leg (``client`` or ``upstream``) read once, for what its request asked
    and how the flow ended."""
    if name == "client":
        leg, request = flow.client_leg, flow.request
    else:
        leg, request = flow.upstream_leg, flow.upstream_request or flow.request
    return LegReading(
        leg,
        stream_asked=asked_to_stream(request, leg.protocol),
        cancelled=is_cancelled(flow.info.outcome),
        cut=flow.info.capture_note,
    )


def flow_leg_lint(flow: Flow, name: str = "client") -> LintReport | None:
    """A flow's leg (``client`` or ``upstream``) linted for what its request asked and
    how the flow ended."""
    return flow_reading(flow, name).lint


def verdict(report: LintReport | None) -> str:
    """One line for a flow list: the first client it breaks and why; else what ended the
    stream (the upstream's error, the client's cancel); else ``ok``."""
    if report is None:
        return "not linted"
    return report.headline()


def flow_verdict(flow: Flow) -> str:
    """The verdict of a flow's client leg, led by the client that sent it (the text of
    :func:`flow_judgement`; ``not linted`` when there is nothing to lint)."""
    judged = flow_judgement(flow)
    return judged.text if judged is not None else "not linted"


def flow_sender(flow: Flow) -> str | None:
    """The profile of the client that sent the flow's request (None: not known)."""
    return sender_of(flow.request.headers, flow.request.url)


def flow_sent_by(flow: Flow) -> str:
    """Who sent the flow's request, for a person (its client's name, or the User-Agent
    of one StreamScope does not know: :func:`~streamscope.lint.sender.sender_said`); an
    imported stream, which recorded no request, says so."""
    request = flow.request
    if not request.url and not request.body and not request.headers:
        return IMPORTED
    return sender_said(request.headers, request.url)


def error_answer(leg: Leg) -> ErrorAnswer | None:
    """The error a leg answered with (HTTP 400 and up) and the message its body carries,
    read as the leg's protocol's error envelope; None for any other answer."""
    if leg.status is None or leg.status < 400:
        return None
    message = ""
    if leg.body is not None and leg.protocol in PROTOCOLS:
        message = get_codec(leg.protocol).decode_error_body(leg.body).message
    elif leg.body:
        message = leg.body.decode("utf-8", errors="replace")
    return ErrorAnswer(leg.status, " ".join(message.split())[:300])


def flow_judgement(flow: Flow, report: LintReport | None = None) -> FlowVerdict | None:
    """The client leg's verdict led by its sender (:func:`~streamscope.lint.verdict.judge`):
    ``report`` the leg's lint, when read already; None when there is nothing to lint."""
    if report is None:
        report = flow_leg_lint(flow)
    if report is None:
        return None
    return judge(report, flow_sender(flow), error_answer(flow.client_leg))


def summarize(raw: RawFlow, summary: FlowSummary) -> FlowSummary:
    """The store's summary hook: ``summary`` with the client leg's verdict and counts
    (the store's writer thread, or the window's analysis worker)."""
    flow = to_flow(raw)
    client = flow_reading(flow, "client")
    report = client.lint
    upstream = flow_reading(flow, "upstream").lint
    counts = LintCounts()
    if report is not None:
        warnings = sum(f.severity == "warning" for f in report.findings)
        counts = LintCounts(len(report.errors), warnings)
    timing = client.timing
    # The proxy's count is the upstream's usage; without one, the client leg's timing
    # counts output tokens from its usage, else from its deltas (an estimate).
    tokens, estimated = summary.tokens, False
    if not tokens:
        tokens, estimated = timing.output_tokens, timing.tokens_estimated
    judged = flow_judgement(flow, report) if report is not None else None
    return summary.with_verdict(
        judged.text if judged is not None else verdict(report),
        upstream_verdict=verdict(upstream),
        grade=judged.grade if judged is not None else None,
        cause=judged.cause if judged is not None else None,
        sender=flow_sender(flow),
        lint=counts,
        tokens=tokens,
        tokens_estimated=bool(estimated and tokens is not None),
        ttft_ms=flow_ttft_ms(timing, summary.ttft_ms),
    )


def flow_ttft_ms(client: LegTiming, measured: float | None) -> float | None:
    """A flow's TTFT, the one the flow list, the flow header and the Timing pane show:
    its client leg's first token as captured (:attr:`LegTiming.first_token_ms`); for a
    leg with no frames captured, ``measured``, the proxy's own measure of the same
    (``model.events.is_token``, timed as it was sent)."""
    return client.first_token_ms if client.streamed and client.frames else measured


def flow_view(flow: Flow) -> JSON:
    """The flow as the admin API shows it: stored data plus, per leg, its events,
    timing and lint report, and the proxy's own overhead (client first frame minus
    upstream first frame)."""
    data = flow.to_json()
    timings = {}
    for name in ("upstream", "client"):
        reading = flow_reading(flow, name)
        leg = data["legs"][name]
        known = reading.leg.protocol in PROTOCOLS and reading.leg.streamed
        leg["events"] = reading.events_json() if known else []
        timings[name] = reading.timing
        leg["timing"] = reading.timing.to_json()
        report = reading.lint
        leg["lint"] = report.to_json() if report is not None else None
    data["proxy_overhead_ms"] = overhead_ms(timings["upstream"], timings["client"])
    return data


__all__ = [
    "asked_to_stream",
    "error_answer",
    "flow_judgement",
    "flow_sender",
    "flow_sent_by",
    "flow_ttft_ms",
    "flow_leg_lint",
    "flow_reading",
    "flow_verdict",
    "flow_view",
    "leg_events",
    "leg_lint",
    "summarize",
    "verdict",
]
