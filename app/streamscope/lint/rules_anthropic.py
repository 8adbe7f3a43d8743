"""Lint rules of Anthropic Messages streams (``anthropic.*``)."""

from __future__ import annotations

from streamscope.lint.rule import BROKEN, Rule, rule
from streamscope.lint.rules_framing import CLAUDE_CODE_AGAIN, CLAUDE_CODE_NOTHING

_CC = "agent CLIs (tests/realclients)"
# the section of the wire contract these rules come from
_CONTRACT = "docs/wire-contract.md#anthropic-messages"
RULES: list[Rule] = [
    rule(
        "anthropic.missing-event-line",
        "error",
        "no frame has an `event:` line",
        "Every Anthropic frame needs an `event:` line equal to its data's `type`.",
        "Write `event: <type>` before every `data:` line.",
        {
            "anthropic-python": (
                "error",
                "drops frames without an `event:` line: a data-only stream yields nothing, "
                "and get_final_message() raises AssertionError",
            ),
            "anthropic-node": (
                "error",
                "drops frames without an `event:` line: a data-only stream yields nothing, "
                'and it raises "request ended without sending any chunks"',
            ),
            "claude-code": (
                "error",
                f"drops frames without an `event:` line, reads no event and {CLAUDE_CODE_AGAIN}",
            ),
        },
        source=f"{_CONTRACT}; {BROKEN} (measured: AssertionError); real clients and {_CC}",
    ),
    rule(
        "anthropic.frames-without-event-line",
        "error",
        "some frames have no `event:` line",
        "Every Anthropic frame needs an `event:` line equal to its data's `type`; the frames "
        "without one are dropped by the official SDKs.",
        "Write `event: <type>` before every `data:` line.",
        {
            "anthropic-sdk": (
                "partial",
                "drops every frame without an `event:` line: what those frames carry is lost",
            ),
            "claude-code": (
                "partial",
                "drops every frame without an `event:` line: what those frames carry is lost"
                + CLAUDE_CODE_NOTHING,
            ),
        },
        source=f"{_CONTRACT}; {_CC}",
    ),
    rule(
        "anthropic.missing-message-start",
        "error",
        "the stream does not start with `message_start`",
        "`message_start` comes first, before any block or message event.",
        "Send `message_start` (with `message.usage.input_tokens`) as the first event.",
        {
            "anthropic-python": (
                "error",
                "raises AssertionError from get_final_message(): it never got a message to "
                "accumulate into",
            ),
            "anthropic-node": (
                "error",
                'raises "request ended without sending any chunks": it never got a message to '
                "accumulate into",
            ),
            "claude-code": (
                "error",
                f"cannot read a stream that starts no message, so it {CLAUDE_CODE_AGAIN}",
            ),
        },
        source=f"{_CONTRACT}; measured (anthropic-python); real clients and {_CC}",
    ),
    rule(
        "anthropic.start-without-usage",
        "error",
        "`message_start` has no `message.usage`",
        "`message_start` carries `message.usage` with `input_tokens`.",
        'Send `usage: {"input_tokens": n, "output_tokens": 0}` in `message_start`.',
        {
            "cherry": ("error", "gives an error part and no text"),
            "anthropic-python": (
                "error",
                "fails in its accumulator at the first `message_delta` (AttributeError)",
            ),
            "anthropic-node": (
                "error",
                'fails in its accumulator at the first `message_delta` ("Cannot set '
                "properties of undefined (setting 'output_tokens')\")",
            ),
        },
        source=f"{_CONTRACT}; measured (anthropic-python); real clients (tests/realclients)",
    ),
    rule(
        "anthropic.delta-without-usage",
        "error",
        "`message_delta` has no `usage`",
        "`message_delta` carries `stop_reason` and `usage.output_tokens`.",
        'Send `usage: {"output_tokens": n}` in `message_delta`.',
        {
            "anthropic-python": (
                "error",
                "raises AttributeError in its accumulator at the `message_delta`",
            ),
            "anthropic-node": (
                "error",
                'fails in its accumulator at the `message_delta` ("Cannot read properties '
                "of undefined (reading 'output_tokens')\")",
            ),
            "cherry": (
                "error",
                "rejects the `message_delta` with its schema: an error part, and the finish "
                "becomes `other`",
            ),
        },
        source=f"{_CONTRACT}; measured (anthropic-python); real clients (tests/realclients)",
    ),
    rule(
        "anthropic.usage-fields",
        "error",
        "a usage object lacks `input_tokens` (message_start) or `output_tokens` (message_delta)",
        "`message_start` reports `usage.input_tokens`; `message_delta` reports "
        "`usage.output_tokens`.",
        "Send the token counts as integers.",
        {
            "cherry": (
                "error",
                "rejects a `message_start` without `input_tokens` with its schema and ends the "
                "stream with APICallError: no text",
            )
        },
        source=f"{_CONTRACT}; real clients (tests/realclients)",
    ),
    rule(
        "anthropic.delta-before-start",
        "error",
        "a block delta arrives before its `content_block_start`",
        "`content_block_start` (with `index`) comes before any delta of that block.",
        "Send `content_block_start` for every block before its deltas.",
        {
            "anthropic-python": ("error", "raises IndexError: the block does not exist yet"),
            "anthropic-node": (
                "error",
                'fails at the delta, whose block does not exist yet ("Cannot read '
                "properties of undefined (reading 'type')\")",
            ),
            "claude-code": (
                "error",
                f"fails at the delta (a malformed event) and {CLAUDE_CODE_AGAIN}",
            ),
            "cherry": (
                "error",
                'reports an error part ("text part 0 not found"), though it shows the text',
            ),
        },
        source=f"{_CONTRACT}; measured (anthropic-python); real clients (tests/realclients)",
    ),
    rule(
        "anthropic.missing-index",
        "error",
        "a block event has no `index`",
        "Every `content_block_*` event carries the block's `index`.",
        "Send `index` on every block event.",
        {
            "anthropic-python": ("error", "raises TypeError (list indices must be integers)"),
            "anthropic-node": (
                "empty",
                "places no block without an `index`: it renders nothing, and raises nothing",
            ),
            "cherry": (
                "error",
                "rejects the block events with its schema: error parts and no text",
            ),
        },
        source=f"{_CONTRACT}; measured (anthropic-python); real clients (tests/realclients)",
    ),
    rule(
        "anthropic.unknown-event-type",
        "error",
        "the stream carries an event type Anthropic does not define",
        "The AI SDK's Anthropic schema has no fallback, so invented event types fail it.",
        "Never invent event types; drop what Anthropic does not define.",
        {"cherry": ("error", "turns the unknown type into an error part")},
    ),
    rule(
        "anthropic.unknown-delta-type",
        "error",
        "a `content_block_delta` has a delta type Anthropic does not define",
        "Delta types are text_delta, input_json_delta, thinking_delta, signature_delta and "
        "citations_delta; others fail the AI SDK's schema.",
        "Never invent delta types.",
        {
            "cherry": ("error", "turns the unknown type into an error part"),
            "anthropic-sdk": ("partial", "drops the delta silently: its content is lost"),
            "claude-code": (
                "partial",
                "ignores the delta: its content is lost" + CLAUDE_CODE_NOTHING,
            ),
        },
        source=f"{_CONTRACT}; measured (anthropic-python); real clients and {_CC}",
    ),
    rule(
        "anthropic.error-framing",
        "error",
        'an error is not sent as `event: error` with `{"type":"error","error":{…}}`',
        'Only `event: error` with data `{"type":"error","error":{"type","message"}}` '
        "raises in the official SDKs; any other framing is swallowed.",
        'Send errors as `event: error` + `data: {"type":"error","error":{"type":…,"message":…}}`.',
        {
            "anthropic-python": (
                "hidden",
                "swallows the error: the message ends, looking whole, with stop_reason None, "
                "and the provider's error is lost",
            ),
            "anthropic-node": (
                "error",
                'raises "stream ended without producing a Message with role=assistant": the '
                "provider's error is not shown",
            ),
        },
        source=f"{_CONTRACT}; measured (anthropic-python); real clients (tests/realclients)",
    ),
    rule(
        "anthropic.malformed-event",
        "error",
        "a block delta lacks its delta object or the field its type names",
        "A `content_block_delta` carries a `delta` with the field of its type (`text`, "
        "`partial_json`, `thinking`, `signature`, `citation`).",
        "Send complete deltas.",
        {
            "cherry": ("error", "rejects the event with its schema: an error part"),
            "anthropic-python": (
                "error",
                "raises TypeError (measured: a text_delta without `text`)",
            ),
            "anthropic-node": (
                "garbled",
                'adds "undefined" to the text for a text_delta without `text`',
            ),
            "strict": ("error", "rejects the event"),
            "claude-code": (
                "error",
                f"fails at the event (a malformed event) and {CLAUDE_CODE_AGAIN}",
            ),
        },
        source=f"{_CONTRACT}; measured (anthropic-python); real clients and {_CC}",
    ),
    rule(
        "anthropic.missing-field",
        "error",
        "an event lacks a field the contract requires (a tool_use block's `id`/`name`, "
        "`message`, `delta`, a block `type`)",
        "Anthropic events carry their documented objects and fields.",
        "Send the documented fields (a tool_use block starts with `id`, `name`, `input: {}`).",
        {
            "cherry": (
                "error",
                "rejects the block start with its schema: an error part, and the tool call is lost",
            )
        },
        source=f"{_CONTRACT}; real clients (tests/realclients)",
    ),
    rule(
        "anthropic.missing-message-stop",
        "error",
        "the stream does not end with `message_stop`",
        "`message_delta` is followed by `message_stop`, the end of an Anthropic stream.",
        "Send `message_stop` last.",
        {
            "cherry": ("degraded", "shows the whole answer, with the finish `other` and no usage"),
            # anthropic-python assembles the message (its usage and stop reason came in
            # `message_delta`): no claim
            "anthropic-node": (
                "error",
                'raises "stream ended without producing a Message with role=assistant"',
            ),
        },
        source=f"{_CONTRACT}; real clients (tests/realclients)",
    ),
    rule(
        "anthropic.message-order",
        "warning",
        "`message_delta` / `stop_reason` is missing or `message_start` repeats",
        "One `message_start`, then blocks, then `message_delta` with `stop_reason`, then "
        "`message_stop`.",
        "Send exactly one `message_start` and a `message_delta` with `stop_reason`.",
    ),
    rule(
        "anthropic.block-order",
        "error",
        "a block is never stopped, stopped without a start, or gets a delta of another kind",
        "Each block is `content_block_start`, its own kind of deltas, then `content_block_stop`.",
        "Close every block with `content_block_stop` before the next starts.",
        {
            "claude-code": (
                "error",
                "loses a block never stopped and asks again: once for a visible answer (a text "
                "block), or 3 times for a tool call, joining the text of every attempt, before "
                'it fails with "Connection lost mid-response"',
            )
        },
        source=f"{_CONTRACT}; {_CC}",
    ),
    rule(
        "anthropic.thinking-shape",
        "warning",
        'a thinking block does not start as `{"thinking":"","signature":""}` or has no '
        "`signature_delta`",
        "Thinking blocks start with empty `thinking` and `signature` and end with a "
        "`signature_delta` before `content_block_stop`.",
        "Start thinking blocks with both fields and send the signature before the block stops.",
    ),
    rule(
        "anthropic.foreign-terminator",
        "warning",
        "`data: [DONE]` (OpenAI's terminator) appears in an Anthropic stream",
        "Anthropic streams end with `message_stop`; `[DONE]` is not JSON to their clients.",
        "Do not append `data: [DONE]` to Anthropic streams.",
    ),
    rule(
        "anthropic.unexpected-content",
        "error",
        "`message_start` already carries content",
        "Content arrives in blocks; `message_start` has `content: []`.",
        "Send `content: []` in `message_start`.",
        {
            "cherry": (
                "error",
                "rejects the `message_start` with its schema and ends the stream with "
                "APICallError: no text",
            ),
            "anthropic-sdk": (
                "garbled",
                "puts the content of `message_start` before the streamed text",
            ),
        },
        source=f"{_CONTRACT}; real clients (tests/realclients)",
    ),
    rule(
        "anthropic.unknown-stop-reason",
        "info",
        "the `stop_reason` is one Anthropic does not define",
        "Anthropic's stop reasons are end_turn, max_tokens, stop_sequence, tool_use, "
        "pause_turn and refusal.",
        "Map the upstream's reason to one of Anthropic's.",
    ),
]
