"""The compact form a flow is stored in, and how a readable :class:`Flow` comes from it.

Capturing must cost the proxy nothing it can measure, and Python work in the store's
writer thread still competes for the interpreter with the event loop. So a flow is
stored as it was captured: each leg's bytes joined into one blob, with packed arrays of
sizes and times (the upstream leg per frame, the client leg per send), and the relay's
chunks as sizes and the upstream frame each came from. Splitting the client's bytes
into frames, linking them and decoding happen when someone reads the flow
(:func:`to_flow`), never while the proxy is busy. :func:`from_flow` is the way back, for
flows made elsewhere (an imported file).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field, replace
from typing import Any

from streamscope.capture.flow import (
    CapturedFrame,
    Flow,
    Headers,
    Leg,
    RequestRecord,
)
from streamscope.capture.info import FlowInfo
from streamscope.wire import SSEDecoder
from streamscope.wire.jsonarray import JSONArrayReader, is_array_stream

JSON = dict[str, Any]
NO_SOURCE = -1


def pack(values: list[int]) -> bytes:
    return array("q", values).tobytes()


def unpack(data: bytes) -> list[int]:
    a = array("q")
    a.frombytes(data)
    return a.tolist()


@dataclass(slots=True)
class RawLeg:
    protocol: str = ""
    status: int | None = None
    headers: Headers = field(default_factory=list)
    sent_ns: int | None = None
    headers_ns: int | None = None
    ended_ns: int | None = None
    truncated: bool = False
    streamed: bool = True
    base_ns: int = 0  # ``times`` are monotonic ns; minus this: since the flow started
    data: bytes = b""  # the body's bytes, in order
    sizes: list[int] = field(default_factory=list)  # upstream: per frame; client: per send
    times: list[int] = field(default_factory=list)  # monotonic ns, same units
    # The client leg's relay log, one entry per write: how many upstream frames it
    # relayed (0: the proxy's own chunks), how many chunks it wrote, how many marks it
    # has; the chunks' sizes; and the marks (chunk count after each relayed frame).
    entry_frames: list[int] = field(default_factory=list)
    entry_chunks: list[int] = field(default_factory=list)
    entry_marks: list[int] = field(default_factory=list)
    chunk_sizes: list[int] = field(default_factory=list)
    marks: list[int] = field(default_factory=list)

    ARRAYS = (
        "sizes",
        "times",
        "entry_frames",
        "entry_chunks",
        "entry_marks",
        "chunk_sizes",
        "marks",
    )

    def meta(self) -> JSON:
        return {
            "protocol": self.protocol,
            "status": self.status,
            "headers": self.headers,
            "sent_ns": self.sent_ns,
            "headers_ns": self.headers_ns,
            "ended_ns": self.ended_ns,
            "truncated": self.truncated,
            "streamed": self.streamed,
            "base_ns": self.base_ns,
        }

    def arrays(self) -> bytes:
        """The arrays, packed, with their lengths in front (packed at once: an array
        made per list cost as much as the values)."""
        parts = [getattr(self, name) for name in self.ARRAYS]
        values = [len(p) for p in parts]
        for p in parts:
            values += p
        return pack(values)

    @classmethod
    def restore(cls, meta: JSON, data: bytes, arrays: bytes) -> RawLeg:
        leg = cls(**meta)
        leg.data = data
        n = len(cls.ARRAYS)
        counts = unpack(arrays[: 8 * n])
        values = unpack(arrays[8 * n :])
        at = 0
        for name, count in zip(cls.ARRAYS, counts, strict=True):
            setattr(leg, name, values[at : at + count])
            at += count
        return leg

    def chunk_sources(self) -> list[int]:
        """The upstream frame each relay chunk came from (``NO_SOURCE``: the proxy's own)."""
        sources: list[int] = []
        marks = iter(self.marks)
        frame = 0
        for frames, chunks, n_marks in zip(
            self.entry_frames, self.entry_chunks, self.entry_marks, strict=True
        ):
            made = 0
            for i in range(n_marks):
                mark = next(marks)
                sources += [frame + i] * (mark - made)
                made = mark
            sources += [NO_SOURCE] * (chunks - made)  # the proxy's own (or unmarked)
            frame += frames
        return sources


@dataclass(slots=True)
class RawFlow:
    id: str
    started: float
    info: FlowInfo
    request: RequestRecord
    upstream_request: RequestRecord | None
    upstream_leg: RawLeg
    client_leg: RawLeg
    duration_ns: int | None = None


def _slices(data: bytes, sizes: list[int]) -> list[bytes]:
    out, at = [], 0
    for n in sizes:
        out.append(data[at : at + n])
        at += n
    return out


def _leg(raw: RawLeg) -> Leg:
    leg = Leg(
        protocol=raw.protocol,
        status=raw.status,
        headers=raw.headers,
        sent_ns=raw.sent_ns,
        headers_ns=raw.headers_ns,
        ended_ns=raw.ended_ns,
        truncated=raw.truncated,
    )
    if not raw.streamed:
        leg.body = raw.data
    return leg


def _upstream_frames(raw: RawLeg) -> list[CapturedFrame]:
    base = raw.base_ns
    return [
        CapturedFrame(chunk, t - base)
        for chunk, t in zip(_slices(raw.data, raw.sizes), raw.times, strict=True)
    ]


def _client_frames(raw: RawLeg) -> list[CapturedFrame]:
    """The client's bytes as frames, each timed by the send that completed it, linked to
    the upstream frame of the relay chunk that starts where it starts (a JSON-array
    stream: :func:`_array_frames`)."""
    if is_array_stream(_content_type(raw.headers), _slices(raw.data, raw.sizes)):
        return _array_frames(raw)
    decoder = SSEDecoder()
    frames: list[tuple[int, CapturedFrame]] = []  # (byte offset, frame)
    offset = 0
    base = raw.base_ns
    for body, t in zip(_slices(raw.data, raw.sizes), raw.times, strict=True):
        for f in decoder.feed(body, t - base):
            frames.append((offset, CapturedFrame(f.raw, f.arrival_ns)))
            offset += len(f.raw)
    for f in decoder.flush():
        last = raw.times[-1] - base if raw.times else 0
        frames.append((offset, CapturedFrame(f.raw, last)))
        offset += len(f.raw)
    # The relay's chunks are the tail of the client's bytes (what came before them, such
    # as keepalives while the first frame was awaited, did not pass through the relay).
    at = len(raw.data) - sum(raw.chunk_sizes)
    sources: dict[int, int] = {}
    for size, source in zip(raw.chunk_sizes, raw.chunk_sources(), strict=True):
        if source != NO_SOURCE:
            sources[at] = source
        at += size
    for start, frame in frames:
        if start in sources:
            frame.sources = (sources[start],)
    return [frame for _, frame in frames]


def _content_type(headers: Headers) -> str | None:
    return next((v for k, v in headers if k.lower() == "content-type"), None)


def _array_frames(raw: RawLeg) -> list[CapturedFrame]:
    """A client leg streamed as one JSON array (Gemini without ``alt=sse``): its elements
    as frames, each timed by the send that completed it. The relay's chunks are SSE
    frames, each of which the proxy made one element of (it drops comments, and Gemini's
    keepalive is a chunk): the last elements are the relay's chunks, in order, and each
    is linked to its chunk's upstream frame."""
    reader = JSONArrayReader()
    base = raw.base_ns
    frames: list[CapturedFrame] = []
    elements: list[CapturedFrame] = []
    for body, t in zip(_slices(raw.data, raw.sizes), raw.times, strict=True):
        for f in reader.feed(body, t - base):
            frames.append(CapturedFrame(f.raw, f.arrival_ns))
            if f.data is not None:
                elements.append(frames[-1])
    last = raw.times[-1] - base if raw.times else 0
    frames += [CapturedFrame(f.raw, last) for f in reader.flush(last)]
    sources = raw.chunk_sources()
    for frame, source in zip(reversed(elements), reversed(sources), strict=False):
        if source != NO_SOURCE:
            frame.sources = (source,)
    return frames


def to_flow(raw: RawFlow) -> Flow:
    """The readable flow: frames split and linked (the work deferred from capture)."""
    upstream, client = _leg(raw.upstream_leg), _leg(raw.client_leg)
    if raw.upstream_leg.streamed:
        upstream.frames = _upstream_frames(raw.upstream_leg)
    if raw.client_leg.streamed:
        client.frames = _client_frames(raw.client_leg)
    return Flow(
        id=raw.id,
        started=raw.started,
        started_ns=0,
        client_protocol=raw.client_leg.protocol,
        info=_copy_info(raw.info),
        request=raw.request,
        upstream_request=raw.upstream_request,
        upstream_leg=upstream,
        client_leg=client,
        duration_ns=raw.duration_ns,
    )


def _copy_info(info: FlowInfo) -> FlowInfo:
    """The flow's record with lists of its own (the readable flow and the compact one
    may each be changed without the other)."""
    return replace(info, attempts=list(info.attempts), request_notes=list(info.request_notes))


def _raw_leg(leg: Leg) -> RawLeg:
    """A leg's compact form: its frames (or body) as one blob with a size and a time per
    frame, as the upstream leg is captured (``base_ns`` 0: times are the flow's)."""
    raw = RawLeg(
        protocol=leg.protocol,
        status=leg.status,
        headers=list(leg.headers),
        sent_ns=leg.sent_ns,
        headers_ns=leg.headers_ns,
        ended_ns=leg.ended_ns,
        truncated=leg.truncated,
        streamed=leg.streamed,
    )
    if leg.body is not None:
        raw.data = leg.body
        return raw
    raw.data = leg.raw()
    raw.sizes = [len(f.raw) for f in leg.frames]
    raw.times = [f.t_ns for f in leg.frames]
    return raw


def pack_leg(leg: Leg) -> RawLeg:
    """A leg in its compact form (one blob, a size and a time per frame), to hand to
    another process cheaply; :func:`unpack_leg` gives it back (client links dropped)."""
    return _raw_leg(leg)


def unpack_leg(raw: RawLeg) -> Leg:
    """The leg of :func:`pack_leg`: its frames sliced back out of the blob."""
    leg = _leg(raw)
    if raw.streamed:
        leg.frames = _upstream_frames(raw)
    return leg


def _source(frame: CapturedFrame) -> int:
    return frame.sources[0] if frame.sources else NO_SOURCE


def _relay_log(raw: RawLeg, frames: list[CapturedFrame], upstream_frames: int) -> None:
    """The client leg's links as the relay log records them: every frame is a relay
    chunk; a run of frames from one upstream frame is an entry that relays that frame
    (after an entry that only skips the upstream frames before it). A link the log
    cannot say (a source before one already passed, or past the upstream's frames) is
    dropped, as is any source of a frame but its first."""
    at = 0  # the upstream frame the next entry starts at
    i = 0
    while i < len(frames):
        source = _source(frames[i])
        j = i + 1
        while j < len(frames) and _source(frames[j]) == source:
            j += 1
        run = j - i
        if at <= source < upstream_frames:
            if source > at:  # skip to the source
                raw.entry_frames.append(source - at)
                raw.entry_chunks.append(0)
                raw.entry_marks.append(0)
            raw.entry_frames.append(1)
            raw.entry_chunks.append(run)
            raw.entry_marks.append(1)
            raw.marks.append(run)
            at = source + 1
        else:
            raw.entry_frames.append(0)
            raw.entry_chunks.append(run)
            raw.entry_marks.append(0)
        raw.chunk_sizes += [len(f.raw) for f in frames[i:j]]
        i = j


def from_flow(flow: Flow, *, imported: bool = False) -> RawFlow:
    """The compact form of a readable flow (an imported one): :func:`to_flow` gives it
    back — frames, times and each client frame's first source — as long as the client
    leg's frames are whole SSE frames (they are re-read as such). ``imported``: mark it
    so (else it is as imported as the flow says)."""
    client = _raw_leg(flow.client_leg)
    if client.streamed:
        _relay_log(client, flow.client_leg.frames, len(flow.upstream_leg.frames))
    info = _copy_info(flow.info)
    info.imported = imported or info.imported
    upstream_request = flow.upstream_request
    return RawFlow(
        id=flow.id,
        started=flow.started,
        info=info,
        request=_copy_request(flow.request),
        upstream_request=_copy_request(upstream_request) if upstream_request else None,
        upstream_leg=_raw_leg(flow.upstream_leg),
        client_leg=client,
        duration_ns=flow.duration_ns,
    )


def _copy_request(r: RequestRecord) -> RequestRecord:
    return RequestRecord(r.method, r.url, list(r.headers), r.body)


__all__ = ["NO_SOURCE", "RawFlow", "RawLeg", "from_flow", "pack", "to_flow", "unpack"]
