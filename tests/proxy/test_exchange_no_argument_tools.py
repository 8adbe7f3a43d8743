"""A tool called with no arguments, through every translation, as the
strict tool helpers of the official SDKs read it.

The upstream is a real recording: Claude calling ``updateIssueList`` with no arguments,
whose only ``input_json_delta`` has ``partial_json: ""``
(tests/fixtures/anthropic/vercel_tool-use_no-args.jsonl), sent by an Anthropic upstream
as recorded, and by an OpenAI Chat and a Responses upstream as our codecs translate it.
OpenAI sends ``"arguments": "{}"`` for such a call; ``""`` is no JSON, and the helpers
throw on it ("Invalid JSON: EOF while parsing"). Clients:

- openai-python ``chat.completions.stream()`` and ``.parse()`` with
  ``pydantic_function_tool``: ``parsed_arguments`` is the (empty) model;
- openai-python ``responses.stream()`` and ``.parse()`` with
  ``pydantic_responses_function_tool``: the same;
- anthropic-python ``messages.stream()``: its partial-JSON reader sees the tool block's
  ``input_json`` event (the empty delta kept) and the final ``input`` is ``{}``;
- openai-node ``chat.completions.stream()``/``.parse()`` with ``zodFunction`` and
  ``responses.stream()``/``.parse()`` with ``zodResponsesFunction`` (tests/clients/node/
  tools.mjs; skipped where node and npm are missing): ``parsed_arguments`` is ``{}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import openai
import pydantic
import pytest

from streamscope.config import OLD_KIND
from streamscope.lint import lint_bytes
from tests.clients.support import node_modules, node_tools, run_json
from tests.lint.cases import CASES as LINT_CASES
from tests.proxy.harness import KEY, Running, make_config, proxied
from tests.proxy.matrix_support import Case, upstream_handler
from tests.upstream_server import RecordedRequest, Script, run_in_thread

SOURCE = "anthropic/vercel_tool-use_no-args.jsonl"
KINDS = ("anthropic", "openai", "responses")
CASES = [
    Case(f"noargs-{kind}", kind, f"up-{kind}", SOURCE, f"noargs-{kind}", f"noargs-{kind}", ())
    for kind in KINDS
]


class updateIssueList(pydantic.BaseModel):  # noqa: N801 (the recorded tool's name)
    """Update the issue list."""

    model_config = pydantic.ConfigDict(extra="forbid")


def empty_arguments() -> bytes:
    """The linter's example of a call whose arguments are "" (a real recording of a
    ``GetWeatherArgs`` call, its arguments emptied): what a passthrough upstream sends on."""
    return next(c for c in LINT_CASES if c.rule == "stream.empty-tool-arguments").build()


def _chat_upstream(request: RecordedRequest) -> Script:
    if isinstance(request.json, dict) and request.json.get("model") == "empty-args":
        return Script(chunks=[empty_arguments()])
    return upstream_handler(CASES)(request)


@pytest.fixture(scope="module")
def running() -> Iterator[Running]:
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", _chat_upstream)
        up.route("POST", "/v1/messages", upstream_handler(CASES))
        up.route("POST", "/v1/responses", upstream_handler(CASES))
        upstreams = [
            {
                "name": f"up-{kind}",
                "protocol": OLD_KIND.get(kind, kind),
                "base_url": up.url + ("" if kind == "anthropic" else "/v1"),
                "accounts": [{"name": "a", "api_key": "sk-upstream-noargs"}],
                "models": [f"noargs-{kind}"],
            }
            for kind in KINDS
        ]
        passthrough = {
            "name": "up-passthrough",
            "protocol": "openai-chat",
            "mode": "passthrough",
            "base_url": up.url + "/v1",
            "accounts": [{"name": "a", "api_key": "sk-upstream-noargs"}],
            "models": ["empty-args"],
        }
        with proxied(make_config([*upstreams, passthrough])) as proxy:
            yield proxy


def _openai(running: Running) -> openai.OpenAI:
    return openai.OpenAI(api_key=KEY, base_url=running.v1, max_retries=0, timeout=30)


MESSAGES: Any = [{"role": "user", "content": "Update the issue list."}]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "parse"])
def test_chat_strict_helper_parses_a_call_with_no_arguments(
    running: Running, kind: str, stream: bool
) -> None:
    tools = [openai.pydantic_function_tool(updateIssueList)]
    with _openai(running) as client:
        if stream:
            with client.chat.completions.stream(
                model=f"noargs-{kind}", messages=MESSAGES, tools=tools
            ) as s:
                final = s.get_final_completion()
        else:
            final = client.chat.completions.parse(
                model=f"noargs-{kind}", messages=MESSAGES, tools=tools
            )
    (call,) = final.choices[0].message.tool_calls or []
    assert call.function.name == "updateIssueList"
    assert call.function.arguments == "{}"
    assert call.function.parsed_arguments == updateIssueList()
    assert final.choices[0].finish_reason == "tool_calls"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "parse"])
def test_responses_strict_helper_parses_a_call_with_no_arguments(
    running: Running, kind: str, stream: bool
) -> None:
    tools = [openai.pydantic_responses_function_tool(updateIssueList)]
    with _openai(running) as client:
        if stream:
            with client.responses.stream(
                model=f"noargs-{kind}", input="Update the issue list.", tools=tools
            ) as s:
                final = s.get_final_response()
        else:
            final = client.responses.parse(
                model=f"noargs-{kind}", input="Update the issue list.", tools=tools
            )
    calls = [item for item in final.output if item.type == "function_call"]
    assert [c.name for c in calls] == ["updateIssueList"]
    assert calls[0].arguments == "{}"
    assert calls[0].parsed_arguments == updateIssueList()


@pytest.mark.parametrize("kind", KINDS)
def test_anthropic_partial_json_reader_sees_the_block_of_a_call_with_no_arguments(
    running: Running, kind: str
) -> None:
    with (
        anthropic.Anthropic(api_key=KEY, base_url=running.url, max_retries=0, timeout=30) as ac,
        ac.messages.stream(
            model=f"noargs-{kind}",
            max_tokens=256,
            messages=MESSAGES,
            tools=[{"name": "updateIssueList", "input_schema": {"type": "object"}}],
        ) as s,
    ):
        events = list(s)
        final = s.get_final_message()
    snapshots = [e.snapshot for e in events if e.type == "input_json"]
    assert snapshots == [{}]  # the SDK's partial reader saw the block's (empty) input
    (tool,) = [b for b in final.content if b.type == "tool_use"]
    assert (tool.name, tool.input) == ("updateIssueList", {})
    assert final.stop_reason == "tool_use"


NODE_CLIENTS = ("chat-stream", "chat-parse", "responses-stream", "responses-parse")


def test_node_strict_helpers_parse_a_call_with_no_arguments(running: Running) -> None:
    folder = node_modules()  # skips without node/npm; fails when the install does
    tools = node_tools()
    assert tools is not None
    jobs = [
        {
            "client": client,
            "baseURL": running.v1,
            "key": KEY,
            "model": f"noargs-{kind}",
            "tool": "updateIssueList",
        }
        for kind in KINDS
        for client in NODE_CLIENTS
    ]
    outs = run_json([tools[0], str(folder.path / "tools.mjs"), json.dumps(jobs)])
    want = {"calls": [{"name": "updateIssueList", "arguments": "{}", "parsed": {}}], "error": None}
    got = {(j["client"], j["model"]): o for j, o in zip(jobs, outs, strict=True)}
    assert got == {key: want for key in got}


class GetWeatherArgs(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")


def test_the_linters_claim_holds_where_passthrough_leaves_the_empty_string(
    running: Running,
) -> None:
    # Passthrough changes nothing: the client gets the upstream's "" — and the strict
    # helpers throw on it, as the rule says; the plain stream still assembles.
    tools = [openai.pydantic_function_tool(GetWeatherArgs)]
    with _openai(running) as client:
        with (
            pytest.raises(pydantic.ValidationError, match="EOF while parsing"),
            client.chat.completions.stream(model="empty-args", messages=MESSAGES, tools=tools) as s,
        ):
            s.get_final_completion()
        with client.chat.completions.stream(model="empty-args", messages=MESSAGES) as s:
            (call,) = s.get_final_completion().choices[0].message.tool_calls or []
        assert call.function.arguments == ""
    report = lint_bytes(empty_arguments(), "openai-chat")
    (finding,) = [f for f in report.findings if f.rule.id == "stream.empty-tool-arguments"]
    assert {p for p in ("openai-python-chat", "openai-node") if finding.breaks(p)} == {
        "openai-python-chat",
        "openai-node",
    }
    folder = node_modules()
    tools_ = node_tools()
    assert tools_ is not None
    job = {
        "client": "chat-stream",
        "baseURL": running.v1,
        "key": KEY,
        "model": "empty-args",
        "tool": "GetWeatherArgs",
    }
    out = run_json([tools_[0], str(folder.path / "tools.mjs"), json.dumps(job)])
    assert "invalid structured output JSON" in (out["error"] or ""), out
