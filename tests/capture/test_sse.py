"""The ``.sse`` export and import (app/streamscope/capture/sse.py): the export is the leg's
exact bytes, the ``.timing`` sidecar has one time per frame the replay reads (however the
bytes were chunked), and ``import_sse`` reads both back; JSON lines and a whole body
import too, and what does not fit is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.analysis.reading import LegReading
from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.capture.sse import export_sse, export_timing, import_sse, leg_frames
from streamscope.recording import RecordingError, read_recording
from tests.capture.test_har import ANTHROPIC_TOOL, CHAT_SSE, MS, RESPONSES_TEXT, body_flow
from tests.support import FIXTURES, fixture_files, load

# -- .sse export and import ----------------------------------------------------------------------

FIXTURE_FILES = fixture_files()


def _leg(path: Path, step_ms: float = 1.0) -> Leg:
    rec = load(path)
    frames = [CapturedFrame(f.raw, round((7 + i * step_ms) * MS)) for i, f in enumerate(rec.frames)]
    return Leg(rec.protocol, 200, [("content-type", "text/event-stream")], frames=frames)


def _rechunked(leg: Leg, size: int) -> Leg:
    """The same bytes in chunks of ``size`` bytes, each at its last byte's frame time."""
    data, times = b"", []
    for f in leg.frames:
        data += f.raw
        times += [f.t_ns] * len(f.raw)
    chunks = [
        CapturedFrame(data[i : i + size], times[min(i + size, len(data)) - 1])
        for i in range(0, len(data), size)
    ]
    return Leg(leg.protocol, leg.status, leg.headers, frames=chunks)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_sse_export_is_the_legs_bytes_and_timing_fits_the_replay(path: Path) -> None:
    leg = _leg(path)
    data = export_sse(leg)
    assert data == b"".join(f.raw for f in load(path).frames)
    if path.suffix == ".sse":
        assert data == path.read_bytes()
    offsets = json.loads(export_timing(leg))
    assert len(offsets) == len(read_recording(data).frames)
    assert offsets == [i / 1e3 for i in range(len(leg.frames))]
    rechunked = _rechunked(leg, 7)
    assert export_sse(rechunked) == data
    # A frame now completes with a chunk that may carry the next frame's start.
    again = json.loads(export_timing(rechunked))
    assert len(again) == len(offsets)
    bounds = zip(again, offsets, [*offsets[1:], offsets[-1]], strict=True)
    assert all(now <= new <= after for new, now, after in bounds)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 400), min_size=1, max_size=30), st.integers(0, 10**9))
def test_timing_fits_however_the_bytes_were_chunked(cuts: list[int], seed: int) -> None:
    data = ANTHROPIC_TOOL.read_bytes() + b"\n\n: keepalive\r\n\r\n"
    pieces, pos, t = [], 0, seed
    for cut in cuts:
        if pos >= len(data):
            break
        pieces.append(CapturedFrame(data[pos : pos + cut], t))
        pos, t = pos + cut, t + cut * 1000
    if pos < len(data):
        pieces.append(CapturedFrame(data[pos:], t))
    leg = Leg("anthropic", frames=pieces)
    offsets = json.loads(export_timing(leg))
    assert export_sse(leg) == data
    assert len(offsets) == len(read_recording(data).frames)
    assert offsets == sorted(offsets) and offsets[-1] == (pieces[-1].t_ns - seed) / 1e9
    assert [f.raw for _, f in leg_frames(leg)] == [f.raw for f in read_recording(data).frames]


def test_a_body_leg_exports_its_body_and_no_times() -> None:
    leg = body_flow().upstream_leg
    assert export_sse(leg) == leg.body
    assert export_timing(leg) == b"[]"


def test_import_reads_an_export_back() -> None:
    leg = _leg(CHAT_SSE, step_ms=2.5)
    flow = import_sse(export_sse(leg), export_timing(leg))
    got_leg = flow.upstream_leg
    assert [f.raw for f in got_leg.frames] == [f.raw for f in leg.frames]
    assert [f.t_ns for f in got_leg.frames] == [f.t_ns - 7 * MS for f in leg.frames]
    assert (got_leg.protocol, flow.client_protocol) == ("openai-chat",) * 2
    assert flow.info.imported and flow.info.outcome is None
    assert flow.upstream_request is None
    assert (
        flow.client_leg.raw() == got_leg.raw()
        and flow.client_leg.frames[0] is not got_leg.frames[0]
    )
    assert LegReading(got_leg).timing.tokens_per_second == LegReading(leg).timing.tokens_per_second
    without_times = import_sse(export_sse(leg)).upstream_leg
    assert {f.t_ns for f in without_times.frames} == {0}


def test_import_of_json_lines_and_of_a_whole_body() -> None:
    flow = import_sse(RESPONSES_TEXT.read_bytes())
    assert flow.upstream_leg.protocol == "responses"
    assert flow.upstream_leg.raw() == b"".join(f.raw for f in load(RESPONSES_TEXT).frames)
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}],
    }
    whole = import_sse(json.dumps(body, indent=2).encode())
    assert (whole.upstream_leg.body, whole.upstream_leg.protocol) == (
        json.dumps(body, indent=2).encode(),
        "openai-chat",
    )


def test_an_unknown_protocol_imports_with_none() -> None:
    flow = import_sse(b"data: hello\n\ndata: world\n\n", b"[0, 0.5]")
    assert flow.upstream_leg.protocol == ""
    assert [f.t_ns for f in flow.upstream_leg.frames] == [0, 500 * MS]
    assert import_sse(b"data: {}\n\n", protocol="anthropic").upstream_leg.protocol == "anthropic"


@pytest.mark.parametrize(
    ("data", "timing"),
    [
        (b"", None),
        (b"  \n", None),
        (b": only a comment\n\n", None),
        (b"data: x\n\n", b"[0, 1]"),  # two times for one frame
        (b"data: x\n\ndata: y\n\n", b"[1, 0.5]"),  # time going back
        (b"data: x\n\n", b'["0"]'),
        (b"data: x\n\n", b"[-1]"),
        (b"data: x\n\n", b"{"),
    ],
)
def test_import_refuses_what_does_not_fit(data: bytes, timing: bytes | None) -> None:
    with pytest.raises(ValueError):  # RecordingError is a ValueError
        import_sse(data, timing)


def test_import_refuses_an_unknown_protocol() -> None:
    with pytest.raises(RecordingError):
        import_sse(b"data: x\n\n", protocol="no-such-protocol")
