"""The Gemini examples of the lint rules: real Gemini recordings (``tests/fixtures/gemini``,
one GenerateContentResponse per line) framed as Google frames them (``data: `` + JSON and
a blank line), each with the one defect its rule is about. The gemini.* rules and the
shared rules whose Gemini claims ``rules_gemini.SHARED`` makes are all here, and
``tests/realclients`` runs every Gemini client over them."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tests.support import FIXTURES

if TYPE_CHECKING:
    from tests.lint.cases import Case

Chunk = dict[str, Any]
TEXT = "gemini/vercel_gemini3pro_text_signature.chunks.txt"
TOOL = "gemini/vercel_gemini3pro_tool-call.chunks.txt"
BLOCKED = "gemini/vercel_gemini37flash_prompt-block.chunks.txt"
RECORDINGS = (
    TEXT,
    TOOL,
    BLOCKED,
    "gemini/vercel_gemini3pro_reasoning_signature.chunks.txt",
)
"""The recordings every Gemini client reads whole (Vertex AI's streamed arguments are left
out: a client gets them only when it asks, and then puts them together itself)."""
_ERROR = {"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}}
SOURCE_ONLY = frozenset({"gemini.args-not-object@gemini"})
"""Examples whose decoded reading is not what the API means (the decoder keeps `args` given
as a string of JSON as that string): only the recording they were made from counts as
the intended answer there."""


def chunks(source: str) -> list[Chunk]:
    """A fresh copy of a recording's chunks."""
    text = (FIXTURES / source).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def sse(items: list[Chunk | bytes], end: bytes = b"\n\n") -> bytes:
    """Google's framing: each chunk as one ``data: `` line, then a blank line (raw bytes
    are sent as the data as they are)."""
    out = b""
    for item in items:
        data = item if isinstance(item, bytes) else json.dumps(item).encode()
        out += b"data: " + data + end
    return out


def _parts(chunk: Chunk) -> list[Any]:
    parts: list[Any] = chunk["candidates"][0]["content"]["parts"]
    return parts


def _call(items: list[Chunk]) -> dict[str, Any]:
    call: dict[str, Any] = _parts(items[0])[0]["functionCall"]
    return call


def _edit(source: str, edit: Callable[[list[Chunk]], Any], end: bytes = b"\n\n") -> bytes:
    items = chunks(source)
    out = edit(items)  # a new list of chunks, or anything else (the chunks were edited)
    new = isinstance(out, list) and out and all(isinstance(c, dict) for c in out)
    return sse(out if new else items, end)


def _meta(c: Chunk) -> Chunk:
    """The chunk with only its usage and ids (no candidates, no promptFeedback)."""
    return {k: copy.deepcopy(c[k]) for k in ("usageMetadata", "modelVersion", "responseId")}


def _end_only(items: list[Chunk]) -> list[Chunk]:
    """The text recording with an empty last part: its last chunk carries only the end."""
    last = items[-1]
    last["candidates"][0]["content"]["parts"] = [{"text": ""}]
    return items


def _no_finish(items: list[Chunk]) -> list[Chunk]:
    return items[:2]


