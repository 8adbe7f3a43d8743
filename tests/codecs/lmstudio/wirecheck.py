"""Wire-level checks of LM Studio /api/v1/chat streams, written from the docs' rules (not
from the encoder): parse bytes with the project's SSE decoder and assert on the JSON."""

from __future__ import annotations

import json
from typing import Any

from streamscope.codecs.lmstudio import CODEC
from streamscope.model.estimate import NOTE
from streamscope.model.events import Event
from streamscope.model.response import Response
from streamscope.wire import SSEDecoder

# The documented event catalogue (lmstudio-ai/docs streaming-events.md, old and new).
CATALOGUE = {
    "chat.start",
    "model_load.start",
    "model_load.progress",
    "model_load.end",
    "prompt_processing.start",
    "prompt_processing.progress",
    "prompt_processing.end",
    "reasoning.start",
    "reasoning.delta",
    "reasoning.end",
    "tool_call.start",
    "tool_call.arguments",
    "tool_call.result",
    "tool_call.success",
    "tool_call.failure",
    "message.start",
    "message.delta",
    "message.end",
    "error",
    "chat.end",
}
DOC_ERROR_TYPES = {
    "invalid_request",
    "unknown",
    "mcp_connection_error",
    "plugin_connection_error",
    "not_implemented",
    "model_not_found",
    "job_not_found",
    "internal_error",
}
STATS = (
    "input_tokens",
    "total_output_tokens",
    "reasoning_output_tokens",
    "tokens_per_second",
    "time_to_first_token_seconds",
)


def parse(data: bytes) -> list[tuple[str | None, dict[str, Any]]]:
    """(event line, JSON payload) of every frame; asserts transport rules on the way."""
    assert data.endswith(b"\n\n"), "the last frame must end with a blank line"
    sse = SSEDecoder()
    frames = sse.feed(data, 0) + sse.flush(0)
    assert not sse.findings, sse.findings
    out = []
    for frame in frames:
        if frame.is_comment_only:  # only the note that usage was estimated (model.estimate)
            assert [c.strip() for c in frame.comments] == [NOTE], frame.raw
            continue
        assert frame.raw.count(b"\ndata:") + frame.raw.startswith(b"data:") == 1, frame.raw
        assert frame.data is not None
        payload = json.loads(frame.data)
        assert isinstance(payload, dict)
        out.append((frame.event, payload))
    return out


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _provider_ok(info: Any) -> bool:
    if not isinstance(info, dict):
        return False
    if info.get("type") == "plugin":
        return isinstance(info.get("plugin_id"), str)
    if info.get("type") == "ephemeral_mcp":
        return isinstance(info.get("server_label"), str)
    return False


