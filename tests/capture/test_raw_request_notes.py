"""The request notes through the compact capture form (capture/raw.py): the notes the
proxy handed over become the readable flow's :class:`RequestNote` list, and a readable
flow's notes (an import) go back into its info."""

from __future__ import annotations

from streamscope.capture.flow import Flow, RequestRecord
from streamscope.capture.info import FlowInfo
from streamscope.capture.raw import RawFlow, RawLeg, from_flow, to_flow
from streamscope.model.request import RequestNote

NOTES = [
    RequestNote("tools[0]", "dropped", "a server tool: no place for it"),
    RequestNote("reasoning_effort", "changed", "the upstream takes a budget", "budget 8192"),
]


def _raw(info: FlowInfo) -> RawFlow:
    return RawFlow("f", 0.0, info, RequestRecord(), None, RawLeg(), RawLeg())


def test_the_readable_flow_has_the_notes_as_notes() -> None:
    assert to_flow(_raw(FlowInfo(request_notes=list(NOTES)))).info.request_notes == NOTES
    # As stored: JSON, read back into notes (one of the wrong shape is left out).
    stored = [n.to_json() for n in NOTES]
    odd = FlowInfo.from_json({"request_notes": [*stored, {"field": "x"}, "not a note"]})
    assert to_flow(_raw(odd)).info.request_notes == NOTES
    assert to_flow(_raw(FlowInfo())).info.request_notes == []


def test_an_imported_flow_keeps_its_notes() -> None:
    flow = Flow("f", 1.0, 0, "anthropic", FlowInfo(request_notes=list(NOTES)))
    raw = from_flow(flow, imported=True)
    assert raw.info.request_notes == NOTES
    back = to_flow(raw)
    assert back.info.request_notes == NOTES and back.info.imported
