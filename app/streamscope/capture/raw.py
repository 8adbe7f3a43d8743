"""The compact form a flow is stored in, and how a readable :class:`Flow` comes from it.

Capturing must cost the proxy nothing it can measure, and Python work in the store's
writer thread still competes for the interpreter with the event loop. So a flow is
stored as it was captured: each leg's bytes joined into one blob, with packed arrays of
sizes and times (the upstream leg per frame, the client leg per send), and the relay's
chunks as sizes and the upstream frame each came from. Splitting the client's bytes
into frames, linking them and decoding happen when someone reads the flow
(:func:`to_flow`), never while the proxy is busy.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

from streamscope.capture.flow import CapturedFrame, Flow, Headers, Leg, RequestRecord
from streamscope.wire import SSEDecoder

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
        """The arrays, packed, with their lengths in front."""
        parts = [getattr(self, name) for name in self.ARRAYS]
        head = pack([len(p) for p in parts])
        return head + b"".join(pack(p) for p in parts)

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
    info: JSON  # model, upstream, account, mode, outcome, attempts, ttft_ms, tokens
    request: RequestRecord
    upstream_request: RequestRecord | None
    upstream: RawLeg
    client: RawLeg
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
    the upstream frame of the relay chunk that starts where it starts."""
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
            frame.sources = [sources[start]]
    return [frame for _, frame in frames]


def to_flow(raw: RawFlow) -> Flow:
    """The readable flow: frames split and linked (the work deferred from capture)."""
    upstream, client = _leg(raw.upstream), _leg(raw.client)
    if raw.upstream.streamed:
        upstream.frames = _upstream_frames(raw.upstream)
    if raw.client.streamed:
        client.frames = _client_frames(raw.client)
    info = raw.info
    return Flow(
        id=raw.id,
        started=raw.started,
        started_ns=0,
        client_protocol=raw.client.protocol,
        model=info.get("model"),
        upstream_name=info.get("upstream"),
        account=info.get("account"),
        mode=info.get("mode"),
        outcome=str(info.get("outcome") or ""),
        request=raw.request,
        upstream_request=raw.upstream_request,
        attempts=list(info.get("attempts") or []),
        upstream=upstream,
        client=client,
        duration_ns=raw.duration_ns,
    )


__all__ = ["NO_SOURCE", "RawFlow", "RawLeg", "pack", "to_flow", "unpack"]
