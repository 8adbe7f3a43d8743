"""Lint rules for the transport, shared by every protocol (``framing.*``), and for what a
stream says as a whole (``stream.*``: no content at all, reasoning only, cut tool JSON)."""

from __future__ import annotations

from streamscope.lint.rule import Rule, rule

_NO_CHUNK = "gets no chunk, and its stream helper raises (measured: {})"
_NO_EVENT = "get no event, and get_final_message() raises AssertionError (measured)"

# What the agent CLIs do with a stream they cannot use, shared by the tables that claim it
# (run: tests/realclients). Claude Code asks again without streaming (its retries off, it
# still does); Qwen Code asks again with growing pauses (its maxRetries 0, it still does).
CLAUDE_CODE_AGAIN = (
    "asks again without streaming, to show that answer instead (given the same stream "
    'again, it fails with "API returned an empty or malformed response")'
)
CLAUDE_CODE_NOTHING = "; with nothing to show, it asks once more for a visible answer"
QWEN_AGAIN = "asks again 4 times, 2 to 8 s apart (about 20 s)"
_NO_FINISH = '"Model stream ended without a finish reason"'
_JSON_FAILS = "shows the text before that frame, then fails with the JSON parser's message"

RULES: list[Rule] = [
    rule(
        "framing.zero-frames",
        "error",
        "the response carries no SSE data frame at all",
        "A 200 answer to a streaming request ended without a single data frame.",
        "Send the stream's frames, or answer with an error status and a JSON error body "
        "when there is nothing to stream.",
        {
            "cherry": (
                "empty",
                "receives nothing to render (@ai-sdk/openai-compatible adds an error part: "
                '"Response stream ended without a finish reason")',
            ),
            "openai-python": ("error", _NO_CHUNK.format("AssertionError / RuntimeError")),
            "anthropic-sdk": ("error", _NO_EVENT),
            "strict": ("empty", "dispatches no event"),
            "openai-node": ("error", 'raises "request ended without sending any chunks"'),
            "claude-code": ("error", f"reads no event and {CLAUDE_CODE_AGAIN}"),
            "qwen-code": ("error", f"{QWEN_AGAIN}, then fails with {_NO_FINISH}"),
        },
        source="measured (Python SDKs); real clients and agent CLIs (tests/realclients)",
    ),
    rule(
        "framing.non-sse-body",
        "error",
        "the 200 answer is a whole JSON body, not an SSE stream",
        "A streaming request was answered with status 200 and a plain JSON body instead of "
        "`text/event-stream` frames.",
        "Answer `stream: true` with `Content-Type: text/event-stream` and SSE frames; send "
        "errors as a JSON body with an error status.",
        {
            "openai-python": (
                "empty",
                "yields no chunk from create(stream=True) (a silent empty answer), and "
                "its stream helper raises (measured: AssertionError for Chat, RuntimeError "
                "for Responses)",
            ),
            "anthropic-sdk": ("error", _NO_EVENT),
            "strict": ("error", "fails the connection: the body is not text/event-stream"),
            "cherry": (
                "error",
                '@ai-sdk/openai-compatible reports an error part ("Response stream ended without '
                'a finish reason") and no text; @ai-sdk/openai renders nothing (finish `other`)',
            ),
            "openai-node": (
                "error",
                'raises "request ended without sending any chunks" (or events)',
            ),
            "codex": (
                "error",
                'reads no event and fails with "stream disconnected before completion: stream '
                'closed before response.completed"',
            ),
            "qwen-code": (
                "error",
                'fails at once: "Streaming request received a non-SSE response"',
            ),
        },
        source="broken/README.md (measured); SSE spec; real clients (tests/realclients)",
    ),
    rule(
        "framing.http-error",
        "info",
        "the request failed before streaming",
        "The upstream answered with an HTTP error status and a body instead of a stream: "
        "clients raise the error it carries.",
        "Nothing to fix in the framing; the body should be the error envelope of the "
        "protocol the client speaks.",
        {
            "qwen-code": (
                "degraded",
                "asks again 6 times over about 75 s when the status is a 5xx (measured: 502), "
                "then shows the error",
            )
        },
        source="agent CLIs (tests/realclients)",
    ),
    rule(
        "framing.content-type",
        "error",
        "the stream is not served as `text/event-stream`",
        "The frames arrive with a Content-Type other than `text/event-stream`.",
        "Send `Content-Type: text/event-stream` (with `Cache-Control: no-cache` and "
        "`X-Accel-Buffering: no`).",
        {
            "strict": (
                "error",
                "fails the connection when the Content-Type is not text/event-stream",
            ),
            "qwen-code": (
                "error",
                'fails at once: "Streaming request received a non-SSE response" (measured: '
                "`application/json`)",
            ),
        },
        source="WIRE-CONTRACT.md; SSE spec (EventSource); agent CLIs (tests/realclients)",
    ),
    rule(
        "framing.single-newline",
        "error",
        "frames are separated by a single newline instead of a blank line",
        "By the SSE spec, frames separated by one `\\n` are a single event whose joined "
        "data is not JSON.",
        "End every frame with a blank line (`\\n\\n`).",
        {
            "openai-python": (
                "error",
                "joins them into one event and raises json.JSONDecodeError before any chunk",
            ),
            "cherry": (
                "error",
                "joins them into one event (its SSE parser follows the spec) "
                "that fails to parse: an error part instead of the text",
            ),
            "strict": ("error", "joins them into one event whose data is not JSON"),
            "openai-node": ("error", 'raises "malformed server-sent event JSON" and shows nothing'),
            "qwen-code": (
                "error",
                'fails at the JSON parser ("Unexpected non-whitespace character after JSON"), '
                f"or, when it read no chunk at all, {QWEN_AGAIN}, then fails with {_NO_FINISH}",
            ),
        },
        source="broken/README.md (measured); real clients (tests/realclients)",
    ),
    rule(
        "framing.no-final-blank-line",
        "warning",
        "the last frame is not ended by a blank line",
        "The stream ends without the blank line that dispatches its last frame (which "
        "carries no content here, only the end of the stream).",
        "End the last frame with a blank line too.",
        {
            "cherry": (
                "degraded",
                "never dispatches the last frame, so it misses the end of "
                "the stream (for Anthropic the finish becomes `other`)",
            ),
            "strict": ("degraded", "discards the last event, which no blank line ended"),
        },
    ),
    rule(
        "framing.last-frame-lost",
        "error",
        "the last frame, which carries content, is not ended by a blank line",
        "The stream ends without the blank line that dispatches its last frame, so clients "
        "never see what that frame carries.",
        "End the last frame with a blank line too.",
        {
            "cherry": ("partial", "never dispatches the last frame: what it carries is lost"),
            "openai-python": (
                "partial",
                "never dispatches the last frame (measured: the usage it carried was lost)",
            ),
            "strict": ("partial", "discards the last event, which no blank line ended"),
        },
        source="WIRE-CONTRACT.md; measured (openai-python)",
    ),
    rule(
        "framing.invalid-json",
        "error",
        "a frame's data is not a JSON object",
        "A data frame carries text that does not parse as a JSON object.",
        "Send every payload as one JSON object on one `data:` line.",
        {
            "cherry": ("error", "turns the chunk into an error part and the finish into `error`"),
            "openai-python": ("error", "raises json.JSONDecodeError at that frame"),
            "anthropic-sdk": (
                "error",
                "raise json.JSONDecodeError at that frame (when it has an `event:` line other "
                "than `ping`: they drop the others unread)",
            ),
            "strict": ("error", "cannot parse the payload"),
            "openai-node": ("error", 'raises "malformed server-sent event JSON" and shows nothing'),
            "claude-code": ("error", f"fails at that frame (SyntaxError) and {CLAUDE_CODE_AGAIN}"),
            "qwen-code": ("error", _JSON_FAILS),
        },
        source="WIRE-CONTRACT.md; measured (Python SDKs); real clients (tests/realclients)",
    ),
    rule(
        "framing.comment-as-data",
        "error",
        "an SSE comment (keepalive) was re-emitted as a `data:` line",
        "A keepalive that should be a comment line (`: keepalive`) arrives as data, which "
        "clients try to parse as a payload.",
        "Forward comments as comments (`: keepalive`), never as `data:`.",
        {
            "strict": ("error", "crashes on data that is not JSON"),
            "openai-python": ("error", "raises json.JSONDecodeError at that frame"),
            "cherry": ("error", "turns the chunk into an error part"),
            "openai-node": ("error", 'raises "malformed server-sent event JSON" and shows nothing'),
            "qwen-code": ("error", _JSON_FAILS),
        },
        source="WIRE-CONTRACT.md; measured (openai-python); real clients (tests/realclients)",
    ),
    rule(
        "framing.multiline-data",
        "warning",
        "a JSON payload is split over several `data:` lines",
        "A payload spread over several `data:` lines is legal SSE (spec parsers join the "
        "lines) but breaks the contract's JSON-on-one-line rule that line-based readers need.",
        "Serialise every payload as compact single-line JSON.",
    ),
    rule(
        "framing.event-type-mismatch",
        "warning",
        "an `event:` line differs from its data's `type`",
        "The `event:` name and the payload's `type` disagree, so clients that dispatch by "
        "one and parse by the other read the frame differently.",
        "Write `event:` equal to the payload's `type`.",
    ),
    rule(
        "framing.missing-type",
        "error",
        "a payload has no `type`",
        "A typed-event payload lacks its `type` field and can only be read by its `event:` name.",
        "Put the event's `type` in every payload.",
        {"cherry": ("error", "rejects the payload with its schema: an error part")},
        source="WIRE-CONTRACT.md; real clients (tests/realclients)",
    ),
    rule(
        "framing.data-after-terminator",
        "warning",
        "frames follow the stream's terminator",
        "Clients stop at the protocol's terminator (`[DONE]`, `message_stop`, `chat.end`), "
        "so anything sent after it is ignored.",
        "Send nothing after the terminator.",
    ),
    rule(
        "framing.invalid-utf8",
        "error",
        "a line is not valid UTF-8",
        "SSE is UTF-8; bytes that are not are replaced (or fail) when decoded.",
        "Encode the stream as UTF-8 and never split a character's bytes inside a line.",
        {"openai-python": ("error", "raises UnicodeDecodeError while reading the stream")},
        source="SSE spec; measured (openai-python)",
    ),
    rule(
        "framing.unknown-field",
        "info",
        "a line has an SSE field name other than data, event, id or retry",
        "The SSE spec tells clients to ignore unknown fields, so what the line carries is lost.",
        "Use only `event:`, `data:`, `id:`, `retry:` and comment lines.",
    ),
    rule(
        "framing.bom",
        "info",
        "the stream starts with a UTF-8 byte order mark",
        "A byte order mark before the first line is allowed by the SSE spec and stripped.",
        "Do not write a byte order mark.",
    ),
    rule(
        "stream.no-content",
        "warning",
        "the stream carries no text, reasoning, tool call or error",
        "The stream is well formed but the upstream sent nothing to show.",
        "Nothing in the framing: check the request (max tokens, stop sequences) and the upstream.",
        {
            **{
                who: (
                    "empty",
                    "have nothing to render" if who == "anthropic-sdk" else "has nothing to render",
                )
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
                'failed"), or drops it when its block never stops (Anthropic)',
            ),
            "qwen-code": (
                "partial",
                "asks again once, then runs the call with the cut arguments closed into JSON "
                '(`"units":"` becomes `"units":""`)',
            ),
        },
        source="WIRE-CONTRACT.md; real clients and agent CLIs (tests/realclients)",
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
        source="issue 18; tests/proxy/test_exchange_no_argument_tools.py runs both helpers",
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
