"""Gemini request bodies built with the google-genai SDK's types -> the canonical request
-> back to the same body; what each field becomes; and bad bodies."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.genai import types
from hypothesis import HealthCheck, given, settings

from streamscope.codecs.gemini import CODEC
from streamscope.model.request import (
    ImagePart,
    RequestError,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolResultPart,
)
from tests.codecs.gemini.sdk_bodies import bodies, dump, sdk_body


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=bodies())
def test_an_sdk_body_goes_through_the_canonical_request_unchanged(body: dict[str, Any]) -> None:
    request = CODEC.decode_request(body, "gemini-2.5-flash", stream=True)
    assert (request.model, request.stream, request.protocol) == ("gemini-2.5-flash", True, "gemini")
    assert CODEC.encode_request(request) == body


def test_what_each_field_becomes() -> None:
    call = types.FunctionCall(name="get_weather", args={"city": "Paris"})
    body = sdk_body(
        [
            types.Content(role="user", parts=[types.Part(text="Weather?")]),
            types.Content(
                role="model",
                parts=[
                    types.Part(text="Let me look.", thought=True),
                    types.Part(function_call=call, thought_signature=b"sig"),
                ],
            ),
            types.Content(
                role="user",
                parts=[
                    types.Part.from_function_response(
                        name="get_weather", response={"output": "Sunny"}
                    )
                ],
            ),
        ],
        system=types.Content(parts=[types.Part(text="Be brief.")]),
        tools=[
            types.Tool(
                function_declarations=[
                    types.FunctionDeclaration(
                        name="get_weather",
                        description="Weather by city",
                        parameters=types.Schema(
                            type=types.Type.OBJECT,
                            properties={"city": types.Schema(type=types.Type.STRING)},
                        ),
                    )
                ]
            )
        ],
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(
                mode=types.FunctionCallingConfigMode.ANY, allowed_function_names=["get_weather"]
            )
        ),
        generation=types.GenerationConfig(
            max_output_tokens=256,
            temperature=0.2,
            stop_sequences=["END"],
            thinking_config=types.ThinkingConfig(thinking_budget=1024, include_thoughts=True),
        ),
    )
    req = CODEC.decode_request(body, "gemini-2.5-flash")
    assert req.system_text == "Be brief."
    assert [m.role for m in req.messages] == ["user", "assistant", "tool"]
    thought, signed, called = req.messages[1].parts
    assert thought == ThinkingPart("Let me look.", origin="gemini")
    assert signed == ThinkingPart("", "c2ln", origin="gemini")  # (base64 of b"sig")
    assert isinstance(called, ToolCallPart) and json.loads(called.arguments) == {"city": "Paris"}
    result = req.messages[2].parts[0]
    assert result == ToolResultPart(called.id, [TextPart("Sunny")])
    tool = req.tools[0]
    assert (tool.name, tool.description) == ("get_weather", "Weather by city")
    assert tool.parameters == {"type": "object", "properties": {"city": {"type": "string"}}}
    assert (req.tool_choice.mode, req.tool_choice.name) == ("tool", "get_weather")  # type: ignore[union-attr]
    assert (req.max_tokens, req.temperature, req.stop) == (256, 0.2, ["END"])
    assert req.thinking is not None
    assert (req.thinking.enabled, req.thinking.budget_tokens, req.thinking.summary) == (
        True,
        1024,
        "auto",
    )


def test_an_image_is_an_image_and_a_pdf_is_carried() -> None:
    body = sdk_body(
        [
            types.Content(
                role="user",
                parts=[
                    types.Part.from_bytes(data=b"\x89PNG", mime_type="image/png"),
                    types.Part.from_bytes(data=b"%PDF", mime_type="application/pdf"),
                ],
            )
        ]
    )
    image, pdf = CODEC.decode_request(body).messages[0].parts
    assert image == ImagePart(data="iVBORw==", media_type="image/png")
    assert pdf.kind == "opaque"


def test_fields_with_no_canonical_place_are_carried_and_named() -> None:
    body = sdk_body(
        [types.Content(role="user", parts=[types.Part(text="hi")])],
        generation=types.GenerationConfig(seed=7, response_mime_type="application/json"),
        safetySettings=[
            dump(
                types.SafetySetting(
                    category=types.HarmCategory.HARM_CATEGORY_HARASSMENT,
                    threshold=types.HarmBlockThreshold.BLOCK_NONE,
                )
            )
        ],
        tools=[types.Tool(google_search=types.GoogleSearch())],
    )
    req = CODEC.decode_request(body)
    assert {c.field for c in req.carried} == {
        "safetySettings",
        "generationConfig.seed",
        "generationConfig.responseMimeType",
        "tools[0].googleSearch",
    }


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({}, "contents"),
        ({"contents": {}}, "contents"),
        ({"contents": [{"role": "system", "parts": []}]}, "contents[0].role"),
        ({"contents": [{"role": "user"}]}, "contents[0].parts"),
        ({"contents": [{"role": "user", "parts": [{"text": 1}]}]}, "contents[0].parts[0]"),
        (
            {"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]},
            "contents[0].parts[0].functionCall.name",
        ),
        (
            {"contents": [], "generationConfig": {"maxOutputTokens": "9"}},
            "generationConfig.maxOutputTokens",
        ),
        (
            {"contents": [], "tools": [{"functionDeclarations": [{}]}]},
            "tools[0].functionDeclarations[0].name",
        ),
    ],
)
def test_a_bad_body_names_the_field(body: Any, param: str) -> None:
    with pytest.raises(RequestError) as info:
        CODEC.decode_request(body)
    assert info.value.param is not None and info.value.param.startswith(param)


def test_a_declarations_schema_is_read_by_its_proto_name_too() -> None:
    # google-genai 3.6.1 sends parameters_json_schema so when it calls /v1 (seen through
    # the proxy: tests/proxy/test_gemini_api.py); the API reads a field by either name.
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    decl = {"name": "f", "parameters_json_schema": schema}
    body = {"contents": [], "tools": [{"functionDeclarations": [decl]}]}
    (tool,) = CODEC.decode_request(body, "m").tools
    assert tool.name == "f" and tool.parameters == schema
    decl["parameters_json_schema"] = 5
    with pytest.raises(RequestError, match="parameters_json_schema"):
        CODEC.decode_request(body, "m")
