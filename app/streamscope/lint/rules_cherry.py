"""What Cherry Studio's built-in DeepSeek, Grok (xAI) and OpenRouter providers, and its
Azure OpenAI type on Chat Completions, do on the rules of Chat streams: merged into those
rules by :mod:`streamscope.lint.rules` (:func:`merged`), so that each rule table stays one
page.

Each was run as Cherry Studio runs it, through its provider layer (@cherrystudio/ai-core
2.0.1's ``streamText`` with the provider's id: @ai-sdk/deepseek 2.0.69, @ai-sdk/xai
3.0.138, @openrouter/ai-sdk-provider 2.10.0, @ai-sdk/azure 3.0.128), over every rule's
example and every recording, beside Cherry Studio's OpenAI type (@ai-sdk/openai's
``.chat()``) (``tests/realclients``). Where one did what the OpenAI type does (the same
error, text, calls and finish), it takes that claim and its words (:data:`AS_OPENAI`);
Azure's chat path (@ai-sdk/openai 3.0.120's chat model, inside @ai-sdk/azure) did so on
every stream but a refusal. Where one did otherwise, :data:`CLAIMS` says what it did.
"""

from __future__ import annotations

import dataclasses

from streamscope.lint.rule import Break, Rule
from streamscope.lint.rules_chat import SCHEMA
from streamscope.lint.rules_gemini import Claims

OPENAI, AZURE = "cherry-openai", "cherry-azure"
DEEPSEEK, XAI, OPENROUTER = "cherry-deepseek", "cherry-xai", "cherry-openrouter"

_FRAMING = frozenset(
    {
        "framing.comment-as-data",
        "framing.error-envelope",
        "framing.invalid-json",
        "framing.last-frame-lost",
        "framing.no-final-blank-line",
        "framing.single-newline",
        "framing.zero-frames",
        "chat.malformed-chunk",
        "chat.missing-choices",
        "chat.missing-finish-reason",
        "stream.no-content",
        "provider.content-filter",
        "provider.length",
    }
)
"""Where all three built-in providers read the stream as the OpenAI type does."""
_CALLS = frozenset(
    {"chat.tool-call-missing-name", "stream.tool-call-without-name", "framing.non-sse-body"}
)

AS_OPENAI: dict[str, frozenset[str]] = {
    DEEPSEEK: _FRAMING
    | _CALLS
    | {
        "chat.message-in-chunk",
        "provider.length-in-tool-call",
        "stream.truncated-tool-json",
        "stream.upstream-error",
    },
    XAI: _FRAMING | {"chat.missing-choice-index"},
    OPENROUTER: _FRAMING | _CALLS | {"chat.message-in-chunk", "stream.upstream-error"},
}
"""The rules on which each provider takes the OpenAI type's claim (and ``shows``); Azure
takes it on every rule (its own claims in :data:`CLAIMS` win)."""

_EXPECTED = 'throws "Expected {}" at {} and ends the stream: no call'
_NOT_JSON = (
    'reads the body as one JSON answer, not a stream, and fails with AI_APICallError ("Invalid '
    'JSON response")'
)
_USAGE = "rejects the usage chunk with its schema (AI_TypeValidationError): an error part"
_NO_REFUSAL = "shows an empty answer with the finish `stop`: it does not read the `refusal` field"

CLAIMS: dict[str, Claims] = {
    "framing.content-type": Claims({XAI: ("error", _NOT_JSON)}),
    "framing.non-sse-body": Claims({XAI: ("error", _NOT_JSON)}),
    "chat.unexpected-object": Claims({DEEPSEEK: ("error", SCHEMA)}),
    "chat.azure-prompt-filter": Claims(
        {
            DEEPSEEK: (
                "error",
                "rejects that chunk with its schema (AI_TypeValidationError): an error part "
                "before the text",
            )
        }
    ),
    "chat.message-in-chunk": Claims({XAI: ("error", f"{SCHEMA} (its schema needs `delta`)")}),
    "chat.usage-fields": Claims({XAI: ("error", _USAGE), OPENROUTER: ("error", _USAGE)}),
    "chat.tool-call-missing-id": Claims(
        {DEEPSEEK: ("error", _EXPECTED.format("'id' to be a string", "a new call without one"))}
    ),
    "chat.tool-call-missing-type": Claims(
        {OPENROUTER: ("error", _EXPECTED.format("'function' type", "a new call without it"))}
    ),
    "chat.tool-call-fields": Claims(
        {
            DEEPSEEK: ("error", _EXPECTED.format("'id' to be a string", "that delta")),
            OPENROUTER: ("error", _EXPECTED.format("'function' type", "that delta")),
        }
    ),
    "chat.tool-index-reused": Claims(
        {
            DEEPSEEK: (
                "error",
                "joins the second call's arguments to the first's and reports that call with "
                'an error part ("Invalid input for tool …: JSON parsing failed")',
            ),
            OPENROUTER: ("partial", "keeps the first call and drops the second"),
        }
    ),
    "stream.truncated-tool-json": Claims(
        {OPENROUTER: ("partial", "hands the call over with its arguments as `{}`: they are lost")}
    ),
    "provider.length-in-tool-call": Claims(
        {OPENROUTER: ("partial", "drops that call, and shows the text before it")}
    ),
    "provider.refusal": Claims(
        shows=dict.fromkeys((DEEPSEEK, XAI, OPENROUTER, AZURE), _NO_REFUSAL)
    ),
    "stream.upstream-error": Claims(
        shows={
            XAI: "rejects the error chunk with its schema: an error part (AI_TypeValidationError) "
            "that quotes the upstream's error, and the finish `other` after the text before it"
        }
    ),
}
"""What each did where it did not do what the OpenAI type does."""


def merged(r: Rule) -> Rule:
    """``r`` with these providers' claims on it: the OpenAI type's where one reads the
    stream as it does (:data:`AS_OPENAI`; Azure on every rule), then their own."""
    breaks, shows = dict(r.breaks), dict(r.shows)
    for who in (AZURE, *AS_OPENAI):
        if who == AZURE or r.id in AS_OPENAI[who]:
            if OPENAI in r.breaks:
                breaks[who] = r.breaks[OPENAI]
            if OPENAI in r.shows:
                shows[who] = r.shows[OPENAI]
    said = CLAIMS.get(r.id, Claims())
    breaks.update({who: Break(*b) for who, b in said.breaks.items()})
    shows.update(said.shows)
    if breaks == r.breaks and shows == r.shows:
        return r
    return dataclasses.replace(r, breaks=breaks, shows=shows)
