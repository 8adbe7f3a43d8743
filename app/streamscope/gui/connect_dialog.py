"""The "Connect Cherry Studio" helper: what to type into a client to use the running
proxy — for each of Cherry Studio's provider types (:mod:`streamscope.client.cherry`,
the values the client tests drive Cherry Studio's provider layer with) its API host, and
Azure OpenAI's API version; the key; a model; and the ``openai`` and ``anthropic`` SDKs'
``base_url`` — each value with a Copy button.

The key is shown masked; its Copy button copies the real key. The values follow the
proxy: it is read again whenever the control reports a change (started, stopped,
moved to another port).
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from streamscope.client import sdk_base_url
from streamscope.client.cherry import MODEL, TYPES
from streamscope.gui.proxy_control import ProxyControl
from streamscope.redact import mask


@dataclass(frozen=True)
class Row:
    """One line of the helper: ``label`` says where the value goes."""

    name: str
    label: str


# Cherry Studio: Settings → Model Provider → Add (or a built-in provider's settings);
# the API host has no path (Cherry Studio adds /v1, /v1beta or /openai by type). A
# provider type's row is keyed by its ai-core provider id, an Azure API version's by
# "<id>:version"; the SDKs' rows serve the Python and the Node SDK alike.
ROWS = (
    *(
        row
        for t in TYPES
        for row in (
            Row(t.id, f"Cherry Studio, <b>{t.name}</b> — API host"),
            *([Row(f"{t.id}:version", "… and its API version")] if t.api_version else []),
        )
    ),
    Row("key", "API key (any provider type, and the SDKs' <code>api_key</code>)"),
    Row("model", "Model (or <code>upstream/model</code>, as /v1/models lists them)"),
    Row("openai-sdks", "<code>openai</code> SDKs: <code>OpenAI(base_url=…)</code>"),
    Row("anthropic-sdks", "<code>anthropic</code> SDKs: <code>Anthropic(base_url=…)</code>"),
)
_VERSIONS = {f"{t.id}:version": t.api_version for t in TYPES if t.api_version}


class ConnectDialog(QDialog):
    """``values`` (label widgets) and ``copy`` (buttons) are keyed by :data:`ROWS` name."""

    def __init__(self, control: ProxyControl, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Connect Cherry Studio")
        self.control = control
        self.state = QLabel()
        self.state.setWordWrap(True)
        self.values: dict[str, QLabel] = {}
        self.copy: dict[str, QPushButton] = {}
        grid = QGridLayout()
        for i, row in enumerate(ROWS):
            grid.addWidget(QLabel(row.label), i, 0)
            value = QLabel()
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            button = QPushButton("Copy")
            button.clicked.connect(lambda _=False, name=row.name: self._copy(name))
            grid.addWidget(value, i, 1)
            grid.addWidget(button, i, 2)
            self.values[row.name], self.copy[row.name] = value, button
        self.rows = QWidget()
        self.rows.setLayout(grid)
        note = QLabel(
            "In Cherry Studio: Settings → Model Provider → Add, choose the provider type "
            "(DeepSeek, Grok and OpenRouter are built-in providers: open their settings), "
            "enter the API host and the key, then add models: demo-chat always works, and "
            "the proxy's /v1/models lists every model it routes."
        )
        note.setWordWrap(True)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.state)
        layout.addWidget(self.rows)
        layout.addWidget(note)
        layout.addWidget(close)
        control.changed.connect(self.refresh)
        self.refresh()

    def value(self, name: str) -> str:
        """The real value of a row (what its Copy button copies); "" while stopped."""
        url = self.control.url
        if url is None:
            return ""
        if name == "key":
            return self.control.key
        if name == "model":
            return MODEL
        if name in _VERSIONS:
            return _VERSIONS[name]
        return sdk_base_url(url, "openai-chat") if name == "openai-sdks" else url

    def refresh(self, _state: str = "") -> None:
        running = self.control.url is not None
        if running:
            self.state.setText(f"The proxy is running on {self.control.url}.")
        elif self.control.error:
            self.state.setText(f"The proxy is not running — {self.control.error}.")
        else:
            self.state.setText("The proxy is stopped: start it to connect a client.")
        self.rows.setEnabled(running)
        for row in ROWS:
            value = self.value(row.name)
            self.values[row.name].setText(mask(value) if row.name == "key" and value else value)

    def _copy(self, name: str) -> None:
        value = self.value(name)
        if value:
            QGuiApplication.clipboard().setText(value)


__all__ = ["ROWS", "ConnectDialog", "Row"]
