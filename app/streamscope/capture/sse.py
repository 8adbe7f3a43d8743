"""The ``.sse`` export and import: a leg's exact bytes, its ``.timing`` sidecar, and back.

Export (what a replay folder of the demo upstream reads, ``demo/replay.py``):

- ``export_sse(leg)``: the leg's bytes exactly as the wire carried them (a streamed leg's
  frames joined, or a whole body as it is: save that one as ``.json``, which the demo
  serves as a body and never paces);
- ``export_timing(leg)``: the ``<name>.sse.timing`` sidecar, a JSON list with the arrival
  of each SSE frame in seconds since the leg's first byte. The frames are counted as
  :func:`streamscope.recording.read_recording` counts them in the exported bytes (the
  captured chunks are re-read with the SSE decoder; a frame arrived with the chunk that
  completed it), so the demo keeps the recorded pace.

Import (``import_sse``) makes a flow for offline analysis (timing, lint, the frame view)
from an ``.sse`` or ``.jsonl`` recording, or a whole JSON response body. There is one
leg, the stream as recorded: it is the flow's ``upstream`` leg, and ``client`` is a copy
of it (what a client of that protocol got in passthrough). There is no request
(``upstream_request`` is None). Frame times come from the ``.timing`` sidecar when one is
given (the first frame's offset is the time since the leg's first byte, the flow starts
at that first byte); without one every frame is at 0.

:func:`leg_frames` is the one way to read a captured leg as SSE frames with their times
(``streamscope.analysis.decode`` reads every leg through it, and the HAR export); a leg
streamed as one JSON array (served as JSON: Gemini without ``alt=sse``) is read as its
elements instead (:mod:`streamscope.wire.jsonarray`).
"""

from __future__ import annotations

import copy
import json
import time
import uuid

from streamscope.capture.flow import CapturedFrame, Flow, Leg
from streamscope.capture.info import FlowInfo
from streamscope.codecs import PROTOCOLS
from streamscope.recording import (
    RecordingError,
    detect_protocol,
    read_recording,
    response_protocol,
)
from streamscope.wire import FrameTooLarge, SSEDecoder, decode_all
from streamscope.wire.frame import Frame
from streamscope.wire.jsonarray import JSONArrayReader, is_array_stream

SSE_TYPE = "text/event-stream"
JSON_TYPE = "application/json"


def leg_frames(leg: Leg) -> list[tuple[int, Frame]]:
    """The SSE frames of a streamed leg, each with the index (in ``leg.frames``) of the
    captured chunk that completed it; ``Frame.arrival_ns`` is that chunk's ``t_ns``.

    A frame left without its final blank line at the end is flushed at the last chunk's
    time. A body leg has no frames. A frame over the decoder's size limit ends the
    reading there (what came before is kept).
    """
    if leg.body is not None or not leg.frames:
        return []
    content_type = next((v for k, v in leg.headers if k.lower() == "content-type"), None)
    if is_array_stream(content_type, (f.raw for f in leg.frames)):
        return _array_frames(leg)
    decoder = SSEDecoder()
    out: list[tuple[int, Frame]] = []
    try:
        for i, captured in enumerate(leg.frames):
            out.extend((i, f) for f in decoder.feed(captured.raw, captured.t_ns))
        last = len(leg.frames) - 1
        out.extend((last, f) for f in decoder.flush(leg.frames[last].t_ns))
    except FrameTooLarge:
        pass
    return out


def _array_frames(leg: Leg) -> list[tuple[int, Frame]]:
    """:func:`leg_frames` of a leg streamed as one JSON array (its Content-Type is JSON's:
    Gemini without ``alt=sse``): its elements, and its closing bracket, as frames."""
    reader = JSONArrayReader()
    out: list[tuple[int, Frame]] = []
    for i, captured in enumerate(leg.frames):
        out.extend((i, f) for f in reader.feed(captured.raw, captured.t_ns))
    last = len(leg.frames) - 1
    out.extend((last, f) for f in reader.flush(leg.frames[last].t_ns))
    return out


def export_sse(leg: Leg) -> bytes:
    """The leg's bytes as the wire carried them (a body leg: its body)."""
    return leg.raw()


