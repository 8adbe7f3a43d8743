"""``streamscope probe``: one request to any endpoint, its stream shown as it arrives.

The request is a canonical one (a user prompt, streaming, usage asked for) encoded by
the protocol's codec, so it is what that protocol's clients send. The answer is kept as
a capture leg — every chunk's bytes and arrival time — and the same views as for a
proxied flow are computed from it: the assembled response, the timing and the lint
findings. Frames are reported to a callback as they arrive.

URLs are taken the way each protocol's SDK takes its base URL (OpenAI Chat and Responses
with ``/v1``, Anthropic and LM Studio at the server root); a URL that already ends with
the endpoint's path is used as it is.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.capture.sse import leg_frames
from streamscope.codecs import get_codec
from streamscope.model.assemble import assemble
from streamscope.model.request import Message, Request, TextPart
from streamscope.model.response import Response
from streamscope.timing import LegTiming, leg_timing
from streamscope.wire import SSEDecoder
from streamscope.wire.frame import Frame

JSON = dict[str, Any]
PATHS = {
    "openai-chat": "/chat/completions",
    "responses": "/responses",
    "anthropic": "/v1/messages",
    "lmstudio": "/api/v1/chat",
}


def endpoint(url: str, protocol: str) -> str:
    url = url.rstrip("/")
    path = PATHS[protocol]
    return url if url.endswith(path) else url + path


def request_body(protocol: str, model: str, prompt: str, max_tokens: int | None) -> JSON:
    request = Request(
        model=model,
        messages=[Message("user", [TextPart(prompt)])],
        stream=True,
        include_usage=True,
        max_tokens=max_tokens,
    )
    return get_codec(protocol).encode_request(request)


@dataclass(slots=True)
class ProbeResult:
    url: str
    status: int
    content_type: str
    leg: Leg
    response: Response | None  # assembled (None: an error body or nothing decodable)
    timing: LegTiming
    error_body: bytes | None = None
    findings: list[Any] = field(default_factory=list)  # filled by the caller's linter


async def probe(
    url: str,
    protocol: str,
    model: str,
    prompt: str = "Say hello in five words.",
    key: str = "",
    *,
    max_tokens: int | None = 256,
    read_timeout: float = 300.0,
    on_frame: Callable[[int, float, Frame], None] | None = None,
) -> ProbeResult:
    """Send one request; ``on_frame(index, ms since sent, frame)`` for each frame."""
    codec = get_codec(protocol)
    target = endpoint(url, protocol)
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    headers |= codec.auth_headers(key)
    body = request_body(protocol, model, prompt, max_tokens)
    leg = Leg(protocol=protocol)
    wire = SSEDecoder()
    count = 0
    async with httpx.AsyncClient(timeout=read_timeout, trust_env=False) as client:
        t0 = time.monotonic_ns()
        leg.sent_ns = 0
        async with client.stream("POST", target, json=body, headers=headers) as response:
            leg.status = response.status_code
            leg.headers = list(response.headers.items())
            leg.headers_ns = time.monotonic_ns() - t0
            content_type = response.headers.get("content-type", "")
            if response.status_code >= 400 or "json" in content_type:
                leg.body = await response.aread()
            else:
                async for chunk in response.aiter_raw():
                    now = time.monotonic_ns() - t0
                    leg.frames.append(CapturedFrame(chunk, now))
                    if on_frame is not None:
                        for frame in wire.feed(chunk, now):
                            on_frame(count, now / 1e6, frame)
                            count += 1
                if on_frame is not None:
                    for frame in wire.flush():
                        on_frame(count, (time.monotonic_ns() - t0) / 1e6, frame)
                        count += 1
            leg.ended_ns = time.monotonic_ns() - t0
    assembled: Response | None = None
    if leg.streamed:
        decoder = codec.stream_decoder()
        events = [ev for _, f in leg_frames(leg) for ev in decoder.decode(f)]
        assembled = assemble(events + decoder.finish())
    return ProbeResult(
        url=target,
        status=leg.status or 0,
        content_type=content_type,
        leg=leg,
        response=assembled,
        timing=leg_timing(leg),
        error_body=leg.body,
    )


__all__ = ["ProbeResult", "endpoint", "probe", "request_body"]
