"""The client pane: compose a request in any protocol, send it, and watch the wire.

Left, the request: target (the embedded proxy, or any URL and key), protocol, model
(listed from the target's ``/v1/models``, Gemini's ``/v1beta/models``), parameters,
system prompt, the conversation so far, the message, and tools (a JSON editor with a
weather example). Right, a :class:`~streamscope.gui.leg_view.LegView` of the answer: raw
frames beside the decoded answer, tool calls, timing and lint.

The request itself is the core's :class:`~streamscope.client.ClientSession`; the pane
maps widgets to a :class:`~streamscope.client.Composition` and back (for the state kept
across restarts, and for a captured flow replayed into the pane), and nothing more.
"""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from streamscope.capture.flow import Leg
from streamscope.client import (
    WEATHER_TOOLS_JSON,
    ClientResult,
    ClientSession,
    Composition,
    Params,
    Turn,
    replay_session,
    sdk_base_url,
    with_tool_results,
)
from streamscope.client.models import fetch_models
from streamscope.client.worker import Analyser
from streamscope.codecs import get_codec
from streamscope.gui.leg_view import LegView
from streamscope.gui.proxy_control import ProxyControl
from streamscope.gui.real_clients import RealClientsPanel
from streamscope.gui.request_form import EMBEDDED, RequestForm, typed
from streamscope.gui.widgets import ProxyPrompt
from streamscope.lint.assembled import CLIENT_PANE, REPLAYED

TOOL_RESULT = '{"ok": true}'


