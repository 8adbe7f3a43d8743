"""The official Python SDKs' stream helpers as the real-client runs use them
(app/streamscope/realclients/python_clients.py), over recorded streams served on a real
socket: what each assembled is what the recording says (read here from its JSON, not by
StreamScope's decoder), a stream cut by ``max_tokens`` is still handed over, and a
failure is the result (its type and message), not an exception."""

from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from streamscope.realclients.python_clients import quiet_clients, run_python_client
from streamscope.realclients.server import Replay, ReplayServer
from tests.support import FIXTURES, load


def payloads(path: Path) -> list[Any]:
    """The recording's JSON payloads, in order (``[DONE]`` left out)."""
    return [json.loads(f.data) for f in load(path).frames if f.data and f.data != "[DONE]"]


def run(client: str, replay: Replay) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        async with ReplayServer({"k": replay}) as server:
            base = server.base("k") + ("" if client == "anthropic-python" else "/v1")
            with quiet_clients():
                return await asyncio.to_thread(run_python_client, client, base, 10)

    return asyncio.run(main())


def stream(path: Path) -> Replay:
    return Replay(b"".join(f.raw for f in load(path).frames))


def test_openai_chat_assembles_the_recorded_text_finish_and_usage() -> None:
    path = FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse"
    chunks = payloads(path)
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    (usage,) = [c["usage"] for c in chunks if c.get("usage")]
    got = run("openai-python-chat", stream(path))
    assert got["error"] is None, got["error"]
    assert got["text"] == text and len(text) > 20
    assert got["finish"] == "stop" and got["tool_calls"] == []
    assert got["usage"] == [usage["prompt_tokens"], usage["completion_tokens"]]


def test_openai_chat_tool_calls_and_a_stream_cut_by_max_tokens() -> None:
    path = FIXTURES / "openai-chat" / "oai-py_tool-call-single.sse"
    calls = [
        tc
        for c in payloads(path)
        if c["choices"]
        for tc in c["choices"][0]["delta"].get("tool_calls") or []
    ]
    got = run("openai-python-chat", stream(path))
    assert got["error"] is None and got["finish"] == "tool_calls"
    assert got["tool_calls"] == [
        [calls[0]["function"]["name"], "".join(tc["function"]["arguments"] for tc in calls)]
    ]
    # openai-python refuses to "parse" a completion cut by max_tokens: it is kept anyway.
    cut = run("openai-python-chat", stream(FIXTURES / "openai-chat" / "oai-py_finish-length.sse"))
    assert cut["error"] is None and cut["finish"] == "length" and cut["text"]


def test_anthropic_assembles_the_recorded_text_stop_and_usage() -> None:
    path = FIXTURES / "anthropic" / "ant-py_basic-text.sse"
    events = payloads(path)
    text = "".join(
        e["delta"]["text"]
        for e in events
        if e["type"] == "content_block_delta" and e["delta"]["type"] == "text_delta"
    )
    start = next(e for e in events if e["type"] == "message_start")
    end = next(e for e in events if e["type"] == "message_delta")
    got = run("anthropic-python", stream(path))
    assert got["error"] is None, got["error"]
    assert got["text"] == text and got["finish"] == end["delta"]["stop_reason"]
    assert got["usage"] == [
        start["message"]["usage"]["input_tokens"],
        end["usage"]["output_tokens"],
    ]


def test_responses_assembles_the_recorded_text_and_status() -> None:
    path = FIXTURES / "responses" / "vercel_openai-gpt41nano_text.jsonl"
    events = payloads(path)
    text = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    done = next(e for e in events if e["type"] == "response.completed")["response"]
    got = run("openai-python-responses", stream(path))
    assert got["error"] is None, got["error"]
    assert got["text"] == text and text
    assert got["finish"] == done["status"] == "completed"
    assert got["usage"] == [done["usage"]["input_tokens"], done["usage"]["output_tokens"]]


@pytest.mark.parametrize("client", ["openai-python-chat", "anthropic-python"])
def test_a_failure_is_the_result_with_its_type_and_message(client: str) -> None:
    body = b'{"error": {"type": "overloaded_error", "message": "Overloaded right now"}}'
    got = run(client, Replay(body, 529, [("content-type", "application/json")]))
    assert got["error"] is not None and "Overloaded right now" in got["error"]
    assert got["error"].split(":")[0].endswith("Error")  # the SDK's exception type
    assert (got["text"], got["tool_calls"], got["usage"]) == ("", [], None)
    nowhere = run_python_client("openai-python-chat", "http://127.0.0.1:9/v1", 5)
    assert nowhere["error"] is not None and nowhere["error"].startswith("APIConnectionError")


def test_quiet_clients_silences_only_pydantics_serializer_warnings() -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with quiet_clients():
            warnings.warn("Pydantic serializer warnings: Expected `str`", UserWarning, 1)
            warnings.warn("something else", UserWarning, 1)
        warnings.warn("Pydantic serializer warnings: after the run", UserWarning, 1)
    assert [str(w.message) for w in seen] == [
        "something else",
        "Pydantic serializer warnings: after the run",  # the filter is gone again
    ]
