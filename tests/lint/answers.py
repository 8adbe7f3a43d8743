"""Test answers for the rules of what an answer says (``lint/rules_answer.py``): real
recordings that end in the upstream's error, and whole JSON bodies — each a real
recording's answer, assembled and written as its protocol's non-stream response — with
one deliberate defect."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from streamscope.codecs import get_codec
from streamscope.model.assemble import assemble
from streamscope.recording import read_recording
from tests.lint.streams import ANT_TEXT, CHAT_TEXT, RESP_TEXT, native
from tests.support import FIXTURES

if TYPE_CHECKING:
    from tests.lint.cases import Case

CHAT_ERROR = (
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":'
    b'[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}\n\n'
    b'event: error\ndata: {"error":{"message":"upstream overloaded (key sk-abcdefghijklmnop1234)",'
    b'"type":"server_error","code":"overloaded"}}\n\n'
    b"data: [DONE]\n\n"
)
"""A Chat stream that ends in the upstream's error the way some providers frame it
(``event: error`` + ``data: {"error": …}``, then ``[DONE]``), with a key in its message."""


def whole_body(source: str) -> dict[str, Any]:
    """A recording's answer as its protocol's whole (non-stream) response body."""
    rec = read_recording((FIXTURES / source).read_bytes())
    assert rec.protocol is not None
    codec = get_codec(rec.protocol)
    decoder = codec.stream_decoder()
    events = [e for f in rec.frames for e in decoder.decode(f)] + decoder.finish()
    return codec.encode_response(assemble(events))


def body_bytes(source: str, edit: Callable[[dict[str, Any]], Any] | None = None) -> bytes:
    body = whole_body(source)
    if edit is not None:
        edit(body)
    return json.dumps(body).encode()


NO_STREAM = {"is_body": True, "stream_asked": False}


def answer_cases() -> list[Case]:
    """The cases for tests/lint/cases.py (imported here: cases.py imports this module)."""
    from tests.lint.cases import Case

    return [
        Case("stream.upstream-error", lambda: CHAT_ERROR),
        Case(
            "framing.body-not-a-response",
            lambda: body_bytes(CHAT_TEXT, lambda b: b.update(choices=[])),
            options=NO_STREAM,
        ),
        Case(
            "framing.error-body-ok-status",
            lambda: json.dumps({"error": {"message": "no such model", "type": "x"}}).encode(),
            options={**NO_STREAM, "protocol": "openai-chat"},
        ),
        Case(
            "framing.body-wrong-type",
            lambda: body_bytes(RESP_TEXT, lambda b: b.update(object="responses")),
            options={**NO_STREAM, "protocol": "responses"},
        ),
        Case(
            "framing.body-without-usage",
            lambda: body_bytes(ANT_TEXT, lambda b: b.pop("usage")),
            options=NO_STREAM,
        ),
    ]


__all__ = ["CHAT_ERROR", "NO_STREAM", "answer_cases", "body_bytes", "native", "whole_body"]
