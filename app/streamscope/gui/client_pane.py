"""The client pane: compose a request, send it, and watch the wire.

Left, the raw frames as they arrive (a batched table; the selected frame's exact bytes
and its JSON below); right, what they mean: the assembled answer, the tool calls as
they are reassembled, the timing and the lint findings with the verdict. Everything is
computed by the core's :class:`~streamscope.client.ClientSession`; the pane only shows
it, refreshing in batches (a long stream is not a widget update per frame).
"""

from __future__ import annotations

import asyncio
import json

from PySide6.QtCore import QItemSelection, Qt
from PySide6.QtGui import QFont, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from streamscope.client import WEATHER_TOOLS_JSON, ClientResult, ClientSession, Composition, Params
from streamscope.codecs import PROTOCOLS
from streamscope.gui.models.batcher import UiBatcher
from streamscope.gui.models.findings import FindingsModel, frame_severities
from streamscope.gui.models.frames import FramesModel
from streamscope.gui.proxy_control import ProxyControl
from streamscope.wire.frame import Frame

# The embedded proxy's base URL per protocol, as each protocol's SDKs take it.
BASE = {"openai-chat": "/v1", "responses": "/v1", "anthropic": "", "lmstudio": ""}


def _mono(widget: QPlainTextEdit) -> QPlainTextEdit:
    widget.setFont(QFont("monospace"))
    widget.setReadOnly(True)
    return widget


