"""The Refused requests pane at the window's default size (1360×860) has room
for at least five rows once refusals unfold it (it showed about 2.5), and a refusal of
``streamscope doctor``'s own check reads as doctor's, not as a client's red refusal.
Refusals sent over a real socket to the window's proxy."""

from __future__ import annotations

import httpx
import pytest
from PySide6.QtCore import Qt

from streamscope import __version__
from streamscope.gui.models.common import TONE
from streamscope.gui.refusals import RefusalsModel
from streamscope.proxy.refusals import DOCTOR_AGENT
from tests.gui.support import open_window, wait_until
from tests.proxy.harness import make_config

DEMO = [{"name": "demo", "protocol": "demo", "default": True}]


@pytest.mark.qasync
async def test_refusals_unfold_to_five_rows_and_doctors_check_reads_as_doctors() -> None:
    async with open_window(make_config(DEMO)) as window:
        assert (window.width(), window.height()) == (1360, 860)
        window.tabs.setCurrentWidget(window.traffic)
        url = window.control.url
        assert url is not None
        agents = [f"{DOCTOR_AGENT}/{__version__}", *(f"client-{n}/1.0" for n in range(5))]
        async with httpx.AsyncClient() as client:
            for agent in agents:
                sent = {"authorization": "Bearer sk-wrong-000000000000", "user-agent": agent}
                assert (await client.get(url + "/v1/models", headers=sent)).status_code == 401
        panel = window.traffic.refusals
        await wait_until(lambda: panel.model.rowCount() == 6, 2.0)
        await wait_until(lambda: panel.is_open and panel.table.isVisible(), 2.0)
        table = panel.table
        rows = table.verticalHeader().defaultSectionSize()
        seen = table.viewport().height() // rows
        assert seen >= 5, (table.viewport().height(), rows)
        # doctor's check (the oldest row): said to be doctor's, not in the error colour
        model, M = panel.model, RefusalsModel  # noqa: N806
        doctor = model.rowCount() - 1
        reason = model.index(doctor, M.REASON)
        assert "doctor" in str(model.data(reason)).lower()
        assert model.data(reason, Qt.ItemDataRole.ForegroundRole) != TONE["error"]
        client = model.index(0, M.REASON)
        assert model.data(client, Qt.ItemDataRole.ForegroundRole) == TONE["error"]
        assert model.data(client) == "wrong API key"
