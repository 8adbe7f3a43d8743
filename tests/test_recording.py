"""Recorded streams on disk: SSE bytes kept byte for byte, JSON lines framed the way their
protocol frames them, the protocol told from the frames, and a clear error for a file that
is no recording."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.model.events import Error
from streamscope.model.response import Choice, Response, TextOut
from streamscope.recording import (
    RecordingError,
    detect_protocol,
    read_recording,
    response_protocol,
)
from streamscope.wire import decode_all
from tests.support import FIXTURES, fixture_files


def folder_protocol(path: Path) -> str:
    """The protocol a recording's folder (and SOURCES.md) says it is."""
    folder = path.parent.name
    if folder == "lmstudio":
        return "responses" if "v1-responses" in path.name else "lmstudio"
    return "openai-chat" if folder == "openai-compatible-chat" else folder


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_recording_is_read_as_the_protocol_it_is(path: Path) -> None:
    data = path.read_bytes()
    rec = read_recording(data)
    assert rec.protocol == folder_protocol(path)
    assert rec.framing == ("sse" if path.suffix == ".sse" else "jsonl")
    if rec.framing == "sse":
        assert b"".join(f.raw for f in rec.frames) == data  # byte for byte
    else:
        lines = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
        datas = [f.data for f in rec.frames if f.data != "[DONE]"]
        assert [json.loads(d) for d in datas if d is not None] == lines
        # each frame's raw bytes are the SSE the protocol sends, and they decode to it
        for frame in rec.frames:
            [again] = decode_all(frame.raw)
            assert (again.event, again.data) == (frame.event, frame.data)


def test_json_lines_are_framed_as_their_protocol_frames_them() -> None:
    anthropic = read_recording((FIXTURES / "anthropic" / "vercel_text_sonnet45.jsonl").read_bytes())
    assert all(f.event == json.loads(f.data or "")["type"] for f in anthropic.frames)
    path = FIXTURES / "openai-chat" / "vercel_openai-text_gpt41nano_obfuscation_usage.jsonl"
    chat = read_recording(path.read_bytes())
    assert all(f.event is None for f in chat.frames)
    assert chat.frames[-1].data == "[DONE]" and chat.frames[-1].raw == b"data: [DONE]\n\n"
    assert [f.data for f in chat.frames].count("[DONE]") == 1


def test_the_protocol_can_be_given_and_frames_joined_by_single_newlines_are_read() -> None:
    payload = {"id": "c", "object": "chat.completion.chunk", "choices": []}
    joined = f"data: {json.dumps(payload)}\ndata: {json.dumps(payload)}\n\n".encode()
    assert read_recording(joined).protocol == "openai-chat"
    rec = read_recording(b'data: {"type": "mystery"}\n\n', protocol="anthropic")
    assert rec.protocol == "anthropic" and len(rec.frames) == 1
    assert detect_protocol(decode_all(b'data: {"type": "mystery"}\n\n' * 9)) is None


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b" \n\t", "the file is empty"),
        (b"hello, world\n", "no SSE data frames"),
        (b": just a keepalive\n\n", "no SSE data frames"),
        (b'{"type": "message_start"}\nnot json\n', "line 2 is not JSON"),
        (b'{"type": "message_start"}\n[1, 2]\n', "line 2 is not a JSON object"),
        (b'data: {"type": "mystery"}\n\n', "cannot tell which protocol"),
    ],
)
def test_what_is_no_recording_says_why(data: bytes, why: str) -> None:
    with pytest.raises(RecordingError, match=why):
        read_recording(data)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_whole_response_body_is_told_by_its_shape(protocol: str) -> None:
    resp = Response("resp_1", "m", choices=[Choice(parts=[TextOut("hi")], finish="stop")])
    body = json.dumps(get_codec(protocol).encode_response(resp)).encode()
    assert response_protocol(body) == protocol


def test_a_body_that_is_no_response_is_none() -> None:
    assert response_protocol(b"<html>502</html>") is None
    assert response_protocol(b'{"hello": "world"}') is None
    error = json.dumps(get_codec("anthropic").encode_error(Error("x"))).encode()
    assert response_protocol(error) is None  # an error envelope is no answer
