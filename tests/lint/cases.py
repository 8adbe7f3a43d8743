"""One minimal stream per lint rule: a real recording with the one defect the rule is
about (rules that real recordings or the broken samples already trigger are covered there
too, see ``test_rules_catalogue.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from streamscope.lint import LintReport, lint, lint_bytes
from streamscope.wire import decode_all
from streamscope.wire.frame import Frame
from tests.lint.streams import (
    ANT_TEXT,
    ANT_THINKING,
    ANT_TOOL,
    CHAT_REASONING,
    CHAT_TEXT,
    CHAT_TOOLS,
    LMS_DOC,
    RESP_CALL,
    RESP_ERROR,
    RESP_TEXT,
    Payload,
    chat,
    clone,
    deltas,
    dump,
    edited,
    first,
    native,
    payloads,
    typed,
    without,
)


@dataclass(frozen=True)
class Case:
    """``rule`` must fire on the bytes ``build()`` makes (linted with ``options``);
    ``source`` is the undamaged recording, for comparing what an SDK assembles.

    The option ``silences`` ({frame index: seconds}) lints the frames with arrival times:
    each frame that long after the one before, the others 0.1 s after it."""

    rule: str
    build: Callable[[], bytes]
    source: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    variant: str = ""
    """Tells apart two examples of one rule (another protocol, say)."""

    @property
    def id(self) -> str:
        return f"{self.rule}@{self.variant}" if self.variant else self.rule

    def report(self) -> LintReport:
        opts = dict(self.options)
        silences = opts.pop("silences", None)
        if silences is not None:
            return lint(timed(decode_all(self.build()), silences), **opts)
        if opts.pop("frames", False):
            return lint(decode_all(self.build()), **opts)
        return lint_bytes(self.build(), **opts)


def timed(frames: list[Frame], silences: dict[int, float], step: float = 0.1) -> list[Frame]:
    """The frames with arrival times: ``silences[i]`` seconds before frame i, else
    ``step``."""
    t = 0.0
    for index, frame in enumerate(frames):
        t += silences.get(index, step) if index else 0.0
        frame.arrival_ns = round(t * 1e9)
    return frames


def _set(items: list[Payload], pred: Callable[[Payload], bool], **values: Any) -> None:
    for p in items:
        if pred(p):
            p.update(values)


def _chat_usage_fields(items: list[Payload]) -> None:
    del items[-1]["usage"]["completion_tokens"]


def _chat_reasoning_only(items: list[Payload]) -> None:
    for d in deltas(items):
        if d.get("content"):
            d["reasoning_content"] = (d.get("reasoning_content") or "") + d.pop("content")


def _chat_index_reused(items: list[Payload]) -> None:
    for d in deltas(items):
        for call in d.get("tool_calls") or []:
            call["index"] = 0


def _chat_first_call(items: list[Payload], n: int = 0) -> Payload:
    calls = [c for d in deltas(items) for c in d.get("tool_calls") or [] if "id" in c]
    return calls[n]


def _chat_truncated_args(items: list[Payload]) -> list[Payload]:
    # Drop the last argument fragments of the only call: its JSON never closes.
    frags = [
        p
        for p in items
        if any(
            c.get("function", {}).get("arguments")
            for d in deltas([p])
            for c in d.get("tool_calls") or []
        )
    ]
    return [p for p in items if p not in frags[-2:]]


def _chat_no_args(items: list[Payload]) -> None:
    # The only call's arguments all "": a call with no arguments sent as "" (not "{}").
    for d in deltas(items):
        for c in d.get("tool_calls") or []:
            if "function" in c and "arguments" in c["function"]:
                c["function"]["arguments"] = ""


def _ant_usage(items: list[Payload]) -> None:
    del first(items, "message_start")["message"]["usage"]


def _ant_error_without_event(items: list[Payload]) -> bytes:
    err = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return typed(items[:4]) + f"data: {dump(err)}\n\n".encode()


def _ant_reasoning_only(items: list[Payload]) -> list[Payload]:
    return [p for p in items if p.get("index") != 1]


def _resp_item_not_done(items: list[Payload]) -> list[Payload]:
    first(items, "response.completed")["response"]["output"] = []
    return without(items, "response.output_item.done")


LMS_RESP = "lmstudio/vercel_lmstudio-v1-responses_reasoning-text_function-call.1.jsonl"


def _of(items: list[Payload], *kinds: str) -> list[Payload]:
    """The payloads of these Responses event types (``response.`` may be left off)."""
    full = {k if k == "error" or k.startswith("response.") else f"response.{k}" for k in kinds}
    return [p for p in items if p.get("type") in full]


def _ant_deltas_without_event() -> bytes:
    return b"".join(
        typed([p], event_lines=p["type"] != "content_block_delta") for p in payloads(ANT_TEXT)
    )


def _chat_late_name(items: list[Payload]) -> None:
    # the second call's name arrives in its next delta (as vLLM streams it)
    call = _chat_first_call(items, 1)
    name = call["function"].pop("name")
    later = [
        c for d in deltas(items) for c in d.get("tool_calls") or [] if c["index"] == call["index"]
    ]
    later[1].setdefault("function", {})["name"] = name


def _chat_no_name(items: list[Payload]) -> None:
    # the second call's name never comes (a relay that drops it)
    _chat_first_call(items, 1)["function"].pop("name")


def _resp_no_name(items: list[Payload]) -> None:
    # the function_call item never has a name: not when added, done or completed
    output = _of(items, "response.completed")[0]["response"]["output"]
    for item in [p["item"] for p in _of(items, "output_item.added", "output_item.done")] + output:
        if item.get("type") == "function_call":
            item.pop("name", None)


def _ant_no_name(items: list[Payload]) -> None:
    for p in items:
        if p.get("type") == "content_block_start" and p["content_block"]["type"] == "tool_use":
            p["content_block"].pop("name")


def _chat_index_from_1(items: list[Payload]) -> None:
    for d in deltas(items):
        for call in d.get("tool_calls") or []:
            call["index"] += 1


def _resp_no_annotations(items: list[Payload]) -> None:
    def strip(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "output_text":
                node.pop("annotations", None)
            for value in node.values():
                strip(value)
        elif isinstance(node, list):
            for value in node:
                strip(value)

    strip(items)


def _lms(items: list[Payload]) -> bytes:
    return typed(items)


def _lms_edit(edit: Callable[[list[Payload]], Any]) -> Callable[[], bytes]:
    return lambda: _lms(edited(LMS_DOC, edit))


def _chat_edit(source: str, edit: Callable[[list[Payload]], Any]) -> Callable[[], bytes]:
    return lambda: chat(edited(source, edit))


def _typed_edit(source: str, edit: Callable[[list[Payload]], Any]) -> Callable[[], bytes]:
    return lambda: typed(edited(source, edit))


def _insert(source: str, at: int, raw: bytes, chat_framing: bool = True) -> Callable[[], bytes]:
    def build() -> bytes:
        items = payloads(source)
        head, tail = items[:at], items[at:]
        if chat_framing:
            return chat(head, done=False) + raw + chat(tail)
        return typed(head) + raw + typed(tail)

    return build


def _multiline(items: list[Payload]) -> bytes:
    second = "".join(f"data: {line}\n" for line in dump(items[1]).replace(",", ",\n").split("\n"))
    return chat(items[:1], done=False) + second.encode() + b"\n" + chat(items[2:])


CASES: list[Case] = [
    # -- framing ----------------------------------------------------------------------------
    Case("framing.zero-frames", lambda: b": keepalive\n\n", None, {"protocol": "openai-chat"}),
    Case(
        "framing.non-sse-body",
        lambda: dump(
            {"id": "resp_1", "object": "response", "status": "completed", "output": []}
        ).encode(),
    ),
    Case("framing.http-error", lambda: b'{"error":{"message":"no"}}', None, {"status": 500}),
    Case(
        "framing.content-type",
        lambda: chat(payloads(CHAT_TEXT)),
        CHAT_TEXT,
        {"content_type": "application/json"},
    ),
    Case(  # the last frame is the usage-only chunk: the usage is lost, the answer whole
        "framing.no-final-blank-line",
        lambda: chat(payloads(CHAT_TEXT), done=False).rstrip(b"\n"),
        CHAT_TEXT,
    ),
    Case(  # the stream is cut after a text delta, which is the last frame: its text is lost
        "framing.last-frame-lost",
        lambda: chat(payloads(CHAT_TEXT)[:5], done=False).rstrip(b"\n"),
        CHAT_TEXT,
    ),
    Case("framing.invalid-json", _insert(CHAT_TEXT, 3, b"data: {oops\n\n"), CHAT_TEXT),
    Case("framing.comment-as-data", _insert(CHAT_TEXT, 3, b"data: : keepalive\n\n"), CHAT_TEXT),
    Case("framing.multiline-data", lambda: _multiline(payloads(CHAT_TEXT)), CHAT_TEXT),
    Case(
        "framing.event-type-mismatch",
        lambda: native(ANT_TEXT).replace(b"event: ping\n", b"event: pong\n"),
        ANT_TEXT,
    ),
    Case(
        "framing.missing-type",
        lambda: native(ANT_TEXT).replace(b'{"type":"ping"}', b"{}"),
        ANT_TEXT,
    ),
    Case(
        "framing.data-after-terminator",
        lambda: chat(payloads(CHAT_TEXT)) + chat(payloads(CHAT_TEXT)[-1:], done=False),
        CHAT_TEXT,
    ),
    Case(
        "framing.invalid-utf8",
        lambda: chat(payloads(CHAT_TEXT)).replace(b"unable", b"un\xffable"),
        CHAT_TEXT,
    ),
    Case(
        "framing.unknown-field",
        lambda: chat(payloads(CHAT_TEXT)).replace(b"data: [DONE]", b"foo: bar\ndata: [DONE]"),
        CHAT_TEXT,
    ),
    Case("framing.bom", lambda: b"\xef\xbb\xbf" + chat(payloads(CHAT_TEXT)), CHAT_TEXT),
    Case(
        "framing.buffering-headers",
        lambda: chat(payloads(CHAT_TEXT)),
        CHAT_TEXT,
        {"headers": {"Content-Type": "text/event-stream"}},
    ),
    Case(
        "framing.long-silence", lambda: chat(payloads(CHAT_TEXT)), CHAT_TEXT, {"silences": {5: 45}}
    ),
    Case(
        "framing.error-envelope",
        lambda: b"<html><body>502 Bad Gateway</body></html>",
        None,
        {"status": 502, "protocol": "openai-chat"},
    ),
    Case(
        "framing.error-envelope-fields",
        lambda: b'{"error":{"message":"The model does not exist"}}',
        None,
        {"status": 404, "protocol": "openai-chat"},
    ),
    Case(
        "stream.no-content",
        _chat_edit(CHAT_TEXT, lambda i: [d.pop("content", None) for d in deltas(i)]),
        CHAT_TEXT,
    ),
    Case("stream.reasoning-only", _typed_edit(ANT_THINKING, _ant_reasoning_only), ANT_THINKING),
    Case(
        "stream.truncated-tool-json",
        _chat_edit("openai-chat/oai-py_tool-call-single.sse", _chat_truncated_args),
        "openai-chat/oai-py_tool-call-single.sse",
    ),
    Case(
        "stream.empty-tool-arguments",
        _chat_edit("openai-chat/oai-py_tool-call-single.sse", _chat_no_args),
        "openai-chat/oai-py_tool-call-single.sse",
    ),
    # -- OpenAI Chat --------------------------------------------------------------------------
    Case(
        "chat.unexpected-object",
        _chat_edit(CHAT_TEXT, lambda i: _set(i[2:5], lambda p: True, object="chat.completion")),
        CHAT_TEXT,
    ),
    Case(
        "chat.missing-choice-index",
        _chat_edit(CHAT_TEXT, lambda i: [c.pop("index") for p in i for c in p["choices"]]),
        CHAT_TEXT,
    ),
    Case(
        "chat.malformed-chunk",
        _chat_edit(CHAT_TEXT, lambda i: deltas(i)[2].update(content=5)),
        CHAT_TEXT,
    ),
    Case(
        "chat.tool-call-missing-id",
        _chat_edit(CHAT_TOOLS, lambda i: _chat_first_call(i, 1).pop("id")),
        CHAT_TOOLS,
    ),
    Case(
        "chat.tool-call-missing-type",
        _chat_edit(CHAT_TOOLS, lambda i: _chat_first_call(i, 1).pop("type")),
        CHAT_TOOLS,
    ),
    Case(
        "chat.tool-call-fields",
        _chat_edit(CHAT_TOOLS, lambda i: _chat_first_call(i)["function"].update(arguments={})),
        CHAT_TOOLS,
    ),
    Case("chat.tool-index-reused", _chat_edit(CHAT_TOOLS, _chat_index_reused), CHAT_TOOLS),
    Case(
        "chat.missing-finish-reason",
        _chat_edit(
            CHAT_TEXT,
            lambda i: _set(
                [c for p in i for c in p["choices"]], lambda c: True, finish_reason=None
            ),
        ),
        CHAT_TEXT,
    ),
    Case(
        "chat.error-framing",
        lambda: (
            chat(payloads(CHAT_TEXT)[:5], done=False)
            + b"event: error\ndata: upstream overloaded\n\n"
        ),
        CHAT_TEXT,
    ),
    Case(
        "chat.text-in-unexpected-field",
        _chat_edit(CHAT_REASONING, _chat_reasoning_only),
        CHAT_REASONING,
    ),
    Case("chat.first-chunk-fields", _chat_edit(CHAT_TEXT, lambda i: i[0].pop("model")), CHAT_TEXT),
    Case(
        "chat.id-changed",
        _chat_edit(CHAT_TEXT, lambda i: i[5].update(id="chatcmpl-other")),
        CHAT_TEXT,
    ),
    Case(
        "chat.message-in-chunk",
        _chat_edit(
            CHAT_TEXT, lambda i: i[3]["choices"][0].update(message=i[3]["choices"][0].pop("delta"))
        ),
        CHAT_TEXT,
    ),
    Case(
        "chat.content-after-finish",
        _chat_edit(CHAT_TEXT, lambda i: i[3]["choices"][0].update(finish_reason="stop")),
        CHAT_TEXT,
    ),
    Case("chat.usage-fields", _chat_edit(CHAT_TEXT, _chat_usage_fields), CHAT_TEXT),
    Case(
        "chat.duplicate-finish",
        _chat_edit(CHAT_TEXT, lambda i: i.insert(-1, clone(i[-2]))),
        CHAT_TEXT,
    ),
    Case(
        "chat.nonstandard-field",
        _chat_edit(CHAT_TEXT, lambda i: deltas(i)[2].update(vendor_note="x")),
        CHAT_TEXT,
    ),
    Case(
        "chat.unknown-finish-reason",
        _chat_edit(CHAT_TEXT, lambda i: i[-2]["choices"][0].update(finish_reason="eos")),
        CHAT_TEXT,
    ),
    # -- Anthropic ----------------------------------------------------------------------------
    Case(
        "anthropic.missing-message-start",
        _typed_edit(ANT_TEXT, lambda i: without(i, "message_start")),
        ANT_TEXT,
    ),
    Case("anthropic.start-without-usage", _typed_edit(ANT_TEXT, _ant_usage), ANT_TEXT),
    Case(
        "anthropic.delta-without-usage",
        _typed_edit(ANT_TEXT, lambda i: first(i, "message_delta").pop("usage")),
        ANT_TEXT,
    ),
    Case(
        "anthropic.usage-fields",
        _typed_edit(
            ANT_TEXT, lambda i: first(i, "message_start")["message"]["usage"].pop("input_tokens")
        ),
        ANT_TEXT,
    ),
    Case(
        "anthropic.delta-before-start",
        _typed_edit(ANT_TEXT, lambda i: without(i, "content_block_start")),
        ANT_TEXT,
    ),
    Case(
        "anthropic.missing-index",
        _typed_edit(ANT_TEXT, lambda i: [p.pop("index", None) for p in i]),
        ANT_TEXT,
    ),
    Case(
        "anthropic.unknown-event-type",
        _insert(ANT_TEXT, 3, b'event: vendor_stats\ndata: {"type":"vendor_stats"}\n\n', False),
        ANT_TEXT,
    ),
    Case(
        "anthropic.unknown-delta-type",
        _typed_edit(
            ANT_TEXT,
            lambda i: [
                p["delta"].update(type="markdown_delta")
                for p in i
                if p["type"] == "content_block_delta"
            ],
        ),
        ANT_TEXT,
    ),
    Case("anthropic.error-framing", lambda: _ant_error_without_event(payloads(ANT_TEXT)), ANT_TEXT),
    Case(
        "anthropic.malformed-event",
        _typed_edit(ANT_TEXT, lambda i: first(i, "content_block_delta")["delta"].pop("text")),
        ANT_TEXT,
    ),
    Case(
        "anthropic.missing-field",
        _typed_edit(ANT_TOOL, lambda i: first(i, "content_block_start")["content_block"].pop("id")),
        ANT_TOOL,
    ),
    Case(
        "anthropic.missing-message-stop",
        _typed_edit(ANT_TEXT, lambda i: without(i, "message_stop")),
        ANT_TEXT,
    ),
    Case(
        "anthropic.message-order",
        _typed_edit(ANT_TEXT, lambda i: without(i, "message_delta")),
        ANT_TEXT,
    ),
    Case(
        "anthropic.block-order",
        _typed_edit(ANT_TEXT, lambda i: without(i, "content_block_stop")),
        ANT_TEXT,
    ),
    Case(
        "anthropic.thinking-shape",
        _typed_edit(
            ANT_THINKING,
            lambda i: first(i, "content_block_start")["content_block"].pop("signature"),
        ),
        ANT_THINKING,
    ),
    Case("anthropic.foreign-terminator", lambda: native(ANT_TEXT) + b"data: [DONE]\n\n", ANT_TEXT),
    Case(
        "anthropic.unexpected-content",
        _typed_edit(
            ANT_TEXT,
            lambda i: first(i, "message_start")["message"].update(
                content=[{"type": "text", "text": "x"}]
            ),
        ),
        ANT_TEXT,
    ),
    Case(
        "anthropic.unknown-stop-reason",
        _typed_edit(
            ANT_TEXT, lambda i: first(i, "message_delta")["delta"].update(stop_reason="vendor_stop")
        ),
        ANT_TEXT,
    ),
    # -- Responses ----------------------------------------------------------------------------
    Case(
        "responses.content-event-without-item-id",
        _typed_edit(RESP_TEXT, lambda i: first(i, "response.content_part.added").pop("item_id")),
        RESP_TEXT,
    ),
    Case(
        "responses.sequence-not-increasing",
        _typed_edit(RESP_TEXT, lambda i: i[4].update(sequence_number=1)),
        RESP_TEXT,
    ),
    Case(
        "responses.missing-created",
        _typed_edit(RESP_TEXT, lambda i: without(i, "response.created")),
        RESP_TEXT,
    ),
    Case(
        "responses.lifecycle-fields",
        _typed_edit(
            RESP_TEXT, lambda i: first(i, "response.created")["response"].pop("created_at")
        ),
        RESP_TEXT,
    ),
    Case(
        "responses.content-before-item",
        _typed_edit(RESP_TEXT, lambda i: without(i, "response.output_item.added")),
        RESP_TEXT,
    ),
    Case(
        "responses.delta-before-content-part",
        _typed_edit(RESP_TEXT, lambda i: without(i, "response.content_part.added")),
        RESP_TEXT,
    ),
    Case(
        "responses.delta-without-index",
        _typed_edit(
            RESP_TEXT, lambda i: first(i, "response.output_text.delta").pop("content_index")
        ),
        RESP_TEXT,
    ),
    Case(
        "responses.function-call-fields",
        _typed_edit(
            RESP_CALL, lambda i: first(i, "response.output_item.added")["item"].pop("call_id")
        ),
        RESP_CALL,
    ),
    Case("responses.item-not-done", _typed_edit(RESP_TEXT, _resp_item_not_done), RESP_TEXT),
    Case(
        "responses.done-before-added",
        _typed_edit(
            RESP_CALL,
            lambda i: [
                p
                for p in i
                if "output_item.added" not in p["type"] and "arguments" not in p["type"]
            ],
        ),
        RESP_CALL,
    ),
    Case(
        "responses.duplicate-output-index",
        _typed_edit(
            RESP_TEXT, lambda i: i.insert(3, clone(first(i, "response.output_item.added")))
        ),
        RESP_TEXT,
    ),
    Case(
        "responses.usage-fields",
        _typed_edit(RESP_TEXT, lambda i: first(i, "response.completed")["response"].pop("usage")),
        RESP_TEXT,
    ),
    Case(
        "responses.malformed-event",
        _typed_edit(RESP_TEXT, lambda i: first(i, "response.output_text.delta").update(delta=5)),
        RESP_TEXT,
    ),
    Case(
        "responses.error-framing",
        lambda: typed(
            edited(RESP_ERROR, lambda i: first(i, "error").pop("type")), event_lines=False
        ),
        RESP_ERROR,
    ),
    Case(
        "responses.unknown-event",
        _insert(
            RESP_TEXT,
            3,
            b"event: response.vendor.note\ndata: "
            b'{"type":"response.vendor.note","sequence_number":3}\n\n',
            False,
        ),
        RESP_TEXT,
    ),
    Case(
        "responses.done-mismatch",
        _typed_edit(
            RESP_TEXT, lambda i: first(i, "response.output_text.done").update(text="something else")
        ),
        RESP_TEXT,
    ),
    Case("responses.done-sentinel", lambda: native(RESP_TEXT) + b"data: [DONE]\n\n", RESP_TEXT),
    # -- one example for every rule with a client claim (proven by tests/realclients) --------
    Case(
        "anthropic.missing-event-line",
        lambda: typed(payloads(ANT_TEXT), event_lines=False),
        ANT_TEXT,
    ),
    Case("anthropic.frames-without-event-line", _ant_deltas_without_event, ANT_TEXT),
    Case("chat.missing-choices", _chat_edit(CHAT_TEXT, lambda i: i[-1].pop("choices")), CHAT_TEXT),
    Case("chat.tool-call-missing-name", _chat_edit(CHAT_TOOLS, _chat_late_name), CHAT_TOOLS),
    Case("stream.tool-call-without-name", _chat_edit(CHAT_TOOLS, _chat_no_name), CHAT_TOOLS),
    Case(
        "stream.tool-call-without-name",
        _typed_edit(RESP_CALL, _resp_no_name),
        RESP_CALL,
        variant="responses",
    ),
    Case(
        "stream.tool-call-without-name",
        _typed_edit(ANT_TOOL, _ant_no_name),
        ANT_TOOL,
        variant="anthropic",
    ),
    Case("chat.tool-index-not-dense", _chat_edit(CHAT_TOOLS, _chat_index_from_1), CHAT_TOOLS),
    Case("chat.tool-call-in-pieces", lambda: chat(payloads(CHAT_TOOLS)), CHAT_TOOLS),  # OpenAI's
    Case("framing.single-newline", lambda: chat(payloads(CHAT_TEXT)).replace(b"\n\n", b"\n")),
    Case(
        "responses.missing-item-id",
        _typed_edit(RESP_TEXT, lambda i: [p.pop("item_id") for p in _of(i, "output_text.delta")]),
        RESP_TEXT,
    ),
    Case(
        "responses.error-without-sequence-number",
        _typed_edit(
            RESP_ERROR,
            lambda i: [p.pop("sequence_number") for p in _of(i, "error", "response.failed")],
        ),
        RESP_ERROR,
    ),
    Case(
        "responses.item-id-changed",
        _typed_edit(RESP_TEXT, lambda i: _of(i, "output_text.delta")[-1].update(item_id="msg_2")),
        RESP_TEXT,
    ),
    Case("responses.missing-annotations", _typed_edit(RESP_TEXT, _resp_no_annotations), RESP_TEXT),
    Case(
        "responses.call-event-without-item-id",
        _typed_edit(
            RESP_CALL, lambda i: [p.pop("item_id") for p in _of(i, "function_call_arguments.delta")]
        ),
        RESP_CALL,
    ),
    Case(
        "responses.missing-terminal",
        _typed_edit(RESP_TEXT, lambda i: without(i, "response.completed")),
        RESP_TEXT,
    ),
    Case("responses.nonstandard-reasoning", lambda: native(LMS_RESP), LMS_RESP),
    Case(
        "responses.partial-response-object",
        _typed_edit(RESP_TEXT, lambda i: [p["response"].pop("tools") for p in _of(i, "created")]),
        RESP_TEXT,
    ),
    Case(
        "responses.response-id-changed",
        _typed_edit(
            RESP_TEXT, lambda i: first(i, "response.completed")["response"].update(id="resp_2")
        ),
        RESP_TEXT,
    ),
    # -- LM Studio ----------------------------------------------------------------------------
    Case("lmstudio.missing-event-line", lambda: typed(payloads(LMS_DOC), event_lines=False)),
    Case("lmstudio.chat-start-order", _lms_edit(lambda i: without(i, "chat.start"))),
    Case("lmstudio.missing-chat-end", _lms_edit(lambda i: without(i, "chat.end"))),
    Case("lmstudio.part-order", _lms_edit(lambda i: without(i, "message.start"))),
    Case("lmstudio.tool-call-order", _lms_edit(lambda i: without(i, "tool_call.start"))),
    Case(
        "lmstudio.malformed-event", _lms_edit(lambda i: first(i, "message.delta").update(content=5))
    ),
    Case(
        "lmstudio.missing-field",
        _lms_edit(lambda i: first(i, "chat.start").pop("model_instance_id")),
    ),
    Case(
        "lmstudio.unknown-event",
        _lms_edit(lambda i: i.insert(1, {"type": "vendor.stats", "tokens": 3})),
    ),
    Case("lmstudio.duplicate-error", _lms_edit(lambda i: i.insert(-1, clone(first(i, "error"))))),
]

# The rules of what an answer says (an upstream's error, whole bodies): tests/lint/answers.py.
from tests.lint.answers import answer_cases  # noqa: E402

CASES += answer_cases()

# What the provider did and said on the wire (a cut, a filter, a refusal, its error):
# tests/lint/provider_cases.py.
from tests.lint.provider_cases import provider_cases  # noqa: E402

CASES += provider_cases()

# The Gemini examples (the gemini.* rules, and the shared rules' Gemini claims):
# tests/lint/gemini_cases.py.
from tests.lint.gemini_cases import gemini_cases  # noqa: E402

CASES += gemini_cases()
