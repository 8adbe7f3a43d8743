"""One request as the proxy serves it (proxy/exchange_record.py): the exchange fills its
flow's record in place, and its log line reads that record."""

from __future__ import annotations

from streamscope.capture.info import FlowInfo
from streamscope.capture.outcome import Outcome
from streamscope.pool.state import Attempt
from streamscope.proxy.exchange_record import Exchange


def test_the_flow_record_is_the_exchanges_own_and_the_log_line_reads_it() -> None:
    ex = Exchange("r1", "POST", "/v1/messages")
    assert ex.info == FlowInfo() and Exchange("r2", "GET", "/").info is not ex.info
    ex.status = 200
    ex.info.model, ex.info.upstream, ex.info.account = "claude", "anthropic", "main"
    ex.info.ttft_ms = 412.4
    line = ex.line()
    assert line.startswith("POST /v1/messages model=claude upstream=anthropic account=main")
    assert "status=200 ttft=412ms" in line
    assert "attempts=" not in line and "outcome=" not in line  # one clean try; not ended


def test_a_retried_or_failed_exchange_says_its_attempts_outcome_and_detail() -> None:
    ex = Exchange("r1", "POST", "/v1/chat/completions")
    ex.info.attempts += [
        Attempt("r1", "up", "a", "rate-limited", "next", 429, 1.0),
        Attempt("r1", "up", "b", "ok", "use", 200, 2.0),
    ]
    ex.info.outcome = Outcome.UPSTREAM_CUT
    ex.info.outcome_detail = 'read failed: "reset"'
    line = ex.line()
    assert "ttft=- " in line and "model=- upstream=- account=-" in line
    assert "attempts=a:rate-limited/429,b:ok/200" in line
    assert line.endswith('outcome=upstream-cut detail="read failed: \\"reset\\""')
    ex.refused = "bad-key"
    assert "refused=bad-key" in ex.line()
