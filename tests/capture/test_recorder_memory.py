"""The recorder's hot path adds nothing per frame that the garbage collector walks.

The GUI runs the proxy on its own loop, so the capture of a 20,000-frame stream lives in
the GUI process while it streams: a tuple of three lists per relay batch was four
tracked objects a frame, and the collector's passes over them were the window's longest
stalls (tests/bench/bench_window.py). The log is flat lists and arrays instead.
"""

from __future__ import annotations

import gc
import time

from streamscope.capture.info import FlowInfo
from streamscope.capture.recorder import CHECK_EVERY, FlowRecorder
from streamscope.redact import Redactor
from streamscope.wire import SSEDecoder

UPSTREAM = b"".join(b'data: {"n": %d}\n\n' % i for i in range(3 * CHECK_EVERY))


def test_logging_one_frame_batches_adds_no_tracked_object_per_frame() -> None:
    frames = SSEDecoder().feed(UPSTREAM, arrival_ns=1)
    outs = [f.raw.replace(b"n", b"m") for f in frames]
    recorder = FlowRecorder("flow", "openai-chat", max_bytes=1 << 30)
    gc.collect()
    before = len(gc.get_objects())
    for frame, out in zip(frames, outs, strict=True):
        assert recorder.log_batch([frame], [out], [1])
    grown = len(gc.get_objects()) - before
    assert grown < 20, f"{grown} tracked objects for {len(frames)} batches"


def test_the_flat_log_builds_the_same_legs() -> None:
    """Batches of several frames, frames that made no chunk and the proxy's own chunks:
    the built client leg links each chunk to the upstream frame that made it."""
    frames = SSEDecoder().feed(UPSTREAM[:2000], arrival_ns=5)
    recorder = FlowRecorder("flow", "openai-chat", max_bytes=1 << 30)
    recorder.client_message(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/event-stream")],
        }
    )
    sent: list[bytes] = []
    at = 0
    for size in (1, 3, 2, 5):
        batch = frames[at : at + size]
        at += size
        out = [f.raw for f in batch[::2]]  # every other frame makes one chunk
        marks = [(i + 2) // 2 for i in range(len(batch))]
        assert recorder.log_batch(batch, out, marks)
        sent += out
    recorder.client_chunks([b": keepalive\n\n"])
    sent.append(b": keepalive\n\n")
    for chunk in sent:
        recorder.client_message({"type": "http.response.body", "body": chunk, "more_body": True})
    recorder.done()
    raw = recorder.build(FlowInfo(), Redactor([]))
    assert raw.upstream_leg.data == b"".join(f.raw for f in frames[:at])
    assert raw.client_leg.data == b"".join(sent)
    assert raw.client_leg.entry_frames == [1, 3, 2, 5, 0]
    assert raw.client_leg.entry_chunks == [1, 2, 1, 3, 1]
    sources = raw.client_leg.chunk_sources()
    assert sources[:3] == [0, 1, 3]  # batch 2 (frames 1-3) made chunks from frames 1 and 3
    assert sources[-1] < 0  # the keepalive is the proxy's own


def test_the_memory_guard_stops_the_log_and_marks_the_flow_truncated() -> None:
    frames = SSEDecoder().feed(UPSTREAM, arrival_ns=1)
    recorder = FlowRecorder("flow", "openai-chat", max_bytes=len(UPSTREAM) // 3)
    kept = 0
    for frame in frames:
        kept += 1
        if not recorder.log_batch([frame], [frame.raw], [1]):
            break
    assert recorder.truncated
    assert kept % CHECK_EVERY == 0 and kept < len(frames)
    assert recorder.upstream_size >= len(UPSTREAM) // 3


def test_the_clients_headers_are_kept_as_sent_and_read_as_text() -> None:
    # (decoded by build, in the store's writer: not on the way to the client's first byte)
    recorder = FlowRecorder("flow", "openai-chat", max_bytes=1 << 30)
    head = [(b"content-type", b"application/json"), (b"x-name", "caf\u00e9".encode("latin-1"))]
    recorder.client_message({"type": "http.response.start", "status": 201, "headers": head})
    recorder.client_message({"type": "http.response.body", "body": b"{}", "more_body": False})
    recorder.done()
    assert recorder.client_headers == [("content-type", "application/json"), ("x-name", "café")]
    raw = recorder.build(FlowInfo(), Redactor([]))
    assert raw.client_leg.status == 201 and raw.client_leg.headers == recorder.client_headers
    assert not raw.client_leg.streamed  # (its content type read from the text)


def test_a_finished_flow_holds_nothing_the_collector_walks_and_builds_the_same() -> None:
    """A finished flow waits for the store's writer, hundreds of them at saturation: once
    done it holds no list or array (each one an object every collection on the proxy's
    loop would walk), and what the writer builds from it is what it would have built."""
    key = "sk-" + "q" * 40
    frames = SSEDecoder().feed(UPSTREAM[:3000] + b'data: {"k": "%s"}\n\n' % key.encode(), 7)
    recorder = FlowRecorder("flow", "openai-chat", max_bytes=1 << 30)
    recorder.request(
        "POST", "/v1/chat/completions", [(b"authorization", b"Bearer " + key.encode())], b"{}"
    )
    recorder.upstream_attempt("openai-chat")
    recorder.upstream_sent("http://up/v1/chat/completions", [("x-api-key", key)], b'{"a":1}')
    recorder.upstream_response(200, [("content-type", "text/event-stream")])
    head = [(b"content-type", b"text/event-stream")]
    recorder.client_message({"type": "http.response.start", "status": 200, "headers": head})
    for at in range(0, len(frames), 4):
        batch = frames[at : at + 4]
        out = [f.raw for f in batch]
        assert recorder.log_batch(batch, out, list(range(1, len(batch) + 1)))
        for chunk in out:
            recorder.client_message({"type": "http.response.body", "body": chunk})
    recorder.ended_ns = time.monotonic_ns()
    redactor = Redactor([key])
    unsealed = recorder.build(FlowInfo(), redactor)
    ended = recorder.ended_ns
    recorder.done()
    recorder.ended_ns = ended
    gc.collect()  # (a tuple of untracked values is untracked at a pass: its pairs at the
    gc.collect()  # first, the tuple of them at the next)
    assert not hasattr(recorder, "__dict__")  # (its slots: no dict of 40 entries per flow)
    held = {name: getattr(recorder, name) for name in FlowRecorder.__slots__}
    walked = sorted(name for name, value in held.items() if gc.is_tracked(value))
    assert walked == []
    sealed = recorder.build(FlowInfo(), redactor)
    assert sealed == unsealed
    assert key.encode() not in sealed.upstream_leg.data and sealed.client_leg.entry_frames
    assert recorder.client_sends[0] == (frames[0].raw, recorder.client_sends[0][1])
