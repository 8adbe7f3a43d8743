"""GUI tests share one rule for qasync: a window and its proxy live inside the test body.

NOTE: pytest-qt calls ``processEvents()`` between a fixture's setup and the test call,
while the qasync loop is not running. A task left running by an async fixture (the
proxy's server loop sleeping 0.1 s, say) is then stepped outside the loop and dies with
"no running event loop", leaving its socket open. Seen on a loaded CI machine only.
So windows are opened with ``async with open_window(...)`` in the test, never in a
fixture.
"""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication


@pytest.fixture(autouse=True)
def _keep_running_when_windows_close(qapp: QApplication) -> None:
    # As run_window() sets it: the window's run() ends on close, the loop must not stop.
    qapp.setQuitOnLastWindowClosed(False)
