"""An audit on disk (``streamscope audit --out DIR``), and read back (``--compare DIR``,
re-rendering the HTML):

    DIR/report.json              the report (:meth:`AuditReport.to_json`)
    DIR/flows/<flow>.sse         the relay's answer exactly as received (a whole body as
                                 it came), key masked at the same length
    DIR/flows/<flow>.sse.timing  each SSE frame's arrival, seconds from the first byte
                                 (the sidecar ``streamscope`` reads with the .sse)
    DIR/flows/<flow>.har         the flow as HAR 1.2 with StreamScope's extension: the
                                 request sent (key masked), the answer, every read's
                                 bytes and time — what :func:`read_out` reads back

What is written was masked when the audit kept it (:mod:`streamscope.audit.run`); the
files are the owner's only (0600, the flows' folder 0700), as every export.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from streamscope.audit.report import AuditReport
from streamscope.audit.run import Audit
from streamscope.capture.flow import Flow
from streamscope.capture.har import HarError, from_har, to_har
from streamscope.capture.sse import export_sse, export_timing
from streamscope.private import private_dir, write_private

REPORT = "report.json"
FLOWS = "flows"
_SAFE = re.compile(r"^[A-Za-z0-9._-]+$")


def _name(flow_id: str) -> str:
    if not _SAFE.match(flow_id) or flow_id.startswith("."):
        raise ValueError(f"a flow id that cannot be a file name: {flow_id!r}")
    return flow_id


def write_out(audit: Audit, directory: Path) -> None:
    """Write the report and every flow under ``directory`` (made if missing); ``OSError``
    when it cannot be written."""
    directory.mkdir(parents=True, exist_ok=True)
    flows_dir = private_dir(directory / FLOWS)
    for flow_id, flow in audit.flows.items():
        name = _name(flow_id)
        write_private(flows_dir / f"{name}.sse", export_sse(flow.client_leg))
        write_private(flows_dir / f"{name}.sse.timing", export_timing(flow.client_leg))
        har = json.dumps(to_har([flow]), ensure_ascii=False, indent=1)
        write_private(flows_dir / f"{name}.har", har)
    text = json.dumps(audit.report.to_json(), ensure_ascii=False, indent=2)
    write_private(directory / REPORT, text + "\n")


def read_out(directory: Path) -> Audit:
    """An audit written by :func:`write_out`: its report, and each flow its results name
    that is there (a missing or unreadable flow file is left out). ``ValueError`` when
    ``directory`` holds no audit report; ``OSError`` when it cannot be read."""
    path = directory / REPORT
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{directory} holds no {REPORT}: not an audit's --out folder") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    report = AuditReport.from_json(data)
    flows: dict[str, Flow] = {}
    for result in report.results:
        if not result.flow or not _SAFE.match(result.flow):
            continue
        flow = _read_flow(directory / FLOWS / f"{result.flow}.har")
        if flow is not None:
            flow.id = result.flow
            flows[result.flow] = flow
    return Audit(report, flows)


def _read_flow(path: Path) -> Flow | None:
    try:
        har = json.loads(path.read_text(encoding="utf-8"))
        found = from_har(har)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, HarError):
        return None
    return found[0] if found else None


__all__ = ["FLOWS", "REPORT", "read_out", "write_out"]
