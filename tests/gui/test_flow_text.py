"""What a flow's detail tab shows as text (gui/flow_text.py): why a leg cannot be shown,
the request body as a dict, the attempts table's cells."""

from __future__ import annotations

from streamscope.capture.flow import Leg, RequestRecord
from streamscope.gui.flow_text import attempt_rows, missing_reason, request_body
from streamscope.pool.state import Attempt
from tests.gui.support import no_account_flow


def test_why_a_leg_is_missing_the_request_body_and_the_attempt_rows() -> None:
    flow = no_account_flow()
    assert missing_reason(flow.upstream_leg, "upstream") is not None
    assert missing_reason(flow.client_leg, "client") is None
    odd = Leg(protocol="", status=200, body=b"hello")
    reason = missing_reason(odd, "upstream")
    assert reason is not None and "unknown" in reason
    assert request_body(flow.request) == {"model": "demo-chat", "stream": True, "messages": []}
    assert request_body(RequestRecord(body=b"[1]")) is None
    assert request_body(None) is None
    flow.info.attempts = [Attempt("f", "demo", None, "network", "next", 0, 1.7e9)]
    assert attempt_rows(flow)[0][:5] == ["1", "(no account)", "network", "next", "no answer"]
