"""Lint rules of what a stream says as a whole, in any protocol (``stream.*``): no content
at all, reasoning only, tool calls whose arguments are no complete JSON or that never got
a name, and decoder findings this catalogue has no rule for."""

from __future__ import annotations

from streamscope.lint.rule import Rule, rule
from streamscope.lint.rules_framing import QWEN_AGAIN

RULES: list[Rule] = [
    rule(
        "stream.no-content",
        "warning",
        "the stream carries no text, reasoning, tool call or error",
        "The stream is well formed but the upstream sent nothing to show.",
        "Nothing in the framing: check the request (max tokens, stop sequences) and the upstream.",
        {
            **{
                who: ("empty", "has nothing to render")
                for who in ("cherry", "openai-python", "openai-node", "anthropic-sdk", "strict")
            },
            "claude-code": (
                "empty",
                "has nothing to render, and asks once more for a visible answer",
            ),
            "qwen-code": (
                "error",
                f'{QWEN_AGAIN}, then fails with "Model stream ended with empty response text"',
            ),
        },
        source="the stream itself; agent CLIs (tests/realclients)",
    ),
    rule(
        "stream.reasoning-only",
        "info",
        "the answer carries reasoning but no text or tool call",
        "The model produced only reasoning: clients that show reasoning show it, the answer "
        "itself is empty.",
        "Nothing in the framing: give the model more output tokens, or see why it stopped "
        "after thinking.",
        {
            "claude-code": (
                "degraded",
                'asks once more for a visible answer (a second request: "[Your previous '
                'response had no visible output…]")',
            )
        },
        protocols=frozenset({"anthropic", "responses", "lmstudio"}),
        source="agent CLIs (tests/realclients)",
    ),
    rule(
        "stream.truncated-tool-json",
        "error",
        "a tool call's arguments are not complete JSON",
        "A tool call ends with arguments that do not parse as JSON (cut off, by max tokens "
        "or a broken upstream).",
        "Stream the whole arguments JSON before closing the call; when output is cut, say so "
        "with a length / max_tokens finish.",
        {
            "cherry": (
                "error",
                'reports the call with an error part ("Invalid input for tool …: JSON parsing '
                'failed")',
            ),
            "cherry-anthropic": (
                "error",
                'reports the call with an error part ("Invalid input for tool …: JSON parsing '
                'failed"), or drops it when its block never stops',
            ),
            "anthropic-sdk": (
                "garbled",
                "hands the call over with an `input` parsed from the cut JSON as far as it is "
                'whole: a cut value is left out (`{"location": "San Fr` gives `{}`)',
            ),
            "qwen-code": (
                "garbled",
                "asks again once, then runs the call with the cut arguments closed into JSON "
                '(`"units":"` becomes `"units":""`)',
            ),
            "claude-code": (
                "garbled",
                'hands the call over with its input replaced by `{"__unparsedToolInput": '
                '{"raw": …}}`, the cut JSON as text',
            ),
        },
        source="docs/wire-contract.md; real clients and agent CLIs (tests/realclients)",
    ),
    rule(
        "stream.tool-call-without-name",
        "error",
        "a tool call never gets a name",
        "A tool call's name comes with its start (Chat: `function.name` in its first delta; "
        "Responses: the `function_call` item's `name`; Anthropic: the `tool_use` block's "
        "`name`), and this one never gets one: no client can tell which tool to run.",
        "Send the tool's name with the call's start.",
        {
            "openai-python": (
                "garbled",
                "hands the call over with `name` None: the app holds a call it cannot dispatch",
            ),
            "openai-node": (
                "garbled",
                "hands the call over with no `name`: the app holds a call it cannot dispatch",
            ),
            "cherry": (
                "error",
                "rejects the call and ends the stream: no call, no text after it "
                "(\"Expected 'function.name' to be a string\")",
            ),
            **{
                who: (
                    "error",
                    'rejects the call\'s start with its schema ("Type validation failed"): an '
                    "error part, and no call",
                )
                for who in ("cherry-responses", "cherry-anthropic")
            },
            "anthropic-sdk": (
                "garbled",
                "hands the call over with no `name`: the app holds a call it cannot dispatch",
            ),
            "qwen-code": (
                "error",
                'fails with "Model response contained a malformed tool call" and runs no call',
            ),
            "claude-code": (
                "garbled",
                "names the call `tool_name_missing`, a tool that does not exist, and runs nothing",
            ),
            "codex": (
                "empty",
                "drops the call without a word: with nothing else, it shows nothing",
            ),
        },
        protocols=frozenset({"openai-chat", "anthropic", "responses", "lmstudio"}),
        source="real clients and agent CLIs (tests/realclients)",
    ),
    rule(
        "stream.empty-tool-arguments",
        "warning",
        'a tool call ends with arguments "" instead of "{}"',
        'A tool call with no arguments ends with `arguments: ""` where OpenAI sends `"{}"`: '
        '`""` is no JSON, and the strict tool helpers of the SDKs parse the arguments (an '
        "empty Anthropic `input_json_delta` translated as it is gives this).",
        'Send `"{}"` as the arguments of a call without arguments (a delta or the '
        "`function_call_arguments.done` event).",
        {
            "openai-python": (
                "degraded",
                "streams it, but its strict tool helpers (`pydantic_function_tool` with "
                '`.stream()` or `.parse()`) raise "Invalid JSON: EOF while parsing"',
            ),
            "openai-node": (
                "degraded",
                "streams it, but its strict tool helpers (`zodFunction`, "
                '`zodResponsesFunction`) throw "invalid structured output JSON"',
            ),
        },
        protocols=frozenset({"openai-chat", "responses"}),
        source="real clients: tests/proxy/test_exchange_no_argument_tools.py runs both helpers",
    ),
]

RULES.append(
    rule(
        "stream.decoder-finding",
        "warning",
        "the decoder noticed something this catalogue has no rule for",
        "A decoder finding without a lint rule of its own (the message says what it is).",
        "See the message.",
        source="the codec's decoder",
    )
)
