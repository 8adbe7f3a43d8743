"""The window's status bar: the embedded proxy's control — its URL and local key with
copy buttons, start/stop, and when the port is taken, the reason and a port box to try
another; where its pool and flows live when that is a shared database.

**Copy URL** copies the URL exactly as the bar shows it, the proxy's root: what Cherry
Studio's API host takes (every provider type adds its own ``/v1``, ``/v1beta`` or
``/openai``, client/cherry.py); beside it the bar says which clients want ``/v1`` added
(:func:`v1_hint`, which the README quotes). Attached to a proxy elsewhere, the bar leads
with that proxy (the Traffic and Account pool tabs show it), then this machine's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSpinBox, QWidget

from streamscope.client import sdk_base_url
from streamscope.client.cherry import api_host
from streamscope.gui.proxy_control import ProxyControl
from streamscope.redact import mask
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
    """The status bar's proxy control (see the module docstring), on the GUI thread; it
    follows ``control`` and its shared database's state."""

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


__all__ = ["ProxyBar", "v1_hint"]
