"""A Gemini chunk in a few words, for the table of frames."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from streamscope.codecs import get_codec
from streamscope.codecs.gemini.preview import preview
from tests.codecs.gemini.recorded import STREAMS, chunks


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.name)
def test_every_recorded_chunk_shows_what_it_adds(path: Path) -> None:
    for chunk in chunks(path):
        shown = preview(chunk, None)
        assert shown is not None and not shown.startswith("{"), chunk
        for candidate in chunk.get("candidates") or []:
            for part in candidate.get("content", {}).get("parts", []):
                if part.get("text"):
                    assert part["text"] in shown
                if "name" in part.get("functionCall", {}):
                    assert f"call {part['functionCall']['name']}(" in shown
                if "partialArgs" in part.get("functionCall", {}):
                    assert "call args $." in shown
            if candidate.get("finishReason"):
                assert f"finish: {candidate['finishReason']}" in shown
        usage = chunk.get("usageMetadata") or {}
        if "promptTokenCount" in usage:
            assert f"usage {usage['promptTokenCount']}→" in shown


def parts(*items: dict[str, Any], **candidate: Any) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": list(items)}, **candidate}]}


@pytest.mark.parametrize(
    ("payload", "shown"),
    [
        (parts({"text": "Hi"}), "Hi"),
        (parts({"text": "hm", "thought": True}, {"text": "Hi"}), "thought: hm · Hi"),
        (parts({"functionCall": {"name": "f", "args": {"a": 1}}}), 'call f({"a": 1})'),
        (parts({"functionCall": {"args": {}}}), "call (no name)({})"),
        (parts({"functionCall": {"name": "f", "willContinue": True}}), "call f(…)"),
        (
            parts({"functionCall": {"partialArgs": [{"jsonPath": "$.id", "stringValue": "A"}]}}),
            'call args $.id="A"',
        ),
        (parts({"functionCall": {}}), "call end"),
        (parts({"text": "x"}, finishReason="MAX_TOKENS"), "x · finish: MAX_TOKENS"),
        (parts({"inlineData": {"mimeType": "image/png", "data": "AA=="}}), "inline data image/png"),
        (parts({"thoughtSignature": "c2ln"}), "thought signature"),
        ({"promptFeedback": {"blockReason": "SAFETY"}}, "prompt blocked: SAFETY"),
        ({"candidates": []}, "(no candidates)"),
        (
            {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}},
            "error: RESOURCE_EXHAUSTED: quota",
        ),
        ({"error": {"code": 500, "message": "boom"}}, "error: 500: boom"),
        (
            {
                "candidates": [
                    {"index": 0, "content": {"parts": [{"text": "a"}]}},
                    {"index": 1, "content": {"parts": [{"text": "b"}]}},
                ]
            },
            "[0] a · [1] b",
        ),
        ({"something": "else"}, None),
    ],
)
def test_a_chunk_in_a_few_words(payload: dict[str, Any], shown: str | None) -> None:
    assert preview(payload, None) == shown


def test_the_codec_previews_with_it() -> None:
    assert get_codec("gemini").preview(parts({"text": "Hi"}), None) == "Hi"


@pytest.mark.parametrize("junk", [{"candidates": "no"}, {"candidates": [1, None]}, {"error": 1}])
def test_a_malformed_chunk_never_raises(junk: dict[str, Any]) -> None:
    preview(junk, None)
