"""A minimal in-process demo upstream, so a fresh install answers without any key.

It speaks OpenAI Chat (its frames are made by that protocol's encoder from canonical
events) and quotes the user's last message back, with usage. The demo-backend issue
replaces it with scenarios and replays.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from streamscope.codecs import EncodeOptions, get_codec
from streamscope.config import AccountConfig, UpstreamConfig
from streamscope.model.events import End, Event, Finish, MessageStart, TextDelta, Usage
from streamscope.model.response import Choice as ResponseChoice
from streamscope.model.response import Response, TextOut
from streamscope.model.stop import StopReason
from streamscope.wire import SSEDecoder
from streamscope.wire.frame import Frame

JSON = dict[str, Any]
PROTOCOL = "openai-chat"
MODELS = ["demo-chat"]


def reply_events(body: JSON) -> list[Event]:
    request = get_codec(PROTOCOL).decode_request(body)
    last = next((m.text for m in reversed(request.messages) if m.role == "user"), "")
    words = f'You said: "{last}". This is the StreamScope demo upstream.'.split(" ")
    pieces = [w if i == 0 else " " + w for i, w in enumerate(words)]
    if request.max_tokens is not None:
        pieces = pieces[: max(request.max_tokens, 1)]
    finish: StopReason = "length" if len(pieces) < len(words) else "stop"
    events: list[Event] = [MessageStart(f"chatcmpl-demo{time.time_ns()}", request.model)]
    events += [TextDelta(p) for p in pieces]
    prompt = sum(len(m.text.split()) for m in request.messages) + 1
    events += [Finish(finish), Usage(prompt, len(pieces)), End()]
    return events


class _DemoResponse:
    status = 200
    headers: dict[str, str] = {}  # noqa: RUF012 - never mutated

    def __init__(self, body: JSON, stream: bool, delay: float) -> None:
        self._events = reply_events(body)
        self.content_type = "text/event-stream" if stream else "application/json"
        self._delay = delay

    async def batches(self) -> AsyncGenerator[list[Frame], None]:
        encoder = get_codec(PROTOCOL).stream_encoder(EncodeOptions(include_usage=True))
        wire = SSEDecoder()
        for ev in self._events:
            frames = wire.feed(b"".join(encoder.encode(ev)), time.monotonic_ns())
            if frames:
                yield frames
            if isinstance(ev, TextDelta) and self._delay:
                await asyncio.sleep(self._delay)
        frames = wire.feed(b"".join(encoder.finish()), time.monotonic_ns())
        if frames:
            yield frames

    async def drain(self) -> None:
        return None

    async def read(self, limit: int = 0) -> bytes:
        import json

        text = "".join(e.text for e in self._events if isinstance(e, TextDelta))
        usage = next(e for e in self._events if isinstance(e, Usage))
        start = self._events[0]
        assert isinstance(start, MessageStart)
        finish = next(e for e in self._events if isinstance(e, Finish))
        response = Response(
            start.id,
            start.model,
            int(time.time()),
            [ResponseChoice(0, [TextOut(text)], finish.reason)],
            usage,
        )
        return json.dumps(get_codec(PROTOCOL).encode_response(response)).encode()


class DemoUpstream:
    def __init__(self, config: UpstreamConfig, delay: float = 0.02) -> None:
        self.config = config
        self.delay = delay

    @asynccontextmanager
    async def open(
        self, body: JSON, *, stream: bool, account: AccountConfig | None, forward: dict[str, str]
    ) -> AsyncIterator[_DemoResponse]:
        yield _DemoResponse(body, stream, self.delay)

    async def list_models(self, account: AccountConfig | None) -> list[str]:
        return list(MODELS)