def check_stream(data: bytes, *, source_tools: bool = True) -> list[dict[str, Any]]:
    """Assert every rule an LM Studio stream keeps; return the payloads.

    ``source_tools``: tool events may carry a provider_info copied from a source stream
    that had none; with False every provider_info must have a documented shape.
    """
    frames = parse(data)
    payloads = [p for _, p in frames]
    for event, payload in frames:
        assert event == payload.get("type"), (event, payload)
        assert event in CATALOGUE, event
    kinds = [p["type"] for p in payloads]
    assert kinds[0] == "chat.start" and kinds.count("chat.start") == 1
    assert isinstance(payloads[0]["model_instance_id"], str)
    assert kinds[-1] == "chat.end" and kinds.count("chat.end") == 1
    if "error" in kinds:
        assert kinds.index("error") == len(kinds) - 2, "nothing but chat.end after error"
        err = payloads[-2]["error"]
        assert err["type"] in DOC_ERROR_TYPES and isinstance(err["message"], str)
    open_part: str | None = None
    texts: list[tuple[str, str]] = []  # streamed (kind, text) items
    items: list[dict[str, Any]] = []  # streamed output items, as chat.end lists them
    stages: dict[str, str] = {}
    tool: str | None = None  # the tool of an open tool_call.start
    has_args = False  # the open tool call has had its tool_call.arguments
    for payload in payloads[1:-1]:
        kind = payload["type"]
        family, _, phase = kind.partition(".")
        if tool is not None and (family != "tool_call" or kind == "tool_call.start"):
            # A call that never got its result (the source had none): arguments came at least.
            assert has_args, "tool_call.start must be followed by tool_call.arguments"
            tool = None
        if family in ("reasoning", "message"):
            if phase == "start":
                assert open_part is None, f"{kind} inside an open {open_part}"
                open_part = family
                texts.append((family, ""))
            elif phase == "delta":
                assert open_part == family, f"{kind} outside its start/end"
                assert isinstance(payload["content"], str)
                texts[-1] = (family, texts[-1][1] + payload["content"])
            else:
                assert open_part == family, f"{kind} without start"
                open_part = None
                items.append({"type": family, "content": texts[-1][1]})
            continue
        assert open_part is None, f"{kind} inside an open {open_part}"
        if family in ("model_load", "prompt_processing"):
            if phase == "start":
                assert stages.get(family) in (None, "end")
            else:
                assert stages.get(family) in ("start", "progress"), f"{kind} before start"
            stages[family] = phase
            if family == "model_load":
                assert isinstance(payload["model_instance_id"], str)
            if phase == "progress":
                assert _number(payload["progress"]) and 0 <= payload["progress"] <= 1
            if kind == "model_load.end":
                assert _number(payload["load_time_seconds"])
        elif kind == "tool_call.start":
            assert isinstance(payload["tool"], str)
            assert source_tools or _provider_ok(payload["provider_info"])
            tool, has_args = payload["tool"], False
        elif kind == "tool_call.arguments":
            assert payload["tool"] == tool and not has_args, "arguments without their start"
            has_args = True
            assert isinstance(payload["arguments"], dict)
            assert source_tools or _provider_ok(payload["provider_info"])
            items.append(
                {
                    "type": "tool_call",
                    "tool": tool,
                    "arguments": payload["arguments"],
                    "provider_info": payload["provider_info"],
                }
            )
            if is_client(payload["provider_info"]):
                tool = None  # a client call ends with its arguments
        elif kind in ("tool_call.result", "tool_call.success"):
            assert payload["tool"] == tool and has_args and isinstance(payload["output"], str)
            items[-1]["output"] = payload["output"]
            tool = None
        elif kind == "tool_call.failure":
            assert isinstance(payload["reason"], str)
            if has_args and tool is not None:
                items.pop()  # the docs list no chat.end item for a failed call
            tool = None
    assert open_part is None, f"{open_part} never ended"
    assert tool is None or has_args, "tool_call.start without arguments at the end"
    for family, phase in stages.items():
        assert phase == "end", f"{family} never ended"
    result = payloads[-1]["result"]
    assert isinstance(result["model_instance_id"], str)
    assert result["response_id"].startswith("resp_")
    stats = result["stats"]
    for key in STATS:
        assert _number(stats[key]) and stats[key] >= 0, key
    expected = [
        dict(i, output=i.get("output", "")) if i["type"] == "tool_call" else i for i in items
    ]
    assert result["output"] == expected, "chat.end output must list every streamed item"
    return payloads


def is_client(info: Any) -> bool:
    """Our encoder's provider marker for client tool calls."""
    return isinstance(info, dict) and info.get("plugin_id") == "streamscope/client-tool"


def decode_bytes(data: bytes) -> tuple[list[Event], Any]:
    """Decode wire bytes with our decoder: (events, decoder)."""
    sse = SSEDecoder()
    frames = sse.feed(data, 0) + sse.flush(0)
    dec = CODEC.stream_decoder()
    events: list[Event] = []
    for frame in frames:
        events += dec.decode(frame)
    events += dec.finish()
    return events, dec


def encode_events(events: list[Event], **options: Any) -> tuple[bytes, Any]:
    from streamscope.codecs.base import EncodeOptions

    enc = CODEC.stream_encoder(EncodeOptions(**options))
    out = [b for ev in events for b in enc.encode(ev)]
    out += enc.finish()
    return b"".join(out), enc


def summary(response: Response) -> dict[str, Any]:
    """What must survive a translation: content, tools, usage, finish, error."""
    choice = response.choices[0] if response.choices else None
    usage = response.usage
    return {
        "text": choice.text if choice else "",
        "reasoning": choice.reasoning if choice else "",
        "tool_calls": [(c.name, c.parsed_arguments()) for c in choice.tool_calls] if choice else [],
        "server_tools": [
            (p.protocol, p.payload)
            for p in (choice.parts if choice else [])
            if p.kind == "server_tool"
        ],
        "usage": (usage.input_tokens, usage.output_tokens, usage.reasoning_tokens)
        if usage
        else None,
        "finish": choice.finish if choice else None,
        "error": (response.error.message, response.error.error_type) if response.error else None,
    }
