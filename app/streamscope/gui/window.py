"""The main window: its panes in tabs, and a status bar that is the embedded proxy's
control — its URL and local key with copy buttons, start/stop, and when the port is
taken, the reason and a port box to try another.

**Copy URL** copies the URL exactly as the bar shows it, the proxy's root: what Cherry
Studio's API host takes (every provider type adds its own ``/v1``, ``/v1beta`` or
``/openai``, client/cherry.py); beside it the bar says which clients want ``/v1`` added
(:func:`v1_hint`, which the README quotes). Attached to a proxy elsewhere, the bar leads
with that proxy (the Traffic and Account pool tabs show it), then this machine's.

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
from PySide6.QtGui import QAction, QActionGroup, QCloseEvent, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QWidget,
)

from streamscope.capture.flow import Leg
from streamscope.client import sdk_base_url
from streamscope.client.cherry import api_host
from streamscope.client.worker import Analyser, shared_analyser
from streamscope.config import default_data_dir
from streamscope.gui.attach_dialog import AttachDialog
from streamscope.gui.check_upstream import CheckUpstreamView, close_tabs, open_tab
from streamscope.gui.client_pane import ClientPane
from streamscope.gui.connect_dialog import ConnectDialog
from streamscope.gui.pool_panel import PoolPanel
from streamscope.gui.proxy_control import ProxyControl
from streamscope.gui.refusals import RefusalCounter, RefusalFeed
from streamscope.gui.settings import SettingsDialog
from streamscope.gui.theme import MODES, Mode, Theme
from streamscope.gui.traffic import TrafficView
from streamscope.net.errors import NetError
from streamscope.private import private_dir, private_file
from streamscope.redact import mask
from streamscope.remote import RemoteError, RemotePool, RemoteStore
from streamscope.remote.store import unencrypted


def v1_hint(url: str) -> str:
    """Which clients take ``url`` (the proxy's root, as the bar shows it) as it is, and
    which want ``/v1`` added: from Cherry Studio's API host (client/cherry.py) and the
    SDKs' base URLs (the codecs'), so the bar never says what the clients do not do."""
    as_shown = ["Cherry Studio"] if api_host(url) == url else []
    with_v1 = []
    for sdks, protocol in (("anthropic SDKs", "anthropic"), ("openai SDKs", "openai-chat")):
        base = sdk_base_url(url, protocol)
        if base == url:
            as_shown.append(sdks)
        elif base == url + "/v1":
            with_v1.append(sdks)
    return f"{', '.join(as_shown)}: as shown · {', '.join(with_v1)}: add /v1"


class ProxyBar(QWidget):
    """The status bar's proxy control (see the module docstring)."""

    def __init__(self, control: ProxyControl) -> None:
        super().__init__()
        self.control = control
        self.attached: str | None = None  # the proxy elsewhere the window shows, if any
        self.feed_status = ""  # its live feed's state (RemoteFlows.status)
        self.state = QLabel()
        self.state.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hint = QLabel()  # which clients want /v1 (v1_hint)
        self.hint.setToolTip(
            "Copy URL copies the URL as shown. Cherry Studio adds /v1 (/v1beta for "
            "Gemini, /openai for Azure) to its API host itself: a host pasted with /v1 "
            "calls /v1/v1/… and gets a 404. The openai SDKs append only "
            "/chat/completions or /responses, so their base_url ends in /v1."
        )
        self.copy_url = QPushButton("Copy URL")
        self.copy_key = QPushButton("Copy key")
        self.toggle = QPushButton()
        self.port = QSpinBox()
        self.port.setRange(0, 65535)
        self.port.setToolTip("0: any free port")
        self.use_port = QPushButton("Use this port")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        widgets: tuple[QWidget, ...] = (self.state, self.copy_url, self.hint, self.copy_key)
        for w in (*widgets, self.port, self.use_port, self.toggle):
            layout.addWidget(w)
        self.copy_url.clicked.connect(self._copy_url)
        self.copy_key.clicked.connect(self._copy_key)
        self.toggle.clicked.connect(self._toggle)
        self.use_port.clicked.connect(self._use_port)
        control.changed.connect(self.refresh)
        control.replaced.connect(self._follow_database)
        self._unfollow: Callable[[], None] | None = None
        self._follow_database()

    def _follow_database(self) -> None:
        """Say the shared database's state as it changes (its thread tells; the change is
        shown on this loop)."""
        if self._unfollow is not None:
            self._unfollow()
            self._unfollow = None
        database = self.control.core.database
        if database is not None:
            loop = asyncio.get_event_loop()
            self._unfollow = database.state.subscribe(lambda _up: self.refresh(), loop)
        self.refresh()

    def storage_text(self) -> str:
        """Where the proxy's pool and flows live, when it is not this machine's files."""
        database = self.control.core.database
        if database is None:
            return ""
        where = f"shared on PostgreSQL ({database.where})"
        return where if database.up else f"{where}, unreachable: requests go on"

    def set_attached(self, url: str | None) -> None:
        """The window shows the proxy at ``url`` now (None: this machine's again)."""
        self.attached = url
        self.feed_status = "connecting" if url else ""
        self.refresh()

    def set_feed_status(self, status: str) -> None:
        """The attached proxy's live feed: "live", "retrying: why", or why it ended."""
        self.feed_status = status
        self.refresh()

    def attached_text(self) -> str:
        """The attached proxy as the bar names it: plain HTTP across a network said as
        unencrypted, and the live feed's state (never "live" once it has dropped)."""
        assert self.attached is not None
        plain = " (unencrypted HTTP)" if unencrypted(self.attached) else ""
        return f"Attached to {self.attached}{plain}, feed {self.feed_status}"

    def refresh(self, _state: str = "") -> None:
        c = self.control
        storage = self.storage_text()
        if c.running:
            text = f"Proxy on {c.url}   key {mask(c.key)}"
            if self.attached is not None:
                # What Traffic and Account pool show first; this machine's proxy is
                # the Client tab's (and what Copy URL copies).
                text = (
                    f"{self.attached_text()}   ·   local proxy {c.url} (Client tab)"
                    f"   key {mask(c.key)}"
                )
            self.state.setText(f"{text}   {storage}" if storage else text)
        elif c.error:
            self.state.setText(f"Proxy not running — {c.error}")
        else:
            self.state.setText("Proxy stopped")
        self.toggle.setText("Stop" if c.running else "Start")
        self.copy_url.setEnabled(c.running)
        self.hint.setText(v1_hint(c.url) if c.url else "")
        self.hint.setVisible(c.running)
        taken = not c.running and c.error is not None
        self.port.setVisible(taken)
        self.use_port.setVisible(taken)
        if taken:
            # Offer a port that is free now, never the taken one again.
            self.port.setValue(c.suggested_port or 0)
            self.port.setToolTip(
                f"Port {c.config.proxy.port} is taken; {c.suggested_port} is free"
                if c.suggested_port
                else "0: any free port"
            )

    def _copy_url(self) -> None:
        if self.control.url:  # exactly as shown (v1_hint says who wants /v1 added)
            QGuiApplication.clipboard().setText(self.control.url)

    def _copy_key(self) -> None:
        QGuiApplication.clipboard().setText(self.control.key)

    def _toggle(self) -> None:
        if self.control.running:
            asyncio.ensure_future(self.control.stop())
        else:
            self.start()

    def start(self) -> None:
        """Start the proxy: on its port, or when that was taken, on the port offered."""
        if self.control.running:
            return
        if self.control.error is not None and not self.port.isHidden():
            self._use_port()
        else:
            asyncio.ensure_future(self.control.start())

    def _use_port(self) -> None:
        asyncio.ensure_future(self.control.start(self.port.value()))


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


__all__ = ["MainWindow", "ProxyBar", "settings_file"]
