"""The agent CLIs in the window's "Run in real clients" table (app/streamscope/gui/
real_clients.py): without them installed, their rows say how to install them; with Claude
Code installed (the test cache of tests/clients), an Anthropic leg runs in it too and its
row shows what it assembled, its version and ✓ beside the linter's prediction for it."""

from __future__ import annotations

import asyncio

import pytest

from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.gui.real_clients import COLUMNS, RealClientsPanel
from streamscope.lint.clients import AGENT_INSTALL, AGENT_PINS, NODE_MISSING, clients_for
from streamscope.realclients.node import node_tools
from streamscope.realclients.rows import AGREES
from tests.clients.agent_support import DATA_DIR, installed
from tests.support import FIXTURES, load

TEXT = load(FIXTURES / "anthropic" / "ant-py_basic-text.sse").frames


def _leg() -> Leg:
    frames = [CapturedFrame(f.raw, i) for i, f in enumerate(TEXT)]
    return Leg("anthropic", 200, [("content-type", "text/event-stream")], frames=frames)


def _cell(panel: RealClientsPanel, client: str, column: str) -> str:
    row = [r.client for r in panel.rows].index(client)
    item = panel.table.item(row, COLUMNS.index(column))
    return item.text() if item is not None else ""


@pytest.mark.qasync
async def test_an_agent_cli_not_installed_says_how_to_install_it() -> None:
    panel = RealClientsPanel()  # the suite's data dir: empty
    try:
        await asyncio.wait_for(panel.run(_leg()), 60)
        assert [r.client for r in panel.rows] == [c.id for c in clients_for("anthropic")]
        hint = AGENT_INSTALL if node_tools() else NODE_MISSING
        assert _cell(panel, "claude-code", "Match") == f"Not installed: {hint}"
        assert _cell(panel, "claude-code", "Client") == "Claude Code (claude -p)"
        assert hint in panel.status.text()
    finally:
        panel.deleteLater()


@pytest.fixture
def claude_code() -> None:
    """Claude Code installed (before the test's qasync loop runs: the install has its own)."""
    installed("claude-code")


@pytest.mark.qasync
@pytest.mark.usefixtures("claude_code")
async def test_an_installed_agent_cli_gets_its_row_beside_the_linter() -> None:
    panel = RealClientsPanel(data_dir=DATA_DIR)
    try:
        await asyncio.wait_for(panel.run(_leg()), 90)
        assert panel.error is None, panel.error
        row = next(r for r in panel.rows if r.client == "claude-code")
        assert row.hint is None and row.agrees is True and row.observed == "ok"
        assert "ok: nothing in this stream is known to break Claude Code" in row.prediction
        assert _cell(panel, "claude-code", "Match") == AGREES
        assert _cell(panel, "claude-code", "Assembled").startswith('"Hello there!"')
        pin = AGENT_PINS["@anthropic-ai/claude-code"]
        assert _cell(panel, "claude-code", "Version") == f"@anthropic-ai/claude-code {pin}"
        assert "clients ran in" in panel.status.text()
    finally:
        panel.deleteLater()
