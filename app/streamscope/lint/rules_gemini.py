"""Lint rules of the Gemini ``streamGenerateContent`` stream (``gemini.*``), and what the
Gemini clients do on the rules every protocol shares (:data:`SHARED`, merged into those
rules by :mod:`streamscope.lint.rules`, so that the shared tables stay one page each).

Every claim was seen by running the clients over the rules' examples
(``tests/lint/gemini_cases.py``, proven in ``tests/realclients``): google-genai 3.6.1's
generate_content_stream(), @google/genai 3.3.0's generateContentStream() and ai 6.0.326
with @ai-sdk/google 3.0.141 (Cherry Studio's Gemini provider type), and Gemini CLI 0.61.0
(``gemini -p``, one attempt per request, as "Run in real clients" runs it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from streamscope.lint.rule import Effect, Rule, rule

PY, NODE, CHERRY, CLI = "google-genai-python", "google-genai-node", "cherry-gemini", "gemini-cli"
_RUN = "google-genai, @google/genai, @ai-sdk/google and Gemini CLI (tests/realclients)"
_NOT_JSON = 'raises UnknownApiResponseError ("Failed to parse response as JSON")'
_SCHEMA = 'rejects the chunk with its schema ("Type validation failed"): an error part'
_VALIDATION = "raises pydantic's ValidationError at that chunk, and the stream ends there"
_UNENDED = 'throws "Incomplete JSON segment at the end", after the chunks before it'
_CLI_CUT = 'fails with "[API Error: Incomplete JSON segment at the end]"'
_CLI_PARSE = 'fails at that frame ("[API Error: {} …]"), after the text before it'
_NO_FINISH = '"Model stream ended without a finish reason."'


@dataclass(frozen=True, slots=True)
class Claims:
    """What the Gemini clients do on a shared rule: ``breaks`` and ``shows`` as in
    :func:`~streamscope.lint.rule.rule`; the rule then speaks Gemini too."""

    breaks: Mapping[str, tuple[Effect, str]] = field(default_factory=dict)
    shows: Mapping[str, str] = field(default_factory=dict)


SHARED: dict[str, Claims] = {
    "framing.zero-frames": Claims(
        {
            PY: ("error", f"reads the keepalive comment as JSON and {_NOT_JSON}"),
            NODE: ("empty", "yields no chunk and raises nothing"),
            CHERRY: ("empty", "receives nothing to render (the finish is `other`)"),
            CLI: ("error", _CLI_CUT),
        }
    ),
    "framing.non-sse-body": Claims(
        {
            PY: ("empty", "yields no chunk from the body and raises nothing: an empty answer"),
            NODE: ("error", _UNENDED.split(",")[0]),
            CHERRY: ("empty", "receives nothing to render (the finish is `other`)"),
            CLI: ("error", _CLI_CUT),
        }
    ),
    "framing.single-newline": Claims(
        {
            PY: ("error", f"reads the joined frames as one and {_NOT_JSON}"),
            NODE: (
                "error",
                'throws SyntaxError ("Unexpected non-whitespace character after JSON")',
            ),
            CHERRY: ("error", "turns the joined frames into an error part (AI_JSONParseError)"),
            CLI: ("error", f"{_CLI_CUT}, showing nothing"),
        }
    ),
    "framing.last-frame-lost": Claims(
        {
            NODE: ("error", _UNENDED),
            CHERRY: ("partial", "never dispatches the last frame: what it carries is lost"),
            CLI: ("error", f"{_CLI_CUT}, after the text before it"),
        }
    ),
    "framing.invalid-json": Claims(
        {
            PY: ("error", f"{_NOT_JSON} at that frame"),
            NODE: ("error", "throws SyntaxError at that frame"),
            CHERRY: ("error", "turns the frame into an error part (AI_JSONParseError)"),
            CLI: ("error", _CLI_PARSE.format("Expected property name")),
        }
    ),
    "framing.comment-as-data": Claims(
        {
            PY: ("error", f"{_NOT_JSON} at that frame"),
            NODE: ("error", "throws SyntaxError at that frame"),
            CHERRY: ("error", "turns the frame into an error part (AI_JSONParseError)"),
            CLI: ("error", _CLI_PARSE.format("Unexpected token ':'")),
        }
    ),
    "stream.tool-call-without-name": Claims(
        {
            PY: ("garbled", "hands the call over with `name` None: the app cannot dispatch it"),
            NODE: ("garbled", "hands the call over with no `name`: the app cannot dispatch it"),
            CHERRY: (
                "empty",
                "drops the call without a word (finish `stop`): with nothing else, it shows "
                'nothing (a name of "" it hands over as it is)',
            ),
            CLI: ("garbled", "names the call `generic_tool`, a tool that does not exist"),
        }
    ),
    "stream.no-content": Claims(
        {
            CLI: (
                "error",
                'fails with "The model returned an empty response with no text or thoughts…" '
                f"(a blocked prompt: {_NO_FINISH})",
            )
        }
    ),
    "stream.upstream-error": Claims(
        shows={
            PY: "raises ServerError with the upstream's status and message, after the text "
            "before it",
            NODE: 'throws ApiError ("got status: INTERNAL" and the error), after the text '
            "before it",
            CHERRY: "reports an error part (AI_APICallError with the upstream's message) and "
            "finish `error`, after the text before it",
            CLI: f"reports only {_NO_FINISH} (and exits 0), never the upstream's message, "
            "after the text before it",
        }
    ),
    "provider.length": Claims(
        shows={
            PY: "hands over the text, with the finish `MAX_TOKENS`",
            NODE: "hands over the text, with the finish `MAX_TOKENS`",
            CHERRY: "shows the text, with the finish `length`",
            CLI: "shows the text without a word of the cut",
        }
    ),
    "provider.content-filter": Claims(
        shows={
            PY: "hands over the text before the filter, with the finish Google sent (`SAFETY`, "
            "or a blocked prompt's `blockReason`)",
            NODE: "hands over the text before the filter, with the finish Google sent "
            "(`SAFETY`, or a blocked prompt's `blockReason`)",
            CHERRY: "shows the text before the filter, with the finish `content-filter`",
            CLI: "shows the text before the filter without a word of it",
        }
    ),
}
"""The Gemini clients' claims on shared rules, by rule id."""


