"""Derive the broken replay samples in this folder from real recordings.

Each sample is one real recording from ``tests/fixtures`` (the repository's copies of
the public SDK test suites' recordings, with their provenance) written out as wire bytes with exactly one deliberate defect: one of the
classic causes of the "empty response" a client shows when a stream breaks a rule of
the wire contract real clients enforce. Everything else (ids, models, text, usage) is as recorded.

Run from anywhere (standard library only)::

    python resources/replay/broken/make_broken.py          # (re)write the samples
    python resources/replay/broken/make_broken.py --check  # compare, write nothing

The generated files are committed as data; the app never runs this script.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parents[2] / "tests" / "fixtures"

Payload = dict[str, Any]


# -- reading a recording and writing wire bytes ----------------------------------------------


def payloads(source: str) -> list[Payload]:
    """The JSON payloads of a recording in tests/fixtures (``[DONE]`` left out)."""
    text = (FIXTURES / source).read_text(encoding="utf-8")
    if source.endswith(".jsonl"):
        lines = [line for line in text.splitlines() if line.strip()]
    else:
        lines = [
            line.removeprefix("data:").removeprefix(" ")
            for line in text.splitlines()
            if line.startswith("data:")
        ]
    return [json.loads(line) for line in lines if line.strip() != "[DONE]"]


def dump(payload: Payload) -> str:
    # The recordings' own form (compact, key order kept): unchanged payloads are unchanged.
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def typed_sse(items: list[Payload], event_lines: bool = True) -> bytes:
    """Anthropic / Responses framing: ``event: <type>`` + ``data:``, a blank line after each."""
    out = []
    for p in items:
        head = f"event: {p['type']}\n" if event_lines else ""
        out.append(f"{head}data: {dump(p)}\n\n")
    return "".join(out).encode()


def chat_sse(items: list[Payload], done: bool = True, frame_end: str = "\n\n") -> bytes:
    """OpenAI Chat framing: ``data:`` lines, then ``data: [DONE]``."""
    lines = [f"data: {dump(p)}" for p in items]
    if done:
        lines.append("data: [DONE]")
    return (frame_end.join(lines) + "\n\n").encode()


# -- the defects ------------------------------------------------------------------------------

CHAT_TEXT = "openai-chat/oai-py_text_usage_done.sse"
CHAT_TOOLS = "openai-chat/oai-py_tool-calls-parallel.sse"
RESPONSES_TEXT = "responses/vercel_openai-gpt41nano_text.jsonl"
RESPONSES_ERROR = "responses/vercel_openai_error-then-response-failed.jsonl"
ANTHROPIC_TEXT = "anthropic/vercel_text_sonnet45.jsonl"


def responses_no_item_id(items: list[Payload]) -> bytes:
    for p in items:
        if p["type"] == "response.output_text.delta":
            del p["item_id"]
    return typed_sse(items)


def responses_no_sequence_number(items: list[Payload]) -> bytes:
    for p in items:
        del p["sequence_number"]
    return typed_sse(items)


def responses_no_in_progress(items: list[Payload]) -> bytes:
    kept = [p for p in items if p["type"] != "response.in_progress"]
    for n, p in enumerate(kept):
        p["sequence_number"] = n  # still dense from 0: the missing event is the only defect
    return typed_sse(kept)


def _output_text_parts(p: Payload) -> list[Payload]:
    """Every ``output_text`` part a Responses event carries, wherever it sits."""
    parts: list[Payload] = []
    if isinstance(p.get("part"), dict):
        parts.append(p["part"])
    items = [p["item"]] if isinstance(p.get("item"), dict) else []
    if isinstance(p.get("response"), dict):
        items += p["response"].get("output") or []
    for item in items:
        parts += item.get("content") or []
    return [part for part in parts if part.get("type") == "output_text"]


def responses_no_annotations(items: list[Payload]) -> bytes:
    for p in items:
        for part in _output_text_parts(p):
            del part["annotations"]
    return typed_sse(items)


def anthropic_no_event_lines(items: list[Payload]) -> bytes:
    # Data-only frames, and no ping: what a proxy that re-frames Anthropic as bare data sends.
    return typed_sse([p for p in items if p["type"] != "ping"], event_lines=False)


def chat_usage_without_choices(items: list[Payload]) -> bytes:
    usage_chunk = items[-1]
    assert usage_chunk["choices"] == [] and usage_chunk["usage"], "not the usage chunk"
    del usage_chunk["choices"]
    return chat_sse(items)


def chat_single_newline(items: list[Payload]) -> bytes:
    # One "\n" between frames; the stream still ends with a blank line.
    return chat_sse(items, frame_end="\n")


def chat_missing_done(items: list[Payload]) -> bytes:
    return chat_sse(items, done=False)


def chat_tool_call_without_name(items: list[Payload]) -> bytes:
    # The second call's first delta has no function.name; the name comes one delta later
    # (the shape vLLM and several compatible servers stream).
    deltas = [
        (p, call)
        for p in items
        for choice in p["choices"]
        for call in (choice.get("delta") or {}).get("tool_calls") or []
        if call["index"] == 1
    ]
    (_, first), (_, second) = deltas[:2]
    second["function"] = {"name": first["function"].pop("name"), **second["function"]}
    return chat_sse(items)


def chat_non_sse_body(items: list[Payload]) -> bytes:
    """The stream assembled into the plain ``chat.completion`` a non-streaming call returns,
    as OpenAI formats it (indented JSON), answered with 200 to a ``stream: true`` request."""
    first = items[0]
    text = "".join(
        c["delta"].get("content") or "" for p in items for c in p["choices"] if "delta" in c
    )
    finish = next(c["finish_reason"] for p in items for c in p["choices"] if c["finish_reason"])
    usage = next(p["usage"] for p in items if p.get("usage"))
    body = {
        "id": first["id"],
        "object": "chat.completion",
        "created": first["created"],
        "model": first["model"],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": usage,
        "system_fingerprint": first["system_fingerprint"],
    }
    return (json.dumps(body, ensure_ascii=False, indent=2) + "\n").encode()


@dataclass(frozen=True)
class Sample:
    name: str  # the file in this folder
    protocol: str  # the protocol of the stream (and of the client it is meant for)
    source: str  # the undamaged recording, relative to tests/fixtures
    defect: str
    build: Callable[[list[Payload]], bytes]

    def render(self) -> bytes:
        return self.build(payloads(self.source))


SAMPLES = [
    Sample(
        "responses-no-item-id.sse",
        "responses",
        RESPONSES_TEXT,
        "`response.output_text.delta` events without `item_id`",
        responses_no_item_id,
    ),
    Sample(
        "responses-no-sequence-number.sse",
        "responses",
        RESPONSES_ERROR,
        "no `sequence_number` on any event (the stream is an early `error` + "
        "`response.failed`, the events the AI SDK needs it on)",
        responses_no_sequence_number,
    ),
    Sample(
        "responses-no-in-progress.sse",
        "responses",
        RESPONSES_TEXT,
        "no `response.in_progress` event (sequence numbers renumbered, still dense)",
        responses_no_in_progress,
    ),
    Sample(
        "responses-no-annotations.sse",
        "responses",
        RESPONSES_TEXT,
        "`output_text` parts without `annotations` (in every event that carries one)",
        responses_no_annotations,
    ),
    Sample(
        "anthropic-no-event-lines.sse",
        "anthropic",
        ANTHROPIC_TEXT,
        "data-only frames: no `event:` lines, and the `ping` dropped",
        anthropic_no_event_lines,
    ),
    Sample(
        "chat-usage-chunk-without-choices.sse",
        "openai-chat",
        CHAT_TEXT,
        'the final usage-only chunk has no `"choices": []`',
        chat_usage_without_choices,
    ),
    Sample(
        "chat-single-newline.sse",
        "openai-chat",
        CHAT_TEXT,
        "a single `\\n` between frames instead of a blank line",
        chat_single_newline,
    ),
    Sample(
        "chat-missing-done.sse",
        "openai-chat",
        CHAT_TEXT,
        "no final `data: [DONE]`",
        chat_missing_done,
    ),
    Sample(
        "chat-tool-call-without-name.sse",
        "openai-chat",
        CHAT_TOOLS,
        "the first delta of the second tool call has no `function.name` "
        "(the name arrives in that call's next delta)",
        chat_tool_call_without_name,
    ),
    Sample(
        "chat-non-sse-body.json",
        "openai-chat",
        CHAT_TEXT,
        "not SSE: a plain `chat.completion` JSON body (200) answering a stream request",
        chat_non_sse_body,
    ),
]


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for sample in SAMPLES:
        data = sample.render()
        path = HERE / sample.name
        if check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(sample.name)
        else:
            path.write_bytes(data)
            print(f"wrote {sample.name} ({len(data)} bytes) from {sample.source}")
    for name in stale:
        print(f"out of date: {name}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
