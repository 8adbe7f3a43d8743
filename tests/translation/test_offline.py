"""Offline translation of a recording (the ``translate`` command's core): the target stream
means what the source said, and a recording that stops early is closed, not failed."""

from __future__ import annotations

import pytest

from streamscope.codecs import PROTOCOLS, EncodeOptions, get_codec
from streamscope.findings import Finding, errors
from streamscope.model.assemble import assemble
from streamscope.model.events import Error, Event, MessageStart
from streamscope.translation.offline import translate_frames
from streamscope.wire import decode_all
from tests.support import FIXTURES, load

SOURCE = FIXTURES / "anthropic" / "ant-py_text-then-tool-use.sse"


def read_back(out: list[bytes], target: str) -> tuple[list[Event], list[Finding]]:
    decoder = get_codec(target).stream_decoder()
    events = decoder.decode_stream(decode_all(b"".join(out)))
    return events, decoder.findings


@pytest.mark.parametrize("target", PROTOCOLS)
def test_the_target_stream_means_what_the_recording_said(target: str) -> None:
    rec = load(SOURCE)
    out, pipeline = translate_frames(rec.frames, rec.protocol, target)
    events, findings = read_back(out, target)
    assert errors(findings) == [] and "missing-terminator" not in {f.code for f in findings}
    source, again = pipeline.assembler.response, assemble(events)
    assert again.choice(0).text == source.choice(0).text
    calls = [(t.name, t.parsed_arguments()) for t in again.choice(0).tool_calls]
    assert calls == [(t.name, t.parsed_arguments()) for t in source.choice(0).tool_calls]


@pytest.mark.parametrize("target", PROTOCOLS)
def test_a_recording_that_stops_early_is_closed_cleanly(target: str) -> None:
    rec = load(SOURCE)
    cut = rec.frames[: len(rec.frames) // 2]
    out, pipeline = translate_frames(cut, rec.protocol, target)
    assert "missing-terminator" in {f.code for f in pipeline.findings}  # the source says so
    events, findings = read_back(out, target)
    assert "missing-terminator" not in {f.code for f in findings}  # the target is whole
    assert not any(isinstance(e, Error) for e in events)  # and not made an error
    assert pipeline.closed and pipeline.failure is None


def test_encode_options_reach_the_encoder() -> None:
    rec = load(SOURCE)
    out, _ = translate_frames(rec.frames, rec.protocol, "openai-chat", EncodeOptions(model="alias"))
    events, _ = read_back(out, "openai-chat")
    assert [e.model for e in events if isinstance(e, MessageStart)] == ["alias"]
