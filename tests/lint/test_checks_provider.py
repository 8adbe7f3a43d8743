"""What the provider did, read from a stream (``lint/checks_provider.py``): where its
length limit cut the answer (inside the text, the reasoning, the arguments of which tool
call), which findings only that cut explains, its content filter and the model's refusal
— each from a real recording, as it is or with its end made the provider's."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.codecs import PROTOCOLS
from streamscope.lint import lint_bytes
from streamscope.lint.checks_provider import (
    CUT_LEAD,
    QUOTE,
    REFUSAL_LEAD,
    Cut,
    check,
    content_filter,
    cut,
    refusal,
)
from streamscope.lint.stream import Hit
from tests.lint.observed import observe
from tests.lint.provider_cases import (
    ANT_CUT_CALL,
    CHAT_CALL,
    CHAT_LENGTH,
    CHAT_REFUSAL,
    expected_outcomes,
    source_rows,
)
from tests.lint.streams import (
    ANT_TEXT,
    ANT_THINKING,
    CHAT_TEXT,
    Payload,
    chat,
    deltas,
    first,
    lint_file,
    native,
    payloads,
    typed,
    without,
)
from tests.support import FIXTURES

ARGS = [
    c["function"]["arguments"]
    for d in deltas(payloads(CHAT_CALL))
    for c in d.get("tool_calls") or []
    if c.get("function", {}).get("arguments")
]


def _finish(items: list[Payload], reason: str) -> list[Payload]:
    for p in items:
        for c in p.get("choices") or []:
            if c.get("finish_reason"):
                c["finish_reason"] = reason
    return items


def test_a_chat_answer_cut_by_length_in_its_text() -> None:
    obs = observe(native(CHAT_LENGTH), "openai-chat")  # real: max_tokens=1
    found = cut(obs)
    assert found is not None and found.call is None and found.block is None
    assert found.hit() == Hit(
        "provider.length", 2, f"{CUT_LEAD}the length limit (finish `length`) inside its text"
    )
    assert check(obs) == [found.hit()]


def test_anthropics_own_cut_inside_a_tool_call_names_the_call_and_the_open_block() -> None:
    obs = observe(native(ANT_CUT_CALL), "anthropic")
    found = cut(obs)
    assert found is not None
    assert (found.call, found.block, found.frame, found.call_frame) == ("make_file", 1, 14, 14)
    assert found.hit().rule == "provider.length-in-tool-call"
    assert found.hit().message == (
        f"{CUT_LEAD}`max_tokens` inside the arguments of tool call `make_file`"
    )
    # what only the cut explains: that call's JSON, and that block never stopped
    assert found.explains(
        "stream.truncated-tool-json", 14, "the arguments of tool call 'make_file' end"
    )
    assert not found.explains(
        "stream.truncated-tool-json", 14, "the arguments of tool call 'other' end"
    )
    assert not found.explains(
        "stream.truncated-tool-json", 9, "the arguments of tool call 'make_file' end"
    )
    assert found.explains("anthropic.block-order", 14, "block 1 was never stopped (closed at x)")
    assert not found.explains(
        "anthropic.block-order", 14, "block 0 was never stopped (closed at x)"
    )
    assert not found.explains("anthropic.block-order", 3, "block 1 was never stopped (closed at x)")
    assert not found.explains("chat.missing-done", None, "block 1 was never stopped")


def test_where_the_limit_cut_when_every_call_is_whole() -> None:
    # a whole call, then the limit: after the call
    items = _finish(payloads(CHAT_CALL), "length")
    found = cut(observe(chat(items), "openai-chat"))
    assert found is not None and found.call is None
    assert found.where.startswith("after tool call `")
    # reasoning only: the limit stopped it before any answer
    thinking = [p for p in payloads(ANT_THINKING) if p.get("index") != 1]
    first(thinking, "message_delta")["delta"]["stop_reason"] = "max_tokens"
    found = cut(observe(typed(thinking), "anthropic"))
    assert found is not None and found.where == "inside its reasoning, before any answer"
    # nothing said at all
    empty = _finish(
        [p for p in payloads(CHAT_TEXT) if not any(d.get("content") for d in deltas([p]))], "length"
    )
    found = cut(observe(chat(empty), "openai-chat"))
    assert found is not None and found.where == "before it said anything"


def test_no_outcome_on_a_stream_the_provider_ended_normally() -> None:
    obs = observe(native(CHAT_TEXT), "openai-chat")
    assert cut(obs) is None and content_filter(obs) == [] and refusal(obs) == []
    # a call whose JSON is broken, in a stream that finished by tool_calls: no cut to blame
    items = payloads(CHAT_CALL)
    frags = [p for p in items if any(c.get("function", {}).get("arguments") for c in _calls(p))]
    broken = [p for p in items if p is not frags[-1]]
    assert cut(observe(chat(broken), "openai-chat")) is None


def _calls(p: Payload) -> list[Payload]:
    return [c for d in deltas([p]) for c in d.get("tool_calls") or []]


def test_anthropic_max_tokens_with_every_block_stopped_leaves_no_block_to_excuse() -> None:
    items = payloads(ANT_TEXT)
    first(items, "message_delta")["delta"]["stop_reason"] = "max_tokens"
    found = cut(observe(typed(items), "anthropic"))
    assert found is not None and found.block is None and found.where == "inside its text"
    # the block the limit cut, left open: the last block started
    open_block = without(items, "content_block_stop")
    found = cut(observe(typed(open_block), "anthropic"))
    assert found is not None and found.block == 0


def test_a_content_filter_says_how_much_text_came_before_it() -> None:
    items = payloads(CHAT_TEXT)
    texts = [p for p in items if any(d.get("content") for d in deltas([p]))]
    kept = _finish([p for p in items if p not in texts[2:]], "content_filter")
    shown = sum(len(d["content"]) for p in texts[:2] for d in deltas([p]))
    obs = observe(chat(kept), "openai-chat")
    (hit,) = content_filter(obs)
    assert hit.rule == "provider.content-filter"
    assert hit.message.endswith(f"(finish `content_filter`) after {shown} characters of text")
    none = _finish([p for p in items if p not in texts], "content_filter")
    (hit,) = content_filter(observe(chat(none), "openai-chat"))
    assert hit.message.endswith("before any text")


def test_a_refusal_quotes_the_model_or_names_the_stop_reason() -> None:
    obs = observe(native(CHAT_REFUSAL), "openai-chat")  # real: delta.refusal
    (hit,) = refusal(obs)
    assert hit == Hit(
        "provider.refusal", 1, f"{REFUSAL_LEAD}: “I'm sorry, I can't assist with that request.”"
    )
    long = payloads(CHAT_TEXT)
    for d in deltas(long):
        if d.get("content"):
            d["refusal"] = d.pop("content") * 10
    (hit,) = refusal(observe(chat(long), "openai-chat"))
    quoted = hit.message.split("“", 1)[1].removesuffix("”")
    assert len(quoted) == QUOTE and quoted.endswith("…")
    items = payloads(ANT_TEXT)
    first(items, "message_delta")["delta"]["stop_reason"] = "refusal"
    (hit,) = refusal(observe(typed(items), "anthropic"))
    assert hit.message.startswith(f"{REFUSAL_LEAD} (stop reason `refusal`) after ")


def _lintable(path: str) -> bool:
    """A recording of a protocol the linter reads (the Gemini codec is not registered
    yet: its recordings are read by tests/codecs/gemini until it is)."""
    return path.split("/", 1)[0] != "gemini" or "gemini" in PROTOCOLS


@pytest.mark.parametrize("path", sorted(p for p in source_rows() if _lintable(p)))
def test_a_real_recordings_outcomes_are_what_its_sources_row_says(path: str) -> None:
    """SOURCES.md lists each recording's features (its finish or stop reason, a refusal,
    an error): the outcomes read from it are those, no more (a cut counts once)."""
    said = {f.rule_id.replace("-in-tool-call", "") for f in lint_file(FIXTURES / path).outcomes}
    assert said == expected_outcomes(path)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=len(ARGS)))
def test_a_call_cut_anywhere_by_length_is_the_cut_not_a_broken_call(kept: int) -> None:
    """Whatever prefix of a real call's arguments the limit left, the outcome names the
    call exactly when its JSON does not parse; the wire is never blamed for it."""
    items = payloads(CHAT_CALL)
    frags = [p for p in items if any(c.get("function", {}).get("arguments") for c in _calls(p))]
    body = chat(_finish([p for p in items if p not in frags[kept:]], "length"))
    text = "".join(ARGS[:kept])
    try:
        json.loads(text)
        whole = True
    except ValueError:
        whole = not text.strip()
    found = cut(observe(body, "openai-chat"))
    assert found is not None and isinstance(found, Cut)
    assert (found.call is None) == whole
    report = lint_bytes(body)
    assert report.errors == []
    assert [f.rule_id for f in report.outcomes] == [found.hit().rule]
    assert all(f.excused for f in report.findings if f.rule_id == "stream.truncated-tool-json")
