"""The main window: its panes in tabs, and a status bar that is the embedded proxy's
control (:class:`~streamscope.gui.proxy_bar.ProxyBar`); its menus, the dialogs they open,
attaching to a proxy elsewhere, and its state across restarts.

NOTE (docs/stack-notes.md): the window runs on a qasync loop, so async work (starting the
proxy) is started with ``asyncio.ensure_future`` from slots and never blocks Qt; Qt
signals are connected to plain methods that schedule it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QMainWindow,
    QTabWidget,
)

from streamscope.capture.flow import Leg
from streamscope.client.worker import Analyser, shared_analyser
from streamscope.config import default_data_dir
from streamscope.gui.attach_dialog import AttachDialog
from streamscope.gui.check_upstream import CheckUpstreamView
from streamscope.gui.check_upstream_tab import close_tabs, open_tab
from streamscope.gui.client_pane import ClientPane
from streamscope.gui.connect_dialog import ConnectDialog
from streamscope.gui.pool_panel import PoolPanel
from streamscope.gui.proxy_bar import ProxyBar
from streamscope.gui.proxy_control import ProxyControl
from streamscope.gui.refusals import RefusalCounter, RefusalFeed
from streamscope.gui.settings import SettingsDialog
from streamscope.gui.theme import MODES, Mode, Theme
from streamscope.gui.traffic import TrafficView
from streamscope.net.errors import NetError
from streamscope.private import private_dir, private_file
from streamscope.remote import RemoteError, RemotePool, RemoteStore


def settings_file() -> Path:
    """Where the window keeps its state (geometry, splitters, last request, theme): a
    file in the data dir, so a test or a second profile never reads the user's own."""
    return default_data_dir() / "window.ini"


