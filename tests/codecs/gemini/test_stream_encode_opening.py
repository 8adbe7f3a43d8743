"""The Gemini stream's opening (GeminiStreamEncoder.opening): a first chunk as soon as
the upstream's stream opened, before any content, that google-genai reads as nothing (no
text, no call), so every other protocol's recording reaches the SDK with the same answer
with or without it, and the opening is always the first frame out when the upstream's
first frame carried no content."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.genai import types

from streamscope.codecs import get_codec
from streamscope.codecs.gemini import CODEC
from streamscope.model.assemble import assemble
from streamscope.model.events import Error, MessageStart, TextDelta, Usage
from streamscope.recording import read_recording
from streamscope.wire.decoder import decode_all
from tests.codecs.gemini.test_stream_encode import others, read, sdk_stream


def relayed(path: Path) -> tuple[list[list[bytes]], list[bytes]]:
    """A recording encoded frame by frame as the proxy's pipeline does it (an upstream
    frame whose events wrote nothing asks for the opening), and encoded without
    openings: (the frames out per upstream frame, the frames out without openings)."""
    rec = read_recording(path.read_bytes())
    decoder = get_codec(rec.protocol).stream_decoder()
    encoder, plain = CODEC.stream_encoder(), CODEC.stream_encoder()
    per_frame: list[list[bytes]] = []
    flat: list[bytes] = []
    for frame in rec.frames:
        events = decoder.decode(frame)
        out = [f for ev in events for f in encoder.encode(ev)]
        if not out and events:
            out = encoder.opening()
        per_frame.append(out)
        flat += [f for ev in events for f in plain.encode(ev)]
    per_frame.append([f for ev in decoder.finish() for f in encoder.encode(ev)] + encoder.finish())
    return per_frame, flat + plain.finish()


def test_the_opening_is_one_empty_part_once_and_only_before_content() -> None:
    encoder = CODEC.stream_encoder()
    assert encoder.opening() == []  # (nothing opened yet)
    assert encoder.encode(MessageStart(id="resp-1", model="m")) == []
    assert encoder.encode(Usage(input_tokens=7)) == []
    (frame,) = encoder.opening()
    chunk = json.loads(decode_all(frame)[0].data or "")
    assert chunk["candidates"] == [
        {"content": {"parts": [{"text": ""}], "role": "model"}, "index": 0}
    ]
    assert chunk["responseId"] == "resp-1" and chunk["modelVersion"] == "m"
    assert chunk["usageMetadata"]["promptTokenCount"] == 7
    assert encoder.opening() == []
    assert encoder.encode(TextDelta(text="hi")) and encoder.opening() == []


@pytest.mark.parametrize("path", others(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_stream_opens_when_the_upstream_does_and_reads_the_same(path: Path) -> None:
    per_frame, plain = relayed(path)
    rec = read_recording(path.read_bytes())
    events = get_codec(rec.protocol).stream_decoder().decode_stream(rec.frames)
    if any(isinstance(e, Error) for e in events):
        pytest.skip("an error stream: its envelope is tested on its own")
    first = next(i for i, out in enumerate(per_frame) if out)
    opened = get_codec(rec.protocol).stream_decoder().decode(rec.frames[0])
    if opened:  # the upstream's first frame said something: the client hears at once
        assert first == 0, per_frame[:3]
    sent = b"".join(f for out in per_frame for f in out)
    assert read(sdk_stream(sent)) == read(sdk_stream(b"".join(plain)))
    # ... and it reads back as the same answer through the Gemini decoder.
    back = CODEC.stream_decoder().decode_stream(decode_all(sent))
    was = assemble(events).choice(0)
    assert assemble(back).choice(0).text == was.text + was.refusal  # (a refusal goes as text)
    for frame in decode_all(sent):
        types.GenerateContentResponse.model_validate(json.loads(frame.data or ""))
