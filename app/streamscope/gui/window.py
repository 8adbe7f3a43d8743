"""The main window: its panes in tabs, and a status bar that is the embedded proxy's
control — its URL and local key with copy buttons, start/stop, and when the port is
taken, the reason and a port box to try another.

NOTE (STACK-NOTES): the window runs on a qasync loop, so async work (starting the
proxy) is started with ``asyncio.ensure_future`` from slots and never blocks Qt; Qt
signals are connected to plain methods that schedule it.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent, QGuiApplication
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QWidget,
)

from streamscope.config import mask
from streamscope.gui.client_pane import ClientPane
from streamscope.gui.pool_panel import PoolPanel
from streamscope.gui.proxy_control import ProxyControl
from streamscope.gui.traffic import TrafficView


class ProxyBar(QWidget):
    """The status bar's proxy control."""

    def __init__(self, control: ProxyControl) -> None:
        super().__init__()
        self.control = control
        self.state = QLabel()
        self.state.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.copy_url = QPushButton("Copy URL")
        self.copy_key = QPushButton("Copy key")
        self.toggle = QPushButton()
        self.port = QSpinBox()
        self.port.setRange(0, 65535)
        self.port.setToolTip("0: any free port")
        self.use_port = QPushButton("Use this port")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for w in (self.state, self.copy_url, self.copy_key, self.port, self.use_port, self.toggle):
            layout.addWidget(w)
        self.copy_url.clicked.connect(self._copy_url)
        self.copy_key.clicked.connect(self._copy_key)
        self.toggle.clicked.connect(self._toggle)
        self.use_port.clicked.connect(self._use_port)
        control.changed.connect(self.refresh)
        self.refresh()

    def refresh(self, _state: str = "") -> None:
        c = self.control
        if c.running:
            self.state.setText(f"Proxy on {c.url}   key {mask(c.key)}")
        elif c.error:
            self.state.setText(f"Proxy not running — {c.error}")
        else:
            self.state.setText("Proxy stopped")
        self.toggle.setText("Stop" if c.running else "Start")
        self.copy_url.setEnabled(c.running)
        taken = not c.running and c.error is not None
        self.port.setVisible(taken)
        self.use_port.setVisible(taken)
        if taken:
            self.port.setValue(c.config.proxy.port)

    def _copy_url(self) -> None:
        if self.control.url:
            QGuiApplication.clipboard().setText(self.control.url + "/v1")

    def _copy_key(self) -> None:
        QGuiApplication.clipboard().setText(self.control.key)

    def _toggle(self) -> None:
        if self.control.running:
            asyncio.ensure_future(self.control.stop())
        else:
            asyncio.ensure_future(self.control.start())

    def _use_port(self) -> None:
        asyncio.ensure_future(self.control.start(self.port.value()))


class MainWindow(QMainWindow):
    def __init__(self, control: ProxyControl) -> None:
        super().__init__()
        self.control = control
        self.setWindowTitle("StreamScope")
        self.resize(1280, 820)
        self.tabs = QTabWidget()
        self.setCentralWidget(self.tabs)
        self.client = ClientPane(control)
        self.traffic = TrafficView(control.app.flows)
        self.pool = PoolPanel(control.app.pool)
        self.tabs.addTab(self.client, "Client")
        self.tabs.addTab(self.traffic, "Traffic")
        self.tabs.addTab(self.pool, "Account pool")
        self.proxy_bar = ProxyBar(control)
        self.statusBar().addPermanentWidget(self.proxy_bar, 1)
        self._closed: asyncio.Future[None] | None = None

    async def run(self) -> None:
        """Start the proxy, show the window, and return when it is closed."""
        self._closed = asyncio.get_running_loop().create_future()
        await self.control.start()
        await self.traffic.start()
        self.show()
        await self._closed
        self.client.close_pane()
        self.traffic.stop()
        self.pool.stop()
        await self.control.close()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        if self._closed is not None and not self._closed.done():
            self._closed.set_result(None)
        super().closeEvent(event)


__all__ = ["MainWindow", "ProxyBar"]
