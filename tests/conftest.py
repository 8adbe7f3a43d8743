"""Suite-wide setup: Qt renders offscreen (set before anything imports Qt), the data dir
is an empty temporary folder, and tests marked ``qasync`` run on a qasync loop (the GUI's
loop) instead of plain asyncio.

NOTE (STACK-NOTES): ``qtbot.waitSignal`` inside an async test runs a nested Qt loop
that cannot step other asyncio tasks; await signals through asyncio futures instead.
"""

from __future__ import annotations

import asyncio
import gc
import os
import tempfile
from collections.abc import Callable, Mapping
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# The app's data dir (user replays, captures) is a fresh empty folder for the suite:
# a developer's own files must not change what tests see.
os.environ["STREAMSCOPE_DATA_DIR"] = tempfile.mkdtemp(prefix="streamscope-test-data-")


@pytest.fixture(autouse=True)
def _collect_qt_garbage(request: pytest.FixtureRequest) -> Any:
    """After a qasync test, collect its Qt objects on the main thread.

    NOTE: left to the garbage collector, a closed qasync loop's timer objects may be
    collected later in another thread (a proxy serving in a background thread, say) and
    leave a dangling timer in the main thread's Qt dispatcher: pytest-qt's next
    processEvents() then segfaults (seen with gdb in QTimerInfoList::activateTimers).
    """
    yield
    if request.node.get_closest_marker("qasync") is not None:
        gc.collect()


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], Any]]:
    if item.get_closest_marker("qasync") is None:
        return {"asyncio": asyncio.new_event_loop}
    from PySide6.QtWidgets import QApplication

    from streamscope.gui.event_loop import QtEventLoop

    def factory() -> Any:  # the window's loop, as run_window() makes it
        return QtEventLoop(QApplication.instance() or QApplication([]))

    return {"qasync": factory}
