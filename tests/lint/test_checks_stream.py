"""Checks of what a stream says as a whole (``lint/checks_stream.py``), from its canonical
events: nothing at all to show, reasoning and no answer, tool call arguments that are
not complete JSON or no JSON at all (``""`` where OpenAI sends ``"{}"``), and a tool call
that never gets a name."""

from __future__ import annotations

from streamscope.lint.checks_stream import content, tool_json, tool_names
from streamscope.lint.stream import Hit
from tests.lint.observed import observe
from tests.lint.streams import (
    ANT_THINKING,
    ANT_TOOL,
    CHAT_REASONING,
    CHAT_TEXT,
    CHAT_TOOLS,
    Payload,
    chat,
    deltas,
    native,
    payloads,
    typed,
)


def without_content(source: str) -> list[Payload]:
    items = payloads(source)
    for d in deltas(items):
        d.pop("content", None)
    return items


def test_a_stream_with_nothing_to_show() -> None:
    assert content(observe(native(CHAT_TEXT), "openai-chat")) == []
    assert content(observe(chat(without_content(CHAT_TEXT)), "openai-chat")) == [
        Hit("stream.no-content", None, "no text, reasoning, tool call or error (finish: stop)")
    ]
    # The upstream's error is what the client shows instead.
    errored = (
        chat(without_content(CHAT_TEXT), done=False) + b'data: {"error": {"message": "x"}}\n\n'
    )
    assert content(observe(errored, "openai-chat")) == []


def test_reasoning_and_no_answer() -> None:
    thinking_only = [p for p in payloads(ANT_THINKING) if p.get("index") != 1]  # block 1: text
    assert content(observe(typed(thinking_only), "anthropic")) == [
        Hit("stream.reasoning-only", None, "reasoning but no text or tool call (finish: end_turn)")
    ]
    # In Chat, checks_chat says where the text went (chat.text-in-unexpected-field).
    assert content(observe(chat(without_content(CHAT_REASONING)), "openai-chat")) == []


def test_arguments_cut_before_their_json_ends() -> None:
    assert tool_json(observe(native(CHAT_TOOLS), "openai-chat")) == []
    items = payloads(CHAT_TOOLS)
    calls = [c for d in deltas(items) for c in d.get("tool_calls") or []]
    first = [c for c in calls if c["index"] == 0]
    name = first[0]["function"]["name"]
    last_piece = first[-1]["function"]["arguments"]
    first[-1]["function"]["arguments"] = ""  # the closing piece of call 0 never came
    args = "".join(c["function"]["arguments"] for c in first)
    obs = observe(chat(items), "openai-chat")
    (hit,) = tool_json(obs)
    assert last_piece and hit.rule == "stream.truncated-tool-json"
    assert hit.message == (
        f"the arguments of tool call {name!r} end as {args[-40:]!r}; "
        "the stream finished with 'tool_calls'"
    )
    finish = next(i for i, p in obs.payloads for c in p["choices"] if c.get("finish_reason"))
    assert hit.frame == finish  # a chat call ends with the finish


def test_no_arguments_are_an_object_in_anthropic_but_empty_json_in_openai() -> None:
    items = payloads(CHAT_TOOLS)
    for d in deltas(items):
        for call in d.get("tool_calls") or []:
            call["function"]["arguments"] = ""
    names = [
        c["function"]["name"] for d in deltas(items) for c in d.get("tool_calls") or [] if "id" in c
    ]
    hits = tool_json(observe(chat(items), "openai-chat"))
    assert [h.rule for h in hits] == ["stream.empty-tool-arguments"] * len(names)
    assert [h.message for h in hits] == [
        f"tool call {n!r} ends with arguments '', not \"{{}}\"" for n in names
    ]
    no_input = [
        p
        for p in payloads(ANT_TOOL)
        if not (p["type"] == "content_block_delta" and p["delta"]["type"] == "input_json_delta")
    ]
    assert tool_json(observe(typed(no_input), "anthropic")) == []


def test_a_freeform_tools_input_is_text_not_json() -> None:
    # A custom tool's call (Chat's `custom`, Responses' custom_tool_call) has raw text for
    # input, empty or not: neither is a cut or empty JSON.
    first = {"index": 0, "id": "call_c", "type": "custom", "custom": {"name": "run", "input": ""}}
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: Payload, finish: str | None = None) -> Payload:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    items = [
        chunk({"role": "assistant", "tool_calls": [first]}),
        chunk({"tool_calls": [{"index": 0, "custom": {"input": "print(1"}}]}),
        chunk({"tool_calls": [{**first, "index": 1, "id": "call_d"}]}),  # no input at all
        chunk({}, "tool_calls"),
    ]
    assert tool_json(observe(chat(items), "openai-chat")) == []
    # the same calls as functions are what the check is for
    for item in items:
        for call in item["choices"][0]["delta"].get("tool_calls") or []:
            spec = call.pop("custom")
            call["type"] = "function"
            call["function"] = {"name": spec.get("name"), "arguments": spec["input"]}
            if call["function"]["name"] is None:
                del call["function"]["name"], call["type"]
    rules = [h.rule for h in tool_json(observe(chat(items), "openai-chat"))]
    assert rules == ["stream.truncated-tool-json", "stream.empty-tool-arguments"]


def test_a_tool_call_that_never_gets_a_name() -> None:
    named = observe(native(CHAT_TOOLS), "openai-chat")
    assert tool_names(named) == []
    items = payloads(CHAT_TOOLS)
    calls = [c for d in deltas(items) for c in d.get("tool_calls") or [] if "id" in c]
    calls[1]["function"].pop("name")  # the second call's first delta, and no later one
    nameless = observe(chat(items), "openai-chat")
    hits = tool_names(nameless)
    assert [(h.rule, h.message) for h in hits] == [
        ("stream.tool-call-without-name", f"tool call {calls[1]['id']!r} never got a name")
    ]
    # a name that comes in a later delta is a name (chat.tool-call-missing-name says when)
    late = payloads(CHAT_TOOLS)
    later = [c for d in deltas(late) for c in d.get("tool_calls") or [] if c["index"] == 1]
    later[1].setdefault("function", {})["name"] = later[0]["function"].pop("name")
    assert tool_names(observe(chat(late), "openai-chat")) == []
