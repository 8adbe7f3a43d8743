"""Between streams and complete responses: events assemble into parts (deltas joined, parts
closed where the stream says), and a complete response replays as events that assemble
into it again."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.model.assemble import Assembler, assemble, merge_usage, to_events
from streamscope.model.events import (
    Citation,
    End,
    Error,
    Finish,
    MessageStart,
    Opaque,
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
from streamscope.model.response import (
    Choice,
    ReasoningOut,
    RefusalOut,
    Response,
    ServerToolOut,
    TextOut,
    ToolCallOut,
)

_counts = st.none() | st.integers(0, 10**6)
_usages = st.builds(Usage, _counts, _counts, _counts, _counts, _counts)


@given(old=st.none() | _usages, new=_usages)
def test_merge_usage_takes_what_the_new_one_knows(old: Usage | None, new: Usage) -> None:
    merged = merge_usage(old, new)
    for name in ("input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens"):
        value = getattr(new, name)
        before = getattr(old, name) if old is not None else None
        assert getattr(merged, name) == (value if value is not None else before)
    assert merged is not new and merged is not old


def test_deltas_join_per_part_and_parts_close_where_the_stream_says() -> None:
    lp = [{"token": "a", "logprob": -0.5}]
    resp = assemble(
        [
            MessageStart("id1", "m", 7, {"openai-chat": {"system_fingerprint": "fp"}}),
            ReasoningDelta("thin"),
            ReasoningDelta("king"),
            ReasoningSignature("sig"),  # closes the reasoning part
            ReasoningDelta("again"),
            TextDelta("Hel", logprobs=lp),
            TextDelta("lo", logprobs=lp),
            Citation("anthropic", {"type": "char_location"}),
            PartEnd(),
            TextDelta("second"),
            ToolCallStart(5, "call_a", "f"),
            ToolCallStart(6, "call_b", "g"),
            ToolCallDelta(5, '{"x":'),
            ToolCallDelta(6, "{}"),
            ToolCallDelta(5, "1}"),
            ToolCallEnd(5),
            ToolCallDelta(9, "lost"),  # a call that never started stays visible
            RefusalDelta("no", choice=1),
            Finish("tool_calls", stop_sequence=None),
            Usage(10, None),
            Usage(None, 20),
            Progress("prompt_processing", "end", 1.0),
            End(),
        ]
    )
    assert (resp.id, resp.model, resp.created) == ("id1", "m", 7)
    assert resp.meta == {"openai-chat": {"system_fingerprint": "fp"}}
    c = resp.choice(0)
    assert [(p.kind, getattr(p, "text", None)) for p in c.parts] == [
        ("reasoning", "thinking"),
        ("reasoning", "again"),
        ("text", "Hello"),
        ("text", "second"),
        ("tool_call", None),
        ("tool_call", None),
        ("tool_call", None),
    ]
    assert isinstance(c.parts[0], ReasoningOut) and c.parts[0].signature == "sig"
    assert isinstance(c.parts[2], TextOut)
    assert c.parts[2].logprobs == lp + lp
    assert c.parts[2].citations == [("anthropic", {"type": "char_location"})]
    assert [(t.id, t.name, t.arguments) for t in c.tool_calls] == [
        ("call_a", "f", '{"x":1}'),
        ("call_b", "g", "{}"),
        ("", "", "lost"),
    ]
    assert c.finish == "tool_calls" and resp.choice(1).refusal == "no"
    assert resp.usage == Usage(10, 20)
    assert resp.progress == [{"stage": "prompt_processing", "phase": "end", "progress": 1.0}]
    assert resp.error is None


def test_a_snapshot_mid_stream_goes_on_with_the_same_part() -> None:
    a = Assembler()
    a.feed(TextDelta("a"))
    assert a.response.choice(0).text == "a"
    a.feed(TextDelta("b"))
    a.feed(Error("cut", "api_error"))
    assert a.error == Error("cut", "api_error")
    assert [p.text for p in a.response.choice(0).parts if isinstance(p, TextOut)] == ["ab"]
    assert a.response.error == Error("cut", "api_error")


# -- replay: any complete response -> events -> the same response -----------------------

_text = st.text(max_size=8)
_json = st.dictionaries(st.sampled_from(["type", "id", "url"]), st.text(max_size=4), max_size=2)
_logprobs = st.none() | st.lists(st.fixed_dictionaries({"token": _text}), min_size=1, max_size=2)
_parts = st.one_of(
    st.builds(
        TextOut,
        _text,
        _logprobs,
        st.lists(st.tuples(st.sampled_from(["anthropic", "responses"]), _json), max_size=2),
    ),
    st.builds(ReasoningOut, _text, st.none(), st.booleans()),
    # a signed part says who signed it (and the Responses item), as it came
    st.builds(
        lambda text, sig, summary, origin, item: ReasoningOut(
            text, sig, summary, origin=origin, item_id=item
        ),
        _text,
        st.text(min_size=1, max_size=6),
        st.booleans(),
        st.none() | st.sampled_from(["anthropic", "responses"]),
        st.none() | st.text(min_size=1, max_size=4),
    ),
    st.builds(
        lambda data, origin: ReasoningOut("", redacted=data, origin=origin),
        st.text(min_size=1, max_size=6),
        st.none() | st.just("anthropic"),
    ),
    st.builds(RefusalOut, _text, _logprobs),
    st.builds(
        ToolCallOut, _text, _text, _text, st.booleans(), st.none() | st.text(min_size=1, max_size=4)
    ),
    st.builds(ServerToolOut, st.sampled_from(["anthropic", "lmstudio"]), _json),
)


@st.composite
def responses(draw: Any) -> Response:
    indexes = draw(st.lists(st.integers(0, 3), unique=True, max_size=3))
    choices = []
    for index in sorted(indexes):
        finish = draw(st.none() | st.sampled_from(["stop", "length", "tool_calls", "refusal"]))
        parts = draw(st.lists(_parts, max_size=5))
        if not parts and finish is None:
            finish = "stop"  # a choice with nothing to say is no event: a stream never has it
        stop_sequence = draw(st.none() | _text) if finish is not None else None
        choices.append(Choice(index, parts, finish, stop_sequence))
    return Response(
        id=draw(_text),
        model=draw(_text),
        created=draw(st.none() | st.integers(0, 2**31)),
        choices=choices,
        usage=draw(st.none() | _usages),
        meta=draw(st.dictionaries(st.sampled_from(["responses", "anthropic"]), _json, max_size=1)),
        error=draw(st.none() | st.builds(Error, _text)),
    )


@settings(max_examples=100, deadline=None)
@given(resp=responses())
def test_a_response_replayed_as_events_assembles_into_itself(resp: Response) -> None:
    events = to_events(resp)
    assert isinstance(events[0], MessageStart)
    assert isinstance(events[-1], Error if resp.error is not None else End)
    assert assemble(events) == resp


def test_replay_numbers_tool_calls_per_choice_and_closes_every_part() -> None:
    resp = Response(
        "r",
        "m",
        choices=[
            Choice(0, [ToolCallOut("a", "f", "{}"), TextOut("t"), ToolCallOut("b", "g", "")]),
            Choice(1, [ServerToolOut("anthropic", {"type": "server_tool_use"})]),
        ],
    )
    events = to_events(resp)
    starts = [(e.choice, e.index, e.id) for e in events if isinstance(e, ToolCallStart)]
    assert starts == [(0, 0, "a"), (0, 1, "b")]
    assert [e for e in events if isinstance(e, ToolCallDelta)] == [ToolCallDelta(0, "{}")]
    assert [e for e in events if isinstance(e, ServerTool | RedactedReasoning)] == [
        ServerTool("anthropic", {"type": "server_tool_use"}, 1)
    ]
    assert [e.choice for e in events if isinstance(e, PartEnd)] == [0, 1]


def test_what_a_call_and_a_signature_say_of_their_origin_is_kept() -> None:
    events = [
        MessageStart("r", "m"),
        ReasoningDelta("a"),
        ReasoningSignature("SIG", origin="responses", item_id="rs_1"),
        ToolCallStart(0, "c1", "apply_patch", custom=True, namespace="tools"),
        ToolCallDelta(0, "raw"),
        RedactedReasoning("DATA", origin="anthropic"),
        Opaque("anthropic", {"type": "future"}),  # a stream's own detail: no part
        End(),
    ]
    parts = assemble(events).choice(0).parts
    assert parts == [
        ReasoningOut("a", "SIG", origin="responses", item_id="rs_1"),
        ToolCallOut("c1", "apply_patch", "raw", True, "tools"),
        ReasoningOut("", redacted="DATA", origin="anthropic"),
    ]
    call = parts[1]
    assert isinstance(call, ToolCallOut) and call.wire_name == "tools__apply_patch"
    assert call.parsed_arguments() == {"input": "raw"}  # a custom call's input is text


def test_a_server_blocks_stream_is_a_wire_detail() -> None:
    # (not compared: the same block streamed or whole is the same event)
    streamed = ServerTool("anthropic", {"type": "x"}, stream=[{"type": "x"}, {"type": "d"}])
    assert streamed == ServerTool("anthropic", {"type": "x"})
    assert assemble([streamed]).choice(0).parts == [ServerToolOut("anthropic", {"type": "x"})]
