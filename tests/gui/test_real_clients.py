"""The "Run in real clients" action in the window: a captured leg's exact bytes
replayed into the installed real clients, one row per client with what it assembled
beside the linter's prediction, ✓ where they agree and ✗ where they differ; a client that
is not installed says how to install it. The flow is made by the client pane sending a
broken recording through the embedded proxy in passthrough mode (the defect reaches the
client), then opened from Traffic. Runs are awaited as asyncio tasks, never waitSignal.

The test data dir (tests/conftest.py) has no Node clients, so their rows give the install
hint; when tests/realclients has installed them in its cache, one more run points the
panel there and checks a Node row too."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.gui import real_clients as rc
from streamscope.gui.real_clients import COLUMNS, RealClientsPanel
from streamscope.lint.clients import BY_ID, PYTHON_PINS
from streamscope.realclients import availability, clients_for, node
from streamscope.realclients.rows import AGREES, DIFFERS
from tests.gui.support import wait_until
from tests.gui.test_client_pane import _send, _window

BROKEN = "replay/broken/chat-usage-chunk-without-choices"
NODE_CACHE = Path("~/.cache/streamscope-tests/realclients").expanduser()
MATCH = COLUMNS.index("Match")


def _cell(panel: RealClientsPanel, client: str, column: str) -> str:
    row = [r.client for r in panel.rows].index(client)
    item = panel.table.item(row, COLUMNS.index(column))
    return item.text() if item is not None else ""


def _assert_rows(panel: RealClientsPanel) -> None:
    """The chat clients: openai-python raises on the usage chunk without choices, as
    its lint profile says; every client that is not installed gives its install hint."""
    assert panel.error is None, panel.error
    assert [r.client for r in panel.rows] == [c.id for c in clients_for("openai-chat")]
    assert panel.table.rowCount() == len(panel.rows)
    py = next(r for r in panel.rows if r.client == "openai-python-chat")
    assert py.hint is None and py.agrees is True
    assert py.observed == "error" and "TypeError" in py.error
    assert py.prediction.startswith("error: would fail in openai-python")
    assert _cell(panel, "openai-python-chat", "Match") == AGREES
    assert _cell(panel, "openai-python-chat", "Version") == f"openai {PYTHON_PINS['openai']}"
    item = panel.table.item(0, MATCH)
    assert item is not None
    tip = item.data(Qt.ItemDataRole.ToolTipRole)
    assert "The linter predicts error" in tip and "The client did error" in tip
    for row in panel.rows:
        hint = availability(BY_ID[row.client], panel.data_dir)
        assert row.hint == hint
        if hint is not None:
            assert _cell(panel, row.client, "Match") == f"Not installed: {hint}"
            assert _cell(panel, row.client, "Assembled") == ""
    assert not panel.busy.isVisible() and not panel.cancel_button.isEnabled()
    assert "clients ran in" in panel.status.text()


@pytest.mark.qasync
async def test_run_in_real_clients_from_the_client_pane_and_the_flow_detail() -> None:
    async with _window(mode="passthrough") as window:
        pane = window.client
        await _send(window, "openai-chat", BROKEN)

        # The client pane: the current answer, in its "Real clients" tab.
        pane.run_clients.click()
        panel = pane.real_clients
        assert panel.task is not None
        await asyncio.wait_for(asyncio.shield(panel.task), 20)
        assert pane.view.tabs.currentWidget() is panel
        _assert_rows(panel)
        assert "this answer" in panel.title.text()

        # The flow detail: its client leg (the button's default), then its upstream leg.
        traffic = window.traffic
        await wait_until(lambda: traffic.model.rowCount() == 1)
        window.tabs.setCurrentWidget(traffic)
        detail = traffic.open_flow(traffic.model.flow_id_at(0))
        assert detail.task is not None
        await detail.task
        assert detail.run_clients_button.isEnabled() and detail.real_clients.isHidden()
        detail.run_clients_button.click()
        task = detail.real_clients.task
        assert task is not None
        await asyncio.wait_for(asyncio.shield(task), 20)
        assert detail.real_clients.isVisible() and detail.real_clients.height() >= 150
        _assert_rows(detail.real_clients)
        assert "client leg" in detail.real_clients.title.text()
        assert f"{len(detail.leg('client').raw()):,} bytes" in detail.real_clients.title.text()
        await asyncio.wait_for(detail.run_real_clients("upstream"), 20)
        _assert_rows(detail.real_clients)
        assert "upstream leg" in detail.real_clients.title.text()

        # Node clients, where tests/realclients installed them: a real Node row.
        if node.node_tools() is None or node.installed(NODE_CACHE) is None:
            return
        detail.real_clients.data_dir = NODE_CACHE
        await asyncio.wait_for(detail.run_real_clients("client"), 20)
        _assert_rows(detail.real_clients)
        cherry = next(r for r in detail.real_clients.rows if r.client == "ai-openai-compatible")
        assert cherry.hint is None and cherry.agrees is not None
        assert "@ai-sdk/openai-compatible" in cherry.version
        assert _cell(detail.real_clients, "ai-openai-compatible", "Match") in (AGREES, DIFFERS)


def _leg(protocol: str = "openai-chat") -> Leg:
    frames = [b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n', b"data: [DONE]\n\n"]
    return Leg(protocol, 200, [], frames=[CapturedFrame(f, i) for i, f in enumerate(frames)])


@pytest.mark.qasync
async def test_cancel_failures_and_legs_no_client_speaks_are_said_in_the_panel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    panel = RealClientsPanel()
    try:
        # A protocol no real client speaks.
        rows = await panel.run(_leg("lmstudio"))
        assert rows == [] and panel.error == "No real client speaks lmstudio."
        assert panel.status.text() == panel.error

        # Cancel: the running state goes, the rows say so, nothing is raised at the user.
        started = asyncio.Event()

        async def hang(*_args: object, **_kw: object) -> list[object]:
            started.set()
            await asyncio.sleep(60)
            return []

        monkeypatch.setattr(rc, "run_in_clients", hang)
        task = panel.start(_leg())
        await asyncio.wait_for(started.wait(), 5)
        assert panel.busy.isVisibleTo(panel) and panel.cancel_button.isEnabled()
        assert any(r.pending for r in panel.rows)
        panel.cancel_button.click()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert panel.status.text() == "Cancelled."
        assert not panel.cancel_button.isEnabled()
        assert all(not r.pending for r in panel.rows)

        # A failure (the node process, the socket…): one line in the panel, no traceback.
        async def fail(*_args: object, **_kw: object) -> list[object]:
            raise OSError("cannot bind a loopback socket")

        monkeypatch.setattr(rc, "run_in_clients", fail)
        await panel.run(_leg())
        assert panel.status.text() == "The run failed: OSError: cannot bind a loopback socket"
        assert "Traceback" not in panel.status.text() and not panel.cancel_button.isEnabled()

        # A run that outlasts its bound: timed out.
        panel.timeout = 0.01
        monkeypatch.setattr(rc, "run_in_clients", hang)
        monkeypatch.setattr(RealClientsPanel, "_bound", lambda self: 0.05)
        await panel.run(_leg())
        assert panel.error is not None and "did not finish within" in panel.error
    finally:
        panel.cancel()
        panel.deleteLater()
