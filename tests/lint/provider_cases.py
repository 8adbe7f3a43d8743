"""Test streams for what the provider did and said on the wire (``lint/rules_provider.py``
and the upstream's error): real recordings as they are where one shows the outcome (a
Chat answer cut by ``length``, a Chat refusal, Anthropic's answer cut by ``max_tokens``
inside a tool call, OpenAI's ``response.failed``), and otherwise a real recording with its
end made the provider's (its finish reason, Responses' ``response.incomplete``), the way
the other rules' examples are made (``tests/lint/cases.py``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tests.lint.streams import (
    ANT_TEXT,
    RESP_CALL,
    RESP_ERROR,
    RESP_TEXT,
    Payload,
    chat,
    deltas,
    edited,
    first,
    native,
    payloads,
    typed,
)
from tests.support import FIXTURES

if TYPE_CHECKING:
    from tests.lint.cases import Case

CHAT_LENGTH = "openai-chat/oai-py_finish-length.sse"
CHAT_REFUSAL = "openai-chat/oai-py_refusal.sse"
CHAT_CALL = "openai-chat/oai-py_tool-call-single.sse"
CHAT_AZURE = "openai-chat/vercel_azure-model-router_content-filter.jsonl"
ANT_CUT_CALL = "anthropic/ant-py_max-tokens-mid-tool-json_padded.sse"


def _chat_finish(items: list[Payload], reason: str) -> None:
    for p in items:
        for c in p.get("choices") or []:
            if c.get("finish_reason"):
                c["finish_reason"] = reason


def _chat_cut_call(items: list[Payload]) -> list[Payload]:
    """The only call's last two argument fragments dropped, the finish ``length``."""
    frags = [p for p in items if any(c.get("function", {}).get("arguments") for c in _calls([p]))]
    kept = [p for p in items if p not in frags[-2:]]
    _chat_finish(kept, "length")
    return kept


def _calls(items: list[Payload]) -> list[Payload]:
    return [c for d in deltas(items) for c in d.get("tool_calls") or []]


def _azure_filtered(items: list[Payload]) -> list[Payload]:
    """Azure's stream stopped by its filter after "Capital of": the next delta's
    ``content_filter_results`` say it was filtered, and the finish is ``content_filter``."""
    texts = [p for p in items if any(d.get("content") for d in deltas([p]))]
    stopped = texts[2]
    choice = stopped["choices"][0]
    choice["delta"] = {}
    choice["content_filter_results"]["violence"] = {"filtered": True, "severity": "high"}
    kept = [p for p in items if p not in texts[3:]]
    _chat_finish(kept, "content_filter")
    return kept


def _ant_stop(reason: str) -> Callable[[list[Payload]], None]:
    def edit(items: list[Payload]) -> None:
        first(items, "message_delta")["delta"]["stop_reason"] = reason

    return edit


def _renumber(items: list[Payload]) -> list[Payload]:
    for n, p in enumerate(items):
        if "sequence_number" in p:
            p["sequence_number"] = n
    return items


def _incomplete(items: list[Payload], reason: str) -> None:
    """``response.completed`` made ``response.incomplete`` for ``reason``, its items too."""
    done = first(items, "response.completed")
    done["type"] = "response.incomplete"
    response = done["response"]
    response.update(status="incomplete", incomplete_details={"reason": reason})
    response["completed_at"] = None
    for item in response["output"]:
        item["status"] = "incomplete"
    for p in items:
        if p["type"] == "response.output_item.done":
            p["item"]["status"] = "incomplete"


def _resp_cut_text(reason: str) -> Callable[[list[Payload]], list[Payload]]:
    """The text's last delta never came: the answer stopped there, ``incomplete``."""

    def edit(items: list[Payload]) -> list[Payload]:
        cut = [p for p in items if p["type"] == "response.output_text.delta"][-1]
        kept = [p for p in items if p is not cut]
        text = "".join(p["delta"] for p in kept if p["type"] == "response.output_text.delta")
        _set_texts(kept, "text", text)
        _incomplete(kept, reason)
        return _renumber(kept)

    return edit


