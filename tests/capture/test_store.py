"""The capture store's summaries (capture/store.py): what a flow list needs without
reading the flow — the request line and which rule fired on which account."""

from __future__ import annotations

from streamscope.capture.recorder import FlowRecorder
from streamscope.capture.store import FlowStore, brief_attempts
from streamscope.pool.state import Attempt
from streamscope.redact import Redactor


def test_a_summary_names_the_request_and_its_attempts() -> None:
    store = FlowStore(None, Redactor([]))
    try:
        rec = FlowRecorder("f1", "openai-chat", 1 << 20)
        rec.request("POST", "/v1/chat/completions", [], b'{"model":"m"}')
        rec.client_message({"type": "http.response.start", "status": 200, "headers": []})
        rec.client_message({"type": "http.response.body", "body": b"{}"})
        rec.done()
        attempts = [
            Attempt("f1", "demo", "exhausted", "exhausted", "disable", 429, 1.0, "quota"),
            Attempt("f1", "demo", "healthy", "ok", "use", 200, 2.0),
        ]
        store.submit(rec, {"model": "m", "attempts": attempts})
        store.flush()
        summary = store.summary("f1")
        assert summary is not None
        assert (summary["method"], summary["path"]) == ("POST", "/v1/chat/completions")
        assert summary["attempts"] == [
            {
                "account": "exhausted",
                "failure_class": "exhausted",
                "action": "disable",
                "status": 429,
            },
            {"account": "healthy", "failure_class": "ok", "action": "use", "status": 200},
        ]
        flow = store.get("f1")
        assert flow is not None and flow.attempts[0]["message"] == "quota"  # kept in the flow
    finally:
        store.close()


def test_brief_attempts_keeps_only_what_a_list_shows() -> None:
    assert brief_attempts(None) == []
    assert brief_attempts([{"account": None, "failure_class": "network", "extra": 1}, "x"]) == [
        {"account": None, "failure_class": "network", "action": None, "status": None}
    ]
