"""A frame in a few words (``client.preview``): over real recordings, each frame's preview
says what it adds (the delta, the tool-call fragment, the reasoning, the finish, the
usage), never the start of its JSON; unknown shapes fall back to the data."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamscope.client.preview import frame_preview
from streamscope.codecs import get_codec
from streamscope.model.events import (
    End,
    Finish,
    MessageStart,
    PartEnd,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from streamscope.wire import SSEDecoder
from streamscope.wire.frame import Frame
from tests.support import REPO, load

REPLAY = REPO / "resources" / "replay"


def previews(name: str) -> tuple[str, list[str]]:
    recording = load(next(REPLAY.rglob(name)))
    return recording.protocol, [frame_preview(f, recording.protocol) for f in recording.frames]


def test_chat_frames_show_their_delta_finish_usage_and_done() -> None:
    protocol, shown = previews("chat-text-usage.sse")
    assert protocol == "openai-chat"
    assert shown[0] == "role: assistant"
    assert shown[1:4] == ["I'm", " unable", " to"]
    assert shown[-3:] == ["finish: stop", "usage 14→30", "[DONE]"]
    assert not any(s.startswith('{"id"') for s in shown)


def test_chat_tool_call_fragments_show_name_and_arguments() -> None:
    _, shown = previews("chat-parallel-tool-calls.sse")
    assert shown[1] == "tool #0 GetWeatherArgs("
    assert shown[2] == 'tool #0 {"ci'
    assert "tool #1 get_stock_price(" in shown
    assert shown[-3] == "finish: tool_calls"


def test_chat_reasoning_content_is_reasoning() -> None:
    _, shown = previews("deepseek-reasoning-content.jsonl")
    assert shown[1] == "reasoning: We"
    assert any(not s.startswith(("reasoning:", "role:")) for s in shown)  # then the text


def test_anthropic_events_show_their_payload() -> None:
    protocol, shown = previews("anthropic-thinking-signature.jsonl")
    assert protocol == "anthropic"
    assert shown[0] == "message_start · claude-sonnet-4-5-20250929 · usage 69→2"
    assert shown[1] == "#0 thinking block"
    assert shown[2] == "ping"
    assert shown[3] == "reasoning: The previous"
    assert any(s.startswith("signature (") for s in shown)
    assert "925" in shown
    assert shown[-2:] == ["finish: end_turn · usage 69→53", "message_stop"]


def test_anthropic_tool_use_shows_the_call_and_its_json() -> None:
    _, shown = previews("anthropic-text-then-tool-use.jsonl")
    assert shown[6].startswith("#1 tool_use json toolu_")
    assert any(s.startswith('tool #1 {"elements"') for s in shown)


def test_responses_events_show_deltas_items_and_completion() -> None:
    protocol, shown = previews("responses-reasoning-function-call.jsonl")
    assert protocol == "responses"
    assert shown[0] == "created · gpt-5.1-codex-max"
    assert shown[2] == "#0 added: reasoning"
    assert shown[4] == "reasoning: **Calcul"
    assert "#1 added: function_call calculator()" in shown
    assert 'tool #1 {"' in shown
    assert '#1 done: function_call calculator({"a":12,"b":7,"op":"add"})' in shown
    assert shown[-1] == "completed · usage 134→28"


def test_responses_error_and_failure_name_the_error() -> None:
    _, shown = previews("responses-no-sequence-number.sse")
    assert shown[2].startswith("error: insufficient_quota: You exceeded your current quota")
    assert shown[3].startswith("failed · error: insufficient_quota")


def test_frames_joined_by_a_single_newline_preview_each_line() -> None:
    _, shown = previews("chat-single-newline.sse")
    assert shown[0].startswith("role: assistant ⏎ I'm ⏎  unable")


@pytest.mark.parametrize(
    "path", sorted(p for p in REPLAY.rglob("*") if p.suffix in (".sse", ".jsonl"))
)
def test_no_data_frame_of_a_recording_previews_as_its_json(path: Path) -> None:
    recording = load(path)
    for frame in recording.frames:
        shown = frame_preview(frame, recording.protocol)
        assert shown and not shown.startswith("{"), (path.name, frame.data)
        # without the protocol, the preview reads the shape alike (or falls back)
        assert frame_preview(frame) in (shown, frame.data)


def test_lmstudio_native_frames() -> None:
    encoder = get_codec("lmstudio").stream_encoder()
    events = [
        MessageStart("m1", "qwen3-8b"),
        ReasoningDelta("think"),
        PartEnd(),
        TextDelta("Hello"),
        PartEnd(),
        ToolCallStart(0, "call_0", "get_weather"),
        ToolCallDelta(0, '{"city": "Lyon"}'),
        ToolCallEnd(0),
        Usage(input_tokens=5, output_tokens=7),
        Finish("tool_calls"),
        End(),
    ]
    raw = b"".join(chunk for ev in events for chunk in encoder.encode(ev))
    raw += b"".join(encoder.finish())
    frames = SSEDecoder().feed(raw, 0)
    shown = [frame_preview(f, "lmstudio") for f in frames]
    assert shown[0] == "chat.start · qwen3-8b"
    assert "reasoning: think" in shown and "Hello" in shown
    assert 'get_weather({"city": "Lyon"})' in shown
    assert shown[-1].startswith("chat.end · usage 5→7")


def test_frames_without_json() -> None:
    assert frame_preview(Frame(b": keepalive\n\n", 0, comments=(" keepalive",))) == ": keepalive"
    assert frame_preview(Frame(b"data: [DONE]\n\n", 0, data="[DONE]"), "anthropic") == "[DONE]"
    assert frame_preview(Frame(b"data: hi\n\n", 0, data="hi"), "openai-chat") == "hi"
    assert frame_preview(Frame(b"retry: 5\n\n", 0, retry=5)) == "retry: 5"
    odd = '{"choices": "nope"}'
    assert frame_preview(Frame(b"", 0, data=odd), "openai-chat") == odd
    assert frame_preview(Frame(b"", 0, data="[1, 2]"), "responses") == "[1, 2]"
    error = '{"error": {"type": "overloaded_error", "message": "busy"}}'
    assert frame_preview(Frame(b"", 0, data=error), "openai-chat") == (
        "error: overloaded_error: busy"
    )
