"""Small widgets the views share (app/streamscope/gui/widgets.py): names elided in the
middle with the whole name on hover, the one-line note of an answer of tool calls only,
a read-only box in the fixed-width font, and the prompt that says the embedded proxy is
not running (and why) with a button that starts it, here on a real ProxyControl. (In the
window: tests/gui/test_window_layout.py.)"""

from __future__ import annotations

import asyncio
import socket

import pytest
from PySide6.QtCore import QStringListModel, Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from streamscope.client.tools import ToolCallTracker
from streamscope.gui.proxy_control import ProxyControl
from streamscope.gui.widgets import (
    ElideMiddleDelegate,
    ProxyPrompt,
    elide_combo,
    monospace,
    scrolled_label,
    tool_calls_note,
)
from streamscope.model.events import ToolCallDelta, ToolCallStart
from tests.gui.support import wait_until
from tests.proxy.harness import make_config

DEMO = [{"name": "demo", "protocol": "demo", "default": True}]
LONG = "replay/broken/chat-usage-chunk-without-choices"


def calls(*called: tuple[str, str]) -> list:  # type: ignore[type-arg]
    tracker = ToolCallTracker()
    events = []
    for i, (name, arguments) in enumerate(called):
        events += [ToolCallStart(i, f"call_{i}", name), ToolCallDelta(i, arguments)]
    tracker.feed((n, 0.0, ev) for n, ev in enumerate(events))
    return list(tracker)


def test_a_tool_call_answer_in_one_line() -> None:
    note = tool_calls_note(calls(("get_weather", '{"city": "Lyon"}')))
    assert note == (
        "The answer is 1 tool call: <b>get_weather</b>({&quot;city&quot;: &quot;Lyon&quot;}) — "
        '<a href="tools">see the Tool calls tab</a>'
    )
    long = '{"q": "' + "x" * 100 + '"}'
    two = tool_calls_note(calls(("<search>", long), ("", "{}")))
    assert two.startswith("The answer is 2 tool calls: <b>&lt;search&gt;</b>(")
    shown = two.split("(", 1)[1].split(")", 1)[0]
    assert shown.endswith("…") and len(shown.replace("&quot;", '"')) == 80
    assert "<b>(no name)</b>({})" in two


def test_a_monospace_box_is_read_only_in_the_fixed_width_font(qapp: QApplication) -> None:
    box = QPlainTextEdit()
    assert monospace(box) is box and box.isReadOnly()
    fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    assert box.font().family() == fixed.family()
    box.deleteLater()


def test_the_delegate_elides_in_the_middle(qapp: QApplication) -> None:
    model = QStringListModel([LONG])
    option = QStyleOptionViewItem()
    ElideMiddleDelegate().initStyleOption(option, model.index(0, 0))
    assert option.textElideMode == Qt.TextElideMode.ElideMiddle  # type: ignore[attr-defined]
    assert option.text == LONG  # type: ignore[attr-defined]  # elided when painted only


def test_a_combo_of_long_names_keeps_each_whole_on_hover(qapp: QApplication) -> None:
    combo = QComboBox()
    elide_combo(combo, chars=12)
    combo.addItems(["demo-chat", LONG])
    assert combo.view().textElideMode() == Qt.TextElideMode.ElideMiddle
    assert combo.minimumContentsLength() == 12
    assert [combo.itemData(i, Qt.ItemDataRole.ToolTipRole) for i in (0, 1)] == ["demo-chat", LONG]
    combo.setCurrentIndex(1)
    assert combo.toolTip() == LONG
    combo.deleteLater()


@pytest.mark.qasync
async def test_the_prompt_says_why_the_proxy_is_not_running_and_starts_it() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        control = ProxyControl(make_config(DEMO, port=port))
        holder = QWidget()  # never shown: its children are shown or hidden within it
        status, button = QLabel(holder), QPushButton(holder)
        prompt = ProxyPrompt(control, status, button)
        try:
            assert button.isHidden()
            assert prompt.check()  # not started yet
            assert status.text() == "The embedded proxy is stopped: start it to send."
            assert button.text() == "Start the proxy" and not button.isHidden()
            assert not await control.start()  # the port is taken
            free = control.suggested_port
            assert free is not None and free != port
            assert str(port) in status.text() and "not running" in status.text()
            assert button.text() == f"Start on port {free}"
            button.click()  # starts on the free port offered
            await wait_until(lambda: control.running)
            assert button.isHidden() and status.text().endswith(f":{free}.")
            assert not prompt.check()  # running: nothing to say
        finally:
            await control.close()
            holder.deleteLater()
            await asyncio.sleep(0)


def test_a_scrolled_label_keeps_what_is_under_it_in_place_however_long_it_grows() -> None:
    window = QWidget()
    layout = QVBoxLayout(window)
    label = QLabel("one line")
    label.setWordWrap(True)
    under = QLabel("the tabs")
    layout.addWidget(scrolled_label(label, 4))
    layout.addWidget(under, 1)
    window.resize(500, 400)
    window.show()
    QApplication.processEvents()
    before = under.geometry().top()
    label.setText("<br>".join(f"✗ would fail in client {n}" for n in range(14)))
    QApplication.processEvents()
    area = label.parentWidget().parentWidget()
    assert under.geometry().top() == before  # the tabs did not move
    assert area.verticalScrollBar().maximum() > 0  # the rest scrolls into view
    window.close()
