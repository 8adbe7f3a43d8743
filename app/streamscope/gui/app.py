"""Starting the desktop app: a QApplication, a qasync loop, the embedded proxy, the window.

Everything the proxy does runs on the one qasync loop (the proxy is a task on it); the
config, its generated key, the pool's state file and the flows' database are the same
as for ``streamscope serve``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from PySide6.QtWidgets import QApplication

from streamscope.config import Config, default_data_dir, pool_state_path
from streamscope.gui.proxy_control import ProxyControl
from streamscope.gui.window import MainWindow
from streamscope.proxy.server import tune_gc


def run_window(config: Config, config_path: Path) -> int:
    """Show the window until it is closed; the exit status."""
    import qasync

    app = QApplication.instance() or QApplication(sys.argv)
    # The window's run() ends when it closes and the proxy is shut down cleanly; Qt
    # quitting on the last window would stop the loop under that shutdown.
    app.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    control = ProxyControl(
        config,
        state_path=pool_state_path(config_path),
        capture_path=default_data_dir() / "flows.sqlite3",
    )
    window = MainWindow(control)
    tune_gc()
    with loop:
        loop.run_until_complete(window.run())
    return 0


__all__ = ["run_window"]
