"""One reading of a leg (``analysis/reading.py``): decoded once, and every view taken from
that decoding — the numbered events as the admin API shows them, the assembled answer
(a stream's, or a whole body's), the timing and chart series, and the lint report for
what the request asked and how the flow ended. (The headers and times a captured leg
passes to the lint: test_reading_leg_lint.py.)"""

from __future__ import annotations

import json

from streamscope.analysis.decode import decode_leg
from streamscope.analysis.reading import LegReading, read_leg
from streamscope.analysis.timing import series_of, timing_of
from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.model.events import TextDelta
from streamscope.model.response import Response, TextOut
from streamscope.wire import decode_all
from tests.lint.answers import whole_body
from tests.lint.streams import CHAT_TEXT, native, payloads

SSE = [("content-type", "text/event-stream")]


def stream_leg(data: bytes, headers_ns: int | None = None, truncated: bool = False) -> Leg:
    frames = [CapturedFrame(f.raw, 1_000_000 * n) for n, f in enumerate(decode_all(data))]
    return Leg(
        "openai-chat", 200, list(SSE), headers_ns=headers_ns, frames=frames, truncated=truncated
    )


def chat_text() -> str:
    return "".join(
        c["delta"].get("content") or "" for p in payloads(CHAT_TEXT) for c in p["choices"]
    )


def test_the_events_are_numbered_by_their_frames_as_the_api_shows_them() -> None:
    reading = LegReading(stream_leg(native(CHAT_TEXT)))
    shown = reading.events_json()
    assert [(e["frame"], e["type"]) for e in shown[:2]] == [(0, "message_start"), (1, "text_delta")]
    assert [e["frame"] for e in shown] == [n for n, _ in reading.events]
    texts = [e["text"] for e in shown if e["type"] == "text_delta"]
    assert "".join(texts) == chat_text()
    assert sum(isinstance(e, TextDelta) for _, e in reading.events) == len(texts)


def answer_text(response: Response | None) -> str | None:
    if response is None:
        return None
    return "".join(p.text for p in response.choices[0].parts if isinstance(p, TextOut))


def test_the_answer_of_a_stream_or_of_a_whole_body() -> None:
    streamed = LegReading(stream_leg(native(CHAT_TEXT))).answer
    assert streamed is not None and answer_text(streamed) == chat_text()
    body = json.dumps(whole_body(CHAT_TEXT)).encode()
    whole = Leg("openai-chat", 200, [("content-type", "application/json")], body=body)
    answered = LegReading(whole).answer
    assert answered is not None and answer_text(answered) == chat_text()
    assert answered.usage == streamed.usage
    not_a_response = Leg("openai-chat", 200, body=b'{"object": "list", "data": []}')
    assert LegReading(not_a_response).answer is None
    assert LegReading(Leg("", 200, body=body)).answer is None  # no protocol to read it by


def test_timing_and_series_agree_with_reading_them_alone() -> None:
    leg = stream_leg(native(CHAT_TEXT), headers_ns=500_000)
    reading = read_leg(leg)
    decoded = decode_leg(leg)  # a decoding of its own, and each view scanning it alone
    assert reading.timing == timing_of(leg, decoded) and reading.series == series_of(leg, decoded)
    assert reading.timing.frames == len(reading.decoded.frames)


def test_the_lint_for_how_the_leg_ended() -> None:
    assert LegReading(Leg("openai-chat")).lint is None  # no answer at all
    unknown = stream_leg(b'data: {"hello": "world"}\n\n')
    unknown.protocol = ""
    assert LegReading(unknown).lint is None  # no protocol to lint it as
    half = b"".join(f.raw for f in decode_all(native(CHAT_TEXT))[:10])
    blamed = LegReading(stream_leg(half)).lint
    assert blamed is not None and blamed.errors
    cancelled = read_leg(stream_leg(half), cancelled=True).lint
    assert cancelled is not None and cancelled.cancelled and cancelled.errors == []
    cut = LegReading(stream_leg(half, truncated=True)).lint
    assert cut is not None and cut.errors == []
    assert cut.cut == "the flow outgrew the capture's size limit"
    told = LegReading(stream_leg(half, truncated=True), cut="capture paused").lint
    assert told is not None and told.cut == "capture paused"
