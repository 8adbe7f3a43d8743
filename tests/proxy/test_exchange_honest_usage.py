"""Honest usage: an upstream that sends no usage gets none invented.

The upstream: a real Chat recording (tests/fixtures/openai-chat/oai-py_text_usage_done.sse)
with its usage chunk taken out, as a provider that ignores ``stream_options`` sends it.
Through the proxy:

- a Chat client that asked for usage gets no usage chunk (the chunk is optional; zeros
  would be a count nobody measured);
- Anthropic, Responses and LM Studio clients, whose protocols require counts, get
  estimates — input from the request's characters, output one per delta — each frame
  carrying them preceded by the comment ``: usage estimated by StreamScope …``, which the
  official SDKs ignore; before, Responses clients got every count at zero;
- the flow says ``tokens_estimated``; with the upstream's usage, nothing is estimated.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from streamscope.codecs import get_codec
from streamscope.model.estimate import NOTE
from streamscope.proxy.paths import ENDPOINTS
from tests.proxy.harness import KEY, Running, make_config, proxied
from tests.proxy.test_relay_streaming import body_for
from tests.support import FIXTURES
from tests.upstream_server import RecordedRequest, Script, run_in_thread

SOURCE = FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse"
FRAMES = [f + b"\n\n" for f in SOURCE.read_bytes().split(b"\n\n") if f.strip()]
WITHOUT_USAGE = [f for f in FRAMES if b'"usage":{' not in f]
DELTAS = sum(b'"content":"' in f and b'"content":""' not in f for f in WITHOUT_USAGE)
PATHS = {p: path for path, p in ENDPOINTS.items() if get_codec(p).requires_usage}


def _upstream(request: RecordedRequest) -> Script:
    model = (request.json or {}).get("model")
    return Script(chunks=list(WITHOUT_USAGE if model == "no-usage" else FRAMES))


@pytest.fixture(scope="module")
def running() -> Iterator[Running]:
    assert len(WITHOUT_USAGE) == len(FRAMES) - 1 and DELTAS > 5
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", _upstream)
        upstream = {
            "name": "up",
            "protocol": "openai-chat",
            "base_url": up.url + "/v1",
            "accounts": [{"name": "a", "api_key": "sk-upstream-usage"}],
            "models": ["no-usage", "with-usage"],
        }
        with proxied(make_config([upstream])) as proxy:
            yield proxy


def _flow(running: Running, request_id: str) -> Any:
    flows = running.server.app.flows
    assert flows is not None
    flows.flush()
    summary = flows.summary(request_id)
    assert summary is not None
    return summary


def test_a_chat_client_gets_no_invented_usage_chunk(running: Running) -> None:
    with openai.OpenAI(api_key=KEY, base_url=running.v1, max_retries=0) as client:
        chunks = list(
            client.chat.completions.create(
                model="no-usage",
                messages=[{"role": "user", "content": "hi"}],
                stream=True,
                stream_options={"include_usage": True},
            )
        )
    assert chunks and all(c.usage is None for c in chunks)


def test_a_gemini_client_gets_no_invented_usage_either(running: Running) -> None:
    # Gemini's usageMetadata is optional on a chunk (a Gemini stream's counts come with
    # each chunk the upstream counted): none is made up where the upstream sent none.
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    path = "/v1beta/models/{}:streamGenerateContent?alt=sse"
    headers = {"x-goog-api-key": KEY}
    bare = httpx.post(running.url + path.format("no-usage"), json=body, headers=headers)
    counted = httpx.post(running.url + path.format("with-usage"), json=body, headers=headers)
    assert bare.status_code == counted.status_code == 200
    assert b"usageMetadata" not in bare.content and NOTE.encode() not in bare.content
    assert b"usageMetadata" in counted.content


def test_responses_and_anthropic_clients_get_flagged_estimates(running: Running) -> None:
    prompt = "What is the weather like in San Francisco today, please?"
    with openai.OpenAI(api_key=KEY, base_url=running.v1, max_retries=0) as client:
        with client.responses.stream(model="no-usage", input=prompt) as s:
            final = s.get_final_response()
    assert final.usage is not None
    assert final.usage.output_tokens == DELTAS  # one per delta, not 0
    assert abs(final.usage.input_tokens - len(prompt) / 4) <= 4  # characters / 4, not 0
    with anthropic.Anthropic(api_key=KEY, base_url=running.url, max_retries=0) as client:
        with client.messages.stream(
            model="no-usage", max_tokens=64, messages=[{"role": "user", "content": prompt}]
        ) as s:
            message = s.get_final_message()
    assert message.usage.output_tokens == DELTAS
    assert abs(message.usage.input_tokens - len(prompt) / 4) <= 4


@pytest.mark.parametrize("client", list(PATHS))
def test_the_wire_says_they_are_estimates_and_so_does_the_flow(
    running: Running, client: str
) -> None:
    headers = {"authorization": f"Bearer {KEY}"}
    r = httpx.post(running.url + PATHS[client], json=body_for(client, "no-usage"), headers=headers)
    assert r.status_code == 200
    assert f": {NOTE}\n\n".encode() in r.content
    summary = _flow(running, r.headers["x-request-id"])
    assert summary.tokens == DELTAS and summary.tokens_estimated is True
    # With the upstream's usage: its counts, nothing estimated, no note.
    r = httpx.post(
        running.url + PATHS[client], json=body_for(client, "with-usage"), headers=headers
    )
    # (Anthropic's message_start needs the input count before a Chat upstream's usage,
    # which comes last: only that one is estimated, and said so; the end has them all.)
    assert r.content.count(NOTE.encode()) == (1 if client == "anthropic" else 0)
    summary = _flow(running, r.headers["x-request-id"])
    assert summary.tokens_estimated is False
    usage = json.loads(next(f for f in reversed(FRAMES) if b'"usage":{' in f)[6:])["usage"]
    assert summary.tokens == usage["completion_tokens"]


@pytest.mark.parametrize(("model", "estimated"), [("no-usage", True), ("with-usage", False)])
def test_the_client_legs_timing_knows_an_estimate_from_a_count(
    running: Running, model: str, estimated: bool
) -> None:
    # Anthropic over a Chat upstream: message_start's input count is always estimated
    # (the usage comes last); the leg's output count is an estimate only without usage.
    from streamscope.analysis.view import flow_reading

    headers = {"authorization": f"Bearer {KEY}"}
    r = httpx.post(
        running.url + PATHS["anthropic"], json=body_for("anthropic", model), headers=headers
    )
    flows = running.server.app.flows
    assert flows is not None
    flows.flush()
    flow = flows.get(r.headers["x-request-id"])
    assert flow is not None
    timing = flow_reading(flow, "client").timing
    assert timing.tokens_estimated is estimated
    assert timing.output_tokens == (DELTAS if estimated else 30)


@pytest.mark.parametrize("client", list(PATHS))
def test_a_whole_answer_says_its_estimates_in_a_header(running: Running, client: str) -> None:
    headers = {"authorization": f"Bearer {KEY}"}
    body = body_for(client, "no-usage", stream=False)
    r = httpx.post(running.url + PATHS[client], json=body, headers=headers)
    assert r.status_code == 200 and r.headers["x-streamscope-usage"] == "estimated"
    answer = r.json()
    usage = answer.get("usage") or answer.get("stats") or answer["result"]["stats"]
    counts = [v for k, v in usage.items() if k in ("input_tokens", "output_tokens")]
    counts += [v for k, v in usage.items() if k == "total_output_tokens"]  # LM Studio's
    assert len(counts) == 2 and all(n > 0 for n in counts), usage
    r = httpx.post(
        running.url + PATHS[client],
        json=body_for(client, "with-usage", stream=False),
        headers=headers,
    )
    assert r.status_code == 200 and "x-streamscope-usage" not in r.headers
