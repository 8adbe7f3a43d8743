"""The demo backend as an upstream of the proxy: scenarios, replays and account faults.

It speaks every protocol: asked in the client's own protocol (``protocol_for``), it
encodes its scenario's canonical events with that protocol's codec, so each client gets
native frames (Anthropic clients a signed thinking block, OpenAI clients a refusal
field) and ``passthrough`` works for every client. A replay speaks the protocol of its
recording; a client of another protocol gets it translated (repair mode).

Accounts may carry a ``fault``, answered before anything else: ``401``, ``429`` (with
``Retry-After: 60``), ``402``, ``403-insufficient``, ``403-too-large`` as the error a
provider would send, ``network`` as a refused connection, ``slow`` as a wait of
``slow_seconds`` before an otherwise normal answer.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from streamscope.codecs import Codec, EncodeOptions, get_codec
from streamscope.config import AccountConfig, UpstreamConfig, default_data_dir
from streamscope.demo.replay import PREFIX, Replay, ReplayCatalogue, mark_recorded_errors
from streamscope.demo.scenarios import SCENARIOS, Step, Timing, steps
from streamscope.model.assemble import assemble
from streamscope.model.errors import bad_gateway, unreachable
from streamscope.model.events import Error
from streamscope.model.request import Request, RequestError
from streamscope.recording import RecordingError
from streamscope.wire import SSEDecoder, decode_all
from streamscope.wire.frame import Frame
from streamscope.wire.jsontext import dumps

JSON = dict[str, Any]
RETRY_AFTER = 60
MAX_CHOICES = 128  # OpenAI's own limit on choices per request, which the demo keeps
DEMO_HEADER = (b"content-type", b"application/json")

# fault -> (status, error type, message)
FAULTS: dict[str, tuple[int, str, str]] = {
    "401": (401, "authentication_error", "Incorrect API key provided."),
    "429": (429, "rate_limit_error", "Rate limit reached for this account; retry later."),
    "402": (402, "insufficient_quota", "Insufficient balance: please top up your account."),
    "403-insufficient": (
        403,
        "permission_error",
        "Insufficient tokens for this request: upgrade your plan.",
    ),
    "403-too-large": (
        403,
        "permission_error",
        "The estimated cost of this request exceeds your per-request limit.",
    ),
}


class _Answer:
    """A whole body: an error envelope, a non-streaming answer, a replayed body."""

    def __init__(
        self,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.status = status
        self.content_type = content_type
        self.headers: Mapping[str, str] = headers or {"content-type": content_type}
        self._body = body

    async def batches(self) -> AsyncGenerator[list[Frame], None]:
        # What an SSE reader makes of this body (nothing, unless it happens to be SSE).
        frames = decode_all(self._body, arrival_ns=time.monotonic_ns())
        if frames:
            yield frames

    async def read(self, limit: int = 1 << 30) -> bytes:
        return self._body[:limit]

    async def drain(self) -> None:
        return None


class _Stream:
    """Wire bytes released on a schedule: (seconds to wait, bytes) pairs."""

    status = 200
    content_type = "text/event-stream"

    def __init__(self, timed: Iterable[tuple[float, bytes]]) -> None:
        """``timed`` is read once (by :meth:`batches` or :meth:`read`)."""
        self.headers: Mapping[str, str] = {"content-type": self.content_type}
        self._timed = timed

    async def batches(self) -> AsyncGenerator[list[Frame], None]:
        decoder = SSEDecoder()
        for delay, data in self._timed:
            if delay > 0:
                await asyncio.sleep(delay)
            # The arrival time is when the bytes are "received", as for a real upstream.
            frames = decoder.feed(data, time.monotonic_ns())
            if frames:
                yield frames
        tail = decoder.flush()
        if tail:
            yield tail

    async def read(self, limit: int = 1 << 30) -> bytes:
        return b"".join(data for _, data in self._timed)[:limit]

    async def drain(self) -> None:
        return None


def _error(codec: Codec, status: int, error: Error, **headers: str) -> _Answer:
    body = json.dumps(codec.encode_error(error)).encode()
    return _Answer(status, body, headers={"content-type": "application/json", **headers})


def _timed_frames(
    codec: Codec, played: Iterable[Step], request: Request
) -> Iterator[tuple[float, bytes]]:
    """The scenario encoded in ``codec``'s protocol: bytes grouped by the wait before them.
    Encoded as the stream plays, as a provider does: encoding a 20,000-token answer up
    front took 20-90 ms before the first byte (on the window's loop, a stall at Send)."""
    options = EncodeOptions(
        include_usage=request.include_usage or codec.requires_usage,
        request=request,
    )
    encoder = codec.stream_encoder(options)
    wait = 0.0
    for step in played:
        wait += step.delay
        data = b"".join(encoder.encode(step.event))
        if data:
            yield wait, data
            wait = 0.0
    tail = b"".join(encoder.finish())
    if tail:
        yield wait, tail


class DemoUpstream:
    """The upstream of ``protocol = "demo"``: no network, no key."""

    # Its model list is the scenarios and a look at the replay folders: the proxy asks
    # for it each time rather than caching it, so new recordings are listed at once.
    models_are_local = True

    def __init__(
        self,
        config: UpstreamConfig,
        catalogue: ReplayCatalogue | None = None,
        *,
        keepalive_seconds: float = 0.0,
    ) -> None:
        """``keepalive_seconds``: the serving proxy's keepalive interval (0: off), which
        demo-slow's silence outlasts (:meth:`DemoSettings.silence_seconds`)."""
        self.config = config
        s = config.demo
        self.timing = Timing(
            s.tokens_per_second,
            s.first_token_seconds,
            s.silence_seconds(keepalive_seconds),
            s.long_tokens,
        )
        self.catalogue = catalogue or ReplayCatalogue.default(default_data_dir(), s.replay_dirs)

    def protocol_for(self, client_protocol: str, model: str) -> str:
        """The protocol to ask the demo in: the client's own, or a replay's."""
        if model.startswith(PREFIX):
            return self.catalogue.protocol(model) or client_protocol
        return client_protocol

    async def list_models(self, account: AccountConfig | None) -> list[str]:
        fault = account.fault if account is not None else None
        if fault == "network":
            raise unreachable(f"demo account {account.name if account else ''}: connection refused")
        if fault == "401":
            message = FAULTS["401"][2]
            raise bad_gateway(f"cannot list the models of {self.config.name}: {message}")
        return [*SCENARIOS, *self.catalogue.names()]

    @asynccontextmanager
    async def open(
        self,
        body: JSON,
        *,
        stream: bool,
        account: AccountConfig | None,
        forward: dict[str, str],
        codec: Codec | None = None,
        sent: Callable[[str, list[tuple[bytes, bytes]], bytes], None] | None = None,
    ) -> AsyncIterator[_Answer | _Stream]:
        if sent is not None:  # no wire: the request as the demo is given it
            sent(f"demo://{self.config.name}", [DEMO_HEADER], dumps(body))
        codec = codec or get_codec(self.config.answers_in)
        yield await self._answer(body, stream, account, codec)

    async def _answer(
        self, body: JSON, stream: bool, account: AccountConfig | None, codec: Codec
    ) -> _Answer | _Stream:
        fault = account.fault if account is not None else None
        if fault == "network":
            raise unreachable(f"demo account {account.name if account else ''}: connection refused")
        if fault == "slow":
            await asyncio.sleep(self.config.demo.slow_seconds)
        elif fault is not None:
            status, kind, message = FAULTS[fault]
            headers = {"retry-after": str(RETRY_AFTER)} if status == 429 else {}
            return _error(codec, status, Error(message, kind, kind), **headers)
        model = str(body.get("model", ""))
        replay = self.catalogue.get(model)
        if replay is not None:
            return self._replay(replay, stream, codec)
        try:
            request = codec.decode_request(body)
        except RequestError as exc:
            return _error(codec, 400, Error(exc.message, "invalid_request_error", None, exc.param))
        if model not in SCENARIOS:
            known = ", ".join(SCENARIOS)
            message = f"the demo has no model {model!r} (it has {known} and replay/<name>)"
            return _error(codec, 404, Error(message, "not_found_error", "model_not_found"))
        if request.n is not None and not 1 <= request.n <= MAX_CHOICES:
            # The demo judges its values as a provider does (the proxy forwards them).
            message = f"n must be an integer from 1 to {MAX_CHOICES}, not {request.n}"
            return _error(codec, 400, Error(message, "invalid_request_error", None, "n"))
        if stream:
            return _Stream(_timed_frames(codec, steps(model, request, self.timing), request))
        # Not streaming: the same answer after the time it would have taken.
        played = list(steps(model, request, self.timing))
        await asyncio.sleep(sum(s.delay for s in played))
        response = assemble(s.event for s in played)
        if response.error is not None:
            return _error(codec, 500, response.error)
        data = json.dumps(codec.encode_response(response)).encode()
        return _Answer(200, data)

    def _replay(self, replay: Replay, stream: bool, codec: Codec) -> _Answer | _Stream:
        """A recording played back (``codec``: the protocol asked in, for an error). A
        provider's error in it is served with its message marked as recorded."""
        try:
            if replay.is_body:
                return _Answer(200, mark_recorded_errors(replay.path.read_bytes(), replay.name))
            recording = replay.recording()
        except (OSError, RecordingError) as exc:
            message = f"cannot replay {replay.name}: {exc}"
            return _error(codec, 500, Error(message, "api_error", "replay_unreadable"))
        if not stream:
            recorded = get_codec(recording.protocol)  # the recording's own protocol
            response = assemble(recorded.stream_decoder().decode_stream(recording.frames))
            data = json.dumps(recorded.encode_response(response)).encode()
            return _Answer(200, data)
        frames = recording.frames
        offsets = replay.offsets(len(frames))
        if offsets is not None:  # the recorded pace
            waits = [b - a for a, b in zip([0.0, *offsets], offsets, strict=False)]
        else:
            pace = self.config.demo.replay_pace_seconds
            waits = [pace if i else 0.0 for i in range(len(frames))]
        raws = [mark_recorded_errors(f.raw, replay.name) for f in frames]
        return _Stream(list(zip(waits, raws, strict=True)))


__all__ = ["FAULTS", "DemoUpstream"]
