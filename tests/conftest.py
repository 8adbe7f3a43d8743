"""Suite-wide setup: Qt renders offscreen (set before anything imports Qt), and tests
marked ``qasync`` run on a qasync loop (the GUI's loop) instead of plain asyncio.

NOTE (STACK-NOTES): ``qtbot.waitSignal`` inside an async test runs a nested Qt loop
that cannot step other asyncio tasks; await signals through asyncio futures instead.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], Any]]:
    if item.get_closest_marker("qasync") is None:
        return {"asyncio": asyncio.new_event_loop}
    import qasync
    from PySide6.QtWidgets import QApplication

    def factory() -> Any:
        return qasync.QEventLoop(QApplication.instance() or QApplication([]))

    return {"qasync": factory}
