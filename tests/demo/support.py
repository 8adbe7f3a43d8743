"""Shared by the demo tests: a fast ``DemoUpstream``, calling it, decoding what it sends,
and small hand-written recordings for replay catalogues in ``tmp_path``."""

from __future__ import annotations

import json
import time
from typing import Any

from streamscope.codecs import get_codec
from streamscope.config import AccountConfig, UpstreamConfig
from streamscope.demo.replay import ReplayCatalogue
from streamscope.demo.upstream import DemoUpstream
from streamscope.model.assemble import assemble
from streamscope.model.response import Response
from streamscope.wire.frame import Frame

FAST: dict[str, Any] = {
    "tokens_per_second": 5000.0,
    "first_token_seconds": 0.0,
    "slow_seconds": 0.0,
    "long_tokens": 12,
    "replay_pace_seconds": 0.0,
}


def demo(catalogue: ReplayCatalogue | None = None, **settings: Any) -> DemoUpstream:
    config = UpstreamConfig(name="demo", protocol="demo", demo={**FAST, **settings})
    return DemoUpstream(config, catalogue or ReplayCatalogue([]))


async def open_stream(
    up: DemoUpstream, body: Any, protocol: str, account: AccountConfig | None = None
) -> tuple[Any, list[tuple[float, Frame]]]:
    """The answer and its frames, each with the monotonic time its batch came."""
    async with up.open(
        body, stream=True, account=account, forward={}, codec=get_codec(protocol)
    ) as a:
        frames = [(time.monotonic(), f) async for batch in a.batches() for f in batch]
    return a, frames


async def open_whole(
    up: DemoUpstream, body: Any, protocol: str, account: AccountConfig | None = None
) -> tuple[Any, bytes]:
    async with up.open(
        body, stream=False, account=account, forward={}, codec=get_codec(protocol)
    ) as a:
        return a, await a.read()


def decode_frames(protocol: str, frames: list[Frame]) -> Response:
    decoder = get_codec(protocol).stream_decoder()
    events = [ev for f in frames for ev in decoder.decode(f)]
    return assemble(events + decoder.finish())


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gpt-rec",
            "choices": [choice],
        },
        separators=(",", ":"),
    )


# An OpenAI Chat stream as a server might send it: a comment, a CRLF frame, ``data:``
# without a space; replayed, its bytes must come out exactly as they are here.
CHAT_SSE = (
    b": recorded by hand\n\n"
    + f"data: {_chunk({'role': 'assistant', 'content': ''})}\n\n".encode()
    + f"data:{_chunk({'content': 'Hello'})}\r\n\r\n".encode()
    + f"data: {_chunk({'content': ' from a recording'})}\n\n".encode()
    + f"data: {_chunk({}, 'stop')}\n\n".encode()
    + b"data: [DONE]\n\n"
)
CHAT_TEXT = "Hello from a recording"

_ANTHROPIC = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_rec",
            "type": "message",
            "role": "assistant",
            "model": "claude-rec",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 3, "output_tokens": 1},
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Bonjour"}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " Claude"}},
    {"type": "content_block_stop", "index": 0},
    {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 2},
    },
    {"type": "message_stop"},
]
ANTHROPIC_PAYLOADS = _ANTHROPIC
ANTHROPIC_JSONL = "".join(json.dumps(p) + "\n" for p in _ANTHROPIC).encode()
ANTHROPIC_TEXT = "Bonjour Claude"

CHAT_BODY = json.dumps(
    {
        "id": "chatcmpl-body",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-rec",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "A whole body"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5},
    },
    indent=1,
).encode()
RESPONSES_BODY = json.dumps(
    {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": "gpt-rec",
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Hi", "annotations": []}],
            }
        ],
    }
).encode()
