"""The proxy's streaming behaviour, over real sockets: SSE headers, no buffering,
keepalive comments, client-disconnect cancellation, mid-stream errors for every client
protocol, and passthrough byte fidelity.

One scriptable upstream (``tests.upstream_server``) serves every test; which Script
answers a request is chosen by the model name the upstream receives (``scenario()``
registers a Script under a fresh name; the client asks for ``"<upstream>/<name>"``).
Three proxies with different timing settings share that upstream:

- ``fast``: keepalive off, idle timeout 0.5 s (mid-stream errors, passthrough, headers);
- ``quiet``: keepalive off, idle timeout 20 s (no buffering, keepalive off, disconnects);
- ``chatty``: keepalive every 0.2 s, idle timeout 20 s (keepalive).

Client bytes are read with httpx's ``iter_raw`` and timestamped as each chunk arrives,
then split into frames with our own :class:`~streamscope.wire.SSEDecoder`.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from streamscope.capture.summary import FlowSummary
from streamscope.codecs import get_codec
from streamscope.model.estimate import is_note
from streamscope.model.response import Response
from streamscope.translation.offline import translate_frames
from streamscope.translation.pipeline import StreamPipeline
from streamscope.wire import SSEDecoder, decode_all
from streamscope.wire.frame import Frame
from tests.proxy.harness import Running, make_config, proxied
from tests.support import FIXTURES, load
from tests.upstream_server import (
    RecordedRequest,
    Script,
    UpstreamServer,
    fast_stream_script,
    run_in_thread,
    script_from_recording,
)

KINDS = ("openai", "anthropic", "responses", "lmstudio")
PROTOCOL = {  # upstream kind -> the protocol it speaks
    "openai": "openai-chat",
    "anthropic": "anthropic",
    "responses": "responses",
    "lmstudio": "lmstudio",
}
CLIENTS = ("openai-chat", "anthropic", "responses", "lmstudio")
ENDPOINT = {
    "openai-chat": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "responses": "/v1/responses",
    "lmstudio": "/api/v1/chat",
}
KIND_OF = {v: k for k, v in PROTOCOL.items()}  # protocol -> the upstream kind speaking it
UPSTREAM_PATHS = {  # what the proxy requests on the upstream, per kind
    "openai": "/v1/chat/completions",
    "responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "lmstudio": "/api/v1/chat",
}
SOURCES = {  # a real recording per upstream protocol (LM Studio: translated, see below)
    "openai": FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse",
    "anthropic": FIXTURES / "anthropic" / "ant-py_basic-text.sse",
    "responses": FIXTURES / "responses" / "vercel_openai-gpt41nano_text.jsonl",
}
BOOM = "upstream boom 7f3a"  # the message of every upstream's own error frame
CLIENT_TIMEOUT = 10.0  # a hung stream fails the test instead of waiting for pytest-timeout


# -- upstream scenarios ---------------------------------------------------------------------

_SCENARIOS: dict[str, Script] = {}
_names = itertools.count(1)


def scenario(script: Script) -> str:
    """Register ``script`` under a fresh model name; the upstream answers it for that model."""
    name = f"scn-{next(_names)}"
    _SCENARIOS[name] = script
    return name


def _answer(req: RecordedRequest) -> Script:
    model = req.json.get("model") if isinstance(req.json, dict) else None
    if model not in _SCENARIOS:
        raise LookupError(f"no scenario for model {model!r}")
    return _SCENARIOS[model]


def requests_for(up: UpstreamServer, name: str) -> list[RecordedRequest]:
    return [r for r in up.requests if isinstance(r.json, dict) and r.json.get("model") == name]


@functools.cache
def frames_of(kind: str) -> tuple[bytes, ...]:
    """The raw frames of a complete real stream in ``kind``'s protocol."""
    if kind == "lmstudio":
        # The only native LM Studio recording is the docs' event catalog (with an error
        # in it); a clean native stream is made from a real chat recording.
        rec = load(SOURCES["openai"])
        out, _ = translate_frames(rec.frames, "openai-chat", "lmstudio")
        return tuple(out)
    return tuple(script_from_recording(SOURCES[kind]).chunks)  # type: ignore[arg-type]


def assemble(protocol: str, frames: list[Frame]) -> Response:
    """What our own decoder makes of a stream (keepalive comments are ignored by it)."""
    pipe = StreamPipeline(
        get_codec(protocol), get_codec(protocol), passthrough=True, on_incomplete="close"
    )
    for f in frames:
        pipe.feed(f)
    pipe.finish()
    return pipe.assembler.response


@functools.cache
def head_of(kind: str) -> tuple[bytes, ...]:
    """The frames of ``kind``'s stream up to one frame past its first content frame: a
    stream that has said something but is not finished."""
    protocol = PROTOCOL[kind]
    frames = frames_of(kind)
    pipe = StreamPipeline(get_codec(protocol), get_codec(protocol), passthrough=True)
    for i, raw in enumerate(frames):
        for f in decode_all(raw):
            pipe.feed(f)
        if pipe.first_token_ns is not None:
            head = frames[: i + 2]
            break
    else:
        raise AssertionError(f"{kind}: no content in the source stream")
    check = StreamPipeline(get_codec(protocol), get_codec(protocol), passthrough=True)
    for f in decode_all(b"".join(head)):
        check.feed(f)
    assert not check.closed and check.assembler.response.choice(0).text, kind
    return head


