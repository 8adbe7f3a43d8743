"""A flow's request notes in its admin view (analysis/view.py, ``GET /admin/flows/{id}``):
``request_notes`` is a list of ``{"field", "action", "why", "instead"}``, in the order the
translation made them, and an empty list for a flow whose request went on as sent."""

from __future__ import annotations

import json

from streamscope.analysis.view import flow_view
from streamscope.capture.flow import Flow
from streamscope.model.request import RequestNote
from tests.analysis.test_view import flow, stream_leg

NOTES = [
    RequestNote("tools[0]", "dropped", "a server tool: OpenAI Chat has no place for it"),
    RequestNote("thinking", "changed", "adaptive thinking", "reasoning_effort: medium"),
]


def test_the_view_lists_the_notes_as_json_objects() -> None:
    noted: Flow = flow(stream_leg(100), stream_leg(103))
    noted.info.request_notes = list(NOTES)
    view = json.loads(json.dumps(flow_view(noted)))
    assert view["request_notes"] == [
        {
            "field": "tools[0]",
            "action": "dropped",
            "why": "a server tool: OpenAI Chat has no place for it",
            "instead": None,
        },
        {
            "field": "thinking",
            "action": "changed",
            "why": "adaptive thinking",
            "instead": "reasoning_effort: medium",
        },
    ]
    assert flow_view(flow(stream_leg(100), stream_leg(103)))["request_notes"] == []