def _set_texts(items: list[Payload], key: str, text: str) -> None:
    """Every whole copy of the message's text (``.done`` events, the final output)."""

    def walk(node: Any) -> None:
        if isinstance(node, dict) and node.get("type") != "response.content_part.added":
            if node.get("type") in ("output_text", "response.output_text.done") and key in node:
                node[key] = text
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(items)


def _resp_cut_call(items: list[Payload]) -> list[Payload]:
    """The call's last argument fragment never came; the item ends ``incomplete`` with the
    arguments it has, and the response is ``incomplete`` for ``max_output_tokens``."""
    frags = [p for p in items if p["type"] == "response.function_call_arguments.delta"]
    kept = [p for p in items if p is not frags[-1]]
    args = "".join(p["delta"] for p in frags[:-1])
    for p in kept:
        if p["type"] == "response.function_call_arguments.done":
            p["arguments"] = args
    done = first(kept, "response.completed")["response"]["output"]
    for item in [p["item"] for p in kept if p["type"] == "response.output_item.done"] + done:
        item["arguments"] = args
    _incomplete(kept, "max_output_tokens")
    return _renumber(kept)


def _resp_refusal(items: list[Payload]) -> list[Payload]:
    """The message's text part made a refusal part: ``response.refusal.delta`` and
    ``.done`` events, a ``refusal`` content part."""
    said = "I'm sorry, I can't help with that."
    out: list[Payload] = []
    for p in items:
        kind = p["type"]
        if kind == "response.output_text.delta":
            continue  # one refusal delta instead, at the first
        if kind == "response.content_part.added":
            p["part"] = {"type": "refusal", "refusal": ""}
            out.append(p)
            ref = {k: p[k] for k in ("item_id", "output_index", "content_index")}
            out.append({"type": "response.refusal.delta", **ref, "delta": said})
            out[-1]["sequence_number"] = 0  # (renumbered below)
            continue
        if kind == "response.output_text.done":
            p = {"type": "response.refusal.done", **ref, "refusal": said, "sequence_number": 0}
        out.append(p)
    _parts_to_refusal(out, said)
    return _renumber(out)


def _parts_to_refusal(items: list[Payload], said: str) -> None:
    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, dict) and value.get("type") == "output_text":
                    node[key] = {"type": "refusal", "refusal": said}
                else:
                    walk(value)
            content = node.get("content")
            if isinstance(content, list):
                node["content"] = [
                    {"type": "refusal", "refusal": said}
                    if isinstance(c, dict) and c.get("type") == "output_text"
                    else c
                    for c in content
                ]
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(items)


def _ant_error_stream() -> bytes:
    """A real Anthropic recording cut after its first text delta, then the upstream's
    ``event: error`` (as Anthropic sends an overload mid-stream)."""
    items = payloads(ANT_TEXT)
    cut = next(i for i, p in enumerate(items) if p["type"] == "content_block_delta") + 1
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return typed([*items[:cut], error])


def _with_blank_line(source: str) -> Callable[[], bytes]:
    """A recording kept without its last blank line (the SDK's fixture trims it), as
    the API sends it: with it."""
    return lambda: native(source).rstrip(b"\n") + b"\n\n"


OUTCOME_FEATURES = {
    "finish=length": "provider.length",
    "stop=max_tokens": "provider.length",
    "finish=content_filter": "provider.content-filter",
    "refusal": "provider.refusal",
    "error:": "stream.upstream-error",
}
"""A feature SOURCES.md lists for a recording -> the outcome it says the provider had
(``provider.length`` stands for the cut in text and inside a tool call)."""


def source_rows() -> dict[str, tuple[str, str]]:
    """Each recording of SOURCES.md (its path under tests/fixtures) -> its Features and
    Notes columns."""
    rows = re.findall(r"^\| `([^`]+)` \|(.*)$", (FIXTURES / "SOURCES.md").read_text(), re.M)
    out = {}
    for path, rest in rows:
        cells = [c.strip() for c in rest.split("|")]
        out[path] = (cells[3], cells[-2])
    return out


