"""The proxy's hooks for one flow: on the hot path they only append references to lists.

Who calls what:

- the app: :meth:`FlowRecorder.request` (headers and body as received), every client
  ``send`` (:meth:`client_message`: status, headers and each body chunk with its time);
- the account loop: :meth:`upstream_attempt` when an attempt begins and
  :meth:`upstream_response` when it is answered; a whole-body answer:
  :meth:`upstream_body_whole`;
- the upstream, through the ``sent`` hook the account loop hands its ``open``:
  :meth:`upstream_sent`, the request exactly as it went on the wire (URL, headers, body
  bytes; the demo tells the request it was given, as JSON bytes). An attempt that failed
  before anything went out has no upstream request;
- the relay: hands each batch of upstream frames with the client chunks it made to
  :meth:`FlowRecorder.log_batch` (which runs the memory guard now and then) and notes
  the chunks it writes of its own (:meth:`client_chunks`).

:meth:`build` turns that into the compact :class:`~streamscope.capture.raw.RawFlow` the
store keeps — in the store's writer thread, with little per-frame work; frames are split
and linked only when a flow is read (``raw.to_flow``).
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import replace
from itertools import islice
from operator import attrgetter
from typing import Any, cast

from streamscope.capture.flow import RequestRecord
from streamscope.capture.info import FlowInfo
from streamscope.capture.masking import header_masks, mask_notes, mask_query
from streamscope.capture.raw import RawFlow, RawLeg
from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.redact import Redactor
from streamscope.wire.frame import Frame
from streamscope.wire.jsonarray import is_array_stream

_RAW = attrgetter("raw")
_ARRIVAL = attrgetter("arrival_ns")
CHECK_EVERY = 1024  # relay batches between two runs of the memory guard


class FlowRecorder:
    """One flow's capture while the proxy serves it (see the module docstring): the
    exchange carries it and calls a method at each moment (request, attempt, request sent,
    upstream answer, each batch relayed, each client send, done); the store's writer thread
    turns it into a :class:`~streamscope.capture.raw.RawFlow` with :meth:`build`. The hot
    path only appends references; :meth:`check` bounds the memory it holds."""

    # (slots, not a dict of 40 entries: 1.2 KiB less for each stream open and each flow
    # waiting for the writer)
    __slots__ = tuple(
        """
        flow_id client_protocol started started_ns max_bytes method url query
        request_headers request_body upstream_url upstream_headers upstream_body
        upstream_sent_ns upstream_protocol upstream_status upstream_response_headers
        upstream_headers_ns upstream_whole client_masked raws arrivals outs marks
        entry_frames entry_chunks entry_marks _check_at _checked _sends_checked
        upstream_size client_status _client_head client_headers_ns client_bodies
        client_times client_size truncated shed_reason ended_ns
        """.split()
    )

    def __init__(self, flow_id: str, client_protocol: str, max_bytes: int) -> None:
        self.flow_id = flow_id
        self.client_protocol = client_protocol
        self.started = time.time()
        self.started_ns = time.monotonic_ns()
        self.max_bytes = max_bytes
        self.method = "POST"
        self.url = ""
        self.query = b""
        self.request_headers: list[Any] = []
        self.request_body = b""
        self.upstream_url: str | None = None
        self.upstream_headers: list[tuple[str, str]] = []
        self.upstream_body = b""
        self.upstream_sent_ns: int | None = None
        self.upstream_protocol = ""
        self.upstream_status: int | None = None
        self.upstream_response_headers: list[tuple[str, str]] = []
        self.upstream_headers_ns: int | None = None
        self.upstream_whole: bytes | None = None
        # The client's bytes were masked by the same redactor on their way out (the
        # proxy app records each send after masking it): build() need not scan them again.
        self.client_masked = False
        # What the relay did, in order, flat: every upstream frame, every client chunk,
        # and where each frame's chunks end (a count of chunks into its batch); one entry
        # per batch gives how many of each it added (0 frames: the proxy's own chunks).
        # NOTE: flat lists and arrays, not a tuple of lists per batch: for a stream read
        # one frame at a time that was four objects a frame for the garbage collector to
        # walk, and the GUI thread (which runs the proxy) paid for it in 60-80 ms passes.
        # Nor the frames themselves: their bytes and arrival times (in arrays), so that a
        # flow waiting for the writer holds a few objects the collector tracks, not one
        # a frame (each counts towards its next pass, and each pass walks them).
        self.raws: list[bytes] = []
        self.arrivals = array("q")
        self.outs: list[bytes] = []
        self.marks: list[int] = []
        self.entry_frames = array("I")
        self.entry_chunks = array("I")
        self.entry_marks = array("I")
        self._check_at = CHECK_EVERY
        self._checked = 0
        self._sends_checked = 0
        self.upstream_size = 0
        self.client_status: int | None = None
        self._client_head: list[Any] = []  # (byte pairs as sent: see client_headers)
        self.client_headers_ns: int | None = None
        self.client_bodies: list[bytes] = []  # each body chunk sent, and its send time
        self.client_times = array("q")
        self.client_size = 0
        self.truncated = False
        self.shed_reason = ""  # why the bytes were dropped before the flow was stored
        self.ended_ns: int | None = None

    # -- hot path -------------------------------------------------------------------------

    def request(
        self, method: str, url: str, headers: list[Any], body: bytes, query: bytes = b""
    ) -> None:
        """The request as received; ``headers`` as ASGI gives them (byte pairs), ``query``
        its query string (ASGI's ``query_string``)."""
        self.method, self.url, self.request_headers, self.request_body = method, url, headers, body
        self.query = query

    def upstream_attempt(self, protocol: str) -> None:
        """A new attempt, in ``protocol``: what an earlier (failed) one sent and got is
        forgotten here (the attempts in the flow's info say how each ended)."""
        self.upstream_protocol = protocol
        self.upstream_sent_ns = time.monotonic_ns()
        self.upstream_url, self.upstream_headers, self.upstream_body = None, [], b""
        self.upstream_status, self.upstream_headers_ns = None, None
        self.upstream_response_headers, self.upstream_whole = [], None

    def upstream_sent(self, url: str, headers: list[Any], body: bytes) -> None:
        """The attempt's request as it goes on the wire (headers as byte pairs, decoded
        in :meth:`build`)."""
        self.upstream_url, self.upstream_headers, self.upstream_body = url, headers, body

    def upstream_response(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        self.upstream_status = status
        self.upstream_response_headers = list(headers)
        self.upstream_headers_ns = time.monotonic_ns()

    def upstream_body_whole(self, body: bytes) -> None:
        self.upstream_whole = body

    def log_batch(self, batch: Sequence[Frame], out: list[bytes], marks: Sequence[int]) -> bool:
        """One relay batch: the upstream frames, the client chunks they made, and after
        each frame how many of ``out`` were made so far. False once the flow outgrew the
        capture's limit (the caller stops logging; the flow is kept, truncated)."""
        self.raws += map(_RAW, batch)
        self.arrivals.extend(map(_ARRIVAL, batch))
        self.outs += out
        self.marks += marks
        self.entry_frames.append(len(batch))
        self.entry_chunks.append(len(out))
        self.entry_marks.append(len(marks))
        if len(self.entry_frames) >= self._check_at:
            return self.check()
        return True

    def check(self) -> bool:
        """The memory guard (every :data:`CHECK_EVERY` batches): False when the flow is
        too big to keep all of (marked truncated)."""
        raws = self.raws
        self.upstream_size += sum(map(len, islice(raws, self._checked, None)))
        self._checked = len(raws)
        bodies = self.client_bodies
        self.client_size += sum(map(len, islice(bodies, self._sends_checked, None)))
        self._sends_checked = len(bodies)
        self._check_at = len(self.entry_frames) + CHECK_EVERY
        if max(self.upstream_size, self.client_size) >= self.max_bytes:
            self.truncated = True
            return False
        return True

    def size(self) -> int:
        """The bytes this recorder holds, near enough: bodies, upstream frames, client
        chunks."""
        whole = len(self.upstream_whole or b"")
        return len(self.request_body) + self._sent_bytes() + whole + self._stream_bytes()

    def _sent_bytes(self) -> int:
        """The upstream request body's bytes."""
        return len(self.upstream_body)

    def _stream_bytes(self) -> int:
        """Both legs' frames and chunks held."""
        frames = self.upstream_size + sum(map(len, islice(self.raws, self._checked, None)))
        return frames + sum(map(len, self.client_bodies))

    def shed(self, keep: int, why: str) -> int:
        """Drop the parts bigger than ``keep`` bytes (a body; the two legs' frames, which
        link to each other, together); what is known of the flow stays (status, headers,
        times, the proxy's info, the small parts) and the flow notes which parts went,
        and ``why``. The bytes dropped."""
        request, sent = len(self.request_body), self._sent_bytes()
        whole, streams = len(self.upstream_whole or b""), self._stream_bytes()
        gone: list[str] = []
        if request > keep:
            self.request_body = b""
            gone.append(f"request body ({request / 1024:.0f} KiB)")
        if sent > keep:
            self.upstream_body = b""
            gone.append(f"upstream request body ({sent / 1024:.0f} KiB)")
        if whole > keep:
            self.upstream_whole = b""
            gone.append(f"upstream body ({whole / 1024:.0f} KiB)")
        if streams > keep:
            self.raws, self.outs, self.marks, self.client_bodies = [], [], [], []
            self.arrivals, self.client_times = array("q"), array("q")
            self.entry_frames, self.entry_chunks = array("I"), array("I")
            self.entry_marks = array("I")
            self._checked = self._sends_checked = 0
            self.upstream_size = self.client_size = 0
            self.truncated = True
            gone.append(f"both legs' frames ({streams / 1024:.0f} KiB)")
        if gone:
            self.shed_reason = f"not kept: {', '.join(gone)}: {why}"
        return sum(n for n in (request, sent, whole, streams) if n > keep)

    def client_chunks(self, chunks: list[bytes]) -> None:
        """Chunks the proxy writes of its own (keepalives, closing frames): no source."""
        self.log_batch((), chunks, ())

    def client_message(self, message: Any) -> None:
        """Every ASGI message the app sends the client. A body chunk is one tuple append
        (the hot path): its size counts at the next memory check, the end at :meth:`done`."""
        if message["type"] == "http.response.body":
            if not self.truncated:
                self.client_bodies.append(message.get("body", b""))
                self.client_times.append(time.monotonic_ns())
        elif message["type"] == "http.response.start":
            self.client_status = message["status"]
            self._client_head = list(message.get("headers", ()))
            self.client_headers_ns = time.monotonic_ns()

    @property
    def client_sends(self) -> list[tuple[bytes, int]]:
        """Each body chunk sent to the client with its send time (monotonic ns)."""
        return list(zip(self.client_bodies, _ints("q", self.client_times), strict=True))

    @client_sends.setter
    def client_sends(self, sends: list[tuple[bytes, int]]) -> None:
        self.client_bodies = [body for body, _ in sends]
        self.client_times = array("q", (t for _, t in sends))
        self._sends_checked = min(self._sends_checked, len(sends))

    @property
    def client_headers(self) -> list[tuple[str, str]]:
        """The client's response headers as text: decoded when read (by :meth:`build`, in
        the store's writer thread), not on the way to the client's first byte."""
        return _text_pairs(self._client_head)

    def done(self) -> None:
        """The response is complete (or abandoned): its end time and size; what it holds
        sealed for its wait for the writer (:meth:`_seal`)."""
        self.ended_ns = time.monotonic_ns()
        self.client_size = sum(map(len, self.client_bodies))
        self._seal()

    def _seal(self) -> None:
        """The lists become tuples and the arrays bytes: read-only from here on (only
        :meth:`build` and the store's bounds read them).

        NOTE: a flow waits for the writer up to half a second, and at saturation hundreds
        wait. Each list and array it holds is an object the cyclic garbage collector
        tracks, and they outlive the young generation: they made the collections that
        run on the event loop, walking every flow waiting at each pass (and again in the
        middle generation), ~30 µs a request at saturation (measured with
        tests/bench/bench_capacity.py and ``gc.callbacks``). A tuple of bytes or ints
        is untracked at its first pass; bytes are never tracked."""
        sealed = cast(Any, self)  # (the declared types are the recording's)
        sealed.raws, sealed.outs, sealed.marks = (
            tuple(self.raws),
            tuple(self.outs),
            tuple(self.marks),
        )
        sealed.client_bodies = tuple(self.client_bodies)
        sealed.arrivals, sealed.client_times = self.arrivals.tobytes(), self.client_times.tobytes()
        sealed.entry_frames = self.entry_frames.tobytes()
        sealed.entry_chunks = self.entry_chunks.tobytes()
        sealed.entry_marks = self.entry_marks.tobytes()
        sealed.request_headers = tuple(self.request_headers)
        sealed.upstream_headers = tuple(self.upstream_headers)
        sealed.upstream_response_headers = tuple(self.upstream_response_headers)
        sealed._client_head = tuple(self._client_head)

    # -- off the hot path -----------------------------------------------------------------

    def build(self, info: FlowInfo, redactor: Redactor) -> RawFlow:
        """The compact flow (in the store's writer thread): bytes joined, arrays packed,
        secrets masked in headers and in every byte kept (same length: sizes stay true)."""
        red, masks = redactor.same_length, header_masks(redactor)
        upstream_request = None
        if self.upstream_url is not None:
            upstream_request = RequestRecord(
                "POST",
                mask_query(redactor.url(self.upstream_url)),
                masks(self.upstream_headers, redactor),
                red(self.upstream_body),
            )
        if self.shed_reason or info.request_notes:  # (else: nothing here to change)
            info = replace(
                info,
                capture_note=self.shed_reason or info.capture_note,
                request_notes=mask_notes(info.request_notes, redactor),
            )
        return RawFlow(
            id=self.flow_id,
            started=self.started,
            info=info,
            request=RequestRecord(
                self.method,
                mask_query(redactor.url(self._url())),
                masks(self.request_headers, redactor),
                red(self.request_body),
            ),
            upstream_request=upstream_request,
            upstream_leg=self._upstream_leg(redactor),
            client_leg=self._client_leg(redactor),
            duration_ns=self._rel(self.ended_ns),
        )

    def _rel(self, ns: int | None) -> int | None:
        """A monotonic time as ns since the flow started."""
        return ns - self.started_ns if ns is not None else None

    def _upstream_leg(self, redactor: Redactor) -> RawLeg:
        """The upstream leg, compact: its frames' bytes joined, their sizes and times."""
        rel, t0 = self._rel, self.started_ns
        upstream = RawLeg(
            protocol=self.upstream_protocol,
            status=self.upstream_status,
            headers=header_masks(redactor)(self.upstream_response_headers, redactor),
            sent_ns=rel(self.upstream_sent_ns),
            headers_ns=rel(self.upstream_headers_ns),
            truncated=self.truncated,
        )
        # Only C-level passes over the frames here: this thread competes with the event
        # loop for the interpreter, and a long stream has tens of thousands of frames.
        raws = self.raws
        if self.upstream_whole is not None:
            upstream.streamed = False
            upstream.data = redactor.same_length(self.upstream_whole)
        else:
            upstream.data = redactor.same_length(b"".join(raws))
            upstream.sizes = list(map(len, raws))
            upstream.times = _ints("q", self.arrivals)
            upstream.base_ns = t0
            upstream.ended_ns = upstream.times[-1] - t0 if raws else None
        return upstream

    def _client_leg(self, redactor: Redactor) -> RawLeg:
        """The client leg, compact: its sends joined, their sizes and times, and (a
        stream) the relay's log that links its chunks to the upstream's frames."""
        rel = self._rel
        client = RawLeg(
            protocol=self.client_protocol,
            status=self.client_status,
            headers=header_masks(redactor)(self._client_head, redactor),
            headers_ns=rel(self.client_headers_ns),
            ended_ns=rel(self.ended_ns),
            truncated=self.truncated,
            base_ns=self.started_ns,
        )
        content_type = _content_type(self._client_head)
        client.streamed = "event-stream" in content_type or self._array_stream(content_type)
        bodies = self.client_bodies
        client.data = b"".join(bodies)
        if not self.client_masked:
            client.data = redactor.same_length(client.data)
        client.sizes = list(map(len, bodies))
        client.times = _ints("q", self.client_times)
        if client.streamed:
            client.entry_frames = _ints("I", self.entry_frames)
            client.entry_chunks = _ints("I", self.entry_chunks)
            client.entry_marks = _ints("I", self.entry_marks)
            client.chunk_sizes = list(map(len, self.outs))
            client.marks = list(self.marks)
        return client

    def _array_stream(self, content_type: str) -> bool:
        """Whether the client's answer is a stream sent as one JSON array: a 200 JSON
        answer to a request whose URL asks for a stream (Gemini's
        ``:streamGenerateContent`` without ``alt=sse``; with it, the answer is SSE)."""
        if self.client_status != 200:
            return False
        if not is_array_stream(content_type, self.client_bodies):
            return False
        if self.client_protocol not in PROTOCOLS:
            return False
        return get_codec(self.client_protocol).stream_asked_by_url(self.url) is True

    def _url(self) -> str:
        query = self.query.decode("latin-1")
        return f"{self.url}?{query}" if query else self.url


def _content_type(headers: list[Any]) -> str:
    """The last ``content-type`` of headers as sent (byte pairs, or text), as text."""
    for name, value in reversed(headers):
        if isinstance(name, _BYTES):
            if name.lower() == b"content-type":
                return str(value.decode("latin-1"))
        elif name.lower() == "content-type":
            return str(value)
    return ""


def _ints(code: str, values: array[int] | bytes) -> list[int]:
    """An array's values as a list; of a sealed recorder, from the array's bytes."""
    if isinstance(values, bytes):
        values = array(code, values)
    return values.tolist()


def _text_pairs(headers: list[Any]) -> list[tuple[str, str]]:
    return [
        (k.decode("latin-1"), v.decode("latin-1")) if isinstance(k, _BYTES) else (k, v)
        for k, v in headers
    ]


_BYTES = (bytes, bytearray)


__all__ = ["FlowRecorder"]
