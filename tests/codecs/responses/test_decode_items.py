"""The Responses decoder's item half (``decode_items``): output items, their content parts
and deltas, the ``.done`` events that complete what the deltas missed, server items."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.findings import errors
from streamscope.model.assemble import assemble
from streamscope.model.events import ReasoningDelta, TextDelta, ToolCallDelta
from streamscope.model.response import ServerToolOut, TextOut
from tests.codecs.responses.util import (
    FILES,
    JSON,
    completed,
    created,
    decode,
    decode_payloads,
    expected,
    frames_of,
    message,
    numbered,
    payloads,
    text_delta,
)


def test_lmstudio_arguments_only_in_done_become_a_delta() -> None:
    path = next(p for p in FILES if "lmstudio" in p.name and "function-call.1" in p.name)
    events, _ = decode(frames_of(path))
    done = next(p for p in payloads(path) if p["type"] == "response.function_call_arguments.done")
    assert [e.arguments for e in events if isinstance(e, ToolCallDelta)] == [done["arguments"]]
    assert any(isinstance(e, ReasoningDelta) and not e.summary for e in events)


def test_trimmed_recording_keeps_text_only_in_done_events() -> None:
    path = next(p for p in FILES if "message-phase" in p.name)
    events, dec = decode(frames_of(path))
    deltas = "".join(p["delta"] for p in payloads(path) if p["type"].endswith("text.delta"))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert len(text) > len(deltas) and text == expected(path)["text"]
    assert [f.code for f in dec.findings] == ["sequence-gap"]  # info only


def test_summary_parts_stay_apart_and_refusals_and_logprobs_are_kept() -> None:
    rs = {"id": "rs_0", "type": "reasoning", "summary": []}
    lp = [{"token": "Hi", "logprob": -0.1, "bytes": [72, 105], "top_logprobs": []}]

    def summary(i: int, text: str) -> JSON:
        return {
            "type": "response.reasoning_summary_text.delta",
            "item_id": "rs_0",
            "output_index": 0,
            "summary_index": i,
            "delta": text,
        }

    refusal_part = {"type": "refusal", "refusal": ""}
    stream = numbered(
        [
            created(),
            {"type": "response.output_item.added", "output_index": 0, "item": rs},
            summary(0, "one"),
            summary(1, "two"),
            {"type": "response.output_item.done", "output_index": 0, "item": rs},
            message(1)[0],
            {
                "type": "response.content_part.added",
                "item_id": "msg_1",
                "output_index": 1,
                "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []},
            },
            text_delta(1, "Hi", logprobs=lp),
            {
                "type": "response.content_part.added",
                "item_id": "msg_1",
                "output_index": 1,
                "content_index": 1,
                "part": refusal_part,
            },
            {
                "type": "response.refusal.delta",
                "item_id": "msg_1",
                "output_index": 1,
                "content_index": 1,
                "delta": "No",
            },
            message(
                1,
                {"type": "output_text", "text": "Hi", "annotations": []},
                {"type": "refusal", "refusal": "No."},
            )[1],
            completed(0),
        ]
    )
    events, dec = decode_payloads(stream)
    assert dec.findings == []
    c = assemble(events).choice(0)
    assert [(p.kind, getattr(p, "text", None)) for p in c.parts] == [
        ("reasoning", "one"),
        ("reasoning", "two"),
        ("text", "Hi"),
        ("refusal", "No."),
    ]
    assert isinstance(c.parts[2], TextOut) and c.parts[2].logprobs == lp


def test_server_item_events_are_not_unknown() -> None:
    ws = {"id": "ws_1", "type": "web_search_call", "status": "in_progress"}
    stream = numbered(
        [
            created(),
            {"type": "response.output_item.added", "output_index": 0, "item": ws},
            {"type": "response.web_search_call.searching", "output_index": 0, "item_id": "ws_1"},
            {"type": "response.output_item.added", "output_index": 1, "item": {**ws, "id": "ws_2"}},
        ]
    )
    events, dec = decode_payloads(stream)
    codes = [f.code for f in dec.findings]
    assert codes == ["item-not-done", "item-not-done", "missing-terminator"]
    parts = assemble(events).choice(0).parts
    assert [p.payload["id"] for p in parts if isinstance(p, ServerToolOut)] == ["ws_1", "ws_2"]


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(min_size=1, max_size=40),
    cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=6),
    keep=st.integers(min_value=0, max_value=7),
)
def test_deltas_plus_done_never_lose_text(text: str, cuts: list[int], keep: int) -> None:
    """Whatever prefix of the deltas arrived, the done events restore the whole text."""
    bounds = sorted({0, len(text), *(min(c, len(text)) for c in cuts)})
    pieces = [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    added, done = message(0, {"type": "output_text", "text": text, "annotations": []})
    text_done = {**text_delta(0, ""), "type": "response.output_text.done", "text": text}
    del text_done["delta"]
    stream = [created(), added] + [text_delta(0, p) for p in pieces[:keep]]
    stream += [text_done, done, completed(0)]
    events, dec = decode_payloads(numbered(stream))
    assert assemble(events).choice(0).text == text
    assert errors(dec.findings) == []
