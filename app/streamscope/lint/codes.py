"""Decoder finding codes -> lint rules.

The codecs' tolerant decoders already notice most of what breaks the wire contract (their
:class:`~streamscope.findings.Finding` codes). The linter does not check those again: it
maps each code to the rule that explains it. A code maps to ``None`` where a structural
check of the linter covers it more precisely (it counts every frame, where the decoder
notes once). The table is keyed by code, by ``protocol:code`` where a code means
different things per protocol, and by ``code/severity`` where one code has two meanings.
"""

from __future__ import annotations

import json

from streamscope.findings import Finding

FALLBACK_RULE = "stream.decoder-finding"
"""For a decoder code this table does not know (tests keep the table complete)."""

_TERMINATOR = "framing.data-after-terminator"

CODE_RULES: dict[str, str | None] = {
    # transport (wire.SSEDecoder and the shared StreamDecoder)
    "bom": "framing.bom",
    "invalid-utf8": "framing.invalid-utf8",
    "unknown-field": "framing.unknown-field",
    "unterminated-final-frame": None,  # checks_framing: lost content or only the end
    "frames-joined-by-single-newline": "framing.single-newline",
    "invalid-json": "framing.invalid-json",  # or framing.comment-as-data, see rule_for()
    "not-an-object": "framing.invalid-json",
    "event-type-mismatch": "framing.event-type-mismatch",
    "missing-type/warning": "framing.missing-type",
    "data-after-done": _TERMINATOR,
    "duplicate-done": _TERMINATOR,
    "data-after-end": _TERMINATOR,
    "event-after-stop": _TERMINATOR,
    "invalid-server-tool-input": "stream.truncated-tool-json",
    "openai-chat:missing-terminator": "chat.missing-done",
    "anthropic:missing-terminator": "anthropic.missing-message-stop",
    "responses:missing-terminator": "responses.missing-terminal",
    "lmstudio:missing-terminator": "lmstudio.missing-chat-end",
    "anthropic:missing-event-line": None,  # checks_anthropic: all frames or some
    "lmstudio:missing-event-line": "lmstudio.missing-event-line",
    # OpenAI Chat
    "azure-prompt-filter": "chat.azure-prompt-filter",
    "unexpected-object": "chat.unexpected-object",
    "id-changed": "chat.id-changed",
    "missing-id": "chat.first-chunk-fields",
    "missing-model": "chat.first-chunk-fields",
    "missing-choices": "chat.missing-choices",
    "missing-choice-index": "chat.missing-choice-index",
    "invalid-chunk": "chat.malformed-chunk",
    "invalid-choice": "chat.malformed-chunk",
    "invalid-choices": "chat.malformed-chunk",
    "invalid-content": "chat.malformed-chunk",
    "invalid-reasoning": "chat.malformed-chunk",
    "invalid-refusal": "chat.malformed-chunk",
    "invalid-tool-call": "chat.malformed-chunk",
    "invalid-tool-calls": "chat.malformed-chunk",
    "invalid-finish-reason": "chat.malformed-chunk",
    "unknown-content-part": "chat.malformed-chunk",
    "message-in-chunk": "chat.message-in-chunk",
    "content-after-finish": "chat.content-after-finish",
    "tool-call-index-not-dense": "chat.tool-index-not-dense",
    "tool-call-index-reused": "chat.tool-index-reused",
    "tool-call-missing-id": "chat.tool-call-missing-id",
    "tool-call-missing-type": "chat.tool-call-missing-type",
    "tool-call-missing-name": "chat.tool-call-missing-name",
    "tool-call-missing-index": "chat.tool-call-fields",
    "tool-call-arguments-not-string": "chat.tool-call-fields",
    "missing-finish-reason": "chat.missing-finish-reason",
    "duplicate-finish": "chat.duplicate-finish",
    "unknown-finish-reason": "chat.unknown-finish-reason",
    "legacy-function-call": "chat.nonstandard-field",
    "unknown-delta-field": "chat.nonstandard-field",
    "reasoning-outside-completion-tokens": "chat.reasoning-tokens",
    # Anthropic
    "foreign-terminator": "anthropic.foreign-terminator",
    "duplicate-message-start": "anthropic.message-order",
    "missing-message-delta": "anthropic.message-order",
    "missing-stop-reason": "anthropic.message-order",
    "unexpected-content": "anthropic.unexpected-content",
    "unknown-stop-reason": "anthropic.unknown-stop-reason",
    "missing-index": "anthropic.missing-index",
    "delta-before-start": "anthropic.delta-before-start",
    "delta-kind-mismatch": "anthropic.block-order",
    "missing-content-block-stop": "anthropic.block-order",
    "stop-without-start": "anthropic.block-order",
    "unknown-event-type": "anthropic.unknown-event-type",
    "unknown-delta-type": "anthropic.unknown-delta-type",
    "anthropic:missing-field/error": "anthropic.malformed-event",
    "anthropic:missing-field": "anthropic.missing-field",
    "anthropic:missing-usage": "anthropic.delta-without-usage",  # message_start: rule_for()
    # Responses
    "done-sentinel": "responses.done-sentinel",
    "missing-sequence-number": None,  # checks_responses: error events vs the others
    "sequence-not-increasing": "responses.sequence-not-increasing",
    "sequence-gap": "responses.sequence-gap",
    "missing-response-id": "responses.lifecycle-fields",
    "response-id-changed": "responses.response-id-changed",
    "missing-created": "responses.missing-created",
    "missing-response": "responses.malformed-event",
    "responses:missing-type/error": "responses.malformed-event",
    "responses:missing-field": "responses.malformed-event",
    "responses:missing-usage": None,  # checks_responses: usage fields
    "missing-item-id": None,  # checks_responses: text deltas vs other content events
    "item-id-changed": "responses.item-id-changed",
    "content-before-item": "responses.content-before-item",
    "invalid-item": "responses.malformed-event",
    "invalid-delta": "responses.malformed-event",
    "duplicate-output-index": "responses.duplicate-output-index",
    "done-before-added": "responses.done-before-added",
    "item-not-done": None,  # checks_responses: every item, not only server-side ones
    "item-only-in-final": "responses.done-mismatch",
    "done-text-mismatch": "responses.done-mismatch",
    "unknown-event": "responses.unknown-event",
    # LM Studio
    "missing-chat-start": "lmstudio.chat-start-order",
    "duplicate-chat-start": "lmstudio.chat-start-order",
    "lmstudio:missing-type/error": "lmstudio.malformed-event",
    "lmstudio:invalid-field/error": "lmstudio.malformed-event",
    "lmstudio:invalid-field": "lmstudio.missing-field",
    "lmstudio:missing-field": "lmstudio.missing-field",
    "unknown-event:": "lmstudio.unknown-event",  # unknown-event:<type>
    "unknown-output": "lmstudio.unknown-event",
    "missing-part-start": "lmstudio.part-order",
    "duplicate-part-start": "lmstudio.part-order",
    "unmatched-part-end": "lmstudio.part-order",
    "unclosed-part": "lmstudio.part-order",
    "missing-tool-start": "lmstudio.tool-call-order",
    "missing-tool-arguments": "lmstudio.tool-call-order",
    "missing-tool-result": "lmstudio.tool-call-order",
    "client-call-result": "lmstudio.tool-call-order",
    "tool-name-changed": "lmstudio.tool-call-order",
    "chat-end-differs": "lmstudio.chat-end-differs",
    "content-from-chat-end": "lmstudio.chat-end-differs",
    "duplicate-error": "lmstudio.duplicate-error",
    # Gemini (its decoder shares some codes with Chat's, meaning its own fields)
    "gemini:missing-terminator": None,  # checks_gemini: a stream ending in a call or not
    "gemini:bom": "gemini.bom",  # google-genai reads lines: a BOM breaks it
    "gemini:not-an-object": "gemini.malformed-candidate",
    "gemini:invalid-candidates": "gemini.malformed-chunk",
    "gemini:invalid-candidate": "gemini.malformed-candidate",
    "gemini:invalid-part": "gemini.malformed-part",
    "gemini:invalid-signature": "gemini.malformed-part",
    "gemini:invalid-finish-reason": "gemini.malformed-part",
    "gemini:invalid-text": "gemini.text-not-string",
    "gemini:invalid-args": "gemini.args-not-object",
    "gemini:missing-candidates": "gemini.missing-candidates",
    "gemini:missing-id": "gemini.first-chunk-fields",
    "gemini:missing-model": "gemini.first-chunk-fields",
    "gemini:content-after-finish": "gemini.content-after-finish",
    "gemini:unexpected-role": "gemini.unexpected-role",
    "gemini:unknown-finish-reason": "gemini.unknown-finish-reason",
    "gemini:duplicate-finish": "gemini.duplicate-finish",
    "gemini:invalid-partial-args": "gemini.partial-args",
    "gemini:unended-call": "gemini.partial-args",
    "gemini:tool-call-missing-name": None,  # checks_stream: stream.tool-call-without-name
}

