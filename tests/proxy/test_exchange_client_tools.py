"""A Responses client's freeform (``custom``) and namespaced tools, through the proxy over
upstreams of other protocols and back, with real sockets: the front
proxy translates the request (a custom tool becomes a function taking ``{"input": ...}``
for Anthropic; a namespace's functions become ``<namespace>__<name>``) and the upstream's
calls come back to openai-python as the client declared its tools."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import openai
import pytest

from tests.proxy.demo_support import demo_chain
from tests.proxy.harness import Running

TOOLS: list[Any] = [
    {
        "type": "custom",
        "name": "read_notes",
        "description": "Read the notes file of the project.",
        "format": {"type": "text"},
    },
    {
        "type": "namespace",
        "name": "files",
        "description": "File tools",
        "tools": [
            {
                "type": "function",
                "name": "list_dir",
                "description": "List the files in a directory.",
                "parameters": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                },
            }
        ],
    },
]


@pytest.fixture(scope="module")
def front() -> Iterator[Running]:
    with demo_chain() as (proxy, _):
        yield proxy


def calls(front: Running, model: str, stream: bool) -> list[tuple[str, str, str | None, str]]:
    """(type, name, namespace, input or arguments) of each call the client got."""
    oc = openai.OpenAI(api_key=front.key, base_url=front.v1, max_retries=0, timeout=30)
    with oc:
        if stream:
            with oc.responses.stream(model=model, input="What notes are there?", tools=TOOLS) as s:
                final = s.get_final_response()
        else:
            final = oc.responses.create(model=model, input="What notes are there?", tools=TOOLS)
    out = []
    for item in final.output:
        if item.type == "custom_tool_call":
            out.append((item.type, item.name, item.namespace, item.input))
        elif item.type == "function_call":
            out.append((item.type, item.name, item.namespace, item.arguments))
    return out


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
def test_over_anthropic_both_come_back_as_declared(front: Running, stream: bool) -> None:
    # Anthropic has neither: the custom tool went as a function taking {"input": string},
    # the namespace's function as files__list_dir; the client gets its own forms back.
    got = calls(front, "ant/demo-tools", stream)
    assert got == calls(front, "demo-tools", stream)  # what the demo says, untranslated
    kinds = [(kind, name, space) for kind, name, space, _ in got]
    assert kinds == [
        ("custom_tool_call", "read_notes", None),
        ("function_call", "list_dir", "files"),
    ]
    assert got[0][3] and not got[0][3].startswith("{")  # the input, out of its {"input": ..}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "body"])
def test_over_chat_the_namespace_comes_back(front: Running, stream: bool) -> None:
    got = calls(front, "chat/demo-tools", stream)
    assert ("function_call", "list_dir", "files", '{"path": "README.md"}') in got
