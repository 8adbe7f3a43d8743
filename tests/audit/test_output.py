"""An audit written with ``--out`` and read back: report.json as the report says, each
flow's .sse the answer's exact bytes with its .timing sidecar, the HAR read back to the
same flow; files the owner's only; a folder that holds no audit is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamscope.audit.output import read_out, write_out
from streamscope.audit.report import AuditReport, Cell, ClientInfo, ProbeResult
from streamscope.audit.run import Audit
from streamscope.capture.flow import CapturedFrame, Flow, Leg, RequestRecord
from streamscope.capture.info import FlowInfo

FRAMES = [b'data: {"a": 1}\n\n', b'data: {"a": 2}\n\n', b"data: [DONE]\n\n"]


def _audit() -> Audit:
    leg = Leg(
        "openai-chat",
        200,
        [("content-type", "text/event-stream")],
        0,
        1_000_000,
        [CapturedFrame(raw, (n + 2) * 1_000_000) for n, raw in enumerate(FRAMES)],
        None,
        5_000_000,
    )
    body = Leg(
        "openai-chat",
        401,
        [("content-type", "application/json")],
        0,
        2_000_000,
        body=b'{"error": {"message": "no"}}',
        ended_ns=2_500_000,
    )
    request = RequestRecord(
        "POST",
        "http://relay/v1/chat/completions",
        [("authorization", "Bearer ****1234")],
        b'{"model": "m"}',
    )
    model = FlowInfo(model="m")
    flows = {
        "01-text-short": Flow(
            "01-text-short", 1.0e9, 0, "openai-chat", model, request=request, client_leg=leg
        ),
        "13-bad-key": Flow(
            "13-bad-key", 1.0e9, 0, "openai-chat", model, request=request, client_leg=body
        ),
    }
    cell = Cell("openai-python-chat", "breaks", "chat.missing-choices", "why", 1, "ran")
    report = AuditReport(
        "http://relay/v1",
        "openai-chat",
        "m",
        1.0e9,
        1.0e9 + 3,
        [ClientInfo("openai-python-chat", "openai-python", "3.57.0")],
        [
            ProbeResult(
                "text-short",
                "short text",
                True,
                "answered",
                "01-text-short",
                200,
                ttft_ms=2.0,
                cells={cell.client: cell},
            ),
            ProbeResult("bad-key", "bad key", True, "answered", "13-bad-key", 401),
        ],
    )
    return Audit(report, flows)


def test_written_and_read_back_whole(tmp_path: Path) -> None:
    audit = _audit()
    write_out(audit, tmp_path / "out")
    out = tmp_path / "out"
    assert json.loads((out / "report.json").read_text()) == audit.report.to_json()
    assert (out / "flows" / "01-text-short.sse").read_bytes() == b"".join(FRAMES)
    timing = json.loads((out / "flows" / "01-text-short.sse.timing").read_text())
    assert timing == [0.0, 0.001, 0.002]  # seconds from the first byte, one per frame
    assert (out / "flows" / "13-bad-key.sse").read_bytes() == b'{"error": {"message": "no"}}'
    for path in out.rglob("*"):
        assert path.stat().st_mode & 0o077 == 0, path
    back = read_out(out)
    assert back.report.to_json() == audit.report.to_json()
    assert set(back.flows) == set(audit.flows)
    for flow_id, flow in audit.flows.items():
        got = back.flows[flow_id]
        assert got.client_leg.raw() == flow.client_leg.raw()
        assert [f.t_ns for f in got.client_leg.frames] == [f.t_ns for f in flow.client_leg.frames]
        assert got.client_leg.status == flow.client_leg.status
        assert got.request.body == flow.request.body


def test_a_missing_flow_file_is_left_out_and_no_report_is_refused(tmp_path: Path) -> None:
    write_out(_audit(), tmp_path)
    (tmp_path / "flows" / "13-bad-key.har").unlink()
    assert set(read_out(tmp_path).flows) == {"01-text-short"}
    with pytest.raises(ValueError, match="holds no report.json"):
        read_out(tmp_path / "flows")
    (tmp_path / "report.json").write_text('{"format": 99}')
    with pytest.raises(ValueError, match="not a StreamScope audit report"):
        read_out(tmp_path)


def test_a_flow_id_that_is_no_file_name_is_refused(tmp_path: Path) -> None:
    audit = _audit()
    audit.flows = {"../escape": audit.flows["01-text-short"]}
    with pytest.raises(ValueError, match="cannot be a file name"):
        write_out(audit, tmp_path)
    assert not (tmp_path.parent / "escape.sse").exists()
