"""What a captured flow's detail tab shows as text (plain functions, no widgets): why a
leg cannot be shown, a request as captured, its body as a dict, the attempts table's
cells. :mod:`~streamscope.gui.flow_detail` puts them on screen."""

from __future__ import annotations

import json
from typing import Any

from streamscope.capture.flow import Flow, Leg, RequestRecord
from streamscope.codecs import PROTOCOLS
from streamscope.gui.models.common import clock_text

JSON = dict[str, Any]


def missing_reason(leg: Leg, which: str) -> str | None:
    """Why a leg cannot be shown as a stream (None: it can)."""
    if leg.status is None and not leg.frames and leg.body is None:
        if which == "upstream":
            return "No upstream leg: the upstream never answered (or was never asked)."
        return "No client leg: the client got no answer."
    if leg.protocol not in PROTOCOLS:
        size = len(leg.raw())
        return f"The {which} leg's protocol is unknown ({size} bytes, status {leg.status})."
    return None


def request_text(record: RequestRecord | None) -> str:
    """A request as captured: the request line, headers (masked at capture), then the
    body as pretty JSON (or as text when it is none)."""
    if record is None:
        return "(no request was sent upstream)"
    if not record.url and not record.body:
        return "(no request recorded: an imported stream)"
    lines = [f"{record.method} {record.url}"]
    lines += [f"{name}: {value}" for name, value in record.headers]
    lines.append("")
    try:
        lines.append(json.dumps(json.loads(record.body), indent=2, ensure_ascii=False))
    except ValueError:
        lines.append(record.body.decode("utf-8", errors="replace"))
    return "\n".join(lines)


def request_body(record: RequestRecord | None) -> JSON | None:
    """The request body as a dict (None: no request, or its body is no JSON object)."""
    if record is None:
        return None
    try:
        body = json.loads(record.body)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def attempt_rows(flow: Flow) -> list[list[str]]:
    """The attempts table's cells: #, account, class (the rule that fired), action,
    status, when (ms after the flow started, wall clock), message."""
    rows = []
    for i, a in enumerate(flow.info.attempts, 1):
        # (0: not recorded, as in an attempt read from a list's brief of it)
        when = f"+{(a.at - flow.started) * 1000:,.0f} ms  ({clock_text(a.at)})" if a.at else ""
        rows.append(
            [
                str(i),
                a.account or "(no account)",
                a.failure_class,
                a.action,
                "no answer" if a.status == 0 else str(a.status),
                when,
                a.message,
            ]
        )
    return rows


__all__ = ["attempt_rows", "missing_reason", "request_body", "request_text"]
