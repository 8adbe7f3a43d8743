"""What the proxy knows of a flow beyond its bytes (capture/info.py): handed over with
pool attempt objects, kept as JSON, read back whatever an older file holds."""

from __future__ import annotations

import json

from streamscope.capture.info import FlowInfo
from streamscope.pool.state import Attempt


def test_attempt_objects_are_kept_as_their_json() -> None:
    tried = Attempt("r1", "openai", "main", "exhausted", "disable", 429, 5.0, "quota")
    info = FlowInfo(model="m", attempts=[tried, {"account": "b", "failure_class": "ok"}, "x"])
    data = json.loads(json.dumps(info.to_json()))
    assert data["attempts"] == [tried.to_json(), {"account": "b", "failure_class": "ok"}]
    assert FlowInfo.from_json(data) == FlowInfo(model="m", attempts=data["attempts"])


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
    assert info == FlowInfo(outcome="upstream-cut")
    assert FlowInfo.from_json(None) == FlowInfo() == FlowInfo.from_json({})


def test_every_field_survives_json() -> None:
    info = FlowInfo(
        model="claude",
        upstream="anthropic",
        account="main",
        mode="repair",
        outcome="complete",
        outcome_detail="",
        attempts=[{"account": "main", "failure_class": "ok", "status": 200}],
        ttft_ms=12.5,
        tokens=40,
        imported=True,
        capture_note="upstream body (80 KiB) not kept: backlog full",
    )
    assert FlowInfo.from_json(json.loads(json.dumps(info.to_json()))) == info
