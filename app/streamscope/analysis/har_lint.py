"""``streamscope lint FILE.har``: the linter over every response of a HAR file.

Each entry's response is linted as a leg of its own — in a StreamScope export, a flow's
client and upstream legs are two entries; in a HAR of browser devtools, each request
is one. The options are ``lint``'s (``--protocol``, ``--client``, ``--json``) and so is
the exit status: 0 when no error-level finding is shown, 1 when one is, 2 when the file
cannot be read as HAR. A whole (non-SSE) body answering a request for a stream is a
stream that did not come; answering a request for no stream, it is read against its
protocol's non-stream schema. A body whose request has no JSON body (a models list) is
no answer to lint: that, and an entry without a response or with a body the linter cannot
read, is listed as not linted.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from streamscope.analysis.view import asked_to_stream, leg_lint
from streamscope.capture.flow import Leg, RequestRecord
from streamscope.capture.har import EXTENSION, HarError, from_har
from streamscope.capture.outcome import is_cancelled
from streamscope.lint.report import LintReport
from streamscope.lint.sender import sender_of

JSON = dict[str, Any]


def is_har(path: str) -> bool:
    """Whether ``lint`` reads this file as HAR (by its name: ``.har``)."""
    return path.lower().endswith(".har")


def entry_legs(har: Any) -> list[tuple[JSON, RequestRecord, Leg]]:
    """Each entry of a HAR log with its request and the leg its response is (our
    export's leg as recorded, frames and times included; another tool's as imported)."""
    log = har.get("log") if isinstance(har, dict) else None
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(entries, list):
        raise HarError("no log.entries list")
    out = []
    for entry in entries:
        (flow,) = from_har({"log": {"entries": [entry]}})
        ext = entry.get(EXTENSION)
        if isinstance(ext, dict) and ext.get("leg") == "client":
            out.append((entry, flow.request, flow.client_leg))
        else:
            out.append((entry, flow.upstream_request or flow.request, flow.upstream_leg))
    return out


def _cancelled_flows(entries: list[JSON]) -> set[str]:
    """The flows our export says the client cancelled (their client entry says so)."""
    out: set[str] = set()
    for entry in entries:
        ext = entry.get(EXTENSION)
        flow = ext.get("flow") if isinstance(ext, dict) else None
        if isinstance(ext, dict) and isinstance(flow, dict) and is_cancelled(flow.get("outcome")):
            out.add(str(ext.get("flow_id")))
    return out


def _describe(index: int, entry: JSON) -> JSON:
    request = entry.get("request")
    request = request if isinstance(request, dict) else {}
    ext = entry.get(EXTENSION)
    ext = ext if isinstance(ext, dict) else {}
    return {
        "entry": index,
        "method": request.get("method"),
        "url": request.get("url"),
        "flow_id": ext.get("flow_id"),
        "leg": ext.get("leg"),
        "not_linted": None,
    }


def lint_har(data: bytes, protocol: str | None = None) -> list[tuple[JSON, LintReport | None]]:
    """Each entry of a HAR file (its bytes) described, with its response's lint report
    (None, and why in ``not_linted``, when there is nothing to lint); ``protocol``: read
    every response as that protocol instead of its own. Raises ``ValueError`` when the
    bytes are no HAR file."""
    try:
        legs = entry_legs(json.loads(data.decode("utf-8-sig")))
    except (HarError, ValueError) as exc:
        raise ValueError(f"not a HAR file ({exc})") from None
    out: list[tuple[JSON, LintReport | None]] = []
    cancelled = _cancelled_flows([entry for entry, _, _ in legs])
    for index, (entry, request, leg) in enumerate(legs, 1):
        about = _describe(index, entry)
        # the client that sent it (a client leg's request; the upstream leg's is ours)
        about["sender"] = sender_of(request.headers, request.url) if request else None
        if protocol is not None:
            leg = dataclasses.replace(leg, protocol=protocol)
        asked = asked_to_stream(request, leg.protocol)
        if not leg.streamed and asked is None:
            about["not_linted"] = "a whole body answering a request with no JSON body"
            out.append((about, None))
            continue
        gone = about["flow_id"] is not None and str(about["flow_id"]) in cancelled
        report = leg_lint(leg, stream_asked=asked, cancelled=gone)
        if report is None:
            about["not_linted"] = "no response, or nothing the linter can read"
        out.append((about, report))
    return out


__all__ = ["asked_to_stream", "entry_legs", "is_har", "lint_har"]