class MainWindow(QMainWindow):
    """The application's window: the Client, Traffic and Account pool tabs, the status
    bar (the proxy's :class:`ProxyBar` and the refused-requests counter) and the File
    and View menus (see the module docstring).

    It owns the panes (:attr:`client`, :attr:`traffic`, :attr:`pool`), the refusal feed
    and the analyser they share, and keeps its geometry, splitters, tab, theme and the
    client pane's request in :attr:`state_file` across restarts. It routes a flow's
    "Replay into client pane" to the client pane, and when the proxy is rebuilt on new
    settings (``control.replaced``) the panes follow the new core.

    :func:`~streamscope.gui.app.run_window` makes it and awaits :meth:`run`: the proxy
    starts, the window shows, and once it is closed the panes stop and the proxy
    closes. Everything runs on the GUI thread's qasync loop: slots schedule async work
    and never wait for it (the module's NOTE)."""

    def __init__(
        self,
        control: ProxyControl,
        theme: Theme | None = None,
        state_file: Path | None = None,
        analyser: Analyser | None = None,
    ) -> None:
        """``state_file``: where the window's state is kept (default :func:`settings_file`).
        ``analyser``: where a stream's end is timed and linted and a flow's verdict
        computed (default: the process-wide worker process, :func:`shared_analyser`)."""
        super().__init__()
        self.control = control
        self.theme = theme
        self.state_file = state_file or settings_file()
        self.setWindowTitle("StreamScope")
        self.resize(1360, 860)
        self.tabs = QTabWidget()
        self.setCentralWidget(self.tabs)
        self.analyser = analyser if analyser is not None else shared_analyser()
        self.client = ClientPane(control, self.analyser)
        # Requests the proxy refused (never flows): counted in the status bar, listed
        # under the traffic; the feed follows the app's log (a new app: a new log).
        self.refusals = RefusalFeed(self)
        self.refusals.follow(control.core.refusals)
        self.traffic = TrafficView(control.core.flows, self.analyser, self.refusals)
        self.pool = PoolPanel(control.core.pool)
        self.tabs.addTab(self.client, "Client")
        self.tabs.addTab(self.traffic, "Traffic")
        self.tabs.addTab(self.pool, "Account pool")
        self.traffic.replay_requested.connect(self.replay_into_client)
        control.replaced.connect(self._app_replaced)
        self.proxy_bar = ProxyBar(control)
        self.statusBar().addPermanentWidget(self.proxy_bar, 1)
        self.refused = RefusalCounter(self.refusals)
        self.refused.activated.connect(self.show_refusals)
        self.statusBar().addPermanentWidget(self.refused)
        self._menus()
        self._closed: asyncio.Future[None] | None = None
        self.remote: RemoteStore | None = None  # the proxy elsewhere the traffic shows
        self._unfollow_feed: Callable[[], None] = lambda: None
        self.restore_state()

    def _menus(self) -> None:
        file = self.menuBar().addMenu("&File")
        self.settings_action = QAction("&Settings…", self, shortcut=QKeySequence("Ctrl+,"))
        self.settings_action.triggered.connect(self.open_settings)
        self.connect_action = QAction("&Connect Cherry Studio…", self)
        self.connect_action.triggered.connect(self.open_connect)
        self.attach_action = QAction("&Attach to a proxy…", self)
        self.attach_action.triggered.connect(self.open_attach)
        self.detach_action = QAction("&Detach (this machine's proxy)", self, enabled=False)
        self.detach_action.triggered.connect(lambda: asyncio.ensure_future(self.detach()))
        file.addAction(self.settings_action)
        file.addAction(self.connect_action)
        # the audit's battery, live, in a closable tab
        self.check_action = QAction("Check an &upstream…", self)
        self.check_action.triggered.connect(self.open_check_upstream)
        file.addAction(self.check_action)
        file.addAction(self.attach_action)
        file.addAction(self.detach_action)
        file.addSeparator()
        self.quit_action = QAction("&Quit", self)
        self.quit_action.setShortcuts(QKeySequence.StandardKey.Quit)  # (every platform's)
        self.quit_action.triggered.connect(self.close)
        file.addAction(self.quit_action)
        view = self.menuBar().addMenu("&View")
        self.theme_actions = QActionGroup(self)
        for mode in MODES:
            action = QAction(f"{mode.capitalize()} theme", self, checkable=True)
            action.setData(mode)
            action.setChecked(self.theme is not None and self.theme.mode == mode)
            action.triggered.connect(lambda _=False, m=mode: self.set_theme(m))
            self.theme_actions.addAction(action)
            view.addAction(action)
        self.theme_actions.setEnabled(self.theme is not None)

    def open_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(self.control, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()  # never exec(): the qasync loop keeps running
        return dialog

    def open_connect(self) -> ConnectDialog:
        dialog = ConnectDialog(self.control, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def open_check_upstream(self) -> CheckUpstreamView:
        """Check an upstream…: a tab that audits a relay."""
        view = CheckUpstreamView(self.control, self.analyser)
        view.replay_requested.connect(self.replay_into_client)
        open_tab(self.tabs, view)
        return view

    def open_attach(self) -> AttachDialog:
        dialog = AttachDialog(self.attach, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    async def attach(self, url: str, admin_key: str) -> str | None:
        """Show the traffic and the account pool of the proxy at ``url`` (kept current
        by its live feed) instead of this machine's; why it cannot, else None. The client
        pane stays on this machine's proxy."""
        remote = RemoteStore(url, admin_key)
        try:
            await asyncio.to_thread(remote.summaries, 0, 1)  # the URL and the key work
            pool = await asyncio.to_thread(RemotePool.read, remote)
        except (RemoteError, NetError, ValueError) as exc:
            await remote.aclose()
            return f"cannot attach to {url}: {exc}"
        await self.detach()
        self.proxy_bar.set_attached(remote.url)
        self._unfollow_feed = remote.feed.status.subscribe(
            self.proxy_bar.set_feed_status, asyncio.get_running_loop()
        )
        await remote.start()
        self.remote = remote
        await self.traffic.follow(remote)
        self.pool.follow(pool, remote.url)
        self._name_pool_tab()
        self.setWindowTitle(f"StreamScope — traffic of {remote.url}")
        self.traffic.show_source(
            f"The traffic of {remote.url} (attached: File → Detach shows this machine's again)"
        )
        self.detach_action.setEnabled(True)
        return None

    async def detach(self) -> None:
        """Back to this machine's proxy's traffic."""
        remote, self.remote = self.remote, None
        if remote is None:
            return
        self._unfollow_feed()
        await self.traffic.follow(self.control.core.flows)
        self.pool.follow(self.control.core.pool)
        self._name_pool_tab()
        self.proxy_bar.set_attached(None)
        await remote.aclose()
        self.setWindowTitle("StreamScope")
        self.traffic.show_source(None)
        self.detach_action.setEnabled(False)

    def _name_pool_tab(self) -> None:
        """The Account pool tab names a proxy elsewhere whose pool it shows."""
        shared = self.pool.shared
        title = "Account pool" if shared is None else f"Account pool — {shared}"
        self.tabs.setTabText(self.tabs.indexOf(self.pool), title)

    def _app_replaced(self) -> None:
        """The proxy was rebuilt on new settings: the panes follow the new app (those
        showing a proxy elsewhere, once detached)."""
        self.refusals.follow(self.control.core.refusals)
        if self.remote is None:
            self.pool.follow(self.control.core.pool)
            asyncio.ensure_future(self.traffic.follow(self.control.core.flows))

    def show_refusals(self) -> None:
        """The refused requests, in the Traffic tab (the status bar's counter clicked)."""
        self.tabs.setCurrentWidget(self.traffic)
        self.traffic.tabs.setCurrentIndex(0)
        self.traffic.refusals.set_open(True)

    def replay_into_client(self, leg: Leg, request_body: dict[str, Any] | None) -> None:
        """A captured leg, replayed in the client pane (shown at once)."""
        self.tabs.setCurrentWidget(self.client)
        self.client.replay(leg, request_body)

    def set_theme(self, mode: Mode) -> None:
        if self.theme is not None:
            self.theme.apply(mode)
        for action in self.theme_actions.actions():
            action.setChecked(action.data() == mode)

    # -- state across restarts ---------------------------------------------------------

    def _settings(self) -> QSettings:
        # 0600 in a 0700 dir (it keeps the last request): Qt's rewrite keeps the mode
        private_dir(self.state_file.parent)
        private_file(self.state_file)
        return QSettings(str(self.state_file), QSettings.Format.IniFormat)

    def save_state(self) -> None:
        s = self._settings()
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/tab", self.tabs.currentIndex())
        s.setValue("client/splitter", self.client.splitter.saveState())
        s.setValue("client/leg", self.client.view.splitter.saveState())
        s.setValue("client/request", json.dumps(self.client.state()))
        if self.theme is not None:
            s.setValue("window/theme", self.theme.mode)
        s.sync()
        private_file(self.state_file)

    def restore_state(self) -> None:
        s = self._settings()
        geometry = s.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        tab = s.value("window/tab")
        if tab is not None and str(tab).isdigit():
            self.tabs.setCurrentIndex(int(str(tab)))
        for key, splitter in (
            ("client/splitter", self.client.splitter),
            ("client/leg", self.client.view.splitter),
        ):
            value = s.value(key)
            if isinstance(value, QByteArray) and not value.isEmpty():
                splitter.restoreState(value)
        request = s.value("client/request")
        if isinstance(request, str):
            try:
                state = json.loads(request)
            except ValueError:
                state = None
            if isinstance(state, dict):
                self.client.restore(state)
        theme = s.value("window/theme")
        if self.theme is not None and theme in MODES:
            self.set_theme(theme)

    # -- life --------------------------------------------------------------------------

    async def run(self) -> None:
        """Start the proxy, show the window, and return when it is closed."""
        self._closed = asyncio.get_running_loop().create_future()
        self.analyser.warm()  # the worker imports the core while the proxy starts
        await self.control.start()
        await self.traffic.start()
        self.show()
        await self._closed
        close_tabs(self.tabs)  # their audits stop
        self.client.close_pane()
        await self.detach()
        self.traffic.stop()
        self.refusals.unfollow()
        self.pool.stop()
        await self.control.close()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt's name
        if self._closed is not None and not self._closed.done():
            self.save_state()
            self._closed.set_result(None)
        super().closeEvent(event)


__all__ = ["MainWindow", "settings_file"]
