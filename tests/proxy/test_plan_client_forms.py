"""The client's answer is encoded in the form its client reads (:func:`make_plan` asks the
client's codec, with the request's User-Agent: ``Codec.client_options``), over real
sockets and from every upstream protocol: a Chat client that says it is @ai-sdk/xai
(Cherry Studio's Grok) gets each tool call whole in one chunk, as xAI sends calls; one
that says it is @openrouter/ai-sdk-provider gets the reasoning in ``reasoning``; any
other Chat client gets the default form (arguments in pieces, ``reasoning_content``).
The linter names @ai-sdk/xai's limit in the default form and not in the whole one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from streamscope.lint import lint_bytes
from tests.proxy.demo_support import demo_chain
from tests.proxy.harness import KEY, Running

# what each provider sends (measured by running it: ai-sdk/<provider>/<version> first)
XAI = "ai-sdk/xai/3.0.138 ai-sdk/provider-utils/4.0.56 runtime/node.js/v20.20.2"
OPENROUTER = "ai-sdk/openrouter/2.10.0 ai-sdk/provider-utils/4.0.23 runtime/node.js/v20.20.2"
OTHER = "ai-sdk/openai/3.0.141 ai-sdk/provider-utils/4.0.66 runtime/node.js/v20.20.2"
UPSTREAMS = ["demo", "ant", "chat", "rrep", "rpass"]
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
    },
}


@pytest.fixture(scope="module")
def front() -> Iterator[Running]:
    with demo_chain() as (proxy, _):
        yield proxy


def _stream(front: Running, model: str, agent: str) -> tuple[bytes, list[dict[str, Any]]]:
    body = {
        "model": model,
        "messages": [{"role": "user", "content": "What is the weather in Lyon?"}],
        "stream": True,
        "tools": [TOOL],
    }
    headers = {"authorization": f"Bearer {KEY}", "user-agent": agent}
    answer = httpx.post(front.v1 + "/chat/completions", json=body, headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text
    chunks = [
        json.loads(line[6:]) for line in answer.text.splitlines() if line.startswith("data: {")
    ]
    return answer.content, chunks


def _calls(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        call
        for c in chunks
        for ch in c.get("choices") or []
        for call in ch["delta"].get("tool_calls") or []
    ]


@pytest.mark.parametrize("up", UPSTREAMS)
def test_grok_gets_each_call_whole(front: Running, up: str) -> None:
    raw, chunks = _stream(front, f"{up}/demo-tools", XAI)
    calls = _calls(chunks)
    assert calls, chunks
    for call in calls:  # what @ai-sdk/xai's chunk schema asks of every call
        assert isinstance(call["id"], str) and call["type"] == "function"
        assert call["function"]["name"] == "get_weather"
        assert isinstance(json.loads(call["function"]["arguments"]), dict)
    assert len({c["index"] for c in calls}) == len(calls)  # one chunk per call
    rules = {f.rule_id for f in lint_bytes(raw, "openai-chat").findings}
    assert "chat.tool-call-in-pieces" not in rules

    raw, chunks = _stream(front, f"{up}/demo-tools", OTHER)
    assert len(_calls(chunks)) > len({c["index"] for c in _calls(chunks)})  # in pieces
    report = lint_bytes(raw, "openai-chat")
    assert [f.rule_id for f in report.findings] == ["chat.tool-call-in-pieces"]
    assert report.errors == []  # a client's limit, not the stream's fault
    assert report.verdicts()["cherry-xai"].startswith("would fail in Cherry Studio (Grok")
    assert report.verdicts()["cherry-openai"].startswith("ok")


@pytest.mark.parametrize("up", UPSTREAMS)
def test_openrouter_gets_the_reasoning_in_its_field(front: Running, up: str) -> None:
    for agent, field, other in (
        (OPENROUTER, "reasoning", "reasoning_content"),
        (OTHER, "reasoning_content", "reasoning"),
    ):
        _, chunks = _stream(front, f"{up}/demo-reasoning", agent)
        deltas = [ch["delta"] for c in chunks for ch in c.get("choices") or []]
        thought = "".join(d.get(field) or "" for d in deltas)
        assert thought.startswith("The user wrote"), (agent, deltas)
        assert not any(other in d for d in deltas)
