"""generateContent bodies built with the google-genai SDK's own types, serialised as the
SDK serialises them (``model_dump(by_alias=True, exclude_none=True, mode="json")``), and
hypothesis strategies of such bodies: a conversation that alternates user and model
turns, calls answered in the next turn, thoughts with signatures, tools and settings."""

from __future__ import annotations

from typing import Any

from google.genai import types
from hypothesis import strategies as st
from pydantic import BaseModel

JSON = dict[str, Any]


def dump(model: BaseModel) -> Any:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def sdk_body(
    contents: list[types.Content],
    system: types.Content | None = None,
    tools: list[types.Tool] | None = None,
    tool_config: types.ToolConfig | None = None,
    generation: types.GenerationConfig | None = None,
    **rest: Any,
) -> JSON:
    body: JSON = {"contents": [dump(c) for c in contents]}
    if system is not None:
        body["systemInstruction"] = dump(system)
    if tools:
        body["tools"] = [dump(t) for t in tools]
    if tool_config is not None:
        body["toolConfig"] = dump(tool_config)
    if generation is not None and dump(generation):  # (the SDK sends no empty config)
        body["generationConfig"] = dump(generation)
    body.update(rest)
    return body


NAMES = ("get_weather", "lookup", "read_file")
texts = st.text(min_size=1, max_size=40)
signatures = st.binary(min_size=1, max_size=24)
scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | texts
args = st.dictionaries(st.sampled_from(["city", "q", "n", "path"]), scalars, max_size=3)


@st.composite
def user_turn(draw: st.DrawFn) -> types.Content:
    parts = draw(
        st.lists(
            st.one_of(
                texts.map(lambda t: types.Part(text=t)),
                st.binary(min_size=1, max_size=16).map(
                    lambda b: types.Part(inline_data=types.Blob(mime_type="image/png", data=b))
                ),
            ),
            min_size=1,
            max_size=3,
        )
    )
    return types.Content(role="user", parts=parts)


@st.composite
def model_turn(draw: st.DrawFn, turn: int) -> tuple[types.Content, list[types.FunctionCall]]:
    parts: list[types.Part] = []
    if draw(st.booleans()):
        sig = draw(st.none() | signatures)
        parts.append(types.Part(text=draw(texts), thought=True, thought_signature=sig))
    calls: list[types.FunctionCall] = []
    for k in range(draw(st.integers(0, 2))):
        call_id = f"call_{turn}_{k}" if draw(st.booleans()) else None  # (ids are unique)
        calls.append(
            types.FunctionCall(id=call_id, name=draw(st.sampled_from(NAMES)), args=draw(args))
        )
    if not calls or draw(st.booleans()):
        parts.append(types.Part(text=draw(texts)))
    for k, call in enumerate(calls):
        sig = draw(st.none() | signatures) if k == 0 else None
        parts.append(types.Part(function_call=call, thought_signature=sig))
    return types.Content(role="model", parts=parts), calls


responses = st.one_of(
    texts.filter(lambda t: not t.lstrip().startswith("{")).map(lambda t: {"output": t}),
    texts.map(lambda t: {"error": t}),
    st.dictionaries(st.sampled_from(["temp", "rows", "ok"]), scalars, min_size=1, max_size=3),
)


@st.composite
def conversation(draw: st.DrawFn) -> list[types.Content]:
    turns = [draw(user_turn())]
    for turn in range(draw(st.integers(0, 3))):
        content, calls = draw(model_turn(turn))
        turns.append(content)
        if calls:
            turns.append(
                types.Content(
                    role="user",
                    parts=[
                        types.Part(
                            function_response=types.FunctionResponse(
                                id=c.id, name=c.name, response=draw(responses)
                            )
                        )
                        for c in calls
                    ],
                )
            )
        else:
            turns.append(draw(user_turn()))
    return turns


def declaration(name: str, native: bool) -> types.FunctionDeclaration:
    if native:
        schema = types.Schema(
            type=types.Type.OBJECT,
            properties={"city": types.Schema(type=types.Type.STRING, description="a city")},
            required=["city"],
        )
        return types.FunctionDeclaration(name=name, description=f"{name} it", parameters=schema)
    return types.FunctionDeclaration(
        name=name,
        parameters_json_schema={"type": "object", "properties": {"q": {"type": "string"}}},
    )


@st.composite
def tools(draw: st.DrawFn) -> list[types.Tool]:
    names = draw(st.lists(st.sampled_from(NAMES), unique=True, min_size=1))
    decls = [declaration(n, draw(st.booleans())) for n in names]
    out = [types.Tool(function_declarations=decls)]
    if draw(st.booleans()):
        out.insert(draw(st.integers(0, 1)), types.Tool(google_search=types.GoogleSearch()))
    return out


@st.composite
def tool_config(draw: st.DrawFn) -> types.ToolConfig:
    mode = draw(st.sampled_from(["AUTO", "ANY", "NONE", "VALIDATED"]))
    allowed = draw(st.none() | st.lists(st.sampled_from(NAMES), unique=True, min_size=1))
    config = types.FunctionCallingConfig(
        mode=types.FunctionCallingConfigMode(mode), allowed_function_names=allowed
    )
    return types.ToolConfig(function_calling_config=config)


@st.composite
def generation(draw: st.DrawFn) -> types.GenerationConfig:
    thinking = draw(
        st.none()
        | st.builds(
            types.ThinkingConfig,
            thinking_budget=st.none() | st.sampled_from([-1, 0, 1024, 8192]),
            include_thoughts=st.none() | st.booleans(),
            thinking_level=st.none() | st.sampled_from(["LOW", "MEDIUM", "HIGH"]),
        )
    )
    return types.GenerationConfig(
        max_output_tokens=draw(st.none() | st.integers(1, 65536)),
        temperature=draw(st.none() | st.floats(0, 2)),
        top_p=draw(st.none() | st.floats(0, 1)),
        top_k=draw(st.none() | st.integers(1, 100)),
        stop_sequences=draw(st.none() | st.lists(texts, min_size=1, max_size=3)),
        candidate_count=draw(st.none() | st.integers(1, 4)),
        thinking_config=thinking,
        seed=draw(st.none() | st.integers(0, 1000)),
        response_mime_type=draw(st.none() | st.just("text/plain")),
    )


@st.composite
def bodies(draw: st.DrawFn) -> JSON:
    system = draw(
        st.none()
        | st.builds(
            types.Content,
            parts=st.lists(texts.map(lambda t: types.Part(text=t)), min_size=1, max_size=2),
            role=st.none() | st.just("user"),
        )
    )
    return sdk_body(
        draw(conversation()),
        system,
        draw(st.none() | tools()),
        draw(st.none() | tool_config()),
        draw(st.none() | generation()),
    )
