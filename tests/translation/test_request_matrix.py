"""What has a meaning on the other side is translated, for every
client protocol against every upstream protocol; what has none is left out and said.

Each case is a client body in its own protocol, decoded, translated for each upstream
protocol (translation/request.py), and read back from the upstream's body."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from streamscope.codecs import get_codec
from streamscope.translation.request import Translated, translate_request

CLIENTS = ["openai-chat", "anthropic", "responses", "gemini"]
UPSTREAMS = ["openai-chat", "anthropic", "responses", "lmstudio", "gemini"]
PAIRS = [(c, u) for c in CLIENTS for u in UPSTREAMS if c != u]


def _translate(client: str, upstream: str, body: dict[str, Any]) -> Translated:
    request = get_codec(client).decode_request(copy.deepcopy(body))
    return translate_request(request, get_codec(upstream))


def _notes(t: Translated) -> dict[str, str]:
    return {n.field: n.action for n in t.notes}


# -- mid-conversation instructions ---------------------------------------------------------

MID_SYSTEM = {
    "openai-chat": {
        "model": "m",
        "messages": [
            {"role": "system", "content": "LEAD"},
            {"role": "user", "content": "one"},
            {"role": "developer", "content": "MIDDLE"},
            {"role": "user", "content": "two"},
        ],
    },
    "anthropic": {
        "model": "m",
        "max_tokens": 50,
        "system": "LEAD",
        "messages": [
            {"role": "user", "content": "one"},
            {"role": "system", "content": "MIDDLE"},
            {"role": "user", "content": "two"},
        ],
    },
    "responses": {
        "model": "m",
        "instructions": "LEAD",
        "input": [
            {"role": "user", "content": "one"},
            {"role": "developer", "content": "MIDDLE"},
            {"role": "user", "content": "two"},
        ],
    },
}


def _order(upstream: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, text) of the upstream body's turns, in order, the lead instruction first."""
    out: list[tuple[str, str]] = []
    if upstream == "anthropic":
        out.append(("system", body["system"]))
        turns = body["messages"]
    elif upstream == "responses":
        out.append(("system", body["instructions"]))
        turns = body["input"]
    elif upstream == "gemini":
        out.append(("system", body["systemInstruction"]["parts"][0]["text"]))
        turns = [
            {"role": t["role"], "content": [{"text": p["text"]} for p in t["parts"]]}
            for t in body["contents"]
        ]
    else:
        turns = body["messages"]
    for turn in turns:
        content = turn["content"]
        text = content if isinstance(content, str) else "".join(p["text"] for p in content)
        role = {"developer": "system"}.get(turn["role"], turn["role"])
        out.append((role, text))
    return out


@pytest.mark.parametrize(("client", "upstream"), [p for p in PAIRS if p[0] in MID_SYSTEM])
def test_an_instruction_mid_conversation_stays_at_its_place(client: str, upstream: str) -> None:
    # (a Gemini body has no instruction but its systemInstruction, so it is no client here)
    t = _translate(client, upstream, MID_SYSTEM[client])
    if upstream == "lmstudio":
        # one input: the earlier turns as a transcript, the instruction in its place
        transcript = t.body["input"]
        assert t.body["system_prompt"] == "LEAD"
        assert (
            transcript.index("User: one")
            < transcript.index("System: MIDDLE")
            < transcript.index("two")
        )
        return
    if upstream == "gemini":
        # Gemini's turns are user and model only: the instruction stays in its place as a
        # user turn, and the change is said
        want = [("system", "LEAD"), ("user", "one"), ("user", "MIDDLE"), ("user", "two")]
        assert _order(upstream, t.body) == want
        assert _notes(t)["system message"] == "changed"
        return
    want = [("system", "LEAD"), ("user", "one"), ("system", "MIDDLE"), ("user", "two")]
    assert _order(upstream, t.body) == want


# -- reasoning effort ------------------------------------------------------------------------

EFFORT = {
    "openai-chat": {
        "model": "m",
        "messages": [{"role": "user", "content": "x"}],
        "reasoning_effort": "high",
    },
    "anthropic": {
        "model": "m",
        "max_tokens": 50,
        "messages": [{"role": "user", "content": "x"}],
        "thinking": {"type": "adaptive"},
        "output_config": {"effort": "high"},
    },
    "responses": {"model": "m", "input": "x", "reasoning": {"effort": "high"}},
    "gemini": {
        "contents": [{"role": "user", "parts": [{"text": "x"}]}],
        "generationConfig": {"thinkingConfig": {"thinkingLevel": "high"}},
    },
}


