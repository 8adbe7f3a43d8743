"""One leg of a flow, as the user reads it: raw frames beside what they mean.

Left, the frames as they arrive (a batched table; the selected frame's exact bytes and
its JSON below); a whole-body answer shows its status, headers and body there instead
(:mod:`~streamscope.gui.body_view`). Right, tabs: the assembled answer (reasoning,
collapsible; text; refusal), the tool calls as they are reassembled
(:mod:`streamscope.gui.tool_tree`), the timing (figures and a chart) and the lint
findings (:mod:`~streamscope.gui.lint_pane`); the verdict sits above the tabs, where it
is seen. A captured flow's client leg lists its request notes (what translating
the request dropped or changed) with the lint findings, as findings of their own kind.

Selecting a frame highlights the characters it wrote in the answer; clicking in the
answer selects the frame that wrote the character under the cursor; clicking a finding
selects its frame. Everything shown comes from the core's
:class:`~streamscope.client.ClientSession` (live or a replay of a captured leg): the
view only draws it, in batches — the answer and the tool tree grow by what each batch
added, never rebuilt per frame.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTableView,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from streamscope.client import ClientResult, ClientSession, SessionCallbacks
from streamscope.client.parts import Part
from streamscope.client.session import StatusCallback
from streamscope.client.tools import Key
from streamscope.gui.body_view import FramesOrBody
from streamscope.gui.client_answer import ClientAnswerLabel
from streamscope.gui.lint_pane import LintPane
from streamscope.gui.models.batcher import UiBatcher
from streamscope.gui.models.common import SEVERITY_BACKGROUND
from streamscope.gui.models.findings import frame_severities, verdict_html
from streamscope.gui.models.frames import FramesModel
from streamscope.gui.text_marks import cursor_offset, marks, show_mark
from streamscope.gui.theme import tint
from streamscope.gui.timing_chart import TimingChart, timing_text
from streamscope.gui.tool_tree import ToolCallTree
from streamscope.gui.widgets import (
    ElideMiddleDelegate,
    monospace,
    scrolled_label,
    tool_calls_note,
)
from streamscope.lint.assembled import UNKNOWN_SENDER, answer_for
from streamscope.lint.report import LintReport
from streamscope.lint.verdict import ErrorAnswer, judge
from streamscope.model.request import RequestNote
from streamscope.wire.frame import Frame

FrameItem = tuple[int, float, Frame]
PLACEHOLDER = "The assembled answer appears here as it streams."
VERDICT_LINES = 4  # the verdict area's height, in lines; more scroll


class LegView(QWidget):
    """Frames, answer, tool calls, timing and lint of one leg (see the module docstring).

    It owns the widgets of those panels, the models behind its two tables, and a
    :class:`~streamscope.gui.models.batcher.UiBatcher` that draws arriving frames at most
    once per 50 ms, never per frame. The answer and the tool calls are read from the
    session being shown (:attr:`session`), which the view never runs or changes. The
    client pane has one for its answer; a flow's detail has one per leg, side by side
    (:meth:`compact`).

    Feed it a session: ``view.begin(session)`` before the session runs, with the
    session built with ``view.callbacks()``; ``view.finish(result)`` when it ends.
    GUI thread only, and the session with it: the view reads the session's parts and
    tool calls as it draws, so the session runs on the GUI thread's (qasync) loop, as
    the client pane and the flow detail run it."""

    def __init__(self, title: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session: ClientSession | None = None
        self.title = QLabel(title)
        self.title.setVisible(bool(title))
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.left = FramesOrBody(self._frames_side())  # a whole body shows in its place
        self.splitter.addWidget(self.left)
        self.splitter.addWidget(self._meaning_side())
        self.splitter.setSizes([700, 480])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.title)
        layout.addWidget(self.splitter, 1)
        self.batcher: UiBatcher[FrameItem] = UiBatcher(self._frames_in, 50, self)
        self._shown: dict[Part, int] = {}
        self._changed_tools: dict[Key, None] = {}
        self._selecting = False
        self._broken = False  # the lint shown breaks a client
        # who sent the request and the error answer it got: the verdict leads with them
        self.judging: tuple[str | None, ErrorAnswer | None] = (None, None)
        self.sent_by = UNKNOWN_SENDER  # who sent it, for the Answer tab, when no known client did
        self._connect_signals()
        self.clear()

    # -- building ----------------------------------------------------------------------

    def _frames_side(self) -> QSplitter:
        """The frames table over the selected frame's bytes and JSON."""
        self.frames_model = FramesModel(self)
        self.frames = QTableView()
        self.frames.setModel(self.frames_model)
        self.frames.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.frames.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.frames.verticalHeader().setVisible(False)
        self.frames.verticalHeader().setDefaultSectionSize(20)
        # The preview (what each frame adds) takes the room left: at the window's
        # default size the fixed columns must not push it out of sight.
        header = self.frames.horizontalHeader()
        header.setStretchLastSection(False)
        for column, width in enumerate((40, 62, 56, 150, 44, 240, 64)):
            self.frames.setColumnWidth(column, width)
        header.setSectionResizeMode(5, QHeaderView.ResizeMode.Stretch)
        header.moveSection(6, 5)  # the lint mark before the preview: never pushed out of sight
        self._elide_event = ElideMiddleDelegate(self.frames)  # response.…_text.delta
        self.frames.setItemDelegateForColumn(3, self._elide_event)
        self.raw = monospace(QPlainTextEdit())
        self.raw.setPlaceholderText("Select a frame to see its exact bytes and its JSON.")
        side = QSplitter(Qt.Orientation.Vertical)
        side.addWidget(self.frames)
        side.addWidget(self.raw)
        side.setSizes([500, 200])
        return side

    def _meaning_side(self) -> QWidget:
        """The verdict over the tabs of what the frames mean."""
        answer_page = self._answer_page()
        self.tool_tree = ToolCallTree()
        timing_page = self._timing_page()
        findings = self._findings_table()
        self.verdict = QLabel("")
        self.verdict.setTextFormat(Qt.TextFormat.RichText)  # red: the wire; plain: the provider
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # (a line per client it breaks, a dozen and more: the tabs must not move with it)
        self.verdict_area = scrolled_label(self.verdict, VERDICT_LINES)
        self.tabs = QTabWidget()
        self.tabs.setUsesScrollButtons(True)  # the tab bar sets no minimum width
        self.tabs.addTab(answer_page, "Answer")
        self.tabs.addTab(self.tool_tree, "Tool calls")
        self.tabs.addTab(timing_page, "Timing")
        self.tabs.addTab(findings, "Lint")
        side = QWidget()
        layout = QVBoxLayout(side)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.verdict_area)
        layout.addWidget(self.tabs, 1)
        return side

    def _answer_page(self) -> QWidget:
        """Reasoning (folding), a note when the answer is tool calls only, the text,
        the refusal and the error, each shown only when there is one."""
        self.reasoning_toggle = QToolButton()
        self.reasoning_toggle.setCheckable(True)
        self.reasoning_toggle.setChecked(True)
        self.reasoning_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.reasoning_toggle.setArrowType(Qt.ArrowType.DownArrow)
        self.reasoning_toggle.setText("Reasoning")
        self.reasoning = monospace(QPlainTextEdit())
        self.answer = monospace(QPlainTextEdit())
        self.answer.setPlaceholderText(PLACEHOLDER)
        self.tools_note = QLabel()  # an answer of tool calls only says so, with a link
        self.tools_note.setWordWrap(True)
        self.refusal_label = QLabel("Refusal")
        self.refusal = monospace(QPlainTextEdit())
        self.error = QLabel()
        self.error.setWordWrap(True)
        tint(self.error, "error")
        self._texts: dict[Part, QPlainTextEdit] = {
            "reasoning": self.reasoning,
            "text": self.answer,
            "refusal": self.refusal,
        }
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(self.reasoning_toggle)
        layout.addWidget(self.reasoning, 1)
        layout.addWidget(self.tools_note)
        self.client_answer = ClientAnswerLabel()  # what the sender gets, apart from the text
        layout.addWidget(self.client_answer)
        layout.addWidget(self.answer, 3)
        layout.addWidget(self.refusal_label)
        layout.addWidget(self.refusal, 1)
        layout.addWidget(self.error)
        return page

    def _timing_page(self) -> QWidget:
        self.timing = monospace(QPlainTextEdit())
        self.timing.setMaximumHeight(230)
        self.chart = TimingChart()
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(self.timing)
        layout.addWidget(self.chart, 1)
        return page

    def _findings_table(self) -> LintPane:
        self.lint_pane = LintPane()  # the table, and "No findings" when it is empty
        self.findings_model, self.findings = self.lint_pane.model, self.lint_pane.table
        return self.lint_pane

    def _connect_signals(self) -> None:
        self.tools_note.linkActivated.connect(lambda _: self.tabs.setCurrentWidget(self.tool_tree))
        self.reasoning_toggle.toggled.connect(self._fold_reasoning)
        self.frames.selectionModel().selectionChanged.connect(self._frame_selected)
        self.findings.clicked.connect(self._finding_clicked)
        for part, text in self._texts.items():
            text.cursorPositionChanged.connect(lambda p=part: self._text_clicked(p))

    def compact(self) -> None:
        """Narrow columns for a view that shares the width (a flow's two legs side by
        side): the frame size is left out (the raw pane says it) so the preview stays
        readable."""
        for column, width in ((0, 34), (1, 52), (2, 50), (3, 104), (6, 40)):
            self.frames.setColumnWidth(column, width)
        self.frames.setColumnHidden(4, True)
        self.splitter.setSizes([420, 250])

    # -- feeding -----------------------------------------------------------------------

    def callbacks(self, on_status: StatusCallback | None = None) -> SessionCallbacks:
        """The callbacks to build a session with (``on_status``: whoever shows it)."""
        return SessionCallbacks(
            on_frames=self.batcher.extend, on_status=on_status, on_tools=self._tools_changed
        )

    def begin(self, session: ClientSession) -> None:
        self.clear()
        self.session = session
        self.frames_model.protocol = session.protocol
        # OpenAI Chat frames have no event names: the column would only take the
        # preview's room (an error event still says so in its preview).
        self.frames.setColumnHidden(3, session.protocol == "openai-chat")

    def clear(self) -> None:
        self.session = None
        self.left.show_frames()
        self.frames_model.clear()
        self.findings_model.clear()
        self.tool_tree.clear_calls()
        self._changed_tools.clear()
        for text in (self.timing, self.raw, *self._texts.values()):
            text.clear()
        self._shown = dict.fromkeys(self._texts, 0)
        self.error.setText("")
        self.error.setVisible(False)
        self.verdict.setText("")
        self.client_answer.clear_answer()
        self._broken = False
        self._title_lint()
        self.chart.set_series(None)
        self._show_parts_visibility()
        self._note_tools()

    def finish(self, result: ClientResult) -> None:
        """The session ended: the rest of its frames, then timing and lint."""
        self.batcher.flush()
        self.left.show_leg(result.leg)
        self._show_meaning()
        session = self.session
        self.timing.setPlainText(timing_text(result.timing))
        self.chart.set_series(result.series)  # read with the timing, off the GUI thread
        error = result.error or (
            session.response.error.message
            if session is not None and session.response.error is not None
            else None
        )
        if error:
            self.error.setText(f"Error: {error}")
            self.error.setVisible(True)
        self.show_lint(result.lint)

    def show_lint(self, report: LintReport | None) -> None:
        if report is None:
            self.verdict.setText("Nothing to lint (a whole body, or no answer).")
            return
        self.findings_model.set_report(report)
        self.frames_model.set_findings(frame_severities(report))
        # What breaks on the wire (red), then what the provider did and each client shows
        text, self._broken = verdict_html(report, judge(report, *self.judging))
        self.client_answer.show_answer(answer_for(report, *self.judging, self.sent_by))
        self.verdict.setText(text)
        self._title_lint()

    def show_request_notes(self, notes: Sequence[RequestNote]) -> None:
        """List what translating the request dropped or changed with the lint findings
        (after them; each a finding of its own kind, never an error)."""
        self.findings_model.set_request_notes(notes)
        self._title_lint()

    def _title_lint(self) -> None:
        """``Lint``, with the findings' count when the wire breaks a client, the provider's
        outcomes' and the request notes' when there are any: ``Lint (4)``, ``Lint (1
        provider)``, ``Lint (4, 3 request)``."""
        notes, outcomes = len(self.findings_model.notes), self.findings_model.outcomes
        counts = [str(self.findings_model.rowCount() - notes - outcomes)] if self._broken else []
        counts += [f"{outcomes} provider"] if outcomes else []
        if notes:
            counts.append(f"{notes} request")
        self.tabs.setTabText(3, f"Lint ({', '.join(counts)})" if counts else "Lint")
        self.lint_pane.note_empty()

    def stop(self) -> None:
        self.batcher.stop()

    # -- what the session reports --------------------------------------------------------

    def _tools_changed(self, keys: list[Key]) -> None:
        self._changed_tools.update(dict.fromkeys(keys))

    def _frames_in(self, batch: list[FrameItem]) -> None:
        self.frames_model.append_batch(batch)
        self._show_meaning()

    def _show_meaning(self) -> None:
        session = self.session
        if session is None:
            return
        parts = session.parts
        for part, widget in self._texts.items():
            shown = self._shown[part]
            if parts.length(part) > shown:
                text = parts.text(part)
                cursor = QTextCursor(widget.document())
                cursor.movePosition(QTextCursor.MoveOperation.End)
                self._selecting = True  # the caret moves with the text: that is no click
                try:  # (else each batch selected its last frame, into the next request)
                    cursor.insertText(text[shown:])
                finally:
                    self._selecting = False
                self._shown[part] = len(text)
        self._show_parts_visibility()
        if self._changed_tools:
            keys, self._changed_tools = list(self._changed_tools), {}
            for key in keys:
                entry = session.tools.get(key)
                if entry is not None:
                    self.tool_tree.show_call(entry)
        self._note_tools()

    def _note_tools(self) -> None:
        """No text and tool calls: the answer says it is those calls (not the placeholder)."""
        calls = list(self.session.tools) if self.session is not None else []
        only = bool(calls) and self._shown.get("text", 0) == 0
        self.tools_note.setVisible(only)
        self.answer.setPlaceholderText(
            "No text: the answer is tool calls only." if only else PLACEHOLDER
        )
        if only:
            self.tools_note.setText(tool_calls_note(calls))

    def _show_parts_visibility(self) -> None:
        has_reasoning = self._shown.get("reasoning", 0) > 0
        self.reasoning_toggle.setVisible(has_reasoning)
        self.reasoning.setVisible(has_reasoning and self.reasoning_toggle.isChecked())
        has_refusal = self._shown.get("refusal", 0) > 0
        self.refusal_label.setVisible(has_refusal)
        self.refusal.setVisible(has_refusal)

    def _fold_reasoning(self, open_: bool) -> None:
        self.reasoning_toggle.setArrowType(
            Qt.ArrowType.DownArrow if open_ else Qt.ArrowType.RightArrow
        )
        self._show_parts_visibility()

    # -- selection, both ways ----------------------------------------------------------------

    def select_frame(self, frame: int) -> None:
        row = self.frames_model.row_of(frame)
        if row is not None:
            self.frames.selectRow(row)
            self.frames.scrollTo(self.frames_model.index(row, 0))

    def _frame_selected(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
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
        if not self._selecting:
            self._highlight(self.frames_model.frame_index_at(rows[0].row()))

    def _highlight(self, frame: int | None) -> None:
        """Mark what ``frame`` wrote in the answer (and show it)."""
        spans = self.session.parts.spans_of(frame) if self.session and frame is not None else []
        color = SEVERITY_BACKGROUND["mark"]
        for part, widget in self._texts.items():
            selections = marks(widget, [(a, b) for p, a, b in spans if p == part], color)
            widget.setExtraSelections(selections)
            if selections:
                self._selecting = True
                try:
                    show_mark(widget, selections[0])  # moves the cursor: not a click
                finally:
                    self._selecting = False

    def _text_clicked(self, part: Part) -> None:
        if self._selecting or self.session is None:
            return
        widget = self._texts[part]
        position = cursor_offset(widget)
        frame = self.session.parts.frame_at(part, position)
        if frame is None and position > 0:  # the cursor sits after the last character
            frame = self.session.parts.frame_at(part, position - 1)
        row = self.frames_model.row_of(frame) if frame is not None else None
        if row is None:
            return
        self._selecting = True
        try:
            self.frames.selectionModel().select(
                self.frames_model.index(row, 0),
                QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows,
            )
            self.frames.scrollTo(self.frames_model.index(row, 0))
        finally:
            self._selecting = False
        self._highlight(frame)

    def _finding_clicked(self) -> None:
        rows = self.findings.selectionModel().selectedRows() or self.findings.selectedIndexes()
        if not rows:
            return
        frame = self.findings_model.frame_of(rows[0].row())
        if frame is not None:
            self.select_frame(frame)


__all__ = ["LegView", "timing_text"]