class ClientPane(QWidget):
    def __init__(self, control: ProxyControl) -> None:
        super().__init__()
        self.control = control
        self.session: ClientSession | None = None
        self.result: ClientResult | None = None
        # -- compose
        self.protocol = QComboBox()
        self.protocol.addItems(list(PROTOCOLS))
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.addItems(["demo-chat", "demo-tools", "demo-reasoning", "demo-long"])
        self.prompt = QPlainTextEdit("Hello! What is the weather in Lyon?")
        self.prompt.setMaximumHeight(70)
        self.stream = QCheckBox("stream")
        self.stream.setChecked(True)
        self.use_tools = QCheckBox("tools")
        self.tools = QPlainTextEdit(WEATHER_TOOLS_JSON)
        self.send = QPushButton("Send (Ctrl+Enter)")
        self.cancel = QPushButton("Cancel (Esc)")
        self.status = QLabel("")
        row = QHBoxLayout()
        for w in (QLabel("Protocol"), self.protocol, QLabel("Model"), self.model):
            row.addWidget(w)
        row.addWidget(self.stream)
        row.addWidget(self.use_tools)
        row.addStretch(1)
        row.addWidget(self.status)
        row.addWidget(self.send)
        row.addWidget(self.cancel)
        # -- frames
        self.frames_model = FramesModel(self)
        self.frames = QTableView()
        self.frames.setModel(self.frames_model)
        self.frames.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.frames.horizontalHeader().setStretchLastSection(True)
        self.raw = _mono(QPlainTextEdit())
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(self.frames)
        left.addWidget(self.raw)
        # -- meaning
        self.answer = _mono(QPlainTextEdit())
        self.tool_tree = QTreeWidget()
        self.tool_tree.setHeaderLabels(["call", "arguments so far", "parses"])
        self.timing = _mono(QPlainTextEdit())
        self.findings_model = FindingsModel()
        self.findings = QTableView()
        self.findings.setModel(self.findings_model)
        self.findings.horizontalHeader().setStretchLastSection(True)
        self.verdict = QLabel("")
        self.verdict.setWordWrap(True)
        lint = QWidget()
        lint_layout = QVBoxLayout(lint)
        lint_layout.addWidget(self.verdict)
        lint_layout.addWidget(self.findings)
        self.views = QTabWidget()
        self.views.addTab(self.answer, "Answer")
        self.views.addTab(self.tool_tree, "Tool calls")
        self.views.addTab(self.timing, "Timing")
        self.views.addTab(lint, "Lint")
        self.views.addTab(self.tools, "Tools (JSON)")
        body = QSplitter(Qt.Orientation.Horizontal)
        body.addWidget(left)
        body.addWidget(self.views)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.prompt)
        layout.addWidget(body, 1)
        # -- behaviour
        self.batcher: UiBatcher[tuple[int, float, Frame]] = UiBatcher(self._frames_in, 50, self)
        self.send.clicked.connect(self.start)
        self.cancel.clicked.connect(self.stop)
        QShortcut(QKeySequence("Ctrl+Return"), self, activated=self.start)
        QShortcut(QKeySequence("Esc"), self, activated=self.stop)
        self.frames.selectionModel().selectionChanged.connect(self._selected)
        self.findings.clicked.connect(self._finding_clicked)
        self._task: asyncio.Future[ClientResult | None] | None = None

    def composition(self) -> Composition:
        protocol = self.protocol.currentText()
        url = (self.control.url or "") + BASE[protocol]
        return Composition(
            url=url,
            protocol=protocol,
            model=self.model.currentText(),
            key=self.control.key,
            turns=[("user", self.prompt.toPlainText())],
            tools=self.tools.toPlainText() if self.use_tools.isChecked() else [],
            params=Params(stream=self.stream.isChecked()),
        )

    def start(self) -> None:
        """Send (a new request each time: re-send is send again)."""
        if self._task is not None and not self._task.done():
            return
        try:
            composition = self.composition()
        except ValueError as exc:  # bad tool JSON, say: said where the user looks
            self.status.setText(str(exc))
            return
        self.frames_model.clear()
        self.findings_model.clear()
        self.tool_tree.clear()
        for text in (self.answer, self.timing, self.raw):
            text.clear()
        self.verdict.setText("")
        self.session = ClientSession(
            composition, on_frames=self.batcher.extend, on_status=self.status.setText
        )
        self._task = asyncio.ensure_future(self._run(self.session))

    def stop(self) -> None:
        if self.session is not None:
            self.session.cancel()

    async def _run(self, session: ClientSession) -> ClientResult | None:
        result = await session.run()
        self.batcher.flush()
        self.result = result
        self._show_result(result)
        return result

    # -- what the session reports ---------------------------------------------------------

    def _frames_in(self, batch: list[tuple[int, float, Frame]]) -> None:
        self.frames_model.append_batch(batch)
        self._show_meaning()

    def _show_meaning(self) -> None:
        session = self.session
        if session is None:
            return
        response = session.response
        parts = []
        if response.choices:
            choice = response.choice(0)
            if choice.reasoning:
                parts.append(f"[reasoning]\n{choice.reasoning}\n")
            if choice.refusal:
                parts.append(f"[refusal]\n{choice.refusal}\n")
            parts.append(choice.text)
        if response.error is not None:
            parts.append(f"\n[error] {response.error.message}")
        self.answer.setPlainText("".join(parts))
        self.tool_tree.clear()
        for entry in session.tools:
            item = QTreeWidgetItem(
                [
                    f"#{entry.index} {entry.name} ({entry.id})",
                    entry.arguments,
                    "yes" if entry.parsed else "not yet",
                ]
            )
            for fragment in entry.fragments:
                QTreeWidgetItem(
                    item, [f"frame {fragment.frame} +{fragment.t_ms:.1f} ms", fragment.text, ""]
                )
            if entry.parsed:
                QTreeWidgetItem(item, ["parsed", json.dumps(entry.value, ensure_ascii=False), ""])
            self.tool_tree.addTopLevelItem(item)

    def _show_result(self, result: ClientResult) -> None:
        self._show_meaning()
        self.timing.setPlainText(json.dumps(result.timing.to_json(), indent=2))
        report = result.lint
        if report is None:
            self.verdict.setText("Nothing to lint (a whole body, or no answer).")
            return
        self.findings_model.set_report(report)
        self.frames_model.set_findings(frame_severities(report))
        verdicts = [report.verdict(p.id) for p in report.profiles]
        broken = [v for v in verdicts if v is not None]
        self.verdict.setText("\n".join(broken) if broken else "No client is known to break on it.")

    def _selected(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        rows = selected.indexes()
        if not rows:
            return
        frame = self.frames_model.frame_at(rows[0].row())
        text = frame.raw.decode("utf-8", errors="replace")
        try:
            pretty = json.dumps(json.loads(frame.data or ""), indent=2, ensure_ascii=False)
        except ValueError:
            pretty = ""
        self.raw.setPlainText(text + ("\n" + pretty if pretty else ""))

    def _finding_clicked(self) -> None:
        rows = self.findings.selectionModel().selectedRows() or self.findings.selectedIndexes()
        if not rows:
            return
        frame = self.findings_model.frame_of(rows[0].row())
        row = self.frames_model.row_of(frame) if frame is not None else None
        if row is not None:
            self.frames.selectRow(row)

    def close_pane(self) -> None:
        self.stop()
        self.batcher.stop()


__all__ = ["ClientPane"]
