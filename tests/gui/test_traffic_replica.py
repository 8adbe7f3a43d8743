"""The traffic list's Replica column (gui/traffic.py, gui/models/flows.py): which
``serve`` replica served a flow, shown only where a row names one. (The window attached
to real replicas on PostgreSQL, with the tag each printed at start:
tests/replicas/test_window_attached.py.)"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from streamscope.capture.summary import FlowSummary
from streamscope.gui.models.flows import FlowsModel
from streamscope.gui.traffic import TrafficView

M = FlowsModel


@pytest.mark.qasync
async def test_the_replica_column_shows_only_where_a_flow_names_its_replica() -> None:
    view = TrafficView(None)
    try:
        view.model.reset([FlowSummary("local-1", model="demo-chat")])
        assert view.model.headerData(M.REPLICA, Qt.Orientation.Horizontal) == "Replica"
        assert view.table.isColumnHidden(M.REPLICA)  # this machine's: no replica
        assert view.model.data(view.model.index(0, M.REPLICA)) == ""
        served = [FlowSummary("b-1", replica="host-b-3f2a1c"), FlowSummary("a-1", replica=None)]
        view.model.reset(served)
        assert not view.table.isColumnHidden(M.REPLICA)
        assert view.model.data(view.model.index(0, M.REPLICA)) == "host-b-3f2a1c"
        # next to the account, before the timings
        header = view.table.horizontalHeader()
        assert header.visualIndex(M.REPLICA) == header.visualIndex(M.ACCOUNT) + 1
        view.search.setText("host-b")  # the filter matches it too
        assert view.filter.rowCount() == 1
        view.model.reset([])
        assert view.table.isColumnHidden(M.REPLICA)
    finally:
        view.deleteLater()
