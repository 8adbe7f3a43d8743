"""Lint rules of OpenAI Chat Completions streams (``chat.*``)."""

from __future__ import annotations

from streamscope.lint.rule import BROKEN, Rule, rule
from streamscope.lint.rules_framing import QWEN_AGAIN

_QWEN = "agent CLIs (tests/realclients)"
# the section of the wire contract these rules come from
_CONTRACT = "docs/wire-contract.md#openai-chat-completions"

SCHEMA = "rejects the chunk with its schema: an error part, and that chunk's text is lost"

RULES: list[Rule] = [
    rule(
        "chat.missing-choices",
        "error",
        "a chunk (the usage-only final chunk) has no `choices` array",
        'Every chunk needs a `choices` array; a usage-only final chunk must carry `"choices": []`.',
        'Send `"choices": []` in the usage chunk (and a choices array in every chunk).',
        {
            "cherry": ("error", "raises AI_TypeValidationError"),
            "openai-python": (
                "error",
                "streams the text, then raises TypeError at the usage "
                "chunk, so get_final_completion() never returns",
            ),
            "openai-node": ("error", 'raises "chunk.choices is not iterable" at the usage chunk'),
        },
        source=f"{_CONTRACT}; {BROKEN} (measured); real clients (tests/realclients)",
    ),
    rule(
        "chat.unexpected-object",
        "error",
        "chunks have an `object` other than `chat.completion.chunk`",
        'Every chunk must say `"object": "chat.completion.chunk"`.',
        'Send `"object": "chat.completion.chunk"` in every chunk.',
        {
            "openai-python": (
                "partial",
                "skips those chunks in chat.completions.stream() "
                "(with none left, get_final_completion() fails)",
            ),
        },
    ),
    rule(
        "chat.missing-choice-index",
        "error",
        "a choice has no integer `index`",
        "Each choice of a chunk needs its integer `index`.",
        "Send `index` (0 for a single choice) in every choice.",
        {
            "openai-python": ("error", "raises TypeError (list indices must be integers)"),
            # @ai-sdk/openai-compatible assembles it: no claim for cherry-compatible
            "cherry-openai": (
                "error",
                "rejects the chunk with its schema: an error part instead of the text",
            ),
            "openai-node": (
                "error",
                'raises "Chat completion stream contains an invalid choice index"',
            ),
        },
        source=f"{_CONTRACT}; measured (openai-python); real clients (tests/realclients)",
    ),
    rule(
        "chat.malformed-chunk",
        "error",
        "a chunk has a field of the wrong type",
        "A chunk's choices, delta, content, tool calls or finish reason are not the JSON "
        "types the schema gives them.",
        "Send the documented types: choices an array of objects, content a string, "
        "tool_calls an array of objects, finish_reason a string.",
        {
            "cherry": ("error", SCHEMA),
            "strict": ("error", "rejects the chunk"),
            "openai-node": (
                "garbled",
                "adds the wrong-typed value to the message as it is (a number in `content` shows "
                "as digits)",
            ),
        },
        source=f"{_CONTRACT}; real clients (tests/realclients)",
    ),
    rule(
        "chat.tool-index-not-dense",
        "error",
        "tool call indexes are not 0-based and dense",
        "`tool_calls[].index` must count 0, 1, 2… per choice (Anthropic's OpenAI-compatible "
        "endpoint starts at 1).",
        "Renumber tool calls from 0, densely, per choice.",
        {
            "openai-python": ("error", "raises IndexError while merging the tool call deltas"),
            "openai-node": ("error", "raises TypeError (reading 'id' of undefined)"),
        },
        source=f"{_CONTRACT}; measured (openai-python); real clients (tests/realclients)",
    ),
    rule(
        "chat.tool-call-missing-name",
        "error",
        "the first delta of a tool call has no `function.name`",
        'The first delta of each tool call must carry `id`, `type: "function"` and '
        "`function.name`.",
        "Hold the call until its name is known and send `id`, `type` and `function.name` "
        '(with `arguments: ""`) in its first delta.',
        {
            # @ai-sdk/openai-compatible assembles the call (its name comes in a later
            # delta): no claim for cherry-compatible
            "cherry-openai": (
                "error",
                "throws on a new tool call without a name and ends the whole stream",
            )
        },
        source=f"{_CONTRACT}; {BROKEN}; real clients (tests/realclients)",
    ),
    rule(
        "chat.tool-call-missing-id",
        "error",  # a Cherry Studio built-in provider fails on it (rules_cherry)
        "the first delta of a tool call has no `id`",
        "The first delta of each tool call must carry the call's `id`.",
        "Send the call's `id` in its first delta (generate one if the upstream has none).",
    ),
    rule(
        "chat.tool-call-missing-type",
        "error",
        'the first delta of a tool call has no `type: "function"`',
        'The first delta of each tool call must carry `type: "function"` (with `id` and '
        "`function.name`): openai-python and the AI SDK accept a call without it, the "
        "openai Node SDK and clients that validate chunks against the schema do not.",
        'Send `"type": "function"` in the first delta of every tool call.',
        {
            "strict": (
                "degraded",
                "may not take the call for a function call: the documented schema types "
                'every tool call `"function"`',
            ),
            "openai-node": ("error", 'raises "tool call snapshot missing `type`"'),
        },
        source=f"{_CONTRACT}; measured (openai-python assembles the call); "
        "@ai-sdk/openai-compatible source (its chunk schema does not read `type`); "
        "real clients (tests/realclients)",
    ),
    rule(
        "chat.tool-call-fields",
        "error",
        "a tool call delta lacks its `index`, or its arguments are not a string",
        "Tool call deltas are merged by `index`, and `function.arguments` is a string of JSON.",
        "Send an integer `index` on every tool call delta and arguments as a string.",
        {
            "cherry-openai": (
                "error",
                "throws \"Expected 'function.name' to be a string\" at arguments that are not a "
                "string and ends the stream: no call",
            ),
            "cherry-compatible": (
                "error",
                "rejects the chunk with its schema: an error part, and that call is lost",
            ),
            "openai-python": ("partial", "loses the arguments that are not a string"),
            "openai-node": (
                "garbled",
                "joins arguments that are not a string as `[object Object]`",
            ),
            "qwen-code": (
                "error",
                'fails with "chunk is not iterable" at arguments that are not a string, and '
                "shows no call",
            ),
        },
        source=f"{_CONTRACT}; real clients (tests/realclients); {_QWEN}",
    ),
    rule(
        "chat.tool-index-reused",
        "error",
        "one tool call index is reused for a second call",
        "Each call needs its own index; clients merge deltas of one index into one call.",
        "Give every tool call its own index.",
        {
            "cherry": ("partial", "gives the first call's arguments to it and none to the second"),
            "openai-python": (
                "garbled",
                "merges both calls into one (names and arguments run together)",
            ),
            "openai-node": ("garbled", "merges both calls into one"),
        },
        source=f"{_CONTRACT}; real clients (tests/realclients)",
    ),
    rule(
        "chat.missing-finish-reason",
        "error",
        "a choice never gets a `finish_reason`",
        "The last content chunk of each choice must carry `finish_reason`.",
        "Send `finish_reason` on the last chunk of every choice.",
        {
            "openai-python": ("degraded", "assembles the answer with finish_reason None"),
            "cherry-compatible": (
                "error",
                'reports an error part ("Response stream ended without a finish reason") and '
                "the finish `error` after the text",
            ),
            "cherry-openai": ("degraded", "shows the whole answer with the finish `other`"),
            "openai-node": (
                "error",
                'raises "missing finish_reason for choice 0" from finalChatCompletion()',
            ),
            "qwen-code": (
                "error",
                f"{QWEN_AGAIN}, printing the text of every attempt, then fails with "
                '"Model stream ended without a finish reason"',
            ),
        },
        source=f"{_CONTRACT}; measured (openai-python); real clients and agent CLIs "
        "(tests/realclients)",
    ),
    rule(
        "chat.missing-done",
        "warning",
        "the stream does not end with `data: [DONE]`",
        "An OpenAI Chat stream ends with `data: [DONE]` after the last chunk.",
        "Send `data: [DONE]` as the last frame.",
        source=f"{BROKEN} (no client measured to break)",
    ),
    rule(
        "chat.error-framing",
        "error",
        'a mid-stream error is not a `data: {"error": {…}}` frame',
        "A mid-stream error must be one data frame whose JSON has a truthy `error` object "
        "(then `data: [DONE]`); plain text or an object without `error` is not seen as one.",
        'Send `data: {"error": {"message", "type", "code"}}`, then `data: [DONE]`.',
        {
            "openai-python": (
                "error",
                "raises json.JSONDecodeError on a plain-text error (and ignores a JSON one "
                "without an `error` key): the provider's message never reaches the caller",
            )
        },
        source=f"{_CONTRACT}; measured (openai-python); real clients (tests/realclients)",
    ),
    rule(
        "chat.text-in-unexpected-field",
        "error",
        "the answer arrives only in a delta field the client does not read as content "
        "(`reasoning_content`, `reasoning`, …)",
        "No delta carries `content`, `refusal` or `tool_calls`: everything the model said is "
        "in a field standard OpenAI clients do not treat as the answer.",
        "Put the answer in `delta.content` (and only the reasoning in `reasoning_content`).",
        {
            "openai-python": (
                "empty",
                "assembles a message whose content is None: "
                "`reasoning_content` is kept only as an unknown extra field",
            )
        },
        source="measured (openai-python)",
    ),
    rule(
        "chat.first-chunk-fields",
        "warning",
        "the first chunk has no `id` or no `model`",
        "Every chunk carries the completion's `id` and `model`.",
        "Send `id` and `model` in every chunk.",
    ),
    rule(
        "chat.id-changed",
        "warning",
        "the chunk `id` changes within the stream",
        "All chunks of one completion carry the same `id`.",
        "Keep one `id` for every chunk of a stream.",
    ),
    rule(
        "chat.message-in-chunk",
        "error",
        "a chunk's choice carries `message` instead of `delta`",
        "Stream chunks carry `delta`; `message` belongs to non-streaming responses.",
        "Send the choice's new content as `delta`.",
        {
            "openai-python": ("error", "raises AttributeError on a chunk choice without `delta`"),
            "cherry": ("partial", "drops that chunk's content silently"),
            "openai-node": ("error", 'raises "missing role for choice 0"'),
            "qwen-code": ("partial", "drops the choices that carry `message`: their text is lost"),
        },
        source="measured (openai-python); real clients and agent CLIs (tests/realclients)",
    ),
    rule(
        "chat.content-after-finish",
        "error",
        "content arrives after the choice's `finish_reason`",
        "A choice's `finish_reason` must come with its last content chunk.",
        "Send `finish_reason` only on the last chunk of the choice.",
        {"qwen-code": ("partial", "stops reading at the first `finish_reason`: the rest is lost")},
        source=f"{_CONTRACT}; {_QWEN}",
    ),
    rule(
        "chat.usage-fields",
        "error",  # a Cherry Studio built-in provider fails on it (rules_cherry)
        "a usage object lacks numeric `prompt_tokens` / `completion_tokens`",
        "Usage carries integer `prompt_tokens`, `completion_tokens` and `total_tokens`.",
        "Send the three token counts as integers.",
    ),
    rule(  # Azure's own form: most clients skip it, @ai-sdk/deepseek fails (rules_cherry)
        "chat.azure-prompt-filter",
        "info",
        "Azure sends its prompt-filter verdict as a first chunk with empty `object`",
        "Azure's first chunk has `choices: []`, empty `id`/`model`/`object` and "
        "`prompt_filter_results`; most clients skip it.",
        "Nothing to fix for most clients; for one that fails on it, leave the chunk out.",
        kind="client",
    ),
    rule(  # OpenAI's own form, which a client made for xAI's API does not take
        "chat.tool-call-in-pieces",
        "info",
        "a tool call is streamed in pieces (its arguments over several chunks)",
        "OpenAI streams a call's arguments over several chunks, only the first carrying "
        "`id`, `type` and `function.name`, while xAI's API sends each call whole in one "
        "chunk, and a client made for xAI takes nothing else.",
        "Nothing to fix for most clients; for one that takes calls only whole, send each "
        "call in one chunk with its `id`, `type`, `function.name` and whole `arguments` "
        "(StreamScope's proxy does for @ai-sdk/xai).",
        {
            "cherry-xai": (
                "error",
                "takes each call's first piece for the whole call, its arguments empty, and "
                "rejects the pieces after it with its schema (AI_TypeValidationError): an "
                "error part",
            )
        },
        source="real clients (tests/realclients)",
        kind="client",
    ),
    rule(
        "chat.duplicate-finish",
        "info",
        "a choice gets `finish_reason` twice",
        "Only the first `finish_reason` of a choice counts.",
        "Send `finish_reason` once per choice.",
    ),
    rule(
        "chat.nonstandard-field",
        "info",
        "deltas carry fields with no standard meaning (or the legacy `function_call`)",
        "Fields outside OpenAI's delta schema are ignored by standard clients.",
        "Nothing to fix unless the field carries the answer.",
    ),
    rule(
        "chat.unknown-finish-reason",
        "info",
        "`finish_reason` has a value OpenAI does not define",
        "OpenAI's finish reasons are stop, length, tool_calls, content_filter and function_call.",
        "Map the upstream's reason to one of OpenAI's.",
    ),
    rule(
        "chat.reasoning-tokens",
        "info",
        "`completion_tokens` leaves the reasoning tokens out (xAI style)",
        "OpenAI counts reasoning tokens inside `completion_tokens`; this upstream does not.",
        "Count reasoning tokens in `completion_tokens`.",
    ),
]
