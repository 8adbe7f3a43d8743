"""What the catalogue claims of the agent CLIs beyond what the shared corpus shows (the
rest: test_compare_profiles_proven.py), proven by running them (app/streamscope/
realclients/agent_jobs.py) on a loopback replay that counts the requests each makes:

- what each shows of a stream that ends in the upstream's error (``stream.upstream-error``'s
  ``shows``): Claude Code asks again without streaming; Codex reads ``response.failed``
  (in its own words for a code it knows), not an ``error`` event alone; Qwen Code shows the
  message, but first asks again 3 times and joins the text of every attempt when the
  answer carries a request id;
- Claude Code on Anthropic's own stream cut by max_tokens in a tool call, whose block never
  got its ``content_block_stop``, as the SDK's fixture file keeps it (without the blank
  line after ``message_stop``): it takes the stream for a lost connection, asks again 3
  times joining the text, and fails (the cut is the provider's:
  ``provider.length-in-tool-call``; the stream as sent: test_agent_jobs_provider_outcomes.py).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from streamscope.lint import RULES, lint_bytes
from streamscope.realclients.agent_jobs import AgentJob, run_agent_jobs
from streamscope.realclients.compare import intended_answer
from streamscope.realclients.server import Replay, ReplayServer
from tests.clients.agent_support import DATA_DIR, installed
from tests.lint.answers import CHAT_ERROR
from tests.realclients.test_run_upstream_error import ANTHROPIC_ERROR, STREAMS
from tests.support import FIXTURES, load

pytestmark = pytest.mark.timeout(600)

SSE = [("content-type", "text/event-stream")]
SHOWS = RULES["stream.upstream-error"].shows


def replay(
    agent: str, raw: bytes, headers: list[tuple[str, str]] | None = None
) -> tuple[dict[str, Any], int]:
    """What ``agent`` made of ``raw`` (served with ``headers`` besides its Content-Type),
    and how many requests it sent for it."""
    installed(agent)

    async def run() -> tuple[dict[str, Any], int]:
        async with ReplayServer({"s": Replay(raw, 200, SSE + (headers or []))}) as server:
            job = AgentJob("j", agent, server.base("s"))
            result = (await run_agent_jobs([job], DATA_DIR, 120))["j"]
            return result, len(server.requests)

    return asyncio.run(run())


def _responses(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


RESPONSE = {"id": "resp_1", "object": "response", "created_at": 1, "model": "m", "output": []}
STARTED = [
    {
        "type": "response.created",
        "sequence_number": 0,
        "response": RESPONSE | {"status": "in_progress"},
    },
    {
        "type": "response.output_item.added",
        "sequence_number": 1,
        "output_index": 0,
        "item": {
            "id": "msg_1",
            "type": "message",
            "status": "in_progress",
            "role": "assistant",
            "content": [],
        },
    },
    {
        "type": "response.output_text.delta",
        "sequence_number": 2,
        "output_index": 0,
        "item_id": "msg_1",
        "content_index": 0,
        "delta": "Hel",
    },
]
FAILED = {
    "type": "response.failed",
    "sequence_number": 3,
    "response": RESPONSE
    | {"status": "failed", "error": {"code": "server_error", "message": "upstream overloaded"}},
}
FLAT_ERROR = {
    "type": "error",
    "sequence_number": 3,
    "code": "server_error",
    "message": "upstream overloaded",
    "param": None,
}


def test_claude_code_asks_again_without_streaming_at_an_error_event() -> None:
    result, requests = replay("claude-code", ANTHROPIC_ERROR)
    assert requests == 2  # the stream, then the same request without streaming
    assert "API returned an empty or malformed response" in result["error"]
    assert "non-streaming retry" in result["error"] and result["text"] == ""
    assert "asks again without streaming" in SHOWS["claude-code"]
    assert "API returned an empty or malformed response" in SHOWS["claude-code"]


def test_codex_shows_response_failed_not_an_error_event_alone() -> None:
    quota, quota_message = STREAMS["responses"]
    result, _ = replay("codex", quota)  # OpenAI's own: `error`, then `response.failed`
    assert result["error"] == "Quota exceeded. Check your plan and billing details."
    assert quota_message not in result["error"] and "Quota exceeded" in SHOWS["codex"]
    failed, _ = replay("codex", _responses(*STARTED, FAILED))
    assert failed["error"] == "stream disconnected before completion: upstream overloaded"
    assert failed["text"] == ""  # the "Hel" before it is not shown
    flat, _ = replay("codex", _responses(*STARTED, FLAT_ERROR))
    said = "stream disconnected before completion: stream closed before response.completed"
    assert flat["error"] == said and "upstream overloaded" not in said
    assert "stream closed before response.completed" in SHOWS["codex"]


def test_qwen_code_asks_again_and_joins_the_text_when_the_answer_has_a_request_id() -> None:
    plain, plain_requests = replay("qwen-code", CHAT_ERROR)
    assert plain_requests == 1 and plain["text"].startswith("Hel[API Error: upstream overloaded")
    assert plain["error"].startswith("[API Error: upstream overloaded")
    traced, traced_requests = replay("qwen-code", CHAT_ERROR, [("x-request-id", "req_1")])
    assert traced_requests == 4  # the stream and 3 more
    assert traced["text"].startswith("HelHelHelHel[API Error: upstream overloaded")
    assert traced["error"] == plain["error"]
    assert "asks again 3 times" in SHOWS["qwen-code"] and "x-request-id" in SHOWS["qwen-code"]


def test_claude_code_fails_on_anthropics_own_stream_cut_in_a_tool_call() -> None:
    path = FIXTURES / "anthropic" / "ant-py_max-tokens-mid-tool-json_padded.sse"
    raw = b"".join(f.raw for f in load(path).frames)
    report = lint_bytes(raw, "anthropic")
    found = [(f.rule_id, b.effect) for f, b in report.breaking("claude-code")]
    assert found[0] == ("provider.length-in-tool-call", "error"), found
    how = RULES["provider.length-in-tool-call"].breaks["claude-code"].how
    assert "Connection lost mid-response" in how
    result, requests = replay("claude-code", raw)
    text = intended_answer(raw, "anthropic").text
    assert result["error"].startswith("API Error: Connection lost mid-response")
    assert requests == 4 and result["text"] == text * 4  # each attempt's text, joined
    assert result["tool_calls"] == []  # the call it never got whole