def timing_offsets(leg: Leg) -> list[float]:
    """Each SSE frame's arrival in seconds since the leg's first byte, never decreasing
    (a clock that went back is read as no time passing); empty for a body leg."""
    frames = leg_frames(leg)
    if not frames:
        return []
    first = leg.frames[0].t_ns
    out: list[float] = []
    latest = 0
    for _, frame in frames:
        latest = max(latest, frame.arrival_ns - first)
        out.append(latest / 1e9)
    return out


def export_timing(leg: Leg) -> bytes:
    """The ``.timing`` sidecar of :func:`export_sse`'s bytes (``[]`` for a body leg)."""
    return json.dumps(timing_offsets(leg)).encode("ascii")


def body_protocol(data: bytes) -> str:
    """The protocol whose non-streaming response this body is (``""``: none says so)."""
    return response_protocol(data) or ""


def frames_protocol(frames: list[Frame]) -> str:
    """The protocol of a stream's frames (``""`` when no codec recognises them)."""
    return detect_protocol(frames) or ""


def copy_leg(leg: Leg) -> Leg:
    """A deep copy (the frames are not shared)."""
    return copy.deepcopy(leg)


def import_sse(data: bytes, timing: bytes | None = None, protocol: str | None = None) -> Flow:
    """A flow of one imported stream (see the module docstring).

    ``protocol`` None: detected from the frames (``""`` when no codec recognises them;
    frame times and sizes are still there to look at). Raises
    :class:`~streamscope.recording.RecordingError` for an empty file or one with no SSE
    data, and ``ValueError`` for a ``timing`` sidecar that does not fit the frames.
    """
    if not data.strip():
        raise RecordingError("the file is empty")
    body_proto = _whole_body_protocol(data)
    if body_proto is not None and protocol in (None, body_proto):
        leg = Leg(
            protocol=body_proto,
            status=200,
            headers=[("content-type", JSON_TYPE)],
            body=data,
            headers_ns=0,
            ended_ns=0,
        )
        return _flow(leg)
    frames, detected = _read_frames(data, protocol)
    times = _times(timing, len(frames)) if timing is not None else [0] * len(frames)
    leg = Leg(
        protocol=detected,
        status=200,
        headers=[("content-type", SSE_TYPE)],
        frames=[CapturedFrame(f.raw, t) for f, t in zip(frames, times, strict=True)],
        ended_ns=times[-1] if times else 0,
    )
    return _flow(leg)


def _whole_body_protocol(data: bytes) -> str | None:
    """The protocol of ``data`` if it is one whole non-streaming response body."""
    if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] != b"{":
        return None
    return body_protocol(data) or None


def _read_frames(data: bytes, protocol: str | None) -> tuple[list[Frame], str]:
    if protocol is not None and protocol not in PROTOCOLS:
        raise RecordingError(f"unknown protocol {protocol!r} (known: {', '.join(PROTOCOLS)})")
    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if stripped[:1] in (b"{", b"["):  # JSON lines: framed as the protocol frames them
        rec = read_recording(data, protocol)
        return rec.frames, rec.protocol
    frames = decode_all(data)
    if not any(f.data is not None for f in frames):
        raise RecordingError("no SSE data frames found (is this an SSE stream?)")
    return frames, protocol or frames_protocol(frames)


def _times(timing: bytes, count: int) -> list[int]:
    """Frame times in ns from a ``.timing`` sidecar (the rules the demo's replay keeps)."""
    try:
        values = json.loads(timing)
    except ValueError as exc:
        raise ValueError(f"the timing file is not JSON ({exc})") from None
    if not isinstance(values, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in values
    ):
        raise ValueError("the timing file is not a list of seconds (numbers >= 0)")
    if len(values) != count:
        raise ValueError(f"the timing file lists {len(values)} times for {count} frames")
    times = [round(v * 1e9) for v in values]
    if any(b < a for a, b in zip(times, times[1:], strict=False)):
        raise ValueError("the timing file's times decrease")
    return times


def _flow(leg: Leg) -> Flow:
    return Flow(
        id=uuid.uuid4().hex,
        started=time.time(),
        started_ns=0,
        client_protocol=leg.protocol,
        info=FlowInfo(imported=True),
        upstream_leg=leg,
        client_leg=copy_leg(leg),
        duration_ns=leg.ended_ns,
    )


__all__ = [
    "body_protocol",
    "copy_leg",
    "export_sse",
    "export_timing",
    "frames_protocol",
    "import_sse",
    "leg_frames",
    "timing_offsets",
]
