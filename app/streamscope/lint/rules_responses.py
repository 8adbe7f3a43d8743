"""Lint rules of OpenAI Responses streams (``responses.*``)."""

from __future__ import annotations

from streamscope.lint.rule import BROKEN, RECORDINGS, Rule, rule

# the section of the wire contract these rules come from
_CONTRACT = "docs/wire-contract.md#openai-responses"
_CUT = 'fails with "stream disconnected before completion: stream closed before response.completed"'

RULES: list[Rule] = [
    rule(
        "responses.missing-item-id",
        "error",
        "`response.output_text.delta` events carry no `item_id`",
        "Text deltas name their item with `item_id` (and `output_index`, `content_index`).",
        "Send the item's `id` as `item_id` on every delta.",
        {
            "cherry": (
                "error",
                'rejects such deltas with its schema ("Type validation failed"): an error '
                "part instead of the text, and the finish becomes `error`",
            ),
            "openai-node": ("error", 'raises "expected a non-empty item_id for …"'),
        },
        source="real clients (tests/realclients), where docs/wire-contract.md had it silent",
    ),
    rule(
        "responses.call-event-without-item-id",
        "error",
        "`response.function_call_arguments.*` events carry no `item_id`",
        "Function call argument events name their item with `item_id`; the AI SDK's chunk "
        "schema requires it.",
        "Send the function_call item's `id` as `item_id` on every arguments event.",
        {
            "cherry": (
                "error",
                'rejects the event with its schema ("Type validation failed"): an error part, '
                "and the finish becomes `error`",
            ),
            "openai-node": ("error", 'raises "expected a non-empty item_id for …"'),
        },
        source="real clients (tests/realclients)",
    ),
    rule(
        "responses.content-event-without-item-id",
        "error",
        "content events other than deltas and function call arguments carry no `item_id`",
        "Every content event (parts, text done, reasoning) names its item with `item_id`.",
        "Send the item's `id` as `item_id` on every content event.",
        {"openai-node": ("error", 'raises "expected a non-empty item_id for …"')},
        source=f"{_CONTRACT}; real clients (tests/realclients)",
    ),
    rule(
        "responses.error-without-sequence-number",
        "error",
        "an `error` / `response.failed` event has no `sequence_number`",
        "The AI SDK requires `sequence_number` on `error` and `response.failed`.",
        "Number every event from 0 with `sequence_number`.",
        {
            "cherry": (
                "error",
                "rejects both events with its schema: the user gets a "
                "validation error part instead of the provider's message",
            )
        },
        source=f"{_CONTRACT}; {BROKEN}",
    ),
    rule(
        "responses.missing-sequence-number",
        "warning",
        "events have no `sequence_number`",
        "Every Responses event carries `sequence_number`, increasing from 0.",
        "Number every event from 0 with `sequence_number`.",
    ),
    rule(
        "responses.sequence-not-increasing",
        "warning",
        "`sequence_number` goes backwards or repeats",
        "`sequence_number` increases by one with every event.",
        "Number events 0, 1, 2, … in the order they are sent.",
    ),
    rule(
        "responses.sequence-gap",
        "info",
        "`sequence_number` skips values (or does not start at 0)",
        "Sequence numbers are dense from 0; gaps mean events are missing (a trimmed recording?).",
        "Send every event, numbered densely from 0.",
    ),
    rule(
        "responses.response-id-changed",
        "error",
        "the `response.id` changes between lifecycle events",
        "`response.created`, `in_progress` and `completed` carry the same `response.id`.",
        "Keep one response id for the whole stream.",
        {
            "openai-python": (
                "error",
                'raises RuntimeError "Lifecycle response identity changed." in responses.stream()',
            ),
            "openai-node": ("error", 'raises "Lifecycle response identity changed."'),
        },
        source=f"{_CONTRACT}; {RECORDINGS} (GitHub Copilot recording); measured; "
        "real clients (tests/realclients)",
    ),
    rule(
        "responses.item-id-changed",
        "error",
        "an output item is referred to by different ids",
        "Every event of one output item names it by the same id.",
        "Keep one id per output item across all its events.",
        {
            "cherry": (
                "error",
                'reports an error part on the rotated ids ("text part … not found", the text '
                "still shown; TypeError (summaryParts) on reasoning): it tracks items by id",
            ),
            "openai-node": ("error", 'raises "expected item_id …, got …"'),
        },
        source=f"{RECORDINGS} (GitHub Copilot recording, @ai-sdk/openai 3.0.141); "
        "real clients (tests/realclients)",
    ),
    rule(
        "responses.missing-created",
        "error",
        "events arrive before `response.created`",
        "`response.created` is the first event.",
        "Send `response.created` (then `response.in_progress`) before anything else.",
        {
            "openai-python": (
                "error",
                'raises RuntimeError "Expected to have received `response.created` before …"',
            ),
            "openai-node": ("error", "raises: it expects `response.created` first"),
        },
        source=f"{_CONTRACT}; measured (openai-python); real clients (tests/realclients)",
    ),
    rule(
        "responses.missing-in-progress",
        "warning",
        "the stream has no `response.in_progress` event",
        "OpenAI sends `response.in_progress` right after `response.created`; no measured "
        "client needs it, but clients written against OpenAI's exact order may.",
        "Send `response.in_progress` after `response.created`.",
        source=f"{BROKEN} (no client measured to break)",
    ),
    rule(
        "responses.lifecycle-fields",
        "error",
        "a lifecycle event lacks `response.id`, a numeric `created_at` or `model`",
        "`response.created` carries `response.id`, `created_at` (a number) and `model`; every "
        "lifecycle event carries the response object.",
        "Send the full response object with id, created_at and model.",
        {
            "cherry": (
                "error",
                "rejects the event with its schema: an error part, and the finish becomes `error`",
            )
        },
        source=f"{_CONTRACT}; real clients (tests/realclients)",
    ),
    rule(
        "responses.content-before-item",
        "error",
        "content arrives before the `output_item.added` of its item",
        "`response.output_item.added` comes before any content of that item.",
        "Send `output_item.added` (with `output_index` and the item) first.",
        {
            "openai-python": (
                "error",
                'raises RuntimeError "Received a content event for '
                'output index … before receiving its output item"',
            ),
            "cherry": (
                "error",
                'reports an error part ("text part … not found"), though it shows the text',
            ),
            "openai-node": ("error", 'raises "missing output at index 0"'),
        },
        source=f"{_CONTRACT}; measured (openai-python); real clients (tests/realclients)",
    ),
    rule(
        "responses.delta-before-content-part",
        "error",
        "a text delta arrives before the `content_part.added` of its part",
        "For text, `response.content_part.added` comes before the first "
        "`response.output_text.delta`.",
        "Send `content_part.added` (an `output_text` part) before the part's deltas.",
        {
            "openai-python": ("error", "raises IndexError: the part does not exist yet"),
            "openai-node": ("error", 'raises "missing content at index 0"'),
        },
        source=f"{_CONTRACT}; measured (openai-python); real clients (tests/realclients)",
    ),
    rule(
        "responses.delta-without-index",
        "error",
        "a delta carries no `output_index` (or, for text, no `content_index`)",
        "Deltas name the output item they extend with `output_index` and, for text, the "
        "content part with `content_index`; a client that places them by index cannot "
        "place one without.",
        "Send `output_index` on every delta and `content_index` on every text delta "
        "(with `item_id`).",
        {
            "openai-python": (
                "error",
                'raises while placing the delta (measured: RuntimeError "Received a '
                'content event for output index None …" without `output_index`, TypeError '
                "without `content_index`)",
            ),
            "cherry": (
                "degraded",
                "places text deltas by `item_id` alone, but rejects a "
                "`function_call_arguments.delta` without `output_index` (its chunk schema "
                "requires it) and skips it, so the arguments only arrive with "
                "`output_item.done`",
            ),
            "openai-node": ("error", 'raises "missing content at index undefined"'),
        },
        source=f"{_CONTRACT}; measured (openai-python); "
        "@ai-sdk/openai source (its Responses chunk schema); "
        "real clients (tests/realclients)",
    ),
    rule(
        "responses.missing-annotations",
        "error",
        "`output_text` parts have no `annotations`",
        "Every `output_text` part carries `annotations: []` (in part, item and response "
        "events alike).",
        'Send `"annotations": []` in every `output_text` part.',
        {
            "strict": ("error", "rejects an `output_text` part without `annotations`"),
            "openai-python": (
                "degraded",
                "assembles the text, but the part's `annotations` "
                "is None: code iterating it raises TypeError",
            ),
        },
        source=f"{_CONTRACT}; {BROKEN} (measured)",
    ),
    rule(
        "responses.partial-response-object",
        "warning",
        "`response.created` / `response.completed` carry a shortened response object",
        "Strict clients expect the full response object (tools, tool_choice, text, "
        "reasoning, metadata, …) in `response.created` and `response.completed`.",
        "Echo the full response object, settings included.",
        {"strict": ("degraded", "finds documented fields of the response object missing")},
    ),
    rule(
        "responses.function-call-fields",
        "error",
        "a `function_call` item lacks `call_id`, `name`, `arguments` or its final `status`",
        "`function_call` items carry `call_id`, `name` and `arguments` when added, and "
        "`status` when done.",
        "Send the documented fields of function_call items, the same when added and done.",
        {
            "openai-python": (
                "error",
                'raises RuntimeError "Completed output item identity '
                'changed." when the done item differs from the added one (measured: '
                "call_id missing when added)",
            ),
            "cherry": (
                "error",
                "rejects the item with its schema (measured: call_id missing): an error part, and "
                "the finish becomes `error`",
            ),
            "openai-node": ("error", 'raises "expected a non-empty output item call_id …"'),
        },
        source=f"{_CONTRACT}; measured (openai-python); real clients (tests/realclients)",
    ),
    rule(
        "responses.item-not-done",
        "error",
        "an added output item never gets `output_item.done`",
        "Every added item gets `output_item.done` (or appears in `response.completed.output`).",
        "Send `output_item.done` for every item.",
        {
            "openai-python": (
                "error",
                'raises RuntimeError "Cannot complete response with unfinished output items."',
            ),
            "openai-node": ("error", 'raises "Cannot complete response with unfinished …"'),
            "codex": ("partial", "takes each item from its `output_item.done`: others are lost"),
        },
        source=f"{_CONTRACT}; measured (openai-python); real clients, agent CLIs",
    ),
    rule(
        "responses.duplicate-output-index",
        "error",
        "an `output_index` is added twice",
        "Each output item is added once, with its own `output_index`.",
        "Give every output item its own `output_index` and add it once.",
        {
            "openai-python": ("error", 'raises RuntimeError "Duplicate response output index …."'),
            "openai-node": ("error", 'raises "Duplicate response output index …"'),
        },
        source="measured (openai-python); real clients (tests/realclients)",
    ),
    rule(
        "responses.done-before-added",
        "error",
        "an `output_item.done` arrives for an item never added",
        "Items are added (`output_item.added`) before they are done.",
        "Send `output_item.added` before the item's other events.",
        {"openai-node": ("error", 'raises "missing output at index 0"')},
        source=f"{_CONTRACT}; real clients (tests/realclients)",
    ),
    rule(
        "responses.missing-terminal",
        "error",
        "the stream ends without `response.completed` (or `incomplete` / `failed`)",
        "A Responses stream ends with `response.completed`, `response.incomplete` or "
        "`response.failed`.",
        "End the stream with `response.completed` (usage included), or "
        "`response.incomplete` / `response.failed`.",
        {
            "openai-python": (
                "error",
                "raises RuntimeError \"Didn't receive a "
                '`response.completed` event." from get_final_response()',
            ),
            "codex": ("error", f"shows the items that were done, then {_CUT}"),
        },
        source=f"{_CONTRACT}; measured (openai-python); agent CLIs (tests/realclients)",
    ),
    rule(
        "responses.usage-fields",
        "warning",
        "`response.completed` has no usage with numeric `input_tokens` and `output_tokens`",
        "`response.completed` carries usage with numeric `input_tokens` and `output_tokens`.",
        "Send usage with both token counts in `response.completed`.",
    ),
    rule(
        "responses.malformed-event",
        "error",
        "an event is missing its type or carries fields of the wrong type",
        "Every event has a `type` and the documented fields (a string `delta`, an `item` "
        "with `output_index`, a `response` object).",
        "Send the documented event shapes.",
        {
            "cherry": ("error", "rejects the event with its schema: an error part"),
            "openai-python": (
                "error",
                "raises (measured: TypeError on a `delta` that is not a string)",
            ),
            "strict": ("error", "rejects the event"),
        },
        source=f"{_CONTRACT}; measured (openai-python)",
    ),
    rule(
        "responses.error-framing",
        "warning",
        'an error payload has no `"type": "error"`',
        "A mid-stream error is an `error` event (`type`, `code`, `message`, `param`, "
        "`sequence_number`), usually followed by `response.failed`.",
        "Send errors as `error` events, then `response.failed`.",
    ),
    rule(
        "responses.nonstandard-reasoning",
        "warning",
        "reasoning streams as `response.reasoning_text.*` events (LM Studio)",
        "OpenAI streams reasoning summaries (`response.reasoning_summary_text.*`); "
        "`reasoning_text` events are non-standard.",
        "Stream reasoning as summary events for clients of OpenAI's API.",
        {
            "cherry": (
                "degraded",
                "ignores these events, so the reasoning is not shown (`reasoning_text` is "
                "LM Studio's, which @ai-sdk/open-responses reads)",
            )
        },
    ),
    rule(
        "responses.unknown-event",
        "error",
        "the stream carries an event type OpenAI does not define",
        "Clients ignore event types they do not know, with whatever they carry.",
        "Send only documented event types.",
        {"openai-node": ("error", 'raises "Unhandled response stream event"')},
        source=f"{_CONTRACT}; real clients (tests/realclients)",
    ),
    rule(
        "responses.done-mismatch",
        "warning",
        "a done event's text differs from its deltas, or an item appears only in the final "
        "response",
        "Done events and `response.completed` repeat what the deltas streamed.",
        "Stream every item's content; keep done events equal to the deltas' sum.",
    ),
    rule(
        "responses.done-sentinel",
        "info",
        "a Chat-style `data: [DONE]` ends a Responses stream",
        "Responses streams end with `response.completed`; clients skip `[DONE]`.",
        "Nothing to fix (or drop the sentinel).",
    ),
]
