"""Encoder strictness: whatever canonical events come in, the bytes keep every
rule of docs/wire-contract.md#openai-chat-completions (checked on re-parsed SSE), and the
official SDK assembles them."""

from __future__ import annotations

import openai
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.model.assemble import assemble, to_events
from streamscope.model.events import (
    Citation,
    End,
    Error,
    Event,
    Finish,
    MessageStart,
    PartEnd,
    Progress,
    ReasoningDelta,
    ReasoningSignature,
    RedactedReasoning,
    RefusalDelta,
    ServerTool,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from streamscope.model.response import Choice, ReasoningOut, Response, TextOut, ToolCallOut
from tests import sdk_clients
from tests.codecs.openai_chat.helpers import check_contract, decode_bytes, encode

START = MessageStart(
    "chatcmpl-abc", "gpt-x", 1700000000, {"openai-chat": {"system_fingerprint": "fp_9"}}
)


def deltas(chunks: list[dict], key: str, choice: int = 0) -> str:  # type: ignore[type-arg]
    return "".join(
        c["delta"].get(key) or ""
        for chunk in chunks
        for c in chunk["choices"]
        if c["index"] == choice
    )


def test_text_stream() -> None:
    body, enc = encode(
        [START, TextDelta("Hel"), TextDelta("lo"), Finish("stop"), Usage(5, 2), End()]
    )
    s = check_contract(body)
    assert enc.findings == []
    first = s.chunks[0]
    assert first["id"] == "chatcmpl-abc" and first["model"] == "gpt-x"
    assert first["created"] == 1700000000 and first["system_fingerprint"] == "fp_9"
    assert first["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert deltas(s.chunks, "content") == "Hello"
    assert s.chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert s.usage_chunk is not None
    assert s.usage_chunk["usage"] == {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    got = sdk_clients.openai_chat(body)
    assert (got["text"], got["usage"], got["finish"]) == ("Hello", (5, 2), "stop")


def test_reasoning_with_signature_then_text() -> None:
    events: list[Event] = [
        START,
        ReasoningDelta("think "),
        ReasoningDelta("hard"),
        ReasoningSignature("sig=="),
        PartEnd(),
        RedactedReasoning("enc"),
        TextDelta("answer"),
        PartEnd(),
        Finish("stop"),
        End(),
    ]
    body, enc = encode(events)
    s = check_contract(body)
    assert deltas(s.chunks, "reasoning_content") == "think hard"
    assert deltas(s.chunks, "content") == "answer"
    assert "sig==" not in body.decode() and "enc" not in body.decode().replace("encode", "")
    assert {f.code for f in enc.findings} == {
        "dropped-reasoning-signature",
        "dropped-redacted-reasoning",
    }
    assert all(f.severity == "info" for f in enc.findings)
    got = sdk_clients.openai_chat(body)
    assert (got["reasoning"], got["text"]) == ("think hard", "answer")


@pytest.mark.parametrize(
    "events",
    [
        [START, Usage(3, None), TextDelta("a"), Usage(None, 9), Finish("stop"), End()],
        [START, TextDelta("a"), Finish("stop"), Usage(3, 9), End()],
        [START, TextDelta("a"), Usage(3, 9), Finish("stop"), End()],
    ],
    ids=["usage-first-and-merged", "usage-after-finish", "usage-before-finish"],
)
def test_usage_always_last(events: list[Event]) -> None:
    body, _ = encode(events)
    s = check_contract(body)
    assert s.usage_chunk is s.chunks[-1]
    assert s.usage_chunk["usage"]["prompt_tokens"] == 3
    assert s.usage_chunk["usage"]["completion_tokens"] == 9
    assert sdk_clients.openai_chat(body)["usage"] == (3, 9)


def test_usage_details() -> None:
    body, _ = encode(
        [START, TextDelta("a"), Usage(100, 50, cache_read_tokens=80, reasoning_tokens=30), End()]
    )
    usage = check_contract(body).usage_chunk["usage"]  # type: ignore[index]
    assert usage["prompt_tokens_details"] == {"cached_tokens": 80}
    assert usage["completion_tokens_details"] == {"reasoning_tokens": 30}


def test_error_mid_stream() -> None:
    events: list[Event] = [
        START,
        TextDelta("partial"),
        Error("overloaded", "server_error", "529", None),
    ]
    body, enc = encode(events)
    s = check_contract(body)
    assert s.error == {
        "message": "overloaded",
        "type": "server_error",
        "code": "529",
        "param": None,
    }
    assert enc.encode(TextDelta("more")) == [] and enc.finish() == []
    with pytest.raises(openai.APIError, match="overloaded"):
        sdk_clients.openai_chat(body)
    again, _ = decode_bytes(body)
    assert assemble(again).error == Error("overloaded", "server_error", "529", None)


def test_error_before_anything() -> None:
    body, _ = encode([Error("bad key", "authentication_error")])
    assert body == (
        b'data: {"error":{"message":"bad key","type":"authentication_error",'
        b'"code":null,"param":null}}\n\n'
        b"data: [DONE]\n\n"
    )


@pytest.mark.parametrize(
    ("events", "reason"),
    [
        ([START, TextDelta("a")], "stop"),
        ([START, ToolCallStart(0, "c", "f"), ToolCallDelta(0, "{}")], "tool_calls"),
        ([START], "stop"),
        ([], "stop"),
    ],
)
def test_finish_without_end_completes_stream(events: list[Event], reason: str) -> None:
    body, enc = encode(events)
    s = check_contract(body)
    assert s.chunks[-1]["choices"][0]["finish_reason"] == reason
    assert enc.finish() == []  # a second finish writes nothing
    assert sdk_clients.openai_chat(body)["finish"] == reason


def test_multiple_choices_and_sdk() -> None:
    events: list[Event] = [START]
    for i in range(3):
        events.append(TextDelta(f"c{i}-", i))
    for i in range(3):
        events.append(TextDelta("end", i))
    events += [ToolCallStart(5, "t", "f", 2), ToolCallDelta(5, '{"n":2}', 2)]
    events += [Finish("stop", 0), Finish("stop", 1), Finish("tool_calls", 2), Usage(1, 2), End()]
    body, _ = encode(events)
    check_contract(body)
    for i in range(3):
        got = sdk_clients.openai_chat(body, choice=i)
        assert got["choices"] == 3 and got["text"] == f"c{i}-end"
    assert sdk_clients.openai_chat(body, choice=2)["tool_calls"] == [("f", {"n": 2})]


def test_refusal_and_logprobs() -> None:
    lp = [{"token": "no", "logprob": -0.5, "bytes": [110, 111], "top_logprobs": []}]
    body, _ = encode([START, RefusalDelta("no", 0, lp), Finish("refusal"), End()])
    s = check_contract(body)
    assert s.chunks[1]["choices"][0]["logprobs"] == {"content": None, "refusal": lp}
    # OpenAI's own refusals finish with "stop" (the SDK raises on "content_filter")
    assert s.chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert sdk_clients.openai_chat(body)["refusal"] == "no"
    body, _ = encode([START, TextDelta("cut"), Finish("content_filter"), End()])
    got = sdk_clients.openai_chat(body)  # handed over on ContentFilterFinishReasonError
    assert (got["text"], got["finish"]) == ("cut", "content_filter")


def test_progress_is_a_comment() -> None:
    events: list[Event] = [Progress("model_load", "progress", 0.65), START, TextDelta("a"), End()]
    body, _ = encode(events)
    assert body.startswith(b": model_load progress 0.65\n\n")
    assert check_contract(body).comments == ["model_load progress 0.65"]


def test_opaque_blocks() -> None:
    ann = {"type": "url_citation", "url_citation": {"url": "https://x", "title": "X"}}
    events: list[Event] = [
        START,
        ServerTool("anthropic", {"type": "server_tool_use", "id": "s"}),
        ServerTool("anthropic", {"type": "server_tool_use", "id": "s2"}),
        TextDelta("see"),
        Citation("anthropic", {"type": "web_search_result_location"}),
        Citation("openai-chat", ann),
        End(),
    ]
    body, enc = encode(events)
    s = check_contract(body)
    assert [
        ch["delta"].get("annotations")
        for c in s.chunks
        for ch in c["choices"]
        if "annotations" in ch["delta"]
    ] == [[ann]]
    assert [f.code for f in enc.findings] == ["dropped-server-tool", "dropped-citation"]
    again = assemble(decode_bytes(body)[0])
    assert again.choice(0).parts[0].citations == [("openai-chat", ann)]  # type: ignore[union-attr]


def test_content_after_finish_is_dropped_with_warning() -> None:
    body, enc = encode([START, TextDelta("a"), Finish("stop"), TextDelta("late"), End()])
    check_contract(body)
    assert b"late" not in body
    assert [f.code for f in enc.findings] == ["content-after-finish"]


def test_to_events_of_response_encodes_validly() -> None:
    resp = Response(
        "chatcmpl-r",
        "m",
        1,
        [
            Choice(
                0,
                [ReasoningOut("r", signature="s"), TextOut("t"), ToolCallOut("c", "f", '{"a":1}')],
                "tool_calls",
            )
        ],
        Usage(1, 2),
    )
    body, _ = encode(to_events(resp))
    check_contract(body)
    got = sdk_clients.openai_chat(body)
    assert (got["reasoning"], got["text"], got["tool_calls"]) == ("r", "t", [("f", {"a": 1})])


_EVENT = st.one_of(
    st.builds(TextDelta, st.text(max_size=6), st.integers(0, 2)),
    st.builds(ReasoningDelta, st.text(max_size=6), st.integers(0, 2)),
    st.builds(RefusalDelta, st.text(max_size=4), st.integers(0, 2)),
    st.builds(
        ToolCallStart,
        st.integers(0, 4),
        st.sampled_from(["a", "b"]),
        st.sampled_from(["f", "g"]),
        st.integers(0, 2),
    ),
    st.builds(
        ToolCallDelta, st.integers(0, 4), st.sampled_from(["{", "}", '"x"', ""]), st.integers(0, 2)
    ),
    st.builds(ToolCallEnd, st.integers(0, 4), st.integers(0, 2)),
    st.builds(PartEnd, st.integers(0, 2)),
    st.builds(
        Finish,
        st.sampled_from(["stop", "length", "tool_calls", "pause", "refusal"]),
        st.integers(0, 2),
    ),
    st.builds(Usage, st.none() | st.integers(0, 99), st.none() | st.integers(0, 99)),
    st.builds(
        Progress,
        st.sampled_from(["model_load", "prompt_processing"]),
        st.just("progress"),
        st.floats(0, 1),
    ),
)


@settings(max_examples=150, deadline=None)
@given(
    st.booleans(),
    st.lists(_EVENT, max_size=25),
    st.sampled_from(["end", "error", "none"]),
)
def test_any_event_sequence_gives_a_valid_stream(
    start: bool, events: list[Event], tail: str
) -> None:
    seq: list[Event] = ([START] if start else []) + events
    if tail == "end":
        seq.append(End())
    elif tail == "error":
        seq.append(Error("x"))
    body, _ = encode(seq)
    s = check_contract(body)
    assert (s.error is not None) == (tail == "error")
    # content the encoder accepted reads back the same (text before each choice's finish)
    finished: set[int] = set()
    want: dict[int, str] = {}
    for ev in seq:
        if isinstance(ev, Finish):
            finished.add(ev.choice)
        elif isinstance(ev, TextDelta) and ev.choice not in finished:
            want[ev.choice] = want.get(ev.choice, "") + ev.text
    r = assemble(decode_bytes(body)[0])
    for i, text in want.items():
        assert r.choice(i).text == text
    reasons = {ch["finish_reason"] for c in s.chunks for ch in c["choices"]}
    if tail == "error":
        with pytest.raises(openai.APIError):
            sdk_clients.openai_chat(body)
    elif not reasons & {"length", "content_filter"}:
        for i, text in want.items():
            if text:  # an empty delta alone never opens a choice
                assert sdk_clients.openai_chat(body, choice=i)["text"] == text


def test_choices_open_in_order_for_the_sdk() -> None:
    body, _ = encode([START, TextDelta("two", 2), TextDelta("zero", 0), End()])
    s = check_contract(body)
    assert [c["choices"][0]["index"] for c in s.chunks[:3]] == [0, 1, 2]
    assert sdk_clients.openai_chat(body, choice=2)["text"] == "two"
    assert sdk_clients.openai_chat(body, choice=0)["text"] == "zero"
