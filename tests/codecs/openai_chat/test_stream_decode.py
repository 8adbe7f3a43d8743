"""Decoder tolerance on synthetic streams: errors, dialects and contract violations become
events plus findings, never exceptions or lost content."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.codecs import get_codec
from streamscope.findings import errors
from streamscope.model.assemble import assemble
from streamscope.model.events import (
    End,
    Error,
    Finish,
    MessageStart,
    ReasoningDelta,
    TextDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from streamscope.wire import SSEDecoder
from tests.codecs.openai_chat.helpers import decode_bytes, sse

HEAD = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 5, "model": "m"}


def chunk(*choices: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {**HEAD, "choices": list(choices), **extra}


def ch(index: int = 0, finish: str | None = None, logprobs: Any = None, **delta: Any) -> Any:
    return {"index": index, "delta": delta, "logprobs": logprobs, "finish_reason": finish}


def codes(findings: list[Any]) -> list[str]:
    return [f.code for f in findings]


def test_message_start_meta_and_end() -> None:
    body = sse(
        chunk(ch(role="assistant", content=""), system_fingerprint="fp_1", service_tier="flex"),
        chunk(ch(content="Hi")),
        chunk(ch(finish="stop")),
    )
    events, findings = decode_bytes(body)
    assert events[0] == MessageStart(
        "chatcmpl-1",
        "m",
        5,
        {"openai-chat": {"system_fingerprint": "fp_1", "service_tier": "flex"}},
    )
    assert events[1:] == [TextDelta("Hi"), Finish("stop", 0, None, "stop"), End()]
    assert findings == []


def test_wrong_object_warns_but_decodes() -> None:
    body = sse({**chunk(ch(content="x"), ch(finish="stop")), "object": "chat.completion"})
    events, findings = decode_bytes(body)
    assert assemble(events).choice(0).text == "x"
    assert codes(findings) == ["unexpected-object"]
    assert findings[0].severity == "warning"


def test_missing_object_says_so_not_none() -> None:
    payload = chunk(ch(content="x"), ch(finish="stop"))
    del payload["object"]
    _, findings = decode_bytes(sse(payload))
    assert codes(findings) == ["unexpected-object"]
    assert "chunk has no object" in findings[0].message and "None" not in findings[0].message


def test_reasoning_dialects() -> None:
    body = sse(
        chunk(ch(reasoning_content="a")),
        chunk(ch(reasoning="b")),
        chunk(ch(reasoning_content="c", reasoning="c")),  # both: counted once
        chunk(ch(content="done", reasoning_content=None)),
        chunk(ch(finish="stop")),
    )
    events, findings = decode_bytes(body)
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["a", "b", "c"]
    assert assemble(events).choice(0).text == "done"
    assert findings == []


def test_usage_variants() -> None:
    # inline on the finish chunk, null on content chunks, x_groq
    events, _ = decode_bytes(
        sse(
            chunk(ch(content="a"), usage=None),
            chunk(
                ch(finish="stop"),
                usage={
                    "prompt_tokens": 10,
                    "completion_tokens": 4,
                    "total_tokens": 14,
                    "prompt_tokens_details": {"cached_tokens": 3},
                    "completion_tokens_details": {"reasoning_tokens": 2},
                },
            ),
        )
    )
    assert [e for e in events if isinstance(e, Usage)] == [Usage(10, 4, 3, None, 2)]
    events, _ = decode_bytes(
        sse(
            chunk(ch(finish="stop"), x_groq={"usage": {"prompt_tokens": 7, "completion_tokens": 1}})
        )
    )
    assert [e for e in events if isinstance(e, Usage)] == [Usage(7, 1)]


def test_usage_chunk_without_choices_warns() -> None:
    body = sse(
        chunk(ch(content="a", finish="stop")),
        {**HEAD, "usage": {"prompt_tokens": 1, "completion_tokens": 1}},
    )
    events, findings = decode_bytes(body)
    assert assemble(events).usage == Usage(1, 1)
    assert codes(findings) == ["missing-choices"]


def test_azure_prompt_filter_chunk_is_info() -> None:
    first = {
        "choices": [],
        "created": 0,
        "id": "",
        "model": "",
        "object": "",
        "prompt_filter_results": [],
    }
    events, findings = decode_bytes(sse(first, chunk(ch(content="a", finish="stop"))))
    assert isinstance(events[0], MessageStart) and events[0].id == "chatcmpl-1"
    assert [f.severity for f in findings] == ["info"]


def test_interleaved_choices() -> None:
    body = sse(
        chunk(ch(0, content="a")),
        chunk(ch(1, content="x")),
        chunk(ch(0, content="b")),
        chunk(
            ch(
                1,
                tool_calls=[
                    {
                        "index": 0,
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}"},
                    }
                ],
            )
        ),
        chunk(ch(0, finish="stop"), ch(1, finish="tool_calls")),
    )
    r = assemble(decode_bytes(body)[0])
    assert r.choice(0).text == "ab" and r.choice(1).text == "x"
    assert [(t.id, t.name, t.arguments) for t in r.choice(1).tool_calls] == [("c1", "f", "{}")]
    assert (r.choice(0).finish, r.choice(1).finish) == ("stop", "tool_calls")


def test_tool_calls_keep_source_index_and_end_on_finish() -> None:
    call = {"index": 1, "id": "t1", "type": "function", "function": {"name": "f", "arguments": ""}}
    body = sse(
        chunk(ch(tool_calls=[call])),
        chunk(ch(tool_calls=[{"index": 1, "function": {"arguments": '{"a":'}}])),
        chunk(ch(tool_calls=[{"index": 1, "function": {"arguments": "1}"}}])),
        chunk(ch(finish="tool_calls")),
    )
    events, findings = decode_bytes(body)
    assert ToolCallStart(1, "t1", "f") in events
    end = events.index(ToolCallEnd(1))
    assert isinstance(events[end + 1], Finish)
    assert assemble(events).choice(0).tool_calls[0].parsed_arguments() == {"a": 1}
    # the wire contract wants 0-based indexes (openai-python raises IndexError)
    assert [f.code for f in findings] == ["tool-call-index-not-dense"]


def test_tool_call_without_name_warns_and_keeps_arguments() -> None:
    body = sse(
        chunk(ch(tool_calls=[{"index": 0, "id": "t1", "function": {"arguments": '{"x"'}}])),
        chunk(ch(tool_calls=[{"index": 0, "function": {"name": "late", "arguments": ":1}"}}])),
        chunk(ch(tool_calls=[{"index": 1, "id": "t2", "function": {"arguments": "{}"}}])),
        chunk(ch(finish="tool_calls")),
    )
    events, findings = decode_bytes(body)
    assert codes(findings).count("tool-call-missing-name") == 2
    assert errors(findings) == []
    calls = assemble(events).choice(0).tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("t1", "late", '{"x":1}'),
        ("t2", "", "{}"),
    ]


def test_tool_call_index_reused_for_new_call() -> None:
    def full(cid: str, name: str) -> dict[str, Any]:
        return {
            "index": 0,
            "id": cid,
            "type": "function",
            "function": {"name": name, "arguments": "{}"},
        }

    body = sse(
        chunk(ch(tool_calls=[full("a", "f")])),
        chunk(ch(tool_calls=[full("b", "g")])),
        chunk(ch(finish="tool_calls")),
    )
    events, findings = decode_bytes(body)
    assert [(c.id, c.name) for c in assemble(events).choice(0).tool_calls] == [
        ("a", "f"),
        ("b", "g"),
    ]
    assert "tool-call-index-reused" in codes(findings)


def test_errors_in_data_and_event_error() -> None:
    err = {"error": {"message": "overloaded", "type": "server_error", "code": 529, "param": None}}
    events, findings = decode_bytes(sse(chunk(ch(content="a")), err))
    assert events[-1] == Error("overloaded", "server_error", "529", None)
    assert not any(isinstance(e, End) for e in events)
    assert "missing-finish-reason" not in codes(findings)
    body = b'event: error\ndata: {"message":"boom","type":"rate_limit_error"}\n\n'
    events, findings = decode_bytes(body)
    assert events == [Error("boom", "rate_limit_error")]
    events, findings = decode_bytes(b"event: error\ndata: upstream timed out\n\n")
    assert events == [Error("upstream timed out")]
    assert errors(findings) == []


def test_missing_done_and_finish_are_warnings() -> None:
    events, findings = decode_bytes(sse(chunk(ch(content="a")), done=False))
    assert not any(isinstance(e, End) for e in events)
    assert set(codes(findings)) == {"missing-finish-reason", "missing-terminator"}
    assert errors(findings) == []


def test_invalid_json_is_an_error_finding() -> None:
    events, findings = decode_bytes(sse("{not json", chunk(ch(content="a", finish="stop"))))
    assert codes(findings) == ["invalid-json"] and findings[0].severity == "error"
    assert assemble(events).choice(0).text == "a"


def test_logprobs_attach_to_text_and_refusal() -> None:
    lp = [{"token": "a", "logprob": -0.1, "bytes": [97], "top_logprobs": []}]
    body = sse(
        chunk(ch(content="a", logprobs={"content": lp, "refusal": None})),
        chunk(ch(refusal="no", logprobs={"content": None, "refusal": lp})),
        chunk(ch(finish="stop")),
    )
    r = assemble(decode_bytes(body)[0])
    assert r.choice(0).parts[0].logprobs == lp  # type: ignore[union-attr]
    assert r.choice(0).parts[1].logprobs == lp  # type: ignore[union-attr]


def test_obfuscation_and_data_after_done() -> None:
    body = sse(chunk(ch(content="a", finish="stop"), obfuscation="xyz")) + sse(
        chunk(ch(content="b")), done=False
    )
    events, findings = decode_bytes(body)
    assert "data-after-done" in codes(findings)
    assert errors(findings) == []


def test_sniff() -> None:
    codec = get_codec("openai-chat")
    assert codec.sniff({"object": "chat.completion.chunk", "choices": []}, None)
    assert codec.sniff({"choices": [], "object": "", "prompt_filter_results": []}, None)
    assert not codec.sniff({"type": "message_start", "message": {}}, "message_start")
    assert not codec.sniff({"type": "response.created", "response": {}}, None)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400), st.integers(min_value=1, max_value=50))
def test_decoder_never_raises_on_garbage(data: bytes, cut: int) -> None:
    body = b"data: " + data + b"\n\n" + sse(chunk(ch(content="ok", finish="stop")))
    dec = SSEDecoder()
    frames = []
    for i in range(0, len(body), cut):
        frames += dec.feed(body[i : i + cut], 0)
    frames += dec.flush(0)
    d = get_codec("openai-chat").stream_decoder()
    events = [e for f in frames for e in d.decode(f)] + d.finish()
    assert "ok" in assemble(events).choice(0).text


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.dictionaries(
            st.sampled_from(["content", "reasoning_content", "refusal", "tool_calls", "role"]),
            st.one_of(
                st.none(), st.text(max_size=5), st.integers(), st.lists(st.integers(), max_size=2)
            ),
        ),
        max_size=6,
    )
)
def test_decoder_tolerates_odd_deltas(deltas: list[dict[str, Any]]) -> None:
    body = sse(*[chunk({"index": 0, "delta": d}) for d in deltas], chunk(ch(finish="stop")))
    events, _ = decode_bytes(body)
    assert isinstance(events[-1], End)
