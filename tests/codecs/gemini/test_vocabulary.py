"""The Gemini codec's vocabulary against the pinned google-genai SDK's types: every field
and value the SDK defines at a place is declared (mapped, carried or dropped), so a new
SDK shows what the codec has to learn."""

from __future__ import annotations

from enum import Enum

import pytest
from google.genai import types
from pydantic import BaseModel

from streamscope.codecs.gemini.vocabulary import VOCABULARY

# SDK-side fields that never cross the wire (the SDK fills them itself).
SDK_ONLY = {"sdkHttpResponse", "automaticFunctionCallingHistory", "parsed"}


def aliases(model: type[BaseModel]) -> set[str]:
    return {f.alias or n for n, f in model.model_fields.items()} - SDK_ONLY


def values(enum: type[Enum]) -> set[str]:
    return {str(e.value) for e in enum}


PLACES: dict[str, set[str]] = {
    "part": aliases(types.Part),
    "tool": aliases(types.Tool),
    "generationConfig": aliases(types.GenerationConfig),
    "thinkingConfig": aliases(types.ThinkingConfig),
    "chunk": aliases(types.GenerateContentResponse),
    "candidate": aliases(types.Candidate),
    "finishReason": values(types.FinishReason),
    "functionCallingConfig.mode": values(types.FunctionCallingConfigMode) - {"MODE_UNSPECIFIED"},
}


@pytest.mark.parametrize("place", sorted(PLACES))
def test_every_name_the_sdk_defines_is_declared(place: str) -> None:
    assert VOCABULARY.unknown(place, PLACES[place]) == []


def test_the_mapped_request_fields_are_the_ones_the_brief_of_the_api_names() -> None:
    assert VOCABULARY.mapped("request") == {
        "contents",
        "systemInstruction",
        "tools",
        "toolConfig",
        "generationConfig",
    }
    assert VOCABULARY.handling("content.role", "model") == "mapped"
