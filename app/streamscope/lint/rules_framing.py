"""Lint rules for the transport, shared by every protocol (``framing.*``); what a stream
says as a whole is in :mod:`streamscope.lint.rules_stream`."""

from __future__ import annotations

from streamscope.lint.rule import BROKEN, Rule, rule

# the section of the wire contract most framing rules come from
_TRANSPORT = "docs/wire-contract.md#transport-every-protocol"

_NO_EVENT = "gets no event, and get_final_message() raises AssertionError"
_NO_EVENT_NODE = 'gets no event and raises "request ended without sending any chunks"'
_NO_COMPLETED = (
    'responses.stream() raises RuntimeError ("Didn\'t receive a `response.completed` event.")'
)
_NOTHING = "receives nothing to render (the finish is `other`)"
_CODEX_CLOSED = '"stream disconnected before completion: stream closed before response.completed"'
_NO_OUTPUT = 'fails with AI_NoOutputGeneratedError ("No output generated"): no text'

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
            "cherry": ("empty", _NOTHING),
            "cherry-compatible": (
                "error",
                'receives nothing, and reports an error part ("Response stream ended without a '
                'finish reason")',
            ),
            "cherry-anthropic": ("error", _NO_OUTPUT),
            "openai-python-chat": (
                "error",
                "gets no chunk, and chat.completions.stream() raises AssertionError",
            ),
            "openai-python-responses": ("error", f"gets no event, and {_NO_COMPLETED}"),
            "anthropic-python": ("error", _NO_EVENT),
            "anthropic-node": ("error", _NO_EVENT_NODE),
            "strict": ("empty", "dispatches no event"),
            "openai-node": ("error", 'raises "request ended without sending any chunks"'),
            "claude-code": ("error", f"reads no event and {CLAUDE_CODE_AGAIN}"),
            "codex": ("error", f"reads no event and fails with {_CODEX_CLOSED}"),
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
            "openai-python-chat": (
                "empty",
                "yields no chunk from create(stream=True) (a silent empty answer), and "
                "chat.completions.stream() raises AssertionError",
            ),
            "openai-python-responses": ("error", f"gets no event, and {_NO_COMPLETED}"),
            "anthropic-python": ("error", _NO_EVENT),
            "anthropic-node": ("error", _NO_EVENT_NODE),
            "strict": ("error", "fails the connection: the body is not text/event-stream"),
            "cherry": ("empty", _NOTHING),
            "cherry-compatible": (
                "error",
                'reports an error part ("Response stream ended without a finish reason") and no '
                "text",
            ),
            "cherry-anthropic": ("error", _NO_OUTPUT),
            "openai-node": (
                "error",
                'raises "request ended without sending any chunks" (or events)',
            ),
            "codex": ("error", f"reads no event and fails with {_CODEX_CLOSED}"),
            "qwen-code": (
                "error",
                'fails at once: "Streaming request received a non-SSE response"',
            ),
        },
        source=f"{BROKEN} (measured); SSE spec; real clients (tests/realclients)",
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
        source=f"{_TRANSPORT}; SSE spec (EventSource); agent CLIs (tests/realclients)",
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
                "joins them into one event and raises json.JSONDecodeError before any chunk "
                "(with no blank line at all, it gets no event, and its helper raises)",
            ),
            "cherry": (
                "error",
                "joins them into one event (its SSE parser follows the spec) that fails to "
                "parse: an error part instead of the text (with no blank line at all, nothing)",
            ),
            "anthropic-python": (
                "error",
                "joins them into one event and raises json.JSONDecodeError before any event",
            ),
            "anthropic-node": (
                "error",
                'joins them into one event and fails at the JSON parser ("Unexpected '
                'non-whitespace character after JSON")',
            ),
            "claude-code": (
                "error",
                f"fails at the one event they are joined into and {CLAUDE_CODE_AGAIN}",
            ),
            "codex": ("error", f"reads no event it can use and fails with {_CODEX_CLOSED}"),
            "strict": ("error", "joins them into one event whose data is not JSON"),
            "openai-node": ("error", 'raises "malformed server-sent event JSON" and shows nothing'),
            "qwen-code": (
                "error",
                'fails at the JSON parser ("Unexpected non-whitespace character after JSON"), '
                f"or, when it read no chunk at all, {QWEN_AGAIN}, then fails with {_NO_FINISH}",
            ),
        },
        source=f"{BROKEN} (measured); real clients (tests/realclients)",
    ),
    rule(
        "framing.no-final-blank-line",
        "warning",
        "the last frame is not ended by a blank line",
        "The stream ends without the blank line that dispatches its last frame, which "
        "carries no content here: only the end of the stream, its usage or its finish.",
        "End the last frame with a blank line too.",
        {
            "cherry": ("degraded", "never dispatches the last frame: the usage it carries is lost"),
            "cherry-responses": (
                "degraded",
                "never dispatches the last frame, so it misses the end of the stream: the usage "
                "is lost and the finish becomes `other`",
            ),
            "cherry-anthropic": (
                "degraded",
                "never dispatches the last frame, so it misses the end of the stream: the usage "
                "is lost and the finish becomes `other`",
            ),
            "openai-python-chat": (
                "degraded",
                "never dispatches the last frame: the usage it carries is lost",
            ),
            "strict": ("degraded", "discards the last event, which no blank line ended"),
        },
        source=f"{_TRANSPORT}; real clients (tests/realclients)",
    ),
    rule(
        "framing.last-frame-lost",
        "error",
        "the last frame, which carries content, is not ended by a blank line",
        "The stream ends without the blank line that dispatches its last frame, so clients "
        "never see what that frame carries.",
        "End the last frame with a blank line too.",
        {
            **{
                who: ("partial", "never dispatches the last frame: what it carries is lost")
                for who in ("cherry", "openai-python", "anthropic-python")
            },
            "strict": ("partial", "discards the last event, which no blank line ended"),
        },
        source=f"{_TRANSPORT}; real clients (tests/realclients)",
    ),
    rule(
        "framing.invalid-json",
        "error",
        "a frame's data is not a JSON object",
        "A data frame carries text that does not parse as a JSON object.",
        "Send every payload as one JSON object on one `data:` line.",
        {
            "cherry": ("error", "turns the frame into an error part (AI_JSONParseError)"),
            "cherry-responses": (
                "error",
                "turns the frame into an error part (AI_JSONParseError), and the finish into "
                "`error`",
            ),
            "openai-python": ("error", "raises json.JSONDecodeError at that frame"),
            "anthropic-python": (
                "error",
                "raises json.JSONDecodeError at that frame (when it has an `event:` line other "
                "than `ping`: it drops the others unread)",
            ),
            "anthropic-node": (
                "error",
                "fails at that frame with the JSON parser's message (when it has an `event:` "
                "line other than `ping`: it drops the others unread)",
            ),
            "strict": ("error", "cannot parse the payload"),
            "openai-node": ("error", 'raises "malformed server-sent event JSON" and shows nothing'),
            "claude-code": ("error", f"fails at that frame (SyntaxError) and {CLAUDE_CODE_AGAIN}"),
            "qwen-code": ("error", _JSON_FAILS),
        },
        source=f"{_TRANSPORT}; measured (Python SDKs); real clients (tests/realclients)",
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
            "cherry": ("error", "turns the frame into an error part (AI_JSONParseError)"),
            "openai-node": ("error", 'raises "malformed server-sent event JSON" and shows nothing'),
            "qwen-code": ("error", _JSON_FAILS),
        },
        source="docs/wire-contract.md#openai-chat-completions; measured (openai-python); "
        "real clients (tests/realclients)",
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
        {"cherry-anthropic": ("error", "rejects the payload with its schema: an error part")},
        source="docs/wire-contract.md#anthropic-messages; real clients (tests/realclients)",
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
        {
            **{
                who: ("error", "raises UnicodeDecodeError while reading the stream")
                for who in ("openai-python", "anthropic-python")
            },
            "codex": (
                "error",
                'fails at that line ("stream disconnected before completion: UTF8 error: '
                'invalid utf-8 sequence …")',
            ),
        },
        source="SSE spec; measured (openai-python); real clients (tests/realclients)",
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
]
