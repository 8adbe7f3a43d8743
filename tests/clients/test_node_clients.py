"""Every Node client connects with the README's base URLs.

The official ``openai`` and ``@anthropic-ai/sdk`` Node SDKs and the Vercel AI SDK (``ai``
with ``@ai-sdk/openai`` ``.chat()`` and ``.responses()``, ``@ai-sdk/anthropic``,
``@ai-sdk/openai-compatible``, ``@ai-sdk/azure``: what Cherry Studio's OpenAI,
OpenAI-Response and Anthropic provider types run on), installed by tests/clients/support.py
and driven by tests/clients/node/stream.mjs, against a real proxy on a loopback port with
the demo backend behind it.

Each client is run with the base URL the README's table gives, which must stream the demo's
answer (exact text, in pieces, the finish and the usage), and with the other form (``/v1``
added or left off), which works too or gets a 404 naming the doubled ``/v1``. Cherry
Studio appends ``/v1`` to the API host itself, so a host pasted with ``/v1`` makes its
providers call ``/v1/v1/...``: that gets a 404 naming the mistake, in each protocol.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from streamscope.lint.sender import sender_of
from tests.clients.support import (
    DOUBLED,
    DOUBLED_HINT,
    INSTALL_TIMEOUT,
    NODE_PINS,
    PATH,
    ROOT,
    V1,
    WORKS,
    Seen,
    expected_output_tokens,
    expected_text,
    flows_by_nonce,
    node_modules,
    node_tools,
    run_json,
)
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import Running, proxied

# The first test to run may pay for a cold npm install.
pytestmark = pytest.mark.timeout(INSTALL_TIMEOUT)


@dataclass(frozen=True)
class Client:
    name: str  # stream.mjs's name for it
    protocol: str
    base: str  # what the README says to paste after http://127.0.0.1:PORT
    key_header: str  # the header the client sends the key in
    finish: str  # the finish it reports for demo-chat
    other: str  # what the other base URL form gives: WORKS or DOUBLED


# fmt: off
CLIENTS = [
    Client("openai-chat", "openai-chat", V1, "authorization", "stop", WORKS),
    Client("openai-responses", "responses", V1, "authorization", "completed", WORKS),
    # @anthropic-ai/sdk 1.x sends the key as a Bearer token (x-api-key before 1.0).
    Client("anthropic-messages", "anthropic", ROOT, "authorization", "end_turn", DOUBLED),
    Client("ai-openai-chat", "openai-chat", V1, "authorization", "stop", WORKS),
    Client("ai-openai-responses", "responses", V1, "authorization", "stop", WORKS),
    # @ai-sdk/anthropic's default base URL is https://api.anthropic.com/v1: it appends
    # only /messages, so it takes the /v1 form (and the bare one works too).
    Client("ai-anthropic", "anthropic", V1, "x-api-key", "stop", WORKS),
    Client("ai-openai-compatible", "openai-chat", V1, "authorization", "stop", WORKS),
    # A custom baseURL: {baseURL}/chat/completions (or /responses), key in `api-key`.
    Client("ai-azure-chat", "openai-chat", V1, "api-key", "stop", WORKS),
    Client("ai-azure-responses", "responses", V1, "api-key", "stop", WORKS),
]
# fmt: on
BY_NAME = {c.name: c for c in CLIENTS}
# The lint profile each client's request names (its User-Agent: lint/sender.py).
SENDER = {
    "openai-chat": "openai-node",
    "openai-responses": "openai-node",
    "anthropic-messages": "anthropic-node",
    "ai-openai-chat": "cherry-openai",
    "ai-openai-responses": "cherry-responses",
    "ai-anthropic": "cherry-anthropic",
    "ai-openai-compatible": "cherry-compatible",
    "ai-azure-chat": "cherry-azure",
    "ai-azure-responses": "cherry-responses",
}
# Cherry Studio's provider types and the AI SDK provider each one runs on.
CHERRY = {
    "OpenAI": "ai-openai-chat",
    "OpenAI-Response": "ai-openai-responses",
    "Anthropic": "ai-anthropic",
}
FORMS = ("documented", "other", "doubled")


def other_base(client: Client) -> str:
    return ROOT if client.base == V1 else V1


@dataclass
class Result:
    client: Client
    form: str
    base_url: str
    prompt: str
    out: dict[str, Any]  # stream.mjs's summary
    seen: list[Seen]


@dataclass
class Env:
    proxy: Running
    results: dict[tuple[str, str], Result]


@pytest.fixture(scope="module")
def env() -> Iterator[Env]:
    folder = node_modules()  # skips without node/npm; fails when the install does
    tools = node_tools()
    assert tools is not None
    with proxied(demo_config()) as proxy:
        jobs = []
        for client in CLIENTS:
            bases = {"documented": client.base, "other": other_base(client)}
            if client.name in CHERRY.values():  # Cherry Studio given a host with /v1
                bases["doubled"] = "/v1/v1"
            for form, base in bases.items():
                nonce = uuid.uuid4().hex[:12]
                jobs.append(
                    {
                        "client": client.name,
                        "form": form,
                        "baseURL": proxy.url + base,
                        "key": proxy.key,
                        "model": "demo-chat",
                        "prompt": f"Hello from {client.name} [{nonce}]",
                        "nonce": nonce,
                    }
                )
        outs = run_json(
            [tools[0], str(folder.path / "stream.mjs"), json.dumps(jobs)],
            env={"AI_SDK_LOG_WARNINGS": "false"},
        )
        answered = [j["nonce"] for j, o in zip(jobs, outs, strict=True) if o["error"] is None]
        refused = [j["nonce"] for j, o in zip(jobs, outs, strict=True) if o["error"] is not None]
        seen = {**flows_by_nonce(proxy, answered), **flows_by_nonce(proxy, refused, wait=0)}
        results = {
            (j["client"], j["form"]): Result(
                BY_NAME[j["client"]], j["form"], j["baseURL"], j["prompt"], o, seen[j["nonce"]]
            )
            for j, o in zip(jobs, outs, strict=True)
        }
        yield Env(proxy, results)


def check_streamed(r: Result, path: str) -> None:
    out, client = r.out, r.client
    assert out["error"] is None, f"{client.name} with {r.base_url}: {out['error']}"
    assert out["text"] == expected_text(r.prompt)
    assert out["chunks"] > 1, "the answer did not arrive in pieces"
    assert out["finish"] == client.finish
    usage = out["usage"]
    assert usage is not None and usage["input"] >= 1, usage
    assert usage["output"] == expected_output_tokens(r.prompt), usage
    assert len(r.seen) == 1, f"{len(r.seen)} flows carry the prompt"
    assert r.seen[0].path == path
    assert r.seen[0].key_headers == {client.key_header}, r.seen[0]
    assert sender_of([("user-agent", r.seen[0].user_agent)], path) == SENDER[client.name], r.seen


def check_doubled(r: Result, path: str) -> None:
    error = r.out["error"] or ""
    assert "404" in error, error
    assert f"no endpoint POST /v1{path}" in error, error  # /v1/v1/...
    assert f"did you mean POST {path}" in error and DOUBLED_HINT in error, error
    assert r.seen == []  # refused at the door: no flow


@pytest.mark.parametrize("name", [c.name for c in CLIENTS])
def test_documented_base_url_streams_the_demo_answer(env: Env, name: str) -> None:
    r = env.results[(name, "documented")]
    check_streamed(r, PATH[r.client.protocol])


@pytest.mark.parametrize("name", [c.name for c in CLIENTS])
def test_the_other_base_url_form_works_or_names_the_mistake(env: Env, name: str) -> None:
    r = env.results[(name, "other")]
    if r.client.other == WORKS:
        # no /v1 given: the proxy serves /chat/completions, /responses, /messages too
        check_streamed(r, PATH[r.client.protocol].removeprefix("/v1"))
    else:
        check_doubled(r, PATH[r.client.protocol])


@pytest.mark.parametrize("provider", list(CHERRY))
def test_cherry_studio_host_with_v1_gets_a_404_naming_it(env: Env, provider: str) -> None:
    """Cherry Studio appends /v1 to its API host: a host pasted with /v1 doubles it."""
    r = env.results[(CHERRY[provider], "doubled")]
    check_doubled(r, PATH[r.client.protocol])


def test_node_modules_hold_the_pinned_versions() -> None:
    folder = node_modules()
    for name, version in NODE_PINS.items():
        package = json.loads((folder.path / "node_modules" / name / "package.json").read_text())
        assert package["version"] == version, name
