"""What the proxy knows of a flow beyond its bytes (capture/info.py): typed from the
exchange to the row, kept as JSON, read back whatever an older file holds."""

from __future__ import annotations

import json

from streamscope.capture.info import FlowInfo
from streamscope.capture.outcome import Outcome
from streamscope.model.request import RequestNote
from streamscope.pool.state import Attempt


def test_attempts_are_kept_as_their_json_and_read_back_as_attempts() -> None:
    tried = Attempt("r1", "openai", "main", "exhausted", "disable", 429, 5.0, "quota")
    info = FlowInfo(model="m", attempts=[tried])
    data = json.loads(json.dumps(info.to_json()))
    assert data["attempts"] == [tried.to_json()]
    assert FlowInfo.from_json(data) == info
    # A list's brief of an attempt (older rows), and what is no attempt at all.
    data["attempts"] += [{"account": "b", "failure_class": "ok", "status": "x"}, "x"]
    brief = Attempt("", "", "b", "ok", "", 0, 0.0)
    assert FlowInfo.from_json(data).attempts == [tried, brief]


def test_an_older_loose_outcome_reads_as_an_outcome_with_its_detail() -> None:
    info = FlowInfo.from_json({"outcome": "upstream-status=429"})
    assert (info.outcome, info.outcome_detail) == (Outcome.ERROR_ANSWER, "upstream status 429")
    assert FlowInfo.from_json({"outcome": "idle"}).outcome == Outcome.PROXY_TIMEOUT
    assert FlowInfo.from_json({"outcome": "imported"}).outcome is None  # a word of no outcome


def test_fields_of_the_wrong_type_read_as_their_defaults() -> None:
    info = FlowInfo.from_json(
        {
            "model": ["not", "a", "name"],
            "tokens": True,  # a bool is no count
            "ttft_ms": "12",
            "attempts": "none",
            "imported": "yes",  # only true is true
            "outcome": "upstream-cut",
            "something_newer": 1,
        }
    )
    assert info == FlowInfo(outcome=Outcome.UPSTREAM_CUT)
    assert FlowInfo.from_json(None) == FlowInfo() == FlowInfo.from_json({})


def test_every_field_survives_json() -> None:
    info = FlowInfo(
        model="claude",
        upstream="anthropic",
        account="main",
        mode="repair",
        outcome=Outcome.COMPLETE,
        outcome_detail="",
        attempts=[Attempt("r", "anthropic", "main", "ok", "use", 200, 1.5)],
        request_notes=[RequestNote("thinking", "changed", "adaptive", "budget 1024")],
        ttft_ms=12.5,
        tokens=40,
        imported=True,
        capture_note="upstream body (80 KiB) not kept: backlog full",
    )
    assert FlowInfo.from_json(json.loads(json.dumps(info.to_json()))) == info
