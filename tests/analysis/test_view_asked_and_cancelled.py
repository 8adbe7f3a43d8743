"""What the analysis makes of a leg for what its request asked and how its flow ended:
``asked_to_stream`` reads the request as its codec does, and a stream the client
cancelled is not blamed for its missing end (``leg_lint(cancelled=True)``; which outcomes
are cancels: ``capture.outcome.is_cancelled``, tests/capture/test_outcome.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamscope.analysis.view import asked_to_stream, leg_lint
from streamscope.capture.flow import CapturedFrame, Leg, RequestRecord
from streamscope.lint.report import END_RULES
from streamscope.recording import read_recording
from tests.lint.streams import ANT_TEXT, CHAT_TEXT, RESP_TEXT
from tests.support import FIXTURES


def test_asked_to_stream_reads_the_request_as_its_codec_does() -> None:
    def req(body: dict[str, Any]) -> RequestRecord:
        return RequestRecord(body=json.dumps(body).encode())

    chat = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert asked_to_stream(req({**chat, "stream": True}), "openai-chat") is True
    assert asked_to_stream(req(chat), "openai-chat") is False
    assert asked_to_stream(req({"model": "m", "input": "hi"}), "responses") is False
    # LM Studio's native API streams only when asked to (its codec's default is no stream).
    assert asked_to_stream(req({"model": "m", "input": "hi"}), "lmstudio") is False
    assert asked_to_stream(req({"model": "m", "input": "hi", "stream": True}), "lmstudio")
    assert asked_to_stream(RequestRecord(method="GET"), "openai-chat") is None


@pytest.mark.parametrize("protocol", ["gemini", ""])
def test_a_gemini_request_is_read_from_its_path_whose_body_never_says(protocol: str) -> None:
    body = json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).encode()
    base = "http://127.0.0.1:8787/v1beta/models/gemini-2.5-flash"

    def asked(url: str) -> bool | None:
        return asked_to_stream(RequestRecord(url=url, body=body), protocol)

    assert asked(base + ":streamGenerateContent?alt=sse") is True
    assert asked(base + ":streamGenerateContent") is True  # (the JSON array form)
    assert asked(base + ":generateContent") is False
    assert asked(base + ":generateContent?key=AIza" + "x" * 35) is False


# -- a stream the client cancelled --------------------------------------------------------


@pytest.mark.parametrize("source", [CHAT_TEXT, ANT_TEXT, RESP_TEXT])
def test_a_cancelled_stream_is_not_blamed_for_its_missing_end(source: str) -> None:
    rec = read_recording((FIXTURES / source).read_bytes())
    assert rec.protocol is not None
    half = [CapturedFrame(f.raw, 1) for f in rec.frames[: len(rec.frames) // 2]]
    leg = Leg(rec.protocol, 200, [("content-type", "text/event-stream")], frames=half)
    blamed = leg_lint(leg)
    assert blamed is not None and any(blamed.verdict(p.id) for p in blamed.profiles)
    report = leg_lint(leg, cancelled=True)
    assert report is not None and report.cancelled
    assert all(report.verdict(p.id) is None for p in report.profiles)
    assert report.errors == []
    assert report.headline().startswith("cancelled by the client")
    assert all(v.startswith("cancelled by the client") for v in report.verdicts().values())
    assert {f.rule_id for f in report.findings if f.excused} <= END_RULES | {
        "anthropic.block-order",
        "anthropic.message-order",
    }