def head_text(kind: str) -> str:
    return assemble(PROTOCOL[kind], decode_all(b"".join(head_of(kind)))).choice(0).text


def error_frames(kind: str) -> list[bytes]:
    """``kind``'s own mid-stream error ending, shaped as real servers send it: the error
    frame, then the protocol's terminator where it has one besides the error frame."""
    err: dict[str, Any]
    if kind == "openai":
        err = {"error": {"message": BOOM, "type": "server_error", "code": "boom", "param": None}}
        return [f"data: {json.dumps(err)}\n\n".encode(), b"data: [DONE]\n\n"]
    if kind == "anthropic":
        err = {"type": "error", "error": {"type": "overloaded_error", "message": BOOM}}
        return [f"event: error\ndata: {json.dumps(err)}\n\n".encode()]
    if kind == "responses":  # as in responses/vercel_openai_error-then-response-failed.jsonl
        n = len(head_of(kind))
        error: dict[str, Any] = {"type": "server_error", "code": "server_error", "message": BOOM}
        err = {"type": "error", "sequence_number": n, "error": error}
        created = json.loads(decode_all(head_of(kind)[0])[0].data or "")["response"]
        failed = {
            "type": "response.failed",
            "sequence_number": n + 1,
            "response": {**created, "status": "failed", "error": error},
        }
        return [
            f"event: error\ndata: {json.dumps(err)}\n\n".encode(),
            f"event: response.failed\ndata: {json.dumps(failed)}\n\n".encode(),
        ]
    err = {"type": "error", "error": {"type": "server_error", "message": BOOM}}
    end = {"type": "chat.end", "result": {"model_instance_id": "m", "output": [], "stats": {}}}
    return [
        f"event: error\ndata: {json.dumps(err)}\n\n".encode(),
        f"event: chat.end\ndata: {json.dumps(end)}\n\n".encode(),
    ]


# -- fixtures -------------------------------------------------------------------------------


@contextlib.contextmanager
def scripted_upstream() -> Iterator[UpstreamServer]:
    """The scriptable upstream: each endpoint answers by its model's scenario; one that
    raised fails the module at its end."""
    with run_in_thread() as server:
        for path in UPSTREAM_PATHS.values():
            server.route("POST", path, _answer)
        yield server
        assert not server.errors, server.errors


@pytest.fixture(scope="module")
def up() -> Iterator[UpstreamServer]:
    with scripted_upstream() as server:
        yield server


def _config(up: UpstreamServer, **proxy: Any) -> Any:
    upstreams = []
    for kind in KINDS:
        base = up.url + "/v1" if kind in ("openai", "responses") else up.url
        for mode, suffix in (("repair", ""), ("passthrough", "-pt")):
            upstreams.append(
                {
                    "name": kind + suffix,
                    "protocol": PROTOCOL[kind],
                    "base_url": base,
                    "mode": mode,
                    "accounts": [{"api_key": "sk-upstream"}],
                }
            )
    return make_config(upstreams, **proxy)


@pytest.fixture(scope="module")
def fast(up: UpstreamServer) -> Iterator[Running]:
    with proxied(_config(up, keepalive_seconds=0, idle_timeout_seconds=0.5)) as p:
        yield p


@pytest.fixture(scope="module")
def quiet(up: UpstreamServer) -> Iterator[Running]:
    with proxied(_config(up, keepalive_seconds=0, idle_timeout_seconds=20)) as p:
        yield p


@pytest.fixture(scope="module")
def chatty(up: UpstreamServer) -> Iterator[Running]:
    with proxied(_config(up, keepalive_seconds=0.2, idle_timeout_seconds=20)) as p:
        yield p


# -- the client side ------------------------------------------------------------------------


