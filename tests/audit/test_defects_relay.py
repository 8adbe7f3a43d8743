"""The defect-injecting relay (tests/audit/defect_relay.py) does what the audit's tests
take it to do: over a real socket, each defect changes the real recording in exactly the
way its name says and nothing else, the linter finds the defect's rule in the defective
stream and not in the recording, the official SDKs read the clean relay's answers (and
openai-python breaks on the usage chunk without ``choices``, as measured before), and a
request is answered with the recording that fits it, or the protocol's error envelope.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anthropic
import httpx
import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.codecs import get_codec
from streamscope.lint import lint_bytes
from streamscope.wire import decode_all
from tests.audit.defect_relay import (
    BUFFER_DELAY,
    DEFECTS,
    KEY,
    KINDS,
    MODELS,
    PROTOCOLS,
    DefectRelay,
    kind_of,
    running_relay,
)

USER = [{"role": "user", "content": "Say hello."}]
TOOL = {
    "name": "get_weather",
    "description": "The weather in a city.",
    "schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def request(protocol: str, *, stream: bool = True, tools: int = 0, **extra: Any) -> dict[str, Any]:
    """A request body of ``protocol`` with ``tools`` tools (each in its protocol's shape)."""
    schema = TOOL["schema"]
    if protocol == "openai-chat":
        shaped = [
            {"type": "function", "function": {"name": f"t{i}", "parameters": schema}}
            for i in range(tools)
        ]
        body = {
            "model": MODELS[protocol],
            "messages": USER,
            "max_tokens": 200,
            "stream_options": {"include_usage": True},
        }
    elif protocol == "anthropic":
        shaped = [{"name": f"t{i}", "input_schema": schema} for i in range(tools)]
        body = {"model": MODELS[protocol], "messages": USER, "max_tokens": 200}
    else:
        shaped = [{"type": "function", "name": f"t{i}", "parameters": schema} for i in range(tools)]
        body = {"model": MODELS[protocol], "input": "Say hello.", "max_output_tokens": 200}
    if shaped:
        body["tools"] = shaped
    return {**body, "stream": stream, **extra}


def headers(protocol: str, key: str = KEY) -> dict[str, str]:
    return get_codec(protocol).auth_headers(key)


def post(
    relay: DefectRelay, defect: str, protocol: str, body: dict[str, Any], key: str = KEY
) -> tuple[httpx.Response, list[tuple[float, bytes]]]:
    """Send ``body``; the answer and its body as read: (seconds since sending, bytes)."""
    url = relay.url + f"/d/{defect}" + get_codec(protocol).path
    reads: list[tuple[float, bytes]] = []
    start = time.monotonic()
    with httpx.Client(timeout=30) as client:
        with client.stream("POST", url, json=body, headers=headers(protocol, key)) as answer:
            for chunk in answer.iter_raw():
                reads.append((time.monotonic() - start, chunk))
    return answer, reads


def body_of(reads: list[tuple[float, bytes]]) -> bytes:
    return b"".join(chunk for _, chunk in reads)


def payloads(raw: bytes) -> list[Any]:
    return [json.loads(f.data) for f in decode_all(raw) if f.data and f.data != "[DONE]"]


@pytest.fixture(scope="module")
def relay() -> Any:
    with running_relay() as running:
        yield running


def streams(relay: DefectRelay, defect: str, protocol: str, tools: int = 0) -> tuple[bytes, bytes]:
    """(the recording as the relay serves it clean, the same with ``defect``), read off
    the socket."""
    body = request(protocol, tools=tools)
    clean, defective = (body_of(post(relay, d, protocol, body)[1]) for d in ("none", defect))
    return clean, defective


def test_every_defect_is_its_rule_and_only_its_own(relay: DefectRelay) -> None:
    """The linter finds each defect's rule in its stream, not in the recording; nothing
    else the linter says changes."""
    checked = 0
    for defect in DEFECTS.values():
        if defect.rule is None:
            continue
        for protocol in defect.protocols:
            tools = 2 if defect.name == "tool-index-from-1" else 0
            clean, defective = streams(relay, defect.name, protocol, tools)
            before = {f.rule_id for f in lint_bytes(clean, protocol).all_findings}
            after = {f.rule_id for f in lint_bytes(defective, protocol).all_findings}
            assert defect.rule not in before, (defect.name, protocol, before)
            assert after - before == {defect.rule}, (defect.name, protocol, after - before)
            checked += 1
    assert checked == 7  # usage, [DONE], index (Chat), sequence_number, single newlines x3


def test_usage_chunk_loses_only_its_choices(relay: DefectRelay) -> None:
    clean, defective = streams(relay, "usage-without-choices", "openai-chat")
    before, after = payloads(clean), payloads(defective)
    assert len(before) == len(after)
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
    assert len(changed) == 1
    b, a = changed[0]
    assert b["choices"] == [] and b["usage"] and "choices" not in a
    assert {k: v for k, v in b.items() if k != "choices"} == a


def test_a_chat_request_without_include_usage_gets_no_usage_chunk(relay: DefectRelay) -> None:
    body = request("openai-chat")
    asked = body_of(post(relay, "none", "openai-chat", body)[1])
    del body["stream_options"]
    unasked = body_of(post(relay, "none", "openai-chat", body)[1])
    usage = [f.raw for f in decode_all(asked) if f.data and '"choices":[],"usage"' in f.data]
    assert len(usage) == 1
    assert unasked == asked.replace(usage[0], b"")


def test_no_done_is_the_recording_without_its_last_frame(relay: DefectRelay) -> None:
    clean, defective = streams(relay, "no-done", "openai-chat")
    assert clean.endswith(b"\n\ndata: [DONE]\n\n")
    assert defective == clean.removesuffix(b"data: [DONE]\n\n")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_single_newline_ends_every_frame_but_the_last_with_one_line_break(
    relay: DefectRelay, protocol: str
) -> None:
    clean, defective = streams(relay, "single-newline", protocol)
    frames = [f.raw for f in decode_all(clean)]
    assert len(frames) > 3
    assert defective == b"".join(f[:-1] for f in frames[:-1]) + frames[-1]
    assert len(decode_all(defective)) == 1  # an SSE parser reads one event


def test_tool_indexes_count_from_one(relay: DefectRelay) -> None:
    clean, defective = streams(relay, "tool-index-from-1", "openai-chat", tools=2)

    def indexes(raw: bytes) -> list[int]:
        return [
            call["index"]
            for p in payloads(raw)
            for choice in p["choices"]
            for call in choice["delta"].get("tool_calls") or []
        ]

    assert sorted(set(indexes(clean))) == [0, 1]
    assert indexes(defective) == [i + 1 for i in indexes(clean)]


def test_no_sequence_number_anywhere_else_the_same(relay: DefectRelay) -> None:
    clean, defective = streams(relay, "no-sequence-number", "responses")
    before, after = payloads(clean), payloads(defective)
    assert [p["sequence_number"] for p in before] == list(range(len(before)))
    assert all("sequence_number" not in p for p in after)
    assert [{k: v for k, v in p.items() if k != "sequence_number"} for p in before] == after


def test_no_ping_drops_the_pings_only(relay: DefectRelay) -> None:
    clean, defective = streams(relay, "no-ping", "anthropic")
    frames = decode_all(clean)
    pings = [f.raw for f in frames if f.event == "ping"]
    assert pings
    assert defective == b"".join(f.raw for f in frames if f.event != "ping")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_buffered_holds_the_whole_answer_then_writes_it_once(
    relay: DefectRelay, protocol: str
) -> None:
    body = request(protocol)
    _, paced = post(relay, "none", protocol, body)
    _, held = post(relay, "buffered", protocol, body)
    assert body_of(held) == body_of(paced)
    assert len(paced) > 3 and paced[-1][0] - paced[0][0] > 0.01  # a stream, frame by frame
    first = held[0][0]
    assert first >= BUFFER_DELAY * 0.95
    assert held[-1][0] - first < 0.2  # all of it at once (one write; reads may split it)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_errors_come_in_the_protocols_envelope(relay: DefectRelay, protocol: str) -> None:
    codec = get_codec(protocol)
    answer, reads = post(relay, "none", protocol, request(protocol), key="sk-wrong")
    assert answer.status_code == 401
    assert codec.decode_error(json.loads(body_of(reads))).message
    unknown = {**request(protocol), "model": "no-such-model"}
    answer, reads = post(relay, "none", protocol, unknown)
    assert answer.status_code == 404
    assert "no-such-model" in codec.decode_error(json.loads(body_of(reads))).message
    assert [s.kind for s in relay.served[-2:]] == ["bad-key", "unknown-model"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_request_not_streamed_gets_the_recordings_whole_body(
    relay: DefectRelay, protocol: str
) -> None:
    codec = get_codec(protocol)
    answer, reads = post(relay, "single-newline", protocol, request(protocol, stream=False))
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    body = json.loads(body_of(reads))
    assert codec.is_response(body)
    text = "".join(
        p.text for p in codec.decode_response(body).choices[0].parts if hasattr(p, "text")
    )
    assert text  # the recording's text, assembled


def test_a_defect_is_served_only_in_the_protocols_it_belongs_to(relay: DefectRelay) -> None:
    answer, _ = post(relay, "no-ping", "openai-chat", request("openai-chat"))
    assert answer.status_code == 404


@pytest.mark.parametrize(
    ("protocol", "extra", "tools", "kind"),
    [
        ("openai-chat", {}, 0, "text"),
        ("openai-chat", {"max_tokens": 16}, 0, "length"),
        ("openai-chat", {"max_tokens": 4000}, 0, "long"),
        ("openai-chat", {"reasoning_effort": "low"}, 0, "reasoning"),
        ("openai-chat", {}, 1, "tool"),
        ("openai-chat", {}, 2, "parallel"),
        ("anthropic", {"thinking": {"type": "enabled", "budget_tokens": 1024}}, 0, "reasoning"),
        ("anthropic", {"max_tokens": 10}, 0, "length"),
        ("anthropic", {}, 2, "parallel"),
        ("responses", {"reasoning": {"effort": "low"}}, 0, "reasoning"),
        ("responses", {"max_output_tokens": 16}, 0, "length"),
        ("responses", {}, 1, "tool"),
    ],
)
def test_the_kind_of_answer_is_read_off_the_request(
    protocol: str, extra: dict[str, Any], tools: int, kind: str
) -> None:
    assert kind_of(protocol, request(protocol, tools=tools, **extra)) == kind


def test_tool_results_and_tools_without_arguments_are_read() -> None:
    empty = {"type": "object", "properties": {}}
    chat = request("openai-chat", tools=1)
    chat["tools"][0]["function"]["parameters"] = empty
    assert kind_of("openai-chat", chat) == "no-args"
    result = {"role": "tool", "tool_call_id": "call_1", "content": "12 °C"}
    assert kind_of("openai-chat", {**chat, "messages": [*USER, result]}) == "tool-result"
    block = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "12 °C"}
    turn = {"role": "user", "content": [block]}
    assert (
        kind_of("anthropic", {**request("anthropic"), "messages": [*USER, turn]}) == "tool-result"
    )
    output = {"type": "function_call_output", "call_id": "call_1", "output": "12 °C"}
    assert kind_of("responses", {**request("responses"), "input": [output]}) == "tool-result"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
known_keys = st.sampled_from(
    [
        "tools",
        "messages",
        "input",
        "max_tokens",
        "max_output_tokens",
        "thinking",
        "reasoning",
        "reasoning_effort",
        "max_completion_tokens",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PROTOCOLS), st.dictionaries(known_keys, json_values, max_size=6))
def test_any_request_body_reads_as_some_kind(protocol: str, body: dict[str, Any]) -> None:
    assert kind_of(protocol, body) in KINDS


def test_the_official_sdks_read_the_clean_relay(relay: DefectRelay) -> None:
    # Each client is closed when its block ends: a client left to the garbage collector
    # can leave its socket to be found unclosed in a later test.
    with openai.OpenAI(base_url=relay.base_url("none", "openai-chat"), api_key=KEY) as chat:
        with chat.chat.completions.stream(
            model=MODELS["openai-chat"],
            messages=USER,  # type: ignore[arg-type]
            stream_options={"include_usage": True},
        ) as stream:
            completion = stream.get_final_completion()
    assert completion.choices[0].message.content and completion.usage is not None
    base = relay.base_url("none", "anthropic")
    with anthropic.Anthropic(base_url=base, api_key=KEY) as claude:
        with claude.messages.stream(
            model=MODELS["anthropic"],
            messages=USER,  # type: ignore[arg-type]
            max_tokens=200,
        ) as message_stream:
            message = message_stream.get_final_message()
    assert message.content and message.stop_reason == "end_turn"
    base = relay.base_url("none", "responses")
    with openai.OpenAI(base_url=base, api_key=KEY) as responses:
        with responses.responses.stream(model=MODELS["responses"], input="Say hello.") as rstream:
            response = rstream.get_final_response()
    assert response.output_text


def test_openai_python_breaks_on_the_usage_chunk_without_choices(relay: DefectRelay) -> None:
    """The defect is real through the socket: openai-python streams the text, then raises
    TypeError at the usage chunk (as resources/replay/broken/README.md measured)."""
    base = relay.base_url("usage-without-choices", "openai-chat")
    with openai.OpenAI(base_url=base, api_key=KEY) as chat, pytest.raises(TypeError):
        with chat.chat.completions.stream(
            model=MODELS["openai-chat"],
            messages=USER,  # type: ignore[arg-type]
            stream_options={"include_usage": True},
        ) as stream:
            stream.get_final_completion()
