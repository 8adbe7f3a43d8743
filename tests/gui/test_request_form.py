"""The client pane's request form alone (app/streamscope/gui/request_form.py): the URL and
key are editable for another URL only, every protocol is offered with its codec's title
and path, and each parameter starts at what leaves it unsent."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from streamscope.client.compose import COMPOSED
from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.gui.request_form import DEMO_MODELS, EMBEDDED, OTHER, RequestForm


def test_url_and_key_are_for_another_url_only(qapp: QApplication) -> None:
    form = RequestForm()
    assert form.target.currentText() == EMBEDDED
    assert not form.url.isEnabled() and not form.key.isEnabled()
    form.target.setCurrentText(OTHER)
    assert form.url.isEnabled() and form.key.isEnabled()
    form.target.setCurrentText(EMBEDDED)
    assert not form.url.isEnabled() and not form.key.isEnabled()
    form.deleteLater()


def test_every_protocol_is_offered_with_its_title_and_path(qapp: QApplication) -> None:
    form = RequestForm()
    offered = [form.protocol.itemText(i) for i in range(form.protocol.count())]
    assert offered == list(COMPOSED) == list(PROTOCOLS)  # Gemini's too
    for i, protocol in enumerate(offered):
        codec = get_codec(protocol)
        tip = form.protocol.itemData(i, Qt.ItemDataRole.ToolTipRole)
        assert tip == f"{codec.title} ({codec.path})"
    form.deleteLater()


def test_the_parameters_start_unsent(qapp: QApplication) -> None:
    form = RequestForm()
    assert [form.model.itemText(i) for i in range(form.model.count())] == DEMO_MODELS
    assert form.stream.isChecked() and form.include_usage.isChecked()
    assert form.max_tokens.text() == "default" and form.max_tokens.value() == 0
    assert form.temperature.text() == "default" and form.temperature.value() < 0
    assert form.reasoning.currentText() == "default"
    form.deleteLater()


def test_the_fields_come_back_from_their_state_and_ill_typed_entries_are_skipped(
    qapp: QApplication,
) -> None:
    form = RequestForm()
    form.target.setCurrentText(OTHER)
    form.url.setText("http://127.0.0.1:9/v1")
    form.key.setText("sk-never-kept")
    form.protocol.setCurrentText("anthropic")
    form.max_tokens.setValue(99)
    form.stream.setChecked(False)
    state = form.state()
    assert "sk-never-kept" not in str(state)
    again = RequestForm()
    again.restore(state)
    assert again.state() == state
    again.restore({"max_tokens": True, "stream": 1, "protocol": "no-such", "temperature": 0.5})
    assert again.max_tokens.value() == 99 and not again.stream.isChecked()
    assert again.protocol.currentText() == "anthropic" and again.temperature.value() == 0.5
    form.deleteLater()
    again.deleteLater()