def _effort_sent(upstream: str, body: dict[str, Any]) -> Any:
    if upstream == "openai-chat":
        return body["reasoning_effort"]
    if upstream == "responses":
        return body["reasoning"]["effort"]
    if upstream == "lmstudio":
        return body["reasoning"]
    if upstream == "gemini":
        return body["generationConfig"]["thinkingConfig"]["thinkingLevel"].lower()
    return body["thinking"]


@pytest.mark.parametrize(("client", "upstream"), PAIRS)
def test_a_reasoning_effort_maps_to_the_upstreams_setting(client: str, upstream: str) -> None:
    t = _translate(client, upstream, EFFORT[client])
    sent = _effort_sent(upstream, t.body)
    if upstream == "anthropic":
        assert sent == {"type": "enabled", "budget_tokens": 24576}  # high's budget
        assert t.body["max_tokens"] > 24576
        assert _notes(t)["reasoning effort"] == "changed"
    else:
        assert sent == "high"


# -- freeform tools ------------------------------------------------------------------------

CUSTOM = {
    "openai-chat": {
        "model": "m",
        "messages": [{"role": "user", "content": "patch"}],
        "tools": [
            {"type": "custom", "custom": {"name": "apply_patch", "format": {"type": "text"}}}
        ],
    },
    "responses": {
        "model": "m",
        "input": "patch",
        "tools": [{"type": "custom", "name": "apply_patch", "format": {"type": "text"}}],
    },
}


@pytest.mark.parametrize(("client", "upstream"), [p for p in PAIRS if p[0] in CUSTOM])
def test_a_freeform_tool_goes_where_the_upstream_has_a_form_for_it(
    client: str, upstream: str
) -> None:
    t = _translate(client, upstream, CUSTOM[client])
    tools = t.body.get("tools", [])
    if upstream == "openai-chat":
        assert tools == [
            {"type": "custom", "custom": {"name": "apply_patch", "format": {"type": "text"}}}
        ]
    elif upstream == "responses":
        assert tools == [{"type": "custom", "name": "apply_patch", "format": {"type": "text"}}]
    elif upstream == "anthropic":
        (tool,) = tools
        assert tool["name"] == "apply_patch" and tool["input_schema"]["required"] == ["input"]
        assert _notes(t)["tool 'apply_patch'"] == "changed"
    elif upstream == "gemini":
        # a function taking the text as its one string argument, and the change said
        ((tool,),) = [t["functionDeclarations"] for t in tools]
        schema = tool["parametersJsonSchema"]
        assert tool["name"] == "apply_patch" and schema["properties"]["input"]["type"] == "string"
        assert _notes(t)["tool 'apply_patch'"] == "changed"
    else:
        assert tools == [] and _notes(t)["tools"] == "dropped"


# -- server tools --------------------------------------------------------------------------

SERVER = {
    "openai-chat": (
        {"model": "m", "messages": [{"role": "user", "content": "x"}], "web_search_options": {}},
        "web_search_options",
    ),
    "anthropic": (
        {
            "model": "m",
            "max_tokens": 50,
            "messages": [{"role": "user", "content": "x"}],
            "tools": [{"type": "web_search_20250305", "name": "web_search"}],
        },
        "tools[0]",
    ),
    "responses": ({"model": "m", "input": "x", "tools": [{"type": "web_search"}]}, "tools[0]"),
    "gemini": (
        {"contents": [{"role": "user", "parts": [{"text": "x"}]}], "tools": [{"googleSearch": {}}]},
        "tools[0].googleSearch",
    ),
}


@pytest.mark.parametrize(("client", "upstream"), PAIRS)
def test_a_server_tool_stays_on_its_protocol_and_is_noted_elsewhere(
    client: str, upstream: str
) -> None:
    body, field = SERVER[client]
    t = _translate(client, upstream, body)
    assert _notes(t)[field] == "dropped"
    assert "web_search" not in json.dumps(t.body) and "googleSearch" not in json.dumps(t.body)


@pytest.mark.parametrize("client", CLIENTS)
def test_the_same_protocol_keeps_its_server_tool(client: str) -> None:
    body, _ = SERVER[client]
    t = _translate(client, client, body)
    assert t.notes == ()
    assert ("googleSearch" if client == "gemini" else "web_search") in json.dumps(t.body)
