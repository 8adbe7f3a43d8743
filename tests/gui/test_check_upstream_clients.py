"""Check an upstream… with the real clients (slow: one test): the window audits its own
proxy relaying a recording whose usage chunk has no ``choices``; the rows fill from the
linter first, then the cells change when openai-python and the Node clients have run
(each cell then says it ran), and the summary lines say what breaks them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from streamscope.gui.check_upstream import CheckUpstreamView
from streamscope.gui.models.common import TOOLTIP
from streamscope.lint.clients import clients_for
from tests.gui.support import open_window, wait_until
from tests.gui.test_check_upstream import BROKEN, PROBES, passthrough
from tests.realclients.support import node_data_dir

SDKS = [c.id for c in clients_for("openai-chat") if c.runtime != "agent"]  # CLIs: slow


@pytest.fixture(scope="module")
def data_dir() -> Path:
    found, why = node_data_dir()  # (installs them once: before the window's loop runs)
    if found is None:
        pytest.skip(why or "no node")
    return found


@pytest.mark.qasync
async def test_the_cells_change_when_the_real_clients_have_run(data_dir: Path) -> None:
    async with open_window(passthrough()) as window:  # type: ignore[arg-type]
        window.check_action.trigger()
        view = window.tabs.currentWidget()
        assert isinstance(view, CheckUpstreamView)
        view.choose_source("proxy")
        view.model.setCurrentText(BROKEN)
        view.clients, view.data_dir = SDKS, data_dir
        assert view.run_clients.isChecked()  # the window's default
        task = view.start()
        assert task is not None
        grid = view.grid
        # every answer in, judged by the linter, before any client has run
        await wait_until(lambda: grid.filled() == PROBES, 60)
        assert not grid.ran and view.running
        usage = grid.row_of("usage")
        assert usage is not None
        predicted = str(grid.data(grid.index(usage, 2), TOOLTIP))
        assert predicted.endswith("the linter's prediction for this client")
        assert "real clients" in view.status.text()
        await asyncio.wait_for(task, 120)
        assert "usage" in grid.ran and view.audit is not None
        report = view.audit.report
        assert [c.id for c in report.clients] == SDKS and all(c.version for c in report.clients)
        for column in range(2, 2 + len(report.clients)):
            tip = str(grid.data(grid.index(usage, column), TOOLTIP))
            assert tip.endswith("the real client ran on the answer"), tip
        python = str(grid.data(grid.index(usage, 2)))
        assert python == "✗ breaks"  # openai-python raises at the chunk without choices
        assert view.summary.text().splitlines() == report.summary_lines()
        assert report.client_summary(report.clients[0]) in view.summary.text()
