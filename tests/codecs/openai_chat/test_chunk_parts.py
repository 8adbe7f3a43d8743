"""The pieces an OpenAI Chat stream's chunks are assembled from
(codecs/openai_chat/chunk_parts.py), through the encoder: the chunk head (an id and the
model when no start gave them, the model the client is shown), and a choice's calls
numbered densely from 0 as they are written.
"""

from __future__ import annotations

from streamscope.codecs import EncodeOptions
from streamscope.model.assemble import assemble
from streamscope.model.events import (
    End,
    Event,
    Finish,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from tests import sdk_clients
from tests.codecs.openai_chat.helpers import check_contract, decode_bytes, encode
from tests.codecs.openai_chat.test_stream_encode import START


def test_parallel_tool_calls_renumbered_densely() -> None:
    events: list[Event] = [
        START,
        TextDelta("Let me check."),
        ToolCallStart(3, "call_a", "weather"),
        ToolCallDelta(3, '{"city":'),
        ToolCallStart(7, "call_b", "time"),
        ToolCallDelta(7, '{"tz":"UTC"}'),
        ToolCallDelta(3, '"Paris"}'),
        ToolCallEnd(3),
        ToolCallEnd(7),
        Finish("tool_calls"),
        Usage(10, 20),
        End(),
    ]
    body, _ = encode(events)
    s = check_contract(body)
    idx = [
        tc["index"]
        for c in s.chunks
        for ch in c["choices"]
        for tc in ch["delta"].get("tool_calls") or []
    ]
    assert idx == [0, 0, 1, 1, 0]
    got = sdk_clients.openai_chat(body)
    assert got["tool_calls"] == [("weather", {"city": "Paris"}), ("time", {"tz": "UTC"})]
    assert got["finish"] == "tool_calls" and got["text"] == "Let me check."
    r = assemble(decode_bytes(body)[0])
    assert [(t.id, t.name) for t in r.choice(0).tool_calls] == [
        ("call_a", "weather"),
        ("call_b", "time"),
    ]


def test_no_message_start_and_model_override() -> None:
    body, _ = encode([TextDelta("x"), End()])
    s = check_contract(body)
    assert s.chunks[0]["id"].startswith("chatcmpl-") and s.chunks[0]["model"] == "unknown"
    body, _ = encode([START, TextDelta("x"), End()], EncodeOptions(model="alias"))
    assert {c["model"] for c in check_contract(body).chunks} == {"alias"}
