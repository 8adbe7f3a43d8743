"""StreamPipeline: repair and passthrough, and what a broken stream gets appended."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from streamscope.analysis.reading import LegReading
from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.codecs import get_codec
from streamscope.model.events import Error
from streamscope.translation.pipeline import StreamPipeline
from streamscope.wire import decode_all
from tests.support import FIXTURES, fixture_files, load

SAME_PROTOCOL = [p for p in fixture_files() if load(p).protocol != "lmstudio"]


def run(path: Path, passthrough: bool, cut: int | None = None) -> tuple[bytes, StreamPipeline]:
    rec = load(path)
    pipe = StreamPipeline(get_codec(rec.protocol), get_codec(rec.protocol), passthrough=passthrough)
    out: list[bytes] = []
    for frame in rec.frames[:cut]:
        out += pipe.feed(frame)
    out += pipe.finish()
    return b"".join(out), pipe


@pytest.mark.parametrize("path", SAME_PROTOCOL, ids=lambda p: p.name)
def test_passthrough_forwards_bytes_and_still_knows_what_they_meant(path: Path) -> None:
    rec = load(path)
    body, passed = run(path, passthrough=True)
    forwarded = b"".join(f.raw for f in rec.frames)
    assert body.startswith(forwarded)  # unchanged; a stream that stops early gets an ending
    _, repaired = run(path, passthrough=False)
    # Decoding is deferred after the first content, yet the assembly is the same.
    assert passed.assembler.response.choices == repaired.assembler.response.choices
    assert passed.assembler.response.usage == repaired.assembler.response.usage


def test_passthrough_decodes_only_until_the_first_content() -> None:
    path = FIXTURES / "openai-chat" / "oai-py_json-object-long.sse"
    rec = load(path)
    pipe = StreamPipeline(get_codec(rec.protocol), get_codec(rec.protocol), passthrough=True)
    for frame in rec.frames:
        pipe.feed(frame)
    assert pipe.closed and pipe.first_token_ns is not None
    assert pipe.decoder.frame_index < 5  # the rest was only scanned for [DONE]
    assert pipe.finish() == []
    assert pipe.assembler.response.choice(0).text  # looking decodes the rest
    assert pipe.decoder.frame_index == len(rec.frames) - 1


@pytest.mark.parametrize("passthrough", [True, False])
def test_a_stream_cut_short_ends_with_an_error_frame_and_terminator(passthrough: bool) -> None:
    path = FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse"
    body, pipe = run(path, passthrough, cut=10)
    frames = [f for f in decode_all(body) if f.data]
    assert frames[-2].data is not None and frames[-2].data.startswith('{"error"')
    assert frames[-1].data == "[DONE]"
    assert pipe.assembler.response.error is not None
    assert pipe.assembler.response.error.code == "upstream_incomplete"


def test_passthrough_error_frame_without_terminator_gets_only_the_terminator() -> None:
    pipe = StreamPipeline(get_codec("responses"), get_codec("responses"), passthrough=True)
    head = load(FIXTURES / "responses" / "vercel_openai_error-then-response-failed.jsonl")
    out: list[bytes] = []
    for frame in head.frames[:3]:  # created, in_progress, error — no response.failed
        out += pipe.feed(frame)
    tail = pipe.finish()
    events = [f.event for f in decode_all(b"".join(tail))]
    assert events == ["response.failed"]  # the error frame itself is not written twice
    seq = [f.data for f in decode_all(b"".join(out + tail))]
    assert all('"sequence_number"' in d for d in seq if d)


def test_fail_after_the_terminator_writes_nothing() -> None:
    body, pipe = run(FIXTURES / "anthropic" / "ant-py_basic-text.sse", passthrough=False)
    assert pipe.closed and pipe.fail(Error("late")) == []


def test_passthrough_needs_the_same_protocol() -> None:
    with pytest.raises(ValueError, match="same protocol"):
        StreamPipeline(get_codec("openai-chat"), get_codec("anthropic"), passthrough=True)


@pytest.mark.parametrize("path", SAME_PROTOCOL, ids=lambda p: p.name)
def test_passthrough_usage_is_read_from_the_last_frames_alone(path: Path) -> None:
    rec = load(path)
    passed = StreamPipeline(get_codec(rec.protocol), get_codec(rec.protocol), passthrough=True)
    for frame in rec.frames:
        passed.feed(frame)
    _, repaired = run(path, passthrough=False)
    decoded: list[object] = []
    real = passed.decoder.decode
    passed.decoder.decode = lambda frame: decoded.append(frame) or real(frame)  # type: ignore[method-assign]
    # The proxy asks for usage without settling (which would decode every frame).
    assert passed.usage == repaired.assembler.response.usage
    assert decoded == []


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_a_stream_sent_with_single_newlines_is_read_line_by_line(path: Path) -> None:
    rec = load(path)
    if any(f.data is not None and "\n" in f.data for f in rec.frames):
        pytest.skip("a recording with multi-line data cannot be re-framed this way")
    wire = b"".join(f.raw for f in rec.frames)
    squeezed = wire.replace(b"\n\n", b"\n").rstrip(b"\n") + b"\n\n"
    frames = decode_all(squeezed)
    assert len(frames) == 1  # per the SSE spec: one event, its data lines joined
    _, reference = run(path, passthrough=False)
    pipe = StreamPipeline(get_codec(rec.protocol), get_codec(rec.protocol), on_incomplete="close")
    for frame in frames:
        pipe.feed(frame)
    pipe.finish()
    codes = {f.code for f in pipe.decoder.findings}
    assert "frames-joined-by-single-newline" in codes
    want, have = reference.assembler.response, pipe.assembler.response
    assert have.choices == want.choices and have.usage == want.usage


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_the_proxy_times_the_first_token_where_the_analysis_does(path: Path) -> None:
    """One TTFT: the frame the pipeline takes for the first token, in repair
    and in passthrough, is the one a captured leg's timing calls its first token."""
    rec = load(path)
    ms = 1_000_000
    frames = [replace(f, arrival_ns=i * ms) for i, f in enumerate(rec.frames)]
    leg = Leg(rec.protocol, 200, frames=[CapturedFrame(f.raw, f.arrival_ns) for f in frames])
    expected = LegReading(leg).timing.first_token_ms
    codec = get_codec(rec.protocol)
    for passthrough in (True, False) if rec.protocol != "lmstudio" else (False,):
        pipe = StreamPipeline(codec, codec, passthrough=passthrough)
        for frame in frames:
            pipe.feed(frame)
        got = pipe.first_token_ns
        assert (None if got is None else got / ms) == expected, passthrough
