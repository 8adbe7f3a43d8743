"""A whole-body answer has a view: a non-streamed answer or an error
answer replayed into a leg view shows its status, headers and body (pretty JSON, the
raw bytes on a toggle) where the frames would be, and a stream after it shows frames
again (app/streamscope/gui/body_view.py, wired in gui/leg_view.py)."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QApplication

from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.client import replay_session
from streamscope.gui.body_view import pretty_body, shows_body, status_line
from streamscope.gui.leg_view import LegView
from streamscope.gui.models.common import TONE
from streamscope.wire import decode_all
from tests.lint.streams import BROKEN

MS = 1_000_000
ERROR = {"error": {"message": "The server is overloaded", "type": "server_error"}}
ERROR_BODY = json.dumps(ERROR, separators=(",", ":")).encode()
JSON_HEADERS = [("content-type", "application/json"), ("x-request-id", "req_1")]


async def replayed(view: LegView, leg: Leg) -> None:
    session = replay_session(leg, view.callbacks())
    view.begin(session)
    view.finish(await session.run())


def test_the_pieces() -> None:
    assert status_line(503) == "HTTP 503 Service Unavailable"
    assert status_line(599) == "HTTP 599" and status_line(None) == "no status"
    assert pretty_body(b'{"a":[1]}') == '{\n  "a": [\n    1\n  ]\n}'
    assert pretty_body(b"upstream connect error") is None
    assert pretty_body(b"\xff\xfe") is None
    assert shows_body(Leg("openai-chat", 200, body=b"{}"))
    assert shows_body(Leg("openai-chat", 502))  # an error with nothing at all
    assert not shows_body(Leg("openai-chat", 200, frames=[CapturedFrame(b"data: {}\n\n", 1)]))


async def test_an_error_answer_shows_status_headers_and_body(qapp: QApplication) -> None:
    view = LegView("Client leg")
    try:
        leg = Leg("openai-chat", 503, JSON_HEADERS, 0, 5 * MS, body=ERROR_BODY, ended_ns=6 * MS)
        await replayed(view, leg)
        body = view.left.body
        assert view.left.currentWidget() is body and not view.frames.isVisibleTo(view)
        assert body.status.text().startswith("HTTP 503 Service Unavailable")
        assert TONE["error"].name() in body.status.styleSheet()
        assert body.headers.toPlainText() == "content-type: application/json\nx-request-id: req_1"
        assert json.loads(body.body.toPlainText()) == ERROR
        assert body.body.toPlainText().startswith('{\n  "error": {')  # pretty
        body.raw_toggle.setChecked(True)
        assert body.body.toPlainText() == ERROR_BODY.decode()
        body.raw_toggle.setChecked(False)
        assert body.body.toPlainText().startswith('{\n  "error"')
    finally:
        view.stop()
        view.deleteLater()


async def test_a_non_streamed_answer_then_a_stream(qapp: QApplication) -> None:
    view = LegView()
    try:
        answer = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "Hello"},
                    "finish_reason": "stop",
                }
            ],
        }
        leg = Leg("openai-chat", 200, JSON_HEADERS, 0, 5 * MS, body=json.dumps(answer).encode())
        await replayed(view, leg)
        assert view.left.currentWidget() is view.left.body
        assert view.left.body.status.text() == "HTTP 200 OK"
        assert json.loads(view.left.body.body.toPlainText()) == answer
        assert view.answer.toPlainText() == "Hello"  # the answer pane still reads it
        raw = (BROKEN / "chat-missing-done.sse").read_bytes()
        frames = [CapturedFrame(f.raw, (10 + n) * MS) for n, f in enumerate(decode_all(raw))]
        stream = Leg("openai-chat", 200, [("content-type", "text/event-stream")], 0, MS, frames)
        await replayed(view, stream)
        assert view.left.currentWidget() is view.left.frames  # the next request: frames
        assert view.frames_model.rowCount() == len(frames) > 0
    finally:
        view.stop()
        view.deleteLater()


async def test_a_body_that_is_no_json_is_shown_raw(qapp: QApplication) -> None:
    view = LegView()
    try:
        leg = Leg("openai-chat", 502, [("content-type", "text/plain")], 0, MS, body=b"bad gateway")
        await replayed(view, leg)
        body = view.left.body
        assert body.body.toPlainText() == "bad gateway" and not body.raw_toggle.isEnabled()
    finally:
        view.stop()
        view.deleteLater()
