"""Starting the desktop app: a QApplication, a qasync loop, the embedded proxy, the window.

Everything the proxy does runs on the one qasync loop (the proxy is a task on it); the
config, its generated key, the pool's state file and the flows' database are the same
as for ``streamscope serve``. Once the proxy listens, one line on stdout says where (a
script or a test that started the window reads it). SIGINT and SIGTERM close the window
as its close button does: the proxy stops and the state is saved.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from streamscope.config import Config, default_data_dir, pool_state_path
from streamscope.gui.event_loop import QtEventLoop
from streamscope.gui.proxy_control import ProxyControl
from streamscope.gui.theme import Theme
from streamscope.gui.window import MainWindow
from streamscope.proxy.server import tune_gc
from streamscope.resources import resource_path

SWITCH_INTERVAL = 0.0002
"""The GIL's time slice (s) while the window runs. Python's 5 ms default lets a worker
thread (the end-of-stream lint and timing, a flow's verdict) hold the GIL for 5 ms at a
time while the GUI thread paints a table, making ~300 waits of one slice each: stalls of
0.5-1 s at the end of a 20,000-frame stream, down to ~0.1 s with 0.2 ms
(tests/bench/bench_window.py)."""


class Announcer:
    """Says on stdout where the proxy listens, each time it starts (a restart on another
    port, new settings); the key generated at this first start is announced once, with
    the first line, or with the first failure (a taken port: the key is saved all the
    same, and the user needs it once another port is chosen); a later start
    (Settings → Save) runs the key that already exists."""

    def __init__(self, control: ProxyControl, config_path: Path, new_key: str | None) -> None:
        self.control = control
        self.config_path = config_path
        self.new_key = new_key

    def __call__(self, state: str) -> None:
        url = self.control.url
        if state == "stopped" or (state == "running" and not url):
            return
        if state == "running":
            print(f"StreamScope window: proxy on {url}  (config: {self.config_path})", flush=True)
        key, self.new_key = self.new_key, None
        if key:
            print(f"Generated a local API key (saved in the config): {key}", flush=True)


def run_window(config: Config, config_path: Path, new_key: str | None = None) -> int:
    """Show the window until it is closed; the exit status."""
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    app.setApplicationName("StreamScope")
    app.setDesktopFileName("streamscope")
    icon = resource_path("icons/streamscope.svg")
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    # The window's run() ends when it closes and the proxy is shut down cleanly; Qt
    # quitting on the last window would stop the loop under that shutdown.
    app.setQuitOnLastWindowClosed(False)
    sys.setswitchinterval(SWITCH_INTERVAL)
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    control = ProxyControl(
        config,
        state_path=pool_state_path(config_path),
        capture_path=default_data_dir() / "flows.sqlite3",
        config_path=config_path,
    )
    window = MainWindow(control, theme=Theme(app))

    control.changed.connect(Announcer(control, config_path, new_key))
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: QTimer.singleShot(0, window.close))
    # Python runs signal handlers only between bytecodes: a timer lets it in while Qt
    # waits for events.
    wake = QTimer()
    wake.start(200)
    wake.timeout.connect(lambda: None)
    tune_gc()
    with loop:
        loop.run_until_complete(window.run())
    wake.stop()
    return 0


__all__ = ["Announcer", "run_window"]
