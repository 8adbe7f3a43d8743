"""The relay form of Check an upstream…: which relay to audit, in what protocol, with what
key, asking for which model.

The relay is picked from the configuration's upstreams (its ``base_url``, protocol, first
account's key and ``models``), this window's own proxy (its URL as the chosen protocol's
SDKs take it, and its local key), or typed in. The key is a password field, filled from
the configuration without ever being shown; no tooltip or message names it (a listing's
error passes a :class:`~streamscope.redact.Redactor` of it first). "List models" asks the
relay what it lists (:func:`streamscope.client.models.fetch_models`).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from streamscope.audit.run import Target
from streamscope.client.compose import Composition, sdk_base_url
from streamscope.client.models import fetch_models
from streamscope.codecs import PROTOCOLS
from streamscope.gui.proxy_control import ProxyControl
from streamscope.redact import Redactor

TYPED, PROXY, UPSTREAM = "typed", "proxy", "upstream"


class RelayForm(QWidget):
    """Relay (a source), protocol, URL, key and model (see the module docstring). GUI
    thread only; :meth:`fetch_models` runs on the window's loop."""

    said = Signal(str)  # a line for the view's status: what listing the models found

    def __init__(self, control: ProxyControl | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.control = control
        self.source = QComboBox()
        self.url = QLineEdit()
        self.url.setPlaceholderText("https://relay.example/v1 (the base URL its SDKs take)")
        self.protocol = QComboBox()
        self.protocol.addItems(list(PROTOCOLS))
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)  # never shown, never a tooltip
        self.key.setPlaceholderText("the relay's API key")
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.setMinimumWidth(280)
        self.list_models = QPushButton("List models")
        self.list_models.setToolTip("Ask the relay which models it lists")
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        source_row = QHBoxLayout()
        source_row.addWidget(self.source, 1)
        source_row.addWidget(QLabel("Protocol"))
        source_row.addWidget(self.protocol)
        form.addRow("Relay", source_row)
        form.addRow("URL", self.url)
        key_row = QHBoxLayout()
        key_row.addWidget(self.key, 1)
        key_row.addWidget(QLabel("Model"))
        key_row.addWidget(self.model, 1)
        key_row.addWidget(self.list_models)
        form.addRow("Key", key_row)
        self._fill_sources()
        self.source.currentIndexChanged.connect(lambda _: self._source_chosen())
        self.protocol.currentTextChanged.connect(lambda _: self._protocol_chosen())

    def _fill_sources(self) -> None:
        self.source.addItem("A URL typed here", TYPED)
        if self.control is None:
            return
        self.source.addItem("This window's proxy", PROXY)
        for up in self.control.config.upstreams:
            if not up.is_demo and up.base_url:  # (the demo has no URL of its own)
                label = f"{up.name} ({up.protocol}, {up.base_url})"
                self.source.addItem(label, f"{UPSTREAM}:{up.name}")

    def choose_source(self, kind: str, name: str = "") -> None:
        """Pick the relay: ``typed``, ``proxy`` (this window's) or ``upstream`` ``name``;
        ``ValueError`` when there is no such choice."""
        index = self.source.findData(f"{kind}:{name}" if name else kind)
        if index < 0:
            raise ValueError(f"no such relay: {kind} {name}".strip())
        self.source.setCurrentIndex(index)
        self._source_chosen()

    def _source_chosen(self) -> None:
        kind, _, name = str(self.source.currentData()).partition(":")
        control = self.control
        if control is None or kind == TYPED:
            return
        if kind == PROXY:
            self.key.setText(control.key)
            self._protocol_chosen()
            return
        up = next(u for u in control.config.upstreams if u.name == name)
        self.protocol.setCurrentText(up.protocol)
        self.url.setText(up.base_url)
        self.key.setText(up.accounts[0].api_key.get_secret_value() if up.accounts else "")
        self.model.clear()
        self.model.addItems(up.models or [])

    def _protocol_chosen(self) -> None:
        """This window's proxy: its URL as the chosen protocol's SDKs take it."""
        kind = str(self.source.currentData()).partition(":")[0]
        if kind == PROXY and self.control is not None and self.control.url:
            self.url.setText(sdk_base_url(self.control.url, self.protocol.currentText()))

    def target(self) -> Target:
        """The relay as the form says; ``ValueError`` saying what is missing."""
        url, model = self.url.text().strip(), self.model.currentText().strip()
        if not url.startswith(("http://", "https://")):
            raise ValueError("give the relay's URL (http:// or https://)")
        if not model:
            raise ValueError("give a model to ask for (List models asks the relay)")
        return Target(url, self.protocol.currentText(), self.key.text(), model)

    async def fetch_models(self) -> list[str]:
        """The models the relay lists, put in the model box (the first chosen when it
        was empty); what came of it is :attr:`said`, the key masked."""
        url, protocol, key = self.url.text().strip(), self.protocol.currentText(), self.key.text()
        self.list_models.setEnabled(False)
        try:
            models = await fetch_models(Composition(url, protocol, "-", key=key))
        except ValueError as exc:
            self.said.emit(Redactor([key]).text(str(exc)))
            return []
        finally:
            self.list_models.setEnabled(True)
        typed = self.model.currentText()
        self.model.clear()
        self.model.addItems(models)
        self.model.setCurrentText(typed or (models[0] if models else ""))
        self.said.emit(f"The relay lists {len(models)} models.")
        return models


__all__ = ["PROXY", "TYPED", "UPSTREAM", "RelayForm"]
