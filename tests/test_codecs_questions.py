"""The registry's answers about a body (codecs/__init__.py: one place each):
which protocol a whole response body is (``body_protocol``) and whether a request asked
for a stream (``stream_asked``), as each protocol's own codec reads them."""

from __future__ import annotations

import json

import pytest

from streamscope.codecs import PROTOCOLS, body_protocol, get_codec, stream_asked
from streamscope.model.response import Choice, Response, TextOut
from tests.lint.answers import whole_body
from tests.lint.streams import ANT_TEXT, CHAT_TEXT, RESP_TEXT

GEMINI = "http://127.0.0.1:8787/v1beta/models/gemini-2.5-flash"


@pytest.mark.parametrize(
    ("source", "protocol"),
    [(CHAT_TEXT, "openai-chat"), (ANT_TEXT, "anthropic"), (RESP_TEXT, "responses")],
)
def test_a_whole_body_is_the_protocol_whose_response_it_is(source: str, protocol: str) -> None:
    assert body_protocol(whole_body(source)) == protocol


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_each_codecs_own_response_is_its_own(protocol: str) -> None:
    codec = get_codec(protocol)
    answer = Response("r", "m", choices=[Choice(0, [TextOut("hi")], "stop")])
    assert body_protocol(json.loads(json.dumps(codec.encode_response(answer)))) == protocol


def test_what_is_no_response_has_no_protocol() -> None:
    for body in (None, [], {"error": {"message": "no"}}, {"object": "list", "data": []}, "x"):
        assert body_protocol(body) is None


def test_a_body_says_whether_it_asked_for_a_stream() -> None:
    chat = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert stream_asked({**chat, "stream": True}, "openai-chat") is True
    assert stream_asked(chat, "openai-chat") is False  # Chat's default: no stream
    assert stream_asked({**chat, "stream": True}, None) is True  # any protocol's reading
    assert stream_asked({"stream": True, "odd": 1}, "anthropic") is True  # not decodable
    assert stream_asked(None, "openai-chat") is None and stream_asked([1], None) is None


def test_a_gemini_request_says_it_in_its_url_only() -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "stream": True}
    assert stream_asked(body, "gemini", GEMINI + ":streamGenerateContent?alt=sse") is True
    assert stream_asked(body, "gemini", GEMINI + ":generateContent") is False
    assert stream_asked(body, "gemini") is None  # the body has no say, and no URL
    assert stream_asked(None, None, GEMINI + ":streamGenerateContent") is True
