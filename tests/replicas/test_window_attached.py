"""The window, offscreen, attached to one ``serve`` replica, shows live a flow another
replica served (both on one PostgreSQL, each with its own data directory)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from tests.gui.support import open_window, wait_until
from tests.proxy.harness import make_config
from tests.replicas.support import ADMIN, replica, two_homes
from tests.upstream_server import UpstreamServer


@pytest.fixture(autouse=True)
def _keep_running_when_windows_close(qapp: QApplication) -> None:
    qapp.setQuitOnLastWindowClosed(False)  # as tests/gui/conftest.py: the loop runs on


@pytest.mark.qasync
async def test_a_window_on_one_replica_shows_what_another_served(
    tmp_path: Path, pg_url: str, upstream: UpstreamServer
) -> None:
    home_a, home_b = two_homes(tmp_path, pg_url, upstream)
    with replica(home_a, "A") as a, replica(home_b, "B") as b:
        async with open_window(make_config([])) as window:
            assert await window.attach(b.url, ADMIN) is None
            model = window.traffic.model
            assert model.rowCount() == 0
            response = await asyncio.to_thread(a.chat)  # served by A, not by B
            assert response.status_code == 200
            await wait_until(lambda: model.rowCount() == 1, 5)
            (flow_id,) = await asyncio.to_thread(a.flow_ids)
            assert model.flow_id_at(0) == flow_id
            detail = window.traffic.open_flow(flow_id)
            await wait_until(lambda: detail.flow is not None, 5)
            assert detail.flow is not None and detail.flow.client_leg.frames
            served_by = (
                await asyncio.to_thread(a.admin, "GET", f"/admin/flows/{flow_id}/summary")
            )["replica"]
            assert served_by and f"served by {served_by}" in detail.header.text()
            # the tag serve printed at start, and the list's Replica column says it
            assert served_by == a.tag and a.tag != b.tag
            traffic = window.traffic
            replica_cell = model.index(0, model.REPLICA)
            assert model.data(replica_cell) == a.tag
            assert model.headerData(model.REPLICA, Qt.Orientation.Horizontal) == "Replica"
            assert not traffic.table.isColumnHidden(model.REPLICA)
            window.traffic.search.setText(served_by)  # the list filters by replica too
            await wait_until(lambda: window.traffic.filter.rowCount() == 1)
            window.traffic.search.setText("no-such-replica")
            await wait_until(lambda: window.traffic.filter.rowCount() == 0)
            pool = window.pool.model
            assert {pool.key_at(r) for r in range(pool.rowCount())} == {("up", "a"), ("up", "b")}
            await window.detach()
            # this machine's own flows name no replica: the column hides again
            await wait_until(lambda: window.traffic.table.isColumnHidden(model.REPLICA))
