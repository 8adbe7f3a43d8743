"""The encoder's forms for a client that reads only its own (``EncodeOptions``, which the
proxy sets from the client's User-Agent: ``Codec.client_options``): each tool call whole
in one chunk, as xAI's API sends calls (@ai-sdk/xai takes no other form), and the
reasoning in ``reasoning`` (the only field @openrouter/ai-sdk-provider reads). Either
way the stream keeps the contract, and openai-python and StreamScope's decoder read the
same answer as from the default form."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from streamscope.codecs import EncodeOptions
from streamscope.model.assemble import assemble
from streamscope.model.events import (
    End,
    Event,
    Finish,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from tests import sdk_clients
from tests.codecs.openai_chat.helpers import check_contract, decode_bytes, encode
from tests.codecs.openai_chat.test_stream_encode import _EVENT, START

WHOLE = EncodeOptions(whole_tool_calls=True)
PARALLEL: list[Event] = [
    START,
    TextDelta("Let me check."),
    ToolCallStart(3, "call_a", "weather"),
    ToolCallDelta(3, '{"city":'),
    ToolCallStart(7, "call_b", "time"),
    ToolCallDelta(7, '{"tz":"UTC"}'),
    ToolCallDelta(3, '"Paris"}'),
    ToolCallEnd(7),
    ToolCallEnd(3),
    Finish("tool_calls"),
    Usage(10, 20),
    End(),
]


def _calls(body: bytes, whole: bool = True) -> list[dict]:  # type: ignore[type-arg]
    s = check_contract(body, whole)
    return [
        tc for c in s.chunks for ch in c["choices"] for tc in ch["delta"].get("tool_calls") or []
    ]


def test_each_call_goes_out_whole_at_its_end() -> None:
    body, _ = encode(PARALLEL, WHOLE)
    # in the order they ended, numbered as written (openai-python files calls by index)
    assert _calls(body) == [
        {
            "index": 0,
            "id": "call_b",
            "type": "function",
            "function": {"name": "time", "arguments": '{"tz":"UTC"}'},
        },
        {
            "index": 1,
            "id": "call_a",
            "type": "function",
            "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
        },
    ]
    default, _ = encode(PARALLEL)
    assert len(_calls(default, whole=False)) > 2  # the default form streams the arguments in pieces
    for got in (sdk_clients.openai_chat(body), sdk_clients.openai_chat(default)):
        assert sorted(got["tool_calls"]) == [
            ("time", {"tz": "UTC"}),
            ("weather", {"city": "Paris"}),
        ]
    calls = assemble(decode_bytes(body)[0]).choice(0).tool_calls
    assert sorted((c.id, c.name, c.arguments) for c in calls) == [
        ("call_a", "weather", '{"city":"Paris"}'),
        ("call_b", "time", '{"tz":"UTC"}'),
    ]


def test_a_call_with_no_arguments_or_no_end_still_goes_out_whole() -> None:
    events: list[Event] = [START, ToolCallStart(0, "c1", "ping"), ToolCallStart(1, "c2", "pong")]
    events += [ToolCallDelta(1, '{"a":1}'), Finish("tool_calls"), End()]  # no ToolCallEnd
    body, _ = encode(events, WHOLE)
    assert [(tc["id"], tc["function"]["arguments"]) for tc in _calls(body)] == [
        ("c1", "{}"),
        ("c2", '{"a":1}'),
    ]


@settings(max_examples=150, deadline=None)
@given(events=st.lists(_EVENT, max_size=25))
def test_any_event_sequence_gives_whole_calls(events: list[Event]) -> None:
    """Whatever comes in, every function call is one complete chunk, and (unless
    arguments came after their call's end: see below) the calls read back as the
    default form's do."""
    seq = [START, *events, End()]
    body, _ = encode(seq, WHOLE)
    for tc in _calls(body):
        if "function" in tc:
            assert isinstance(tc["id"], str) and tc["type"] == "function"
            assert isinstance(tc["function"]["name"], str)
    assume(not _late_arguments(seq))
    default, _ = encode(seq)
    whole = assemble(decode_bytes(body)[0])
    streamed = assemble(decode_bytes(default)[0])
    for got, want in zip(whole.choices or [], streamed.choices or [], strict=True):
        key = lambda c: (c.name, c.arguments)  # noqa: E731 (a nameless call's id is made up)
        assert sorted(map(key, got.tool_calls)) == sorted(map(key, want.tool_calls))
        assert got.text == want.text


def _late_arguments(events: list[Event]) -> bool:
    ended: set[tuple[int, int]] = set()
    for e in events:
        if isinstance(e, ToolCallEnd):
            ended.add((e.choice, e.index))
        elif isinstance(e, ToolCallDelta) and e.arguments and (e.choice, e.index) in ended:
            return True
    return False


def test_arguments_after_a_whole_call_went_out_are_dropped_with_a_note() -> None:
    """A call that went out whole cannot take more: the late piece is dropped and said,
    and the stream still holds each call in one chunk (the property found this)."""
    events: list[Event] = [START, ToolCallStart(0, "c1", "f"), ToolCallDelta(0, '{"a":1}')]
    events += [ToolCallEnd(0), ToolCallDelta(0, "{"), Finish("tool_calls"), End()]
    body, enc = encode(events, WHOLE)
    assert [tc["function"]["arguments"] for tc in _calls(body)] == ['{"a":1}']
    assert "tool-call-arguments-after-end" in {f.code for f in enc.findings}


def test_reasoning_in_the_field_the_client_reads() -> None:
    events: list[Event] = [START, ReasoningDelta("Hmm."), TextDelta("Hi"), Finish("stop"), End()]
    body, _ = encode(events, EncodeOptions(reasoning_field="reasoning"))
    chunks = check_contract(body).chunks
    deltas = [ch["delta"] for c in chunks for ch in c["choices"]]
    assert {"reasoning": "Hmm."} in deltas
    assert not any("reasoning_content" in d for d in deltas)
    assert assemble(decode_bytes(body)[0]).choice(0).reasoning == "Hmm."
    default, _ = encode(events)
    assert {"reasoning_content": "Hmm."} in [
        ch["delta"] for c in check_contract(default).chunks for ch in c["choices"]
    ]  # the default field