def body_for(client: str, model: str, stream: bool = True) -> dict[str, Any]:
    msgs = [{"role": "user", "content": "hi"}]
    if client == "openai-chat":
        return {"model": model, "messages": msgs, "stream": stream}
    if client == "anthropic":
        return {"model": model, "max_tokens": 256, "messages": msgs, "stream": stream}
    if client == "gemini":  # (its path names the model and the mode: path_for)
        return {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    return {"model": model, "input": "hi", "stream": stream}  # responses, lmstudio


def path_for(client: str, path: str, model: str, stream: bool = True) -> str:
    """The endpoint ``path`` a client of ``client`` posts to for ``model``: itself, or
    Gemini's with the model and the mode in it."""
    if client != "gemini":
        return path
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    return f"/v1beta/models/{model}:{method}"


@dataclass
class Got:
    """One streamed answer as the client saw it: chunks with their arrival times."""

    status: int
    headers: httpx.Headers
    t0: float  # just before the request was sent
    t_end: float  # the response body ended
    chunks: list[tuple[float, bytes]] = field(default_factory=list)

    @property
    def body(self) -> bytes:
        return b"".join(c for _, c in self.chunks)

    @property
    def frames(self) -> list[Frame]:
        """All frames, ``arrival_ns`` = the client's monotonic arrival time."""
        dec = SSEDecoder()
        out: list[Frame] = []
        for t, c in self.chunks:
            out += dec.feed(c, int(t * 1e9))
        return out + dec.flush(int(self.t_end * 1e9))

    @property
    def data_frames(self) -> list[Frame]:
        return [f for f in self.frames if not f.is_comment_only]


def stream(p: Running, client: str, model: str, body: dict[str, Any] | None = None) -> Got:
    """POST a streaming request and read the whole answer, timestamping every chunk."""
    with httpx.Client(timeout=CLIENT_TIMEOUT) as http:
        t0 = time.monotonic()
        with http.stream(
            "POST",
            p.url + ENDPOINT[client],
            json=body or body_for(client, model),
            headers={"authorization": f"Bearer {p.key}"},
        ) as r:
            chunks = [(time.monotonic(), c) for c in r.iter_raw()]
            return Got(r.status_code, r.headers, t0, time.monotonic(), chunks)


def j(frame: Frame) -> Any:
    assert frame.data is not None, frame.raw
    return json.loads(frame.data)


def assert_error_ending(client: str, got: Got) -> dict[str, Any]:
    """The stream ends with ``client``'s error frame and terminator, nothing after, and no
    sign of a completed answer. Returns the error object (with at least a message)."""
    assert got.status == 200
    assert got.body.endswith(b"\n\n"), got.body[-200:]
    frames = got.data_frames
    assert len(frames) >= 2, got.body
    if client == "openai-chat":
        assert frames[-1].data == "[DONE]"
        err = j(frames[-2])["error"]
        for f in frames[:-2]:
            assert "error" not in j(f), f.raw
            assert all(c.get("finish_reason") is None for c in j(f)["choices"]), f.raw
    elif client == "anthropic":
        last = j(frames[-1])
        assert frames[-1].event == "error"
        assert set(last) == {"type", "error"} and last["type"] == "error", last
        err = last["error"]
        assert isinstance(err["type"], str) and err["type"], err
        for f in frames:
            assert f.event == j(f)["type"], f.raw  # every frame named after its type
            assert f.event not in ("message_stop", "message_delta"), f.raw
    elif client == "responses":
        events = [f.event for f in frames]
        assert events[-2:] == ["error", "response.failed"], events
        assert "response.completed" not in events and "response.incomplete" not in events
        seq = [j(f).get("sequence_number") for f in frames]
        assert seq == list(range(len(frames))), seq  # on every event, from 0, dense
        failed = j(frames[-1])["response"]
        assert failed["status"] == "failed" and failed["error"]["message"], failed
        assert failed["id"] == j(frames[0])["response"]["id"]
        err = j(frames[-2])
        err = {**err, **(err.get("error") or {})}
    else:
        events = [f.event for f in frames]
        assert events[-2:] == ["error", "chat.end"], events
        assert events.count("chat.end") == 1 and events[0] == "chat.start", events
        assert "result" in j(frames[-1]), frames[-1].raw
        err = j(frames[-2])["error"]
    assert isinstance(err, dict) and isinstance(err["message"], str) and err["message"], err
    return err


def recorded(p: Running, request_id: str) -> FlowSummary:
    """The summary of the flow the proxy recorded for a request (its ``x-request-id``),
    once stored; its lint verdict is not computed."""
    flows = p.server.app.flows
    assert flows is not None
    flows.flush(timeout=10)
    stored = flows.stored_summary(request_id)
    assert stored is not None, request_id
    return stored[0]


def assert_outcome(p: Running, request_id: str, outcome: str, detail: str = "") -> None:
    summary = recorded(p, request_id)
    assert summary.outcome == outcome, summary
    assert detail in summary.outcome_detail, summary


def assert_prefix_kept(client: str, got: Got, text: str) -> None:
    """What the upstream said before it broke reached the client, and the client's own
    decoder sees the stream as failed."""
    resp = assemble(client, got.frames)
    assert resp.choice(0).text == text
    assert resp.error is not None


# -- 1. SSE response headers ----------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("upstream", ["openai", "anthropic-pt"])
def test_sse_headers_on_every_streaming_endpoint(fast: Running, client: str, upstream: str) -> None:
    kind = upstream.removesuffix("-pt")
    ids = set()
    for _ in range(2):
        name = scenario(Script(chunks=list(frames_of(kind))))
        got = stream(fast, client, f"{upstream}/{name}")
        assert got.status == 200
        h = got.headers
        assert h["content-type"] == "text/event-stream"
        assert h["cache-control"] == "no-cache"
        assert h["connection"].lower() == "keep-alive"
        assert h["x-accel-buffering"] == "no"
        assert "content-length" not in h
        assert len(h["x-request-id"]) >= 8
        ids.add(h["x-request-id"])
        assert got.data_frames  # a real stream came with these headers
    assert len(ids) == 2  # one id per request


# -- 2. no buffering ------------------------------------------------------------------------

GAP = 1.0  # seconds the upstream waits between its first content and the rest


def gapped_chat_script(split: bool = False) -> tuple[Script, bytes]:
    """The openai-chat recording with a GAP after its first content frame; and the bytes
    sent before the gap. ``split``: the gap falls in the middle of the next frame."""
    head = list(head_of("openai"))[:-1]  # up to and including the first content frame
    rest = list(frames_of("openai"))[len(head) :]
    chunks: list[bytes | float]
    if split:
        half = len(rest[0]) // 2
        chunks = [*head, rest[0][:half], GAP, rest[0][half:], *rest[1:]]
    else:
        chunks = [*head, GAP, *rest]
    return Script(chunks=chunks), b"".join(head)


@pytest.mark.parametrize("route", ["repair", "passthrough"])
def test_a_frame_reaches_the_client_before_the_upstream_sends_the_next(
    quiet: Running, up: UpstreamServer, route: str
) -> None:
    script, head = gapped_chat_script()
    name = scenario(script)
    first_text = assemble("openai-chat", decode_all(head)).choice(0).text
    assert first_text
    if route == "repair":  # openai upstream -> anthropic client: translated frames
        got = stream(quiet, "anthropic", f"openai/{name}")
        arrivals = [
            f.arrival_ns / 1e9
            for f in got.data_frames
            if f.event == "content_block_delta" and j(f)["delta"].get("text")
        ]
        assert (
            j(next(f for f in got.data_frames if f.event == "content_block_delta"))["delta"]["text"]
            == first_text
        )
        assert got.data_frames[-1].event == "message_stop"
    else:  # openai passthrough -> chat client: the upstream's bytes
        got = stream(quiet, "openai-chat", f"openai-pt/{name}")
        assert got.body == b"".join(c for c in script.chunks if isinstance(c, bytes))
        received = b""
        arrivals = []
        for t, c in got.chunks:
            received += c
            if len(received) >= len(head) and not arrivals:
                arrivals.append(t)
    (req,) = requests_for(up, name)
    t_first = arrivals[0]
    # The upstream sent its next frame no earlier than GAP after it had the request.
    assert t_first < req.received_at + GAP - 0.2, t_first - req.received_at
    assert t_first - got.t0 < 0.5, t_first - got.t0
    # and the rest really did come after the gap (so the bound above means something)
    assert got.t_end - req.received_at >= GAP


# -- 3. keepalive ---------------------------------------------------------------------------


def _noted(frame: Frame) -> bool:
    """The proxy's note that the usage after it is estimated (model.estimate): a comment,
    but no keepalive."""
    return frame.is_comment_only and all(is_note(c) for c in frame.comments)


@pytest.mark.parametrize("route", ["passthrough", "repair"])
def test_keepalive_comments_during_upstream_silence(
    chatty: Running, up: UpstreamServer, route: str
) -> None:
    # passthrough: the silence falls inside a frame, and a keepalive must not split it
    script, head = gapped_chat_script(split=route == "passthrough")
    name = scenario(script)
    sent = b"".join(c for c in script.chunks if isinstance(c, bytes))
    if route == "passthrough":
        got = stream(chatty, "openai-chat", f"openai-pt/{name}")
    else:
        got = stream(chatty, "anthropic", f"openai/{name}")
    frames = [f for f in got.frames if not _noted(f)]
    comments = [i for i, f in enumerate(frames) if f.is_comment_only]
    assert len(comments) >= 2, got.body
    assert not [f for f in frames if f.comments and not f.is_comment_only]  # none inside a frame
    for i in comments:
        assert frames[i].raw == b": keepalive\n\n"
        assert frames[i].comments == ("keepalive",)
    # all of them inside the silence: after the first content, before the next data frame
    data_idx = [i for i, f in enumerate(frames) if not f.is_comment_only]
    before = [i for i in data_idx if i < comments[0]]
    after = [i for i in data_idx if i > comments[-1]]
    assert before and after
    assert not [i for i in data_idx if comments[0] < i < comments[-1]]
    # spaced by keepalive_seconds, not a burst
    times = [frames[i].arrival_ns / 1e9 for i in comments]
    assert times[-1] - times[0] >= 0.2
    # the stream itself is intact
    if route == "passthrough":
        assert b"".join(f.raw for f in got.data_frames) == sent
    else:
        want = assemble("openai-chat", decode_all(sent))
        resp = assemble("anthropic", got.data_frames)
        assert resp.choice(0).text == want.choice(0).text and resp.error is None
        assert got.data_frames[-1].event == "message_stop"


def test_no_keepalive_when_keepalive_seconds_is_zero(quiet: Running) -> None:
    script, _ = gapped_chat_script()
    got = stream(quiet, "anthropic", f"openai/{scenario(script)}")
    assert got.t_end - got.t0 >= GAP  # the silence happened
    assert not [f for f in got.frames if f.comments and not _noted(f)]
    assert b": keepalive" not in got.body
    assert got.data_frames[-1].event == "message_stop"


# -- 4. client disconnect -------------------------------------------------------------------

CANCEL_WITHIN = 1.0


def wait_cancelled(up: UpstreamServer, name: str, timeout: float = 5.0) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reqs = requests_for(up, name)
        if reqs and reqs[0].cancelled_at is not None:
            return reqs[0].cancelled_at
        time.sleep(0.01)
    raise AssertionError(f"the upstream request {name} was not cancelled within {timeout} s")


def wait_received(up: UpstreamServer, name: str, timeout: float = 5.0) -> RecordedRequest:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        reqs = requests_for(up, name)
        if reqs:
            return reqs[0]
        time.sleep(0.005)
    raise AssertionError(f"the upstream never got the request {name}")


def slow_chat_script() -> Script:
    """The openai-chat recording, one frame every 0.3 s, repeated to last ~15 s."""
    frames = list(frames_of("openai"))
    middle = frames[1:-2] * 4
    chunks: list[bytes | float] = [frames[0]]
    for f in middle + frames[-2:]:
        chunks += [0.3, f]
    return Script(chunks=chunks)


@pytest.mark.parametrize(
    ("client", "upstream", "slow"),
    [
        ("anthropic", "openai", "stall"),  # repair, upstream silent after one frame
        ("openai-chat", "openai-pt", "slow"),  # passthrough, upstream trickling
        ("responses", "anthropic", "slow"),
        ("lmstudio", "lmstudio-pt", "stall"),
    ],
)
def test_client_disconnect_mid_stream_cancels_the_upstream(
    quiet: Running, up: UpstreamServer, client: str, upstream: str, slow: str
) -> None:
    kind = upstream.removesuffix("-pt")
    if slow == "stall":
        script = Script(chunks=list(head_of(kind)), stall=30)
    elif kind == "openai":
        script = slow_chat_script()
    else:
        script = Script(chunks=[x for f in frames_of(kind) for x in (f, 0.2)])
    name = scenario(script)
    body = body_for(client, f"{upstream}/{name}")
    with httpx.Client(timeout=CLIENT_TIMEOUT) as http:
        with http.stream(
            "POST",
            quiet.url + ENDPOINT[client],
            json=body,
            headers={"authorization": f"Bearer {quiet.key}"},
        ) as r:
            assert r.status_code == 200
            dec = SSEDecoder()
            for chunk in r.iter_raw():
                if any(not f.is_comment_only for f in dec.feed(chunk)):
                    break  # the first frame is in: hang up
            t_read = time.monotonic()
            request_id = r.headers["x-request-id"]
        t_close = time.monotonic()
    cancelled = wait_cancelled(up, name)
    # the user's hang-up is recorded as such, not blamed on the stream
    assert_outcome(quiet, request_id, "client-cancelled", "mid-answer")
    (req,) = requests_for(up, name)
    assert req.finished_at is None  # the upstream had not finished: it was cut off
    assert cancelled >= t_read - 0.05
    assert cancelled - t_close < CANCEL_WITHIN, cancelled - t_close


def _raw_post(p: Running, path: str, body: dict[str, Any]) -> socket.socket:
    data = json.dumps(body).encode()
    host = p.url.removeprefix("http://")
    name, _, port = host.rpartition(":")
    sock = socket.create_connection((name, int(port)), timeout=CLIENT_TIMEOUT)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {p.key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    )
    sock.sendall(head.encode() + data)
    return sock


def _disconnect_while_waiting(
    p: Running, up: UpstreamServer, client: str, model: str, name: str, stream_: bool
) -> tuple[float, bytes]:
    sock = _raw_post(p, ENDPOINT[client], body_for(client, model, stream=stream_))
    try:
        wait_received(up, name)
        time.sleep(0.1)  # the proxy is now waiting on the upstream
        sock.setblocking(False)
        try:
            early = sock.recv(65536)
        except BlockingIOError:
            early = b""
    finally:
        sock.close()
    return time.monotonic(), early


@pytest.mark.parametrize("client", ["openai-chat", "anthropic"])
def test_client_disconnect_during_a_non_streaming_request_cancels_the_upstream(
    quiet: Running, up: UpstreamServer, client: str
) -> None:
    # repair mode streams from the upstream even for a non-streaming client
    upstream = "anthropic" if client == "openai-chat" else "openai"
    name = scenario(Script(chunks=list(head_of(upstream)), stall=30))
    t_close, early = _disconnect_while_waiting(
        quiet, up, client, f"{upstream}/{name}", name, stream_=False
    )
    assert early == b""  # nothing had been answered yet
    cancelled = wait_cancelled(up, name)
    assert cancelled - t_close < CANCEL_WITHIN, cancelled - t_close


def test_client_disconnect_during_a_non_streaming_passthrough_cancels_the_upstream(
    quiet: Running, up: UpstreamServer
) -> None:
    name = scenario(Script(body_json={"never": "sent"}, stall=1.5))
    t_close, _ = _disconnect_while_waiting(
        quiet, up, "openai-chat", f"openai-pt/{name}", name, stream_=False
    )
    cancelled = wait_cancelled(up, name, timeout=CANCEL_WITHIN + 0.2)
    assert cancelled - t_close < CANCEL_WITHIN


def test_client_disconnect_before_the_upstream_answers_cancels_the_upstream(
    quiet: Running, up: UpstreamServer
) -> None:
    name = scenario(Script(chunks=list(frames_of("openai")), delay=1.5))
    t_close, _ = _disconnect_while_waiting(
        quiet, up, "anthropic", f"openai/{name}", name, stream_=True
    )
    cancelled = wait_cancelled(up, name, timeout=CANCEL_WITHIN + 0.2)
    assert cancelled - t_close < CANCEL_WITHIN


# -- 5. mid-stream errors -------------------------------------------------------------------


def broken_script(kind: str, how: str) -> Script:
    head: list[bytes | float] = list(head_of(kind))
    if how == "drop":
        return Script(chunks=head, drop=True)
    if how == "error":
        return Script(chunks=[*head, *error_frames(kind)])
    if how == "truncated":  # a clean end of the HTTP body, but no protocol terminator
        return Script(chunks=head)
    if how == "stall":
        return Script(chunks=head, stall=15)
    raise ValueError(how)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("how", ["drop", "error", "truncated"])
@pytest.mark.parametrize("client", CLIENTS)
def test_mid_stream_failure_gives_the_clients_error_frame_and_terminator(
    fast: Running, up: UpstreamServer, client: str, how: str, kind: str
) -> None:
    name = scenario(broken_script(kind, how))
    got = stream(fast, client, f"{kind}/{name}")
    err = assert_error_ending(client, got)
    assert_prefix_kept(client, got, head_text(kind))
    if how == "error":
        assert BOOM in err["message"], err
    assert len(requests_for(up, name)) == 1  # no retry once bytes went to the client
    if how == "error":  # the upstream's own message, recorded with the outcome
        assert_outcome(fast, got.headers["x-request-id"], "upstream-error", BOOM)
    else:  # dropped, or a clean end of the body without the protocol's end
        assert_outcome(fast, got.headers["x-request-id"], "upstream-cut")


STALL_PAIRS = [
    ("openai-chat", "anthropic"),
    ("anthropic", "openai"),
    ("responses", "lmstudio"),
    ("lmstudio", "responses"),
]


@pytest.mark.parametrize(("client", "kind"), STALL_PAIRS)
def test_upstream_stalling_past_the_idle_timeout_ends_the_client_stream_with_an_error(
    fast: Running, up: UpstreamServer, client: str, kind: str
) -> None:
    name = scenario(broken_script(kind, "stall"))
    got = stream(fast, client, f"{kind}/{name}")
    err = assert_error_ending(client, got)
    assert_prefix_kept(client, got, head_text(kind))
    assert "0.5" in err["message"] or "idle" in json.dumps(err), err
    (req,) = requests_for(up, name)
    # the error came after the idle timeout, not long after; and the upstream was let go
    assert 0.5 - 0.05 <= got.t_end - req.received_at < 0.5 + 2.5
    wait_cancelled(up, name, timeout=3.0)
    assert_outcome(fast, got.headers["x-request-id"], "proxy-timeout", "nothing for 0.5 s")


# the official SDKs raise on these streams instead of hanging or returning a "complete" answer

SDK_CASES = [
    ("openai", "drop"),
    ("anthropic", "error"),
    ("responses", "truncated"),
    ("lmstudio", "stall"),
]


def raised_from_the_error_frame(exc: openai.APIError | anthropic.APIError, how: str) -> None:
    """The SDK raised because of the proxy's error frame: not a timeout, not a broken
    connection, and with the proxy's (or the upstream's) message."""
    assert not isinstance(exc, openai.APIConnectionError | anthropic.APIConnectionError), exc
    assert "upstream" in exc.message, exc.message
    if how == "error":
        assert BOOM in exc.message


@pytest.mark.parametrize(("kind", "how"), SDK_CASES)
def test_openai_chat_sdk_raises_on_a_broken_stream(fast: Running, kind: str, how: str) -> None:
    name = scenario(broken_script(kind, how))
    texts: list[str] = []
    with openai.OpenAI(
        api_key=fast.key, base_url=fast.v1, max_retries=0, timeout=CLIENT_TIMEOUT
    ) as client:
        with pytest.raises(openai.APIError) as exc:
            for chunk in client.chat.completions.create(
                model=f"{kind}/{name}",
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
            ):
                texts += [c.delta.content or "" for c in chunk.choices]
    assert "".join(texts) == head_text(kind)
    raised_from_the_error_frame(exc.value, how)


@pytest.mark.parametrize(("kind", "how"), SDK_CASES)
def test_openai_responses_sdk_raises_on_a_broken_stream(fast: Running, kind: str, how: str) -> None:
    name = scenario(broken_script(kind, how))
    with openai.OpenAI(
        api_key=fast.key, base_url=fast.v1, max_retries=0, timeout=CLIENT_TIMEOUT
    ) as client:
        with pytest.raises(openai.APIError) as exc:
            with client.responses.stream(model=f"{kind}/{name}", input="hi") as s:
                for _ in s:
                    pass
    raised_from_the_error_frame(exc.value, how)


@pytest.mark.parametrize(("kind", "how"), SDK_CASES)
def test_anthropic_sdk_raises_on_a_broken_stream(fast: Running, kind: str, how: str) -> None:
    name = scenario(broken_script(kind, how))
    with anthropic.Anthropic(
        api_key=fast.key, base_url=fast.url, max_retries=0, timeout=CLIENT_TIMEOUT
    ) as client:
        with pytest.raises(anthropic.APIError) as exc:
            with client.messages.stream(
                model=f"{kind}/{name}", max_tokens=256, messages=[{"role": "user", "content": "hi"}]
            ) as s:
                s.get_final_message()
    raised_from_the_error_frame(exc.value, how)


# a non-streaming client gets nothing until the answer is complete, so a broken upstream
# stream can still become a plain error status in the client protocol's envelope


def assert_error_envelope(client: str, r: httpx.Response) -> None:
    assert r.status_code >= 500, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    if client == "anthropic":
        assert body["type"] == "error" and body["error"]["message"], body
    else:
        assert set(body) == {"error"} and body["error"]["message"], body


def post_json(p: Running, client: str, model: str) -> httpx.Response:
    return httpx.post(
        p.url + ENDPOINT[client],
        json=body_for(client, model, stream=False),
        headers={"authorization": f"Bearer {p.key}"},
        timeout=CLIENT_TIMEOUT,
    )


@pytest.mark.parametrize("client", CLIENTS)
def test_non_streaming_client_gets_an_error_status_when_the_upstream_breaks_before_content(
    fast: Running, client: str
) -> None:
    name = scenario(Script(chunks=list(frames_of("openai")[:1]), drop=True))  # role only
    assert_error_envelope(client, post_json(fast, client, f"openai/{name}"))


@pytest.mark.parametrize("client", CLIENTS)
def test_non_streaming_client_gets_an_error_status_when_the_upstream_breaks_mid_answer(
    fast: Running, client: str
) -> None:
    name = scenario(broken_script("openai", "drop"))
    r = post_json(fast, client, f"openai/{name}")
    assert_error_envelope(client, r)
    assert_outcome(fast, r.headers["x-request-id"], "upstream-cut")


# -- 6. passthrough -------------------------------------------------------------------------

PASSTHROUGH_RECORDINGS = [
    ("anthropic", "anthropic/ant-py_max-tokens-mid-tool-json_padded.sse"),
    ("anthropic", "anthropic/vercel_raw-sse_web-search-citations.sse"),
    ("openai-chat", "openai-chat/oai-py_text_usage_done.sse"),
    ("openai-chat", "openai-compatible-chat/vercel_anthropic-compat-endpoint_tool-call-index1.sse"),
    ("responses", "responses/vercel_openai_reasoning_web-search_text.jsonl"),
    ("lmstudio", "lmstudio/DOC-EXAMPLES-NOT-CAPTURE_lmstudio-api-v1-chat_event-catalog.sse"),
    ("responses", "responses/vercel_openai_error-then-response-failed.jsonl"),
]


@pytest.mark.parametrize(
    ("client", "path"),
    [pytest.param(c, p, id=Path(p).stem, marks=[]) for c, p in PASSTHROUGH_RECORDINGS],
)
def test_passthrough_forwards_the_upstreams_bytes_unchanged(
    fast: Running, client: str, path: str
) -> None:
    script = script_from_recording(FIXTURES / path)
    sent = b"".join(c for c in script.chunks if isinstance(c, bytes))
    got = stream(fast, client, f"{KIND_OF[client]}-pt/{scenario(script)}")
    assert got.status == 200
    assert got.body == sent
    # the error recording, and LM Studio's documented event catalogue (it has an error)
    outcome = "upstream-error" if "error" in path or "catalog" in path else "complete"
    assert_outcome(fast, got.headers["x-request-id"], outcome)
    if path.endswith(".sse"):  # the recording's own bytes (its missing last blank line added)
        raw = (FIXTURES / path).read_bytes()
        assert sent.startswith(raw) and sent[len(raw) :] in (b"", b"\n", b"\n\n")


def test_padded_anthropic_recording_is_really_odd() -> None:
    # guards the test above: the passthrough case has whitespace a re-encoder would drop
    raw = (FIXTURES / PASSTHROUGH_RECORDINGS[0][1]).read_bytes()
    assert b"}          }\n" in raw and b'"type": "ping"' in raw


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("how", ["drop", "truncated"])
def test_passthrough_stream_that_breaks_gets_an_error_frame_and_terminator_appended(
    fast: Running, client: str, how: str
) -> None:
    kind = KIND_OF[client]
    got = stream(fast, client, f"{kind}-pt/{scenario(broken_script(kind, how))}")
    sent = b"".join(head_of(kind))
    assert got.body.startswith(sent)  # the upstream's bytes, unchanged, then the ending
    assert_error_ending(client, got)
    assert_prefix_kept(client, got, head_text(kind))
    appended = [f.event or f.data for f in decode_all(got.body[len(sent) :]) if not _noted(f)]
    tail = {"openai-chat": 2, "anthropic": 1, "responses": 2, "lmstudio": 2}[client]
    closing = appended[:-tail]  # only LM Studio closes its open part first
    assert all(e in ("message.end", "reasoning.end") for e in closing), appended
    assert len(closing) == (1 if client == "lmstudio" else 0), appended
    assert_outcome(fast, got.headers["x-request-id"], "upstream-cut")


@pytest.mark.parametrize(
    "client",
    ["openai-chat", "anthropic", "responses", "lmstudio"],
)
def test_passthrough_relays_the_upstreams_own_error_ending_unchanged(
    fast: Running, client: str
) -> None:
    kind = KIND_OF[client]
    script = broken_script(kind, "error")
    got = stream(fast, client, f"{kind}-pt/{scenario(script)}")
    assert got.body == b"".join(c for c in script.chunks if isinstance(c, bytes))
    err = assert_error_ending(client, got)
    assert BOOM in err["message"]
    assert_outcome(fast, got.headers["x-request-id"], "upstream-error", BOOM)


@pytest.mark.parametrize("client", ["openai-chat", "responses", "lmstudio"])
def test_passthrough_error_frame_without_its_terminator_gets_the_terminator_appended(
    fast: Running, client: str
) -> None:
    kind = KIND_OF[client]
    bare = error_frames(kind)[:1]  # the error frame, then the upstream just ends
    sent = b"".join(head_of(kind)) + bare[0]
    got = stream(fast, client, f"{kind}-pt/{scenario(Script(chunks=[*head_of(kind), *bare]))}")
    assert got.body.startswith(sent)
    assert_error_ending(client, got)
    assert_outcome(fast, got.headers["x-request-id"], "upstream-error", BOOM)


INDEX1 = (
    FIXTURES / "openai-compatible-chat" / "vercel_anthropic-compat-endpoint_tool-call-index1.sse"
)


def _tool_indexes(frames: list[Frame]) -> list[int]:
    return [
        tc["index"]
        for f in frames
        if f.data and f.data != "[DONE]"
        for c in j(f).get("choices", [])
        for tc in c["delta"].get("tool_calls") or []
    ]


def test_repair_renumbers_tool_calls_of_a_broken_chat_stream(fast: Running) -> None:
    raw_indexes = _tool_indexes(decode_all(INDEX1.read_bytes()))
    assert raw_indexes and set(raw_indexes) == {1}  # the upstream's bug
    got = stream(fast, "openai-chat", f"openai/{scenario(script_from_recording(INDEX1))}")
    assert set(_tool_indexes(got.data_frames)) == {0}
    assert got.data_frames[-1].data == "[DONE]"
    # and passthrough of the same stream is left as it is (the client sees the bug)
    got_pt = stream(fast, "openai-chat", f"openai-pt/{scenario(script_from_recording(INDEX1))}")
    assert set(_tool_indexes(got_pt.data_frames)) == {1}


def test_repaired_index1_stream_is_usable_by_the_openai_sdk(fast: Running) -> None:
    name = scenario(script_from_recording(INDEX1))
    with openai.OpenAI(
        api_key=fast.key, base_url=fast.v1, max_retries=0, timeout=CLIENT_TIMEOUT
    ) as client:
        with client.chat.completions.stream(
            model=f"openai/{name}", messages=[{"role": "user", "content": "hi"}]
        ) as s:
            final = s.get_final_completion()
    msg = final.choices[0].message
    assert msg.content == "Reading it."
    assert [
        (tc.function.name, json.loads(tc.function.arguments)) for tc in msg.tool_calls or []
    ] == [("read_file", {"path": "a.txt"})]


@pytest.mark.parametrize("mode", ["repair", "passthrough"])
def test_upstream_connections_are_reused_across_requests(mode: str) -> None:
    # The proxy stops reading at the stream's terminator; unless it then drains the final
    # empty chunk, httpx closes the connection and every request pays a new handshake.
    with run_in_thread() as own:
        own.route("POST", "/v1/chat/completions", fast_stream_script(5))
        config = make_config(
            [
                {
                    "name": "o",
                    "protocol": "openai-chat",
                    "base_url": own.url + "/v1",
                    "mode": mode,
                    "models": ["m"],
                }
            ]
        )
        with proxied(config) as p, httpx.Client(timeout=20) as client:
            for _ in range(5):
                r = client.post(
                    p.v1 + "/chat/completions",
                    json={
                        "model": "m",
                        "stream": True,
                        "messages": [{"role": "user", "content": "hi"}],
                    },
                    headers={"authorization": f"Bearer {p.key}"},
                )
                assert r.status_code == 200 and r.text.rstrip().endswith("[DONE]")
        assert len(own.requests) == 5
        assert own.connections == 1
