"""The audit with real clients (slow: one test): the demo in passthrough over a recording
whose usage chunk has no ``choices`` is audited in openai-python and the Node clients
(one run of them for every answer); each cell says it ran, the clients the defect breaks
break on it, the error probes raise each client's proper error class."""

from __future__ import annotations

import asyncio

import pytest

from streamscope.audit.run import Target, audit
from streamscope.lint.clients import clients_for
from tests.proxy.demo_support import FAST
from tests.proxy.harness import make_config, proxied
from tests.realclients.support import node_data_dir

BROKEN = "replay/broken/chat-usage-chunk-without-choices"


def test_the_real_clients_run_on_every_answer_and_raise_their_own_errors() -> None:
    data_dir, why = node_data_dir()
    if data_dir is None:
        pytest.skip(why or "no node")
    sdk = [c.id for c in clients_for("openai-chat") if c.runtime != "agent"]  # CLIs: slow
    upstream = {"name": "demo", "protocol": "demo", "default": True, "mode": "passthrough"}
    with proxied(make_config([{**upstream, "demo": FAST}])) as running:
        target = Target(running.v1, "openai-chat", running.key, BROKEN)
        done = asyncio.run(audit(target, clients=sdk, data_dir=data_dir))
    report = done.report
    assert [c.id for c in report.clients] == sdk and all(c.version for c in report.clients)
    by_id = {r.probe: r for r in report.results}
    for probe in ("text-short", "tool-forced", "usage"):
        cells = by_id[probe].cells
        assert {c.source for c in cells.values()} == {"ran"}, probe
        # openai-python and openai-node raise at the chunk, the AI SDK fails its schema
        for client in ("openai-python-chat", "openai-node-chat", "ai-openai-compatible"):
            cell = cells[client]
            assert cell.grade == "breaks" and cell.finding == "chat.missing-choices", cell
            assert cell.frame is not None and cell.detail.startswith("a chunk")
    # non-streamed answers: the clients stream, so the linter's word stands
    assert {c.source for c in by_id["text-short-whole"].cells.values()} == {"lint"}
    for probe in ("bad-key", "unknown-model"):
        cells = by_id[probe].cells.values()
        assert {c.source for c in cells} == {"ran"}
        assert {c.grade for c in cells} == {"works"}, [c for c in cells if c.grade != "works"]
        assert by_id[probe].cells["openai-python-chat"].finding == "APIStatusError"
    assert report.exit_status() == 1
    assert "9 of 14 requests break" in report.client_summary(report.clients[0])
