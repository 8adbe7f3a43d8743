"""One leg of a flow in the flow detail (gui/leg_pane.py): the captured leg replayed into
its view (the answer, the lint, the request notes with the findings), or the empty state
that says why there is nothing to show, each in its turn."""

from __future__ import annotations

import pytest

from streamscope.capture.sse import import_sse
from streamscope.gui.leg_pane import LegPane
from streamscope.model.request import RequestNote
from tests.gui.test_flow_load import HI


@pytest.mark.qasync
async def test_a_leg_replays_into_its_view_and_an_empty_state_replaces_it() -> None:
    pane = LegPane("Client leg")
    try:
        note = RequestNote("temperature", "dropped", "the upstream has no such parameter")
        await pane.replay(import_sse(HI).client_leg, None, notes=[note])
        assert not pane.is_empty and pane.currentWidget() is pane.view
        assert pane.view.answer.toPlainText() == "hi"
        assert pane.view.findings_model.notes == [note]
        pane.show_empty("The upstream never answered.")
        assert pane.is_empty and pane.empty.text() == "The upstream never answered."
    finally:
        pane.view.stop()
        pane.deleteLater()
