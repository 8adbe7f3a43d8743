"""What a flow looks like to someone reading it: the stored flow plus the views computed
from its frames — each leg's decoded canonical events (with the frame each came from),
its timing and its lint report (findings, who breaks, the verdict). Raw bytes stay the
source; all of this is derived.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from streamscope.capture.flow import Flow, Leg
from streamscope.capture.raw import RawFlow, to_flow
from streamscope.capture.sse import leg_frames
from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.lint.check import LintError, lint
from streamscope.lint.report import LintReport
from streamscope.timing import leg_timing, proxy_overhead_ms

JSON = dict[str, Any]


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


def leg_lint(leg: Leg, protocol: str | None = None) -> LintReport | None:
    """The linter's findings and verdicts for a leg (None: nothing to lint), read as
    ``protocol`` (default: the leg's own, when it is a known one).

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
        return lint(
            frames,
            protocol,
            content_type=content_type,
            status=leg.status,
            body=leg.body,
            headers=headers,
        )
    except LintError:
        return None


def verdict(report: LintReport | None) -> str:
    """One line for a flow list: the first client it breaks and why, or ``ok``."""
    if report is None:
        return "not linted"
    # Profiles come in order of how many people use them: Cherry Studio first.
    found = (report.verdict(p.id) for p in report.profiles)
    return next((v for v in found if v is not None), "ok")


def summarize(raw: RawFlow, summary: JSON) -> JSON:
    """The store's summary hook: the client leg's verdict and counts (writer thread)."""
    flow = to_flow(raw)
    report = leg_lint(flow.client)
    upstream = leg_lint(flow.upstream)
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
        report = leg_lint(leg)
        data["legs"][name]["lint"] = report.to_json() if report is not None else None
    data["proxy_overhead_ms"] = proxy_overhead_ms(flow)
    return data


__all__ = ["flow_view", "leg_events", "leg_lint", "summarize", "verdict"]