UNTERMINATED = "without final blank line", "without the final blank line"
"""How SOURCES.md notes a file whose last frame lost its blank line (the SDK's fixture
file trims it; the API sends it)."""


def unterminated(path: str) -> bool:
    """Whether SOURCES.md notes that ``path`` lost the blank line after its last frame."""
    notes = source_rows()[path][1].lower()
    return any(said in notes for said in UNTERMINATED)


def expected_outcomes(path: str) -> set[str]:
    """The outcomes SOURCES.md's Features say a recording has (the provider's doing)."""
    features = [f.strip() for f in source_rows()[path][0].split(",")]
    return {rule for f in features for key, rule in OUTCOME_FEATURES.items() if f.startswith(key)}


def provider_recordings() -> list[str]:
    """The real captures (not TRIMMED, not documentation) of the provider's normal
    behaviour: an answer it cut, filtered or refused, its own error, or its content
    filter's verdicts (Azure's, even when they filtered nothing)."""
    return sorted(
        path
        for path, (_, notes) in source_rows().items()
        if "TRIMMED" not in notes
        and "NOT A CAPTURE" not in notes
        and (expected_outcomes(path) or "content-filter" in path)
    )


def provider_cases() -> list[Case]:
    """The cases for tests/lint/cases.py (imported there, at its end)."""
    from tests.lint.cases import Case

    def chat_edit(source: str, edit: Callable[[list[Payload]], Any]) -> Callable[[], bytes]:
        return lambda: chat(edited(source, edit))

    def typed_edit(source: str, edit: Callable[[list[Payload]], Any]) -> Callable[[], bytes]:
        return lambda: typed(edited(source, edit))

    return [
        # -- cut by the length limit --------------------------------------------------------
        Case("provider.length", lambda: native(CHAT_LENGTH), CHAT_LENGTH),
        Case(
            "provider.length",
            typed_edit(ANT_TEXT, _ant_stop("max_tokens")),
            ANT_TEXT,
            {},
            "anthropic",
        ),
        Case(
            "provider.length",
            typed_edit(RESP_TEXT, _resp_cut_text("max_output_tokens")),
            RESP_TEXT,
            {},
            "responses",
        ),
        Case(
            "provider.length-in-tool-call",
            _with_blank_line(ANT_CUT_CALL),
            ANT_CUT_CALL,
            {},
        ),
        Case(
            "provider.length-in-tool-call",
            chat_edit(CHAT_CALL, _chat_cut_call),
            CHAT_CALL,
            {},
            "openai-chat",
        ),
        Case(
            "provider.length-in-tool-call",
            typed_edit(RESP_CALL, _resp_cut_call),
            RESP_CALL,
            {},
            "responses",
        ),
        # -- a content filter, a refusal ----------------------------------------------------
        Case("provider.content-filter", chat_edit(CHAT_AZURE, _azure_filtered), CHAT_AZURE),
        Case(
            "provider.content-filter",
            typed_edit(RESP_TEXT, _resp_cut_text("content_filter")),
            RESP_TEXT,
            {},
            "responses",
        ),
        Case("provider.refusal", lambda: native(CHAT_REFUSAL), CHAT_REFUSAL),
        Case(
            "provider.refusal",
            typed_edit(ANT_TEXT, _ant_stop("refusal")),
            ANT_TEXT,
            {},
            "anthropic",
        ),
        Case("provider.refusal", typed_edit(RESP_TEXT, _resp_refusal), RESP_TEXT, {}, "responses"),
        # -- the upstream's error (the Chat one: tests/lint/answers.py) ---------------------
        Case("stream.upstream-error", lambda: native(RESP_ERROR), RESP_ERROR, {}, "responses"),
        Case("stream.upstream-error", _ant_error_stream, ANT_TEXT, {}, "anthropic"),
    ]