RULES: list[Rule] = [
    rule(
        "gemini.missing-finish-reason",
        "error",
        "the stream ends before a chunk with a `finishReason`, with no function call",
        "A Gemini stream has no terminator: the chunk that carries the `finishReason` is its "
        "last, and this stream ended without one (cut off, or a server that never says why "
        "it stopped).",
        "Send the last chunk with the candidate's `finishReason` (`STOP`, `MAX_TOKENS`, …).",
        {
            PY: ("degraded", "shows the answer so far with no finish reason"),
            NODE: ("degraded", "shows the answer so far with no finish reason"),
            CHERRY: ("degraded", "shows the answer so far with the finish `other`"),
            CLI: ("error", f"shows the text, then reports {_NO_FINISH} (and exits 0)"),
        },
        source=_RUN,
    ),
    rule(
        "gemini.call-without-finish-reason",
        "warning",
        "the stream ends after a function call, before a chunk with a `finishReason`",
        "The chunk with the `finishReason` is a stream's last, and this one ended without it "
        "after a function call: Gemini CLI takes the call as the answer's end and runs it.",
        "Send the last chunk with the candidate's `finishReason` (`STOP` after a call).",
        {
            PY: ("degraded", "hands the call over with no finish reason"),
            NODE: ("degraded", "hands the call over with no finish reason"),
            CHERRY: ("degraded", "hands the call over with the finish `other`"),
        },
        source=_RUN,
    ),
    rule(
        "gemini.malformed-chunk",
        "error",
        "a chunk's `candidates` is not an array",
        "Every chunk of a Gemini stream is one GenerateContentResponse, whose `candidates` is "
        "an array (one candidate, unless the request asked for more).",
        "Send `candidates` as an array, even of one candidate.",
        {
            PY: (
                "error",
                'raises TypeError ("string indices must be integers") at that chunk, and the '
                "stream ends there",
            ),
            CHERRY: ("error", f"{_SCHEMA}, and that chunk's content is lost"),
            CLI: (
                "error",
                'fails at that chunk ("[API Error: chunk?.candidates?.find is not a function]")',
            ),
        },
        source=_RUN,
    ),
    rule(
        "gemini.malformed-candidate",
        "error",
        "a chunk or one of its candidates is not a JSON object",
        "Every chunk is a GenerateContentResponse object and every candidate an object; "
        "google-genai and @google/genai skip what is not one.",
        "Send every chunk and every candidate as a JSON object.",
        {CHERRY: ("error", f"{_SCHEMA}, and that chunk's content is lost")},
        source=_RUN,
    ),
    rule(
        "gemini.malformed-part",
        "error",
        "a part is not a JSON object, or a `thoughtSignature` or `finishReason` is no string",
        "A candidate's `parts` are objects, and a part's `thoughtSignature` and a "
        "candidate's `finishReason` are strings.",
        "Send parts as objects, `thoughtSignature` as base64 text and `finishReason` as "
        "its enum's name.",
        {
            PY: ("error", f"{_VALIDATION} (a `finishReason` no string: AttributeError)"),
            CHERRY: ("error", _SCHEMA),
        },
        source=_RUN,
    ),
    rule(
        "gemini.text-not-string",
        "error",
        "a part's `text` is not a string",
        "A text part's `text` is a string; this one is a number, an object or null.",
        "Send the text as a string.",
        {
            PY: ("error", f'{_VALIDATION} ("Input should be a valid string")'),
            NODE: ("garbled", "adds the value to the text as it is (`42` shows as digits)"),
            CHERRY: ("error", f"{_SCHEMA}, and that chunk's text is lost"),
            CLI: ("garbled", "adds the value to the text as it is (`42` shows as digits)"),
        },
        source=_RUN,
    ),
    rule(
        "gemini.args-not-object",
        "error",
        "a function call's `args` is not a JSON object",
        "A `functionCall`'s `args` is an object of the arguments; this one is something else, "
        "such as the arguments as a string of JSON (as OpenAI's `arguments` are).",
        "Send `args` as a JSON object (parse a string of JSON before sending it).",
        {
            PY: ("error", f'{_VALIDATION} ("Input should be a valid dictionary")'),
            NODE: (
                "garbled",
                "hands the call over with `args` as it came: a string where the app reads an "
                "object",
            ),
        },
        source=_RUN,
    ),
    rule(
        "gemini.sse-comment",
        "error",
        "the stream carries an SSE comment line (a keepalive)",
        "A comment line (`: keepalive`) is legal SSE and every SSE parser skips it, but "
        "google-genai reads any line that is not `data: ` as part of a JSON error body.",
        "Send no comment lines to Gemini clients (keep the connection alive with the "
        "stream's own chunks).",
        {
            PY: ("error", f"{_NOT_JSON} at the comment, which it reads as JSON"),
            CLI: ("error", f"{_CLI_CUT}, after the text before the comment"),
        },
        source=_RUN,
    ),
    rule(
        "gemini.sse-fields",
        "error",
        "the stream carries `event:` or `id:` lines",
        "A Gemini stream is `data:` lines only; an `event:` or `id:` line is legal SSE, but "
        "the Google SDKs read lines, not SSE events.",
        "Send each chunk as one `data: ` line and a blank line, with no other field.",
        {
            PY: ("error", f"{_NOT_JSON} at the first such line, which it reads as JSON"),
            NODE: ("empty", "yields no chunk and raises nothing"),
            CLI: ("error", f"{_CLI_CUT}, showing nothing"),
        },
        source=_RUN,
    ),
    rule(
        "gemini.data-without-space",
        "error",
        "a `data:` line has no space after the colon",
        "`data:{…}` is legal SSE (the space is optional), but google-genai strips only "
        "`data: ` with its space and reads the rest as a JSON error body.",
        "Write `data: ` with one space before the JSON.",
        {
            PY: ("error", f"reads the line, `data:` and all, as JSON and {_NOT_JSON}"),
            CLI: ("error", f"{_CLI_CUT}, showing nothing"),
        },
        source=_RUN,
    ),
    rule(
        "gemini.bom",
        "error",
        "the stream starts with a byte order mark",
        "An SSE parser drops a leading BOM, but google-genai reads lines as they come: the "
        "first `data: ` line then starts with the BOM.",
        "Send the stream without a BOM.",
        {PY: ("error", f"reads the first line, BOM and all, and {_NOT_JSON}")},
        source=_RUN,
    ),
    rule(
        "gemini.no-final-blank-line",
        "error",
        "the last frame, which carries the stream's end, is not ended by a blank line",
        "The stream ends without the blank line that dispatches its last frame; in a Gemini "
        "stream that frame carries the `finishReason`.",
        "End the last frame with a blank line too.",
        {
            NODE: ("error", _UNENDED),
            CHERRY: ("degraded", "never dispatches the last frame: the finish becomes `other`"),
            CLI: ("error", f"{_CLI_CUT}, after the whole text"),
        },
        source=_RUN,
    ),
    rule(
        "gemini.multiline-data",
        "error",
        "a chunk's JSON is split over several `data:` lines",
        "A payload spread over several `data:` lines is legal SSE (spec parsers join the "
        "lines), but @google/genai parses each `data:` line alone.",
        "Serialise every chunk as compact single-line JSON.",
        {
            NODE: ("error", "parses each `data:` line alone and throws SyntaxError"),
            CLI: ("error", f"{_CLI_CUT}, showing nothing"),
        },
        source=_RUN,
    ),
    rule(
        "gemini.missing-candidates",
        "info",
        "a chunk has neither `candidates` nor `promptFeedback`",
        "A chunk with only usage or metadata: the clients read it and move on.",
        "Nothing needed; a chunk normally carries the candidate's next parts.",
        source=_RUN,
    ),
    rule(
        "gemini.first-chunk-fields",
        "warning",
        "the first chunk lacks `responseId` or `modelVersion`",
        "Google sends `responseId` and `modelVersion` on every chunk; apps read them for logs "
        "and for which model answered.",
        "Send `responseId` and `modelVersion` on every chunk.",
        source=_RUN,
    ),
    rule(
        "gemini.content-after-finish",
        "warning",
        "a candidate has content after its `finishReason`",
        "The chunk with the `finishReason` is a candidate's last; the clients show what "
        "comes after it as more of the answer.",
        "Send nothing for a candidate after its `finishReason`.",
        source=_RUN,
    ),
    rule(
        "gemini.unexpected-role",
        "warning",
        "a candidate's content has a role other than `model`",
        "An answer's content is the model's (`role: model`).",
        "Send `role: model` on the candidate's content.",
        source=_RUN,
    ),
    rule(
        "gemini.unknown-finish-reason",
        "info",
        "a `finishReason` is not one Google documents",
        "google-genai warns and keeps the name, @ai-sdk/google reports the finish `other`.",
        "Use one of Google's finish reasons (`STOP`, `MAX_TOKENS`, `SAFETY`, …).",
        source=_RUN,
    ),
    rule(
        "gemini.duplicate-finish",
        "info",
        "a candidate has two `finishReason` chunks",
        "A candidate finishes once; the second `finishReason` is ignored.",
        "Send one `finishReason` per candidate.",
        source=_RUN,
    ),
    rule(
        "gemini.partial-args",
        "error",
        "a call's streamed arguments (`partialArgs`) cannot be placed or never end",
        "Vertex AI streams a call's arguments as `partialArgs` by JSON path when asked "
        "(`streamFunctionCallArguments`), ending the call with a `functionCall` that does "
        "not `willContinue`; these pieces do not fit that contract.",
        "Give each piece a `jsonPath` under `$`, and end the call.",
        {CHERRY: ("partial", "drops a call that was never ended, whatever its `args`")},
        source=_RUN,
    ),
]
