"""An opened flow says what its request translation dropped (gui/flow_detail.py), as
nothing is dropped silently: a flow captured by a real proxy that translated an Anthropic client's
request for an OpenAI Chat upstream (a server tool, a ``container`` and a document
block, which Chat has no place for), read back from the capture file, shows the count in
its header, each note under it, and the notes in the client leg's Lint tab with the
findings, as warnings of their own kind — never as errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamscope.capture.store import FlowStore
from streamscope.gui.flow_detail import FlowDetail
from streamscope.gui.models.findings import FindingsModel
from streamscope.redact import Redactor
from tests.proxy.request_notes_support import BODY, DROPPED, translating


@pytest.mark.qasync
async def test_the_header_and_the_lint_tab_list_what_was_dropped(tmp_path: Path) -> None:
    capture = tmp_path / "flows.sqlite3"
    with translating(capture) as setup:
        r = setup.post(BODY)
        assert r.status_code == 200, r.text
        flow_id = r.headers["x-request-id"]
        setup.admin(f"/admin/flows/{flow_id}")  # written before the proxy stops
    store = FlowStore(capture, Redactor([]))
    detail = FlowDetail(flow_id, store)
    try:
        await detail.load()
        flow = detail.flow
        assert flow is not None
        notes = flow.info.request_notes
        assert set(DROPPED) <= {n.field for n in notes if n.action == "dropped"}
        dropped = sum(n.action == "dropped" for n in notes)
        assert f"request: {dropped} dropped" in detail.header.text()
        assert not detail.notes.isHidden()
        listed = detail.notes.text().splitlines()
        assert [f"• {n.line}" for n in notes] == listed[1 : 1 + len(notes)]
        # The client leg's Lint tab: the notes after the findings, none an error.
        view = detail.client_view
        model = view.findings_model
        assert model.notes == notes
        rows = [r for r in range(model.rowCount()) if model.note_at(r) is not None]
        cells = [[model.data(model.index(r, c)) for c in (0, 1, 2)] for r in rows]
        assert all(
            c[1] == f"request: {n.action}" and c[2] == "request"
            for c, n in zip(cells, notes, strict=True)
        )
        assert {c[0] for c in cells} <= {"warning", "info"}
        assert view.tabs.tabText(3).endswith(f"{len(notes)} request)")
        assert model.data(model.index(rows[0], FindingsModel.MESSAGE)) == notes[0].line
        # The upstream leg got the translated request: nothing to say there.
        assert detail.upstream_view.findings_model.notes == []
    finally:
        detail.stop()
        detail.deleteLater()
        store.close()