_COMMENT_WORDS = frozenset({"", "keepalive", "keep-alive", "ping", "heartbeat"})


def looks_like_comment(data: str) -> bool:
    """Data that is an SSE comment (or a bare keepalive word) re-emitted as ``data:``."""
    text = data.strip()
    return text.startswith(":") or text.lower() in _COMMENT_WORDS


def rule_for(protocol: str, finding: Finding, data: str | None = None) -> str | None:
    """The rule a decoder finding maps to (None: a structural check covers it).

    ``data`` is the data of the frame the finding points at, for the codes whose rule
    depends on it.
    """
    code = finding.code
    if code.startswith("unknown-event:"):
        code = "unknown-event:"
    keys = (
        f"{protocol}:{code}/{finding.severity}",
        f"{protocol}:{code}",
        f"{code}/{finding.severity}",
        code,
    )
    key = next((k for k in keys if k in CODE_RULES), None)
    if key is None:
        return FALLBACK_RULE
    rule = CODE_RULES[key]
    if rule == "framing.invalid-json" and data is not None and looks_like_comment(data):
        return "framing.comment-as-data"
    if rule == "anthropic.delta-without-usage" and _type_of(data) == "message_start":
        return "anthropic.start-without-usage"
    return rule


def _type_of(data: str | None) -> object:
    try:
        payload = json.loads(data or "")
    except ValueError:
        return None
    return payload.get("type") if isinstance(payload, dict) else None
