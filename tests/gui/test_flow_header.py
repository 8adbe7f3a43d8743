"""An opened flow's header (gui/flow_header.py): its one line says how many fields
translating the request dropped or changed, and the label under it lists them (each
note's ``line``; the first few, then how many more), hidden when there are none."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

from streamscope.capture.flow import Flow, RequestRecord
from streamscope.capture.info import FlowInfo
from streamscope.capture.summary import FlowSummary
from streamscope.gui.flow_header import (
    NOTES_LISTED,
    RequestNotesLabel,
    header_text,
    notes_count,
    notes_text,
)
from streamscope.model.request import RequestNote

DROPPED = [RequestNote(f"tools[{i}]", "dropped", f"server tool {i}: no place") for i in range(5)]
CHANGED = RequestNote("thinking", "changed", "adaptive thinking", "reasoning_effort: medium")


def _flow(notes: list[RequestNote]) -> Flow:
    request = RequestRecord("POST", "/v1/messages", [], b"{}")
    info = FlowInfo(request_notes=notes)
    return Flow("f", 0.0, 0, client_protocol="anthropic", info=info, request=request)


def test_the_header_line_counts_the_notes() -> None:
    text = header_text(_flow([DROPPED[0], CHANGED]), FlowSummary("f", verdict="ok"))
    assert "verdict: ok  ·  request: 1 dropped, 1 changed" in text
    assert "request:" not in header_text(_flow([]), FlowSummary("f"))
    assert notes_count(DROPPED) == "5 dropped" and notes_count([CHANGED]) == "1 changed"
    assert notes_count([]) == ""


def test_the_first_notes_are_listed_then_how_many_more() -> None:
    lines = notes_text([CHANGED, *DROPPED]).splitlines()
    assert lines[0].startswith("What translating the request")
    assert lines[1:-1] == [f"• {n.line}" for n in [CHANGED, *DROPPED][:NOTES_LISTED]]
    assert lines[-1].startswith(f"… and {6 - NOTES_LISTED} more")
    assert notes_text(DROPPED[:2]).splitlines()[1:] == [f"• {n.line}" for n in DROPPED[:2]]
    assert notes_text([]) == ""


def test_the_label_shows_them_and_hides_without(qapp: QApplication) -> None:
    box = QWidget()  # a header's place in a shown window
    label = RequestNotesLabel()
    QVBoxLayout(box).addWidget(label)
    try:
        box.show()
        assert not label.isVisible()  # hidden until there are notes
        label.show_notes([CHANGED, *DROPPED])
        assert label.isVisible() and label.text() == notes_text([CHANGED, *DROPPED])
        assert label.toolTip().splitlines() == [n.line for n in [CHANGED, *DROPPED]]
        label.show_notes([])
        assert not label.isVisible()
    finally:
        box.deleteLater()
