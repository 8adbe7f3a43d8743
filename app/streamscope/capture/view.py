"""What a flow looks like to someone reading it: the stored flow plus the views computed
from its frames — each leg's decoded canonical events (with the frame each came from),
its timing and its lint report (findings, who breaks, the verdict). Raw bytes stay the
source; all of this is derived.

A leg is linted for what its request asked: a whole body answering a request for no
stream is read against its protocol's non-stream schema, not called a missing stream;
and a flow the client cancelled has the end it never got excused (the verdict says it
was cancelled by the client).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from streamscope.capture.flow import Flow, Leg, RequestRecord
from streamscope.capture.raw import RawFlow, to_flow
from streamscope.capture.sse import leg_frames
from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.lint.check import LintError, lint
from streamscope.lint.report import LintReport
from streamscope.model.request import RequestError
from streamscope.timing import leg_timing, proxy_overhead_ms

JSON = dict[str, Any]

CANCELLED_OUTCOMES = frozenset({"client-cancelled", "client-gone", "client-disconnected"})
"""Flow outcomes that say the client went away or cancelled before the answer's end."""


def was_cancelled(outcome: str | None) -> bool:
    """Whether a flow's outcome says the client cancelled (or went away)."""
    return bool(outcome) and (outcome in CANCELLED_OUTCOMES or str(outcome) == "cancelled")


def asked_to_stream(request: RequestRecord | None, protocol: str) -> bool | None:
    """Whether the request asked for a stream, as its protocol's codec reads it (any
    protocol's, when the answer does not say which it is); None when there is no JSON
    object body to tell by (a GET, an imported file)."""
    try:
        body = json.loads(request.body) if request is not None and request.body else None
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    for name in [protocol] if protocol in PROTOCOLS else PROTOCOLS:
        try:
            if get_codec(name).decode_request(body).stream:
                return True
        except RequestError:
            if body.get("stream") is True:
                return True
    return False


def leg_events(leg: Leg) -> list[JSON]:
    """The leg's canonical events, each with the index of the frame it came from."""
    if leg.protocol not in PROTOCOLS or not leg.streamed:
        return []
    decoder = get_codec(leg.protocol).stream_decoder()
    out: list[JSON] = []
    for index, (_, frame) in enumerate(leg_frames(leg)):
        for ev in decoder.decode(frame):
            out.append({"frame": index, **dataclasses.asdict(ev)})
    for ev in decoder.finish():
        out.append({"frame": None, **dataclasses.asdict(ev)})
    return out


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
    it, so its missing end is not its fault.

    The leg's headers are linted only when they are the real ones, which a leg with the
    time its headers came has (a captured or HAR-imported leg); an imported ``.sse``
    file has only a stand-in Content-Type. Frame times are checked for long silences
    (an imported file without timing has every frame at 0: no silence).
    """
    if leg.status is None:
        return None
    content_type = next((v for k, v in leg.headers if k.lower() == "content-type"), None)
    headers = leg.headers if leg.headers_ns is not None else None
    if protocol is None:
        protocol = leg.protocol if leg.protocol in PROTOCOLS else None
    frames = [f for _, f in leg_frames(leg)]  # none for a body
    try:
        report = lint(
            frames,
            protocol,
            content_type=content_type,
            status=leg.status,
            body=leg.body,
            headers=headers,
            stream_asked=stream_asked,
        )
    except LintError:
        return None
    return report.cancelled_by_client() if cancelled else report


def flow_leg_lint(flow: Flow, name: str = "client") -> LintReport | None:
    """A flow's leg (``client`` or ``upstream``) linted for what its request asked and
    how the flow ended."""
    if name == "client":
        leg, request = flow.client, flow.request
    else:
        leg, request = flow.upstream, flow.upstream_request or flow.request
    return leg_lint(
        leg,
        stream_asked=asked_to_stream(request, leg.protocol),
        cancelled=was_cancelled(flow.outcome),
    )


def verdict(report: LintReport | None) -> str:
    """One line for a flow list: the first client it breaks and why; else what ended the
    stream (the upstream's error, the client's cancel); else ``ok``."""
    if report is None:
        return "not linted"
    return report.headline()


def flow_verdict(flow: Flow) -> str:
    """The verdict of a flow's client leg (:func:`verdict` of :func:`flow_leg_lint`)."""
    return verdict(flow_leg_lint(flow))


def summarize(raw: RawFlow, summary: JSON) -> JSON:
    """The store's summary hook: the client leg's verdict and counts (writer thread)."""
    flow = to_flow(raw)
    report = flow_leg_lint(flow, "client")
    upstream = flow_leg_lint(flow, "upstream")
    counts = {"errors": 0, "warnings": 0}
    if report is not None:
        counts["errors"] = len(report.errors)
        counts["warnings"] = sum(f.severity == "warning" for f in report.findings)
    timing = leg_timing(flow.client)
    # The proxy's count is the upstream's usage; without one, the client leg's timing
    # counts output tokens from its usage, else from its deltas (an estimate).
    tokens, estimated = summary.get("tokens"), False
    if not tokens:
        tokens, estimated = timing.output_tokens, timing.tokens_estimated
    return {
        "verdict": verdict(report),
        "upstream_verdict": verdict(upstream),
        "lint": counts,
        "tokens": tokens,
        "tokens_estimated": bool(estimated and tokens is not None),
        "ttft_ms": summary.get("ttft_ms") or timing.first_content_ms,
    }


def flow_view(flow: Flow) -> JSON:
    """The flow as the admin API shows it: stored data plus, per leg, its events,
    timing and lint report, and the proxy's own overhead (client first frame minus
    upstream first frame)."""
    data = flow.to_json()
    for name, leg in (("upstream", flow.upstream), ("client", flow.client)):
        data["legs"][name]["events"] = leg_events(leg)
        data["legs"][name]["timing"] = leg_timing(leg).to_json()
        report = flow_leg_lint(flow, name)
        data["legs"][name]["lint"] = report.to_json() if report is not None else None
    data["proxy_overhead_ms"] = proxy_overhead_ms(flow)
    return data


__all__ = [
    "CANCELLED_OUTCOMES",
    "asked_to_stream",
    "flow_leg_lint",
    "flow_verdict",
    "flow_view",
    "leg_events",
    "leg_lint",
    "summarize",
    "verdict",
    "was_cancelled",
]