class ClientPane(QWidget):
    """The window's Client tab: compose a request, send it or replay a captured leg into
    it, and watch the answer arrive (see the module docstring).

    It owns the request side (a :class:`~streamscope.gui.request_form.RequestForm`, the
    Message, Conversation and Tools tabs, Send and Cancel) and a
    :class:`~streamscope.gui.leg_view.LegView` of the answer with a Real clients tab. Each
    Send makes a new :class:`~streamscope.client.ClientSession` (the current one is
    :attr:`session`, its outcome :attr:`result` once it has ended); the conversation
    before the message is :attr:`turns`. The form's fields and the answer's widgets are
    also attributes of the pane, by the names tests, the benchmark and the screenshots use.

    :class:`~streamscope.gui.window.MainWindow` makes it with the window's proxy control
    and analyser, keeps its :meth:`state` across restarts, sends a flow's "Replay into
    client pane" to :meth:`replay`, and calls :meth:`close_pane` on closing. It lives on
    the GUI thread under qasync: a session runs as a task on the window's loop, and its
    callbacks draw in batches on that thread."""

    def __init__(self, control: ProxyControl, analyser: Analyser | None = None) -> None:
        """``analyser``: where a stream's end is timed and linted (a thread when None)."""
        super().__init__()
        self.control = control
        self.analyser = analyser
        self.session: ClientSession | None = None
        self.result: ClientResult | None = None
        self.turns: list[Turn] = []  # the conversation before the message
        self._task: asyncio.Future[ClientResult | None] | None = None
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self._request_side())
        self.splitter.addWidget(self._answer_side())
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([360, 1000])
        QVBoxLayout(self).addWidget(self.splitter)
        self.proxy_prompt = ProxyPrompt(control, self.status, self.start_proxy)
        self._connect_signals()
        self._show_turns()

    # -- building -----------------------------------------------------------------------

    def _request_side(self) -> QWidget:
        """The form, the compose tabs, the buttons and the status line, top to bottom."""
        self.form = RequestForm()
        f = self.form  # its fields, by the names the pane has always had
        self.target, self.url, self.key, self.protocol = f.target, f.url, f.key, f.protocol
        self.model, self.refresh_models, self.reasoning = f.model, f.refresh_models, f.reasoning
        self.stream, self.include_usage = f.stream, f.include_usage
        self.max_tokens, self.temperature = f.max_tokens, f.temperature
        self.compose_tabs = QTabWidget()
        self.compose_tabs.addTab(self._message_page(), "Message")
        self.compose_tabs.addTab(self._conversation_page(), "Conversation")
        self.compose_tabs.addTab(self._tools_page(), "Tools")
        request = QWidget()
        request_layout = QVBoxLayout(request)
        request_layout.addWidget(self.form)
        request_layout.addWidget(self.compose_tabs, 1)
        request_layout.addLayout(self._send_row())
        self.status = QLabel("")
        self.status.setWordWrap(True)
        request_layout.addWidget(self.status)
        return request

    def _message_page(self) -> QWidget:
        self.system = QPlainTextEdit()
        self.system.setPlaceholderText("System prompt (optional)")
        self.system.setMaximumHeight(70)
        self.prompt = QPlainTextEdit("Hello! What is the weather in Lyon?")
        self.prompt.setPlaceholderText("The user message to send")
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(QLabel("System"))
        layout.addWidget(self.system)
        layout.addWidget(QLabel("Message"))
        layout.addWidget(self.prompt, 1)
        return page

    def _conversation_page(self) -> QWidget:
        self.conversation = QTreeWidget()
        self.conversation.setHeaderLabels(["role", "content"])
        self.conversation.setRootIsDecorated(False)
        self.keep = QPushButton("Add turn")
        self.keep.setToolTip(
            "Append the message and the answer (with its tool calls and a result for each)"
            " to the conversation, to send a follow-up"
        )
        self.forget = QPushButton("Remove last")
        self.clear_turns = QPushButton("Clear")
        turn_buttons = QHBoxLayout()
        for button in (self.keep, self.forget, self.clear_turns):
            turn_buttons.addWidget(button)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(self.conversation, 1)
        layout.addLayout(turn_buttons)
        return page

    def _tools_page(self) -> QWidget:
        self.use_tools = QCheckBox("send these tools")
        self.tools = QPlainTextEdit(WEATHER_TOOLS_JSON)
        self.tools.setFont(self.prompt.font())
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addWidget(self.use_tools)
        layout.addWidget(self.tools, 1)
        return page

    def _send_row(self) -> QHBoxLayout:
        self.send = QPushButton("Send")
        self.send.setToolTip("Ctrl+Enter")
        self.send.setDefault(True)
        self.cancel = QPushButton("Cancel")
        self.cancel.setToolTip("Esc")
        self.start_proxy = QPushButton("Start the proxy")  # shown when it is not running
        row = QHBoxLayout()
        for button in (self.send, self.cancel, self.start_proxy):
            row.addWidget(button)
        return row

    def _answer_side(self) -> LegView:
        """The answer's view, with "Run in real clients" as a tab of its own (and its own
        Run button); its widgets also by the names tests and the benchmark use."""
        self.view = v = LegView()
        self.real_clients = RealClientsPanel(run_button=True)
        self.run_clients = self.real_clients.run_button
        v.tabs.addTab(self.real_clients, "Real clients")
        self.frames, self.frames_model, self.raw = v.frames, v.frames_model, v.raw
        self.answer, self.tool_tree, self.timing = v.answer, v.tool_tree, v.timing
        self.findings, self.findings_model, self.verdict = v.findings, v.findings_model, v.verdict
        return v

    def _connect_signals(self) -> None:
        self.send.clicked.connect(self.start)
        self.cancel.clicked.connect(self.stop)
        self.real_clients.run_requested.connect(self.start_real_clients)
        for keys, slot in (("Ctrl+Return", self.start), ("Ctrl+Enter", self.start)):
            QShortcut(QKeySequence(keys), self).activated.connect(slot)
        QShortcut(QKeySequence("Esc"), self).activated.connect(self.stop)
        self.refresh_models.clicked.connect(self.list_models)
        self.keep.clicked.connect(self.keep_turn)
        self.forget.clicked.connect(self._forget_turn)
        self.clear_turns.clicked.connect(self._clear_turns)

    # -- the composition -------------------------------------------------------------------

    def composition(self) -> Composition:
        protocol = self.protocol.currentText()
        if self.target.currentText() == EMBEDDED:
            url, key = sdk_base_url(self.control.url or "", protocol), self.control.key
        else:
            url, key = self.url.text(), self.key.text()
        reasoning_text = self.reasoning.currentText()
        reasoning: str | int | None = None
        if reasoning_text != "default":
            reasoning = int(reasoning_text) if reasoning_text.isdigit() else reasoning_text
        temperature = self.temperature.value()
        message = self.prompt.toPlainText()
        return Composition(
            url=url,
            protocol=protocol,
            model=self.model.currentText(),
            key=key,
            system=self.system.toPlainText(),
            # After tool results the model answers them: no empty user message then.
            turns=[*self.turns, Turn("user", message)]
            if message.strip() or not self.turns
            else list(self.turns),
            tools=self.tools.toPlainText() if self.use_tools.isChecked() else [],
            params=Params(
                stream=self.stream.isChecked(),
                include_usage=self.include_usage.isChecked(),
                max_tokens=self.max_tokens.value() or None,
                temperature=None if temperature < 0 else round(temperature, 2),
                reasoning=reasoning,
            ),
        )

    def state(self) -> dict[str, Any]:
        """What the pane keeps across restarts: the request, never a key."""
        return {
            **self.form.state(),
            "system": self.system.toPlainText(),
            "prompt": self.prompt.toPlainText(),
            "tools": self.tools.toPlainText(),
            "use_tools": self.use_tools.isChecked(),
            "turns": [
                [t.role, t.text] for t in self.turns if t.role != "tool" and not t.tool_calls
            ],
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Back to a :meth:`state` (unknown or ill-typed entries are skipped)."""
        self.form.restore(state)
        for name, setter in (
            ("system", self.system.setPlainText),
            ("prompt", self.prompt.setPlainText),
            ("tools", self.tools.setPlainText),
        ):
            value = typed(state, name, str)
            if value is not None:
                setter(value)
        use_tools = typed(state, "use_tools", bool)
        if use_tools is not None:
            self.use_tools.setChecked(use_tools)
        turns = state.get("turns")
        if isinstance(turns, list):
            self.turns = [
                Turn(role, text)
                for role, text in (t for t in turns if isinstance(t, list) and len(t) == 2)
                if role in ("user", "assistant") and isinstance(text, str)
            ]
            self._show_turns()

    # -- sending ----------------------------------------------------------------------------

    def proxy_down(self) -> bool:
        """The target is the embedded proxy and it is not running: said, with Start."""
        return self.target.currentText() == EMBEDDED and self.proxy_prompt.check()

    def start(self) -> None:
        """Send (a new request each time: re-send is send again)."""
        if self._task is not None and not self._task.done():
            return
        if self.proxy_down():
            return
        try:
            composition = self.composition()
            callbacks = self.view.callbacks(on_status=self.status.setText)
            session = ClientSession(composition, callbacks=callbacks, analyser=self.analyser)
        except ValueError as exc:  # bad tool JSON, say: said where the user looks
            self.status.setText(str(exc))
            return
        self.view.sent_by = CLIENT_PANE  # no client StreamScope knows: it sent this itself
        self._begin(session)

    def replay(self, leg: Leg, request_body: dict[str, Any] | None = None) -> None:
        """Show a captured leg here as if it had just been received (no network)."""
        if self._task is not None and not self._task.done():
            self.stop()
        self._fill_from_body(leg, request_body)
        session = replay_session(
            leg,
            self.view.callbacks(on_status=self.status.setText),
            request_body=request_body,
            analyser=self.analyser,
        )
        self.view.sent_by = REPLAYED  # (the leg comes without who sent it)
        self._begin(session)

    def _begin(self, session: ClientSession) -> None:
        self.result = None
        self.session = session
        self.real_clients.reset()  # the last answer's run is not this one's
        self.view.begin(session)
        self._task = asyncio.ensure_future(self._run(session))

    def stop(self) -> None:
        if self.session is not None:
            self.session.cancel()

    async def _run(self, session: ClientSession) -> ClientResult | None:
        result = await session.run()
        if session is not self.session:  # replaced by a newer one meanwhile
            return result
        self.view.finish(result)
        self.result = result
        return result

    def start_real_clients(self) -> asyncio.Task[Any] | None:
        """Run the current session's leg in the real clients (the Real clients tab)."""
        result = self.result
        if result is None or (self._task is not None and not self._task.done()):
            self.real_clients.reveal()
            self.real_clients.status.setText("Send a request and let it finish first.")
            return None
        return self.real_clients.start(
            result.leg,
            label="this answer",
            stream_asked=result.stream_asked,
            report=result.lint,
        )

    async def run_real_clients(self) -> None:
        if (task := self.start_real_clients()) is not None:
            await task

    def _fill_from_body(self, leg: Leg, body: dict[str, Any] | None) -> None:
        """The compose fields a replayed flow's request shows (protocol, model, stream),
        read by the protocol's codec; a body it rejects changes nothing but the protocol.
        A body that names no model or stream (Gemini's: its path does) keeps the model,
        and a leg that came as a stream was asked for one."""
        protocol = leg.protocol
        if self.protocol.findText(protocol) < 0:
            return
        self.protocol.setCurrentText(protocol)
        try:
            request = get_codec(protocol).decode_request(body) if body else None
        except ValueError:  # RequestError: a malformed captured request
            return
        if request is not None:
            if request.model:
                self.model.setCurrentText(request.model)
            self.stream.setChecked(request.stream or (leg.streamed and bool(leg.frames)))

    # -- models and conversation ------------------------------------------------------------

    def list_models(self) -> None:
        if self.proxy_down():
            return
        try:
            composition = self.composition()
        except ValueError as exc:
            self.status.setText(str(exc))
            return
        asyncio.ensure_future(self._list_models(composition))

    async def _list_models(self, composition: Composition) -> None:
        self.status.setText("listing models…")
        try:
            ids = await fetch_models(composition)
        except ValueError as exc:
            self.status.setText(str(exc))
            return
        current = self.model.currentText()
        self.model.clear()
        self.model.addItems(ids)
        self.model.setCurrentText(current if current else (ids[0] if ids else ""))
        self.status.setText(f"{len(ids)} models")

    def keep_turn(self) -> None:
        """The message and its answer join the conversation (tool calls get a result
        each, :data:`TOOL_RESULT`, to edit in a follow-up)."""
        session, result = self.session, self.result
        if session is None or result is None or result.response is None:
            self.status.setText("Nothing to add: send a message first.")
            return
        composition = session.composition
        if composition is None:
            composition = self.composition()
        calls = result.response.choices[0].tool_calls if result.response.choices else []
        follow = with_tool_results(
            composition, result.response, {call.id: TOOL_RESULT for call in calls}
        )
        self.turns = [t for t in follow.turns if isinstance(t, Turn)]  # ours: all Turns
        self.prompt.setPlainText("")
        self._show_turns()
        self.compose_tabs.setCurrentIndex(1)

    def _forget_turn(self) -> None:
        if self.turns:
            self.turns.pop()
            self._show_turns()

    def _clear_turns(self) -> None:
        self.turns = []
        self._show_turns()

    def _show_turns(self) -> None:
        self.conversation.clear()
        for turn in self.turns:
            text = turn.text
            if turn.tool_calls:
                text += "".join(f"\n→ {c.name}({c.arguments})" for c in turn.tool_calls)
            if turn.tool_results:
                text += "\n".join(f"← {r.call_id}: {r.text}" for r in turn.tool_results)
            QTreeWidgetItem(self.conversation, [turn.role, text.strip()])
        self.compose_tabs.setTabText(1, f"Conversation ({len(self.turns)})")

    def close_pane(self) -> None:
        self.stop()
        self.real_clients.cancel()
        self.view.stop()


__all__ = ["ClientPane"]