def gemini_cases() -> list[Case]:
    """The cases for tests/lint/cases.py (imported there, at its end)."""
    from tests.lint.cases import Case

    def case(rule: str, build: Callable[[], bytes], source: str | None = TEXT) -> Case:
        return Case(rule, build, source, {"protocol": "gemini"}, "gemini")

    def unended(items: list[Chunk]) -> bytes:
        return sse(items).rstrip(b"\n")

    def first_call(edit: Callable[[dict[str, Any]], Any]) -> Callable[[], bytes]:
        return lambda: _edit(TOOL, lambda i: edit(_call(i)))

    text = chunks(TEXT)
    return [
        # -- the shared rules, in Gemini ----------------------------------------------------
        case("framing.zero-frames", lambda: b": keepalive\n\n", None),
        case("framing.non-sse-body", lambda: json.dumps(chunks(TEXT)).encode()),
        case("framing.single-newline", lambda: sse(chunks(TEXT), b"\n") + b"\n", None),
        case("framing.last-frame-lost", lambda: unended(chunks(TEXT)[:2])),
        case("framing.invalid-json", lambda: sse([text[0], b"{oops", *text[1:]])),
        case("framing.comment-as-data", lambda: sse([text[0], b": keepalive", *text[1:]])),
        case("stream.tool-call-without-name", first_call(lambda c: c.pop("name")), None),
        case("stream.upstream-error", lambda: sse([text[0], _ERROR]), None),
        case("stream.no-content", lambda: sse(chunks(TEXT)[-1:]), None),  # `STOP`, no text
        case(
            "provider.length",
            lambda: _edit(TEXT, lambda i: i[-1]["candidates"][0].update(finishReason="MAX_TOKENS")),
        ),
        case(
            "provider.content-filter",
            lambda: _edit(TEXT, lambda i: i[-1]["candidates"][0].update(finishReason="SAFETY")),
        ),
        # -- the Gemini rules ---------------------------------------------------------------
        case("gemini.missing-finish-reason", lambda: _edit(TEXT, _no_finish), None),
        case("gemini.call-without-finish-reason", lambda: sse(chunks(TOOL)[:1]), None),
        case(
            "gemini.malformed-chunk",
            lambda: _edit(TEXT, lambda i: i[0].update(candidates=i[0]["candidates"][0])),
        ),
        case(
            "gemini.malformed-candidate",
            lambda: _edit(TEXT, lambda i: i[0].update(candidates=["x"])),
        ),
        case("gemini.malformed-part", lambda: _edit(TEXT, lambda i: _parts(i[0]).append("x"))),
        case(
            "gemini.text-not-string", lambda: _edit(TEXT, lambda i: _parts(i[0])[0].update(text=42))
        ),
        case(
            "gemini.args-not-object",
            first_call(lambda c: c.update(args=json.dumps(c["args"]))),
            TOOL,
        ),
        case("gemini.sse-comment", lambda: sse(text[:1]) + b": keepalive\n\n" + sse(text[1:])),
        case(
            "gemini.sse-fields",
            lambda: sse(chunks(TEXT)).replace(b"data: ", b"event: message\ndata: "),
        ),
        case("gemini.data-without-space", lambda: sse(chunks(TEXT)).replace(b"data: ", b"data:")),
        case("gemini.bom", lambda: b"\xef\xbb\xbf" + sse(chunks(TEXT))),
        case("gemini.no-final-blank-line", lambda: unended(_end_only(chunks(TEXT)))),
        case(
            "gemini.multiline-data",
            lambda: b"".join(
                b"data: " + json.dumps(c, indent=1).replace("\n", "\ndata: ").encode() + b"\n\n"
                for c in chunks(TEXT)
            ),
        ),
        case("gemini.missing-candidates", lambda: sse([text[0], _meta(text[0]), *text[1:]])),
        case(
            "gemini.first-chunk-fields",
            lambda: _edit(TEXT, lambda i: [c.pop("responseId") for c in i]),
        ),
        case("gemini.content-after-finish", lambda: sse([*text, text[1]]), None),
        case(
            "gemini.unexpected-role",
            lambda: _edit(TEXT, lambda i: i[0]["candidates"][0]["content"].update(role="user")),
        ),
        case(
            "gemini.unknown-finish-reason",
            lambda: _edit(TEXT, lambda i: i[-1]["candidates"][0].update(finishReason="NEW_ONE")),
        ),
        case("gemini.duplicate-finish", lambda: sse([*text, _finish_again(text[-1])])),
        case("gemini.partial-args", lambda: _edit(TOOL, _call_never_ends), None),
    ]


def _call_never_ends(items: list[Chunk]) -> list[Chunk]:
    """The call opened to stream its arguments (``willContinue``), and the stream ends."""
    _call(items)["willContinue"] = True
    return items[:1]


def _finish_again(last: Chunk) -> Chunk:
    """The last chunk again, its parts empty: the candidate finishes a second time."""
    again = copy.deepcopy(last)
    again["candidates"][0]["content"]["parts"] = []
    return again
