"""Why is it empty? A broken stream through the proxy becomes a flow whose verdict names
the client it breaks and the cause: in passthrough on the client leg itself,
in repair only on the upstream leg, the client leg being fixed."""

from __future__ import annotations

from typing import Any

import httpx

from tests.proxy.demo_support import FAST
from tests.proxy.harness import KEY, make_config, proxied

BROKEN = "replay/broken/responses-no-item-id"


def _flow_of(mode: str) -> tuple[dict[str, Any], dict[str, Any]]:
    demo = {"name": "demo", "protocol": "demo", "default": True, "mode": mode, "demo": FAST}
    with proxied(make_config([demo], keepalive_seconds=2.0)) as running:
        r = httpx.post(
            running.v1 + "/responses",
            json={"model": BROKEN, "input": "hi", "stream": True},
            headers={"authorization": f"Bearer {KEY}"},
        )
        assert r.status_code == 200
        flows = running.server.app.flows
        assert flows is not None
        flows.flush()
        flow_id = r.headers["x-request-id"]
        summary = flows.summary(flow_id)
        detail = httpx.get(
            f"{running.url}/admin/flows/{flow_id}", headers={"x-api-key": KEY}
        ).json()
    assert summary is not None
    return summary, detail


def test_passthrough_flow_says_which_client_renders_nothing_and_why() -> None:
    summary, detail = _flow_of("passthrough")
    # measured (tests/realclients): the AI SDK rejects such deltas with an error part
    assert summary.verdict.startswith("would fail in Cherry Studio")
    assert "item_id" in summary.verdict
    assert summary.lint.errors >= 1
    lint = detail["legs"]["client"]["lint"]
    rules = {f["rule"] for f in lint["findings"]}
    assert "responses.missing-item-id" in rules
    finding = next(f for f in lint["findings"] if f["rule"] == "responses.missing-item-id")
    assert finding["frame"] is not None and finding["fix"]


def test_repair_flow_keeps_the_diagnosis_on_the_upstream_leg() -> None:
    summary, detail = _flow_of("repair")
    assert summary.verdict == "ok"  # the client got a fixed stream
    assert "item_id" in summary.upstream_verdict
    client_findings = detail["legs"]["client"]["lint"]["findings"]
    assert [f["rule"] for f in client_findings if f["severity"] == "error"] == []
    timing = detail["legs"]["client"]["timing"]
    assert timing["first_content_ms"] is not None and timing["output_tokens"]
