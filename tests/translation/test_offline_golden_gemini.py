"""Golden translation from Gemini: every recorded Gemini stream, translated into each
client protocol, is assembled by that protocol's official SDK stream helper into what the
recording said. (The recordings are ``.chunks.txt`` files, framed as Google frames them by
``tests.codecs.gemini.recorded``, so the main golden suite's file list does not hold them;
the other direction, every recording into Gemini read by google-genai, is in
tests/codecs/gemini/test_stream_encode.py.)"""

from __future__ import annotations

from pathlib import Path

import anthropic
import openai
import pytest

from streamscope.findings import errors
from streamscope.translation.offline import translate_frames
from streamscope.wire.decoder import decode_all
from tests.codecs.gemini.recorded import STREAMS, sse_bytes
from tests.translation.test_offline_golden import CLIENTS, assert_read_as_said


def test_there_are_gemini_recordings_of_text_reasoning_calls_and_a_block() -> None:
    names = " ".join(p.name for p in STREAMS)
    for kind in ("text", "reasoning", "tool-call", "prompt-block", "partial-args"):
        assert kind in names


@pytest.mark.parametrize("target", list(CLIENTS))
@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.name)
def test_a_gemini_recording_reaches_each_sdk_as_it_was(path: Path, target: str) -> None:
    out, pipeline = translate_frames(decode_all(sse_bytes(path)), "gemini", target)
    resp = pipeline.assembler.response
    assert errors(pipeline.decoder.findings) == []
    assert resp.choice(0).parts or resp.choice(0).finish is not None, "nothing decoded"
    assert_read_as_said(CLIENTS[target](b"".join(out)), resp, target)


def test_the_sdks_errors_are_not_swallowed() -> None:
    # (the recordings hold no error stream; a Google error element must raise in each SDK)
    element = b'data: {"error": {"code": 429, "message": "quota gone", "status": '
    element += b'"RESOURCE_EXHAUSTED"}}\r\n\r\n'
    for target, client in CLIENTS.items():
        out, _ = translate_frames(decode_all(element), "gemini", target)
        with pytest.raises((openai.APIError, anthropic.APIError)) as info:
            client(b"".join(out))
        assert "quota gone" in str(info.value), target
