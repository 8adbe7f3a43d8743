"""POST /v1/messages/count_tokens: interactive Claude Code asks it,
and it was a 404. The count is the Anthropic upstream's own answer where there is one
(asked with an account's key, never the local key), an estimate marked as such for every
other upstream and the demo; a body that is no Messages request gets Anthropic's error
envelope. Driven by the official anthropic SDK's own ``messages.count_tokens``."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import anthropic
import httpx
import pytest

from streamscope.codecs import get_codec
from streamscope.model.estimate import input_estimate
from tests.proxy.harness import KEY, Running, make_config, proxied
from tests.upstream_server import RecordedRequest, Script, UpstreamServer, run_in_thread

UPSTREAM_KEY = "sk-ant-upstream-count-0123456789"
MESSAGES = [{"role": "user", "content": "How many tokens is this sentence, roughly?"}]


@dataclass
class Env:
    proxy: Running
    up: UpstreamServer


def _counted(request: RecordedRequest) -> Script:
    if request.headers.get("x-api-key") != UPSTREAM_KEY:
        return Script(401, body_json={"type": "error", "error": {"type": "authentication_error"}})
    return Script(body_json={"input_tokens": 4242})


@pytest.fixture(scope="module")
def env() -> Iterator[Env]:
    with run_in_thread() as up:
        up.route("POST", "/v1/messages/count_tokens", _counted)
        upstreams = [
            {
                "name": "claude",
                "protocol": "anthropic",
                "base_url": up.url,
                "accounts": [{"name": "a", "api_key": UPSTREAM_KEY}],
                "models": ["claude-test"],
            },
            {
                "name": "chat",
                "protocol": "openai-chat",
                "base_url": up.url + "/v1",
                "accounts": [{"name": "b", "api_key": "sk-chat-upstream-0123456789"}],
                "models": ["gpt-test"],
            },
            {"name": "demo", "protocol": "demo"},
        ]
        with proxied(make_config(upstreams)) as proxy:
            yield Env(proxy, up)


def _client(env: Env) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, base_url=env.proxy.url, max_retries=0)


def test_an_anthropic_upstream_counts_itself(env: Env) -> None:
    with _client(env) as client:
        counted = client.messages.count_tokens(model="claude/claude-test", messages=MESSAGES)
    assert counted.input_tokens == 4242
    seen = [r for r in env.up.requests if r.path == "/v1/messages/count_tokens"][-1]
    assert seen.json == {"model": "claude-test", "messages": MESSAGES}  # routed name
    assert seen.headers["x-api-key"] == UPSTREAM_KEY
    assert KEY not in str(seen.headers)
    assert seen.headers.get("anthropic-version")


@pytest.mark.parametrize("model", ["chat/gpt-test", "demo-chat"])
def test_other_upstreams_get_an_estimate_marked_as_such(env: Env, model: str) -> None:
    body = {"model": model, "messages": MESSAGES, "system": "Be brief."}
    with _client(env) as client:
        raw = client.messages.with_raw_response.count_tokens(**body)  # type: ignore[arg-type]
    assert raw.headers["x-streamscope-usage"] == "estimated"
    want = input_estimate(get_codec("anthropic").decode_request({**body, "max_tokens": 1}))
    assert raw.parse().input_tokens == want > 0


def test_a_body_that_is_no_messages_request_gets_anthropics_envelope(env: Env) -> None:
    with httpx.Client(base_url=env.proxy.url, headers={"x-api-key": KEY}) as http:
        bad = http.post("/v1/messages/count_tokens", json={"model": "demo-chat", "messages": 3})
        wrong = http.get("/v1/messages/count_tokens")
    assert bad.status_code == 400
    assert bad.json()["type"] == "error"
    assert bad.json()["error"]["type"] == "invalid_request_error"
    assert "messages" in bad.json()["error"]["message"]
    assert wrong.status_code == 405 and wrong.json()["type"] == "error"


def test_it_is_no_flow(env: Env) -> None:
    flows = env.proxy.server.app.flows
    assert flows is not None
    flows.flush()
    _, before = flows.summaries()
    with _client(env) as client:
        client.messages.count_tokens(model="demo-chat", messages=MESSAGES)
        client.messages.create(model="demo-chat", max_tokens=20, messages=MESSAGES)
    flows.flush()
    _, after = flows.summaries()
    assert after == before + 1  # the message, not the count
