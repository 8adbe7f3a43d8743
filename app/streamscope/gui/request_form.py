"""The client pane's request form: where the request goes and how it is asked.

Target (the embedded proxy, or any URL with its key: the URL and key are editable only
for "Other URL"), protocol (each with its codec's title and path as the tooltip), model
(editable, with a button to list the target's models) and the parameters: stream,
include usage, max tokens, temperature and reasoning ("default" leaves each unsent).

The form holds the widgets, laid out, and what they say as kept across restarts
(:meth:`RequestForm.state`, never the key); the :class:`~streamscope.gui.client_pane.
ClientPane` reads them into a composition, keeps the whole pane's state and lists the
models.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from streamscope.client.compose import COMPOSED
from streamscope.codecs import all_codecs
from streamscope.gui.widgets import elide_combo

DEMO_MODELS = ["demo-chat", "demo-tools", "demo-reasoning", "demo-long"]
REASONING = ["default", "low", "medium", "high", "1024", "4096"]
EMBEDDED = "Embedded proxy"
OTHER = "Other URL"


def typed(state: dict[str, Any], name: str, kind: type) -> Any:
    """``state[name]`` when it is a ``kind`` (a bool is no int here), else None."""
    value = state.get(name)
    if isinstance(value, bool) != (kind is bool):
        return None
    return value if isinstance(value, kind) else None


class RequestForm(QWidget):
    """The target, protocol, model and parameters of the client pane's request (see the
    module docstring). Each field is a public attribute (``target``, ``protocol``,
    ``max_tokens``…) that the pane reads and also shows by the same name. Made and used
    on the GUI thread, as any widget."""

    def __init__(self) -> None:
        super().__init__()
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        self._add_target_rows(form)
        self._add_protocol_and_model_rows(form)
        self._add_parameter_rows(form)
        self.target.currentTextChanged.connect(self._target_changed)
        self._target_changed(self.target.currentText())

    def _add_target_rows(self, form: QFormLayout) -> None:
        self.target = QComboBox()
        self.target.addItems([EMBEDDED, OTHER])
        self.url = QLineEdit()
        self.url.setPlaceholderText("https://api.openai.com/v1")
        self.url.setToolTip(
            "The base URL as the protocol's SDKs take it: OpenAI Chat and Responses with"
            " /v1, Anthropic and LM Studio at the server root, Gemini at the root or with"
            " /v1beta (https://generativelanguage.googleapis.com/v1beta)"
        )
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText("API key for this URL")
        form.addRow("Target", self.target)
        form.addRow("URL", self.url)
        form.addRow("Key", self.key)

    def _add_protocol_and_model_rows(self, form: QFormLayout) -> None:
        self.protocol = QComboBox()
        for codec in all_codecs():
            if codec.name not in COMPOSED:
                continue
            self.protocol.addItem(codec.name)
            self.protocol.setItemData(
                self.protocol.count() - 1,
                f"{codec.title} ({codec.path})",
                Qt.ItemDataRole.ToolTipRole,
            )
        self.model = QComboBox()
        self.model.setEditable(True)
        elide_combo(self.model)  # long names: elided in the middle, whole in the tooltip
        self.model.addItems(DEMO_MODELS)
        self.refresh_models = QPushButton("↻")
        self.refresh_models.setToolTip(
            "List the target's models (GET /v1/models; Gemini: GET /v1beta/models)"
        )
        self.refresh_models.setMaximumWidth(32)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(self.refresh_models)
        form.addRow("Protocol", self.protocol)
        form.addRow("Model", model_row)

    def _add_parameter_rows(self, form: QFormLayout) -> None:
        self.stream = QCheckBox("stream")
        self.stream.setChecked(True)
        self.include_usage = QCheckBox("include usage")
        self.include_usage.setChecked(True)
        self.max_tokens = QSpinBox()
        self.max_tokens.setRange(0, 1_000_000)
        self.max_tokens.setSpecialValueText("default")
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(-0.1, 2.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setValue(-0.1)
        self.temperature.setSpecialValueText("default")
        self.reasoning = QComboBox()
        self.reasoning.addItems(REASONING)
        self.reasoning.setToolTip("An effort, or a thinking budget in tokens")
        flags = QHBoxLayout()
        flags.addWidget(self.stream)
        flags.addWidget(self.include_usage)
        flags.addStretch(1)
        form.addRow("", flags)
        form.addRow("Max tokens", self.max_tokens)
        form.addRow("Temperature", self.temperature)
        form.addRow("Reasoning", self.reasoning)

    def state(self) -> dict[str, Any]:
        """The fields as kept across restarts: never the key."""
        return {
            "target": self.target.currentText(),
            "url": self.url.text(),
            "protocol": self.protocol.currentText(),
            "model": self.model.currentText(),
            "stream": self.stream.isChecked(),
            "include_usage": self.include_usage.isChecked(),
            "max_tokens": self.max_tokens.value(),
            "temperature": self.temperature.value(),
            "reasoning": self.reasoning.currentText(),
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Back to a :meth:`state` (unknown or ill-typed entries are skipped)."""
        for combo, name in ((self.target, "target"), (self.protocol, "protocol")):
            value = typed(state, name, str)
            if value is not None and combo.findText(value) >= 0:
                combo.setCurrentText(value)
        for name, setter in (("url", self.url.setText), ("model", self.model.setCurrentText)):
            value = typed(state, name, str)
            if value is not None:
                setter(value)
        for name, box in (("stream", self.stream), ("include_usage", self.include_usage)):
            value = typed(state, name, bool)
            if value is not None:
                box.setChecked(value)
        max_tokens = typed(state, "max_tokens", int)
        if max_tokens is not None:
            self.max_tokens.setValue(max_tokens)
        temperature = state.get("temperature")
        if isinstance(temperature, int | float) and not isinstance(temperature, bool):
            self.temperature.setValue(float(temperature))
        reasoning = typed(state, "reasoning", str)
        if reasoning is not None and self.reasoning.findText(reasoning) >= 0:
            self.reasoning.setCurrentText(reasoning)

    def _target_changed(self, target: str) -> None:
        other = target == OTHER
        self.url.setEnabled(other)
        self.key.setEnabled(other)


__all__ = ["DEMO_MODELS", "EMBEDDED", "OTHER", "REASONING", "RequestForm", "typed"]
