"""Lint rules of LM Studio's native ``/api/v1/chat`` streams (``lmstudio.*``).

No measured client breakage is recorded for this protocol (Cherry Studio reaches LM
Studio through its OpenAI-compatible endpoints), so these rules say what LM Studio's
documented event catalogue requires and only the strict profile is listed.
"""

from __future__ import annotations

from streamscope.lint.rule import Rule, rule

_DOCS = "LM Studio docs (streaming-events.md)"

RULES: list[Rule] = [
    rule(
        "lmstudio.missing-event-line",
        "warning",
        "frames have no `event:` line",
        "LM Studio sends `event: <type>` with every frame.",
        "Write `event: <type>` before every `data:` line.",
        source=_DOCS,
    ),
    rule(
        "lmstudio.chat-start-order",
        "warning",
        "events arrive before `chat.start`, or `chat.start` repeats",
        "A stream starts with exactly one `chat.start`.",
        "Send one `chat.start` first.",
        source=_DOCS,
    ),
    rule(
        "lmstudio.missing-chat-end",
        "warning",
        "the stream does not end with `chat.end`",
        "A stream ends with `chat.end`, whose `result` is the whole response (also after an "
        "`error`).",
        "Send `chat.end` with the result last.",
        source=_DOCS,
    ),
    rule(
        "lmstudio.part-order",
        "warning",
        "reasoning / message deltas arrive outside their `*.start` … `*.end`",
        "Reasoning and message text stream as `*.start`, `*.delta`…, `*.end`.",
        "Open and close every reasoning and message part.",
        source=_DOCS,
    ),
    rule(
        "lmstudio.tool-call-order",
        "warning",
        "a tool call's events are out of order or incomplete",
        "A tool call is `tool_call.start`, `tool_call.arguments`, then a result or failure.",
        "Send every tool call's start, arguments and result.",
        source=_DOCS,
    ),
    rule(
        "lmstudio.malformed-event",
        "error",
        "an event has no type, or a field of the wrong type",
        "Every event has its `type` and the documented field types.",
        "Send the documented event shapes.",
        {"strict": ("error", "rejects the event")},
        source=_DOCS,
    ),
    rule(
        "lmstudio.missing-field",
        "warning",
        "an event lacks a documented field",
        "LM Studio's events carry their documented fields (`model_instance_id`, `content`, "
        "`tool`, `output`, `result.output`, `result.stats`, …).",
        "Send the documented fields.",
        source=_DOCS,
    ),
    rule(
        "lmstudio.unknown-event",
        "warning",
        "the stream carries an event or `chat.end` output type LM Studio does not define",
        "Clients ignore types they do not know, with whatever they carry.",
        "Send only documented types.",
        source=_DOCS,
    ),
    rule(
        "lmstudio.chat-end-differs",
        "info",
        "`chat.end` reports output the deltas did not stream (or differently)",
        "`chat.end.result.output` repeats what the stream delivered.",
        "Stream every output item before `chat.end`.",
        source=_DOCS,
    ),
    rule(
        "lmstudio.duplicate-error",
        "info",
        "more than one `error` event arrives",
        "One `error` event, then `chat.end`.",
        "Send one error.",
        source=_DOCS,
    ),
]
