"""Every client protocol x every upstream kind, streaming and not,
over real sockets, driven by the official SDKs.

Clients: ``openai`` ``chat.completions.stream()``/``create()``, ``anthropic``
``messages.stream()``/``create()``, ``openai`` ``responses.stream()``/``create()``.
Upstreams: one scripted :class:`~tests.upstream_server.UpstreamServer` (on loopback, in a
thread) behind seven configured upstreams (openai, anthropic, responses, lmstudio in
repair mode; openai, anthropic, responses in passthrough mode), replaying real recordings
from tests/fixtures in each upstream kind's own protocol; the stream is picked by the
model name the proxy sends. One proxy and one upstream serve the whole module.

Each request carries a fresh nonce in its prompt, which finds the upstream request it
caused; the test then checks that request: the kind's path, its auth header (Bearer, or
``x-api-key`` + ``anthropic-version``; never the proxy's local key), the model name after
routing (bare, ``upstream/model``, alias), and a body in the upstream's protocol with the
client's system prompt, user text and token limit in that protocol's fields.

What the SDK must assemble (text, reasoning, refusal, tool calls with parsed arguments,
usage) is computed from the upstream's bytes by our own decoder and assembler
(``expected()`` of tests/translation/sdk_expect.py).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx
import openai
import pytest

from streamscope.config import OLD_KIND
from streamscope.model.stop import TO_ANTHROPIC, TO_OPENAI_CHAT
from tests.proxy.harness import KEY, Running, make_config, proxied
from tests.proxy.matrix_support import (
    CLIENT_PROTOCOL,
    FOREIGN_FIELDS,
    KIND_PATH,
    MAX_TOKENS,
    Case,
    call_sdk,
    got,
    prompt_seen,
    signatures,
    upstream_handler,
    want,
)
from tests.translation.sdk_expect import expected
from tests.upstream_server import RecordedRequest, UpstreamServer, run_in_thread

# name -> (kind, mode); every one points at the same scripted upstream server.
UPSTREAMS = {
    "oa": ("openai", "repair"),
    "an": ("anthropic", "repair"),
    "rs": ("responses", "repair"),
    "lm": ("lmstudio", "repair"),
    "oa-pt": ("openai", "passthrough"),
    "an-pt": ("anthropic", "passthrough"),
    "rs-pt": ("responses", "passthrough"),
}
ACCOUNT_KEY = {name: f"sk-upstream-{name}-0123456789" for name in UPSTREAMS}
ALIASES = {
    "reasoner": "oa/deepseek-reasoner",
    "claude-sonnet-4-6": "an/claude-thinking",  # the README's example of an alias
    "codex": "rs/resp-reasoning-summary",
    "local-thinker": "lm/local-thinking",
}
# A model two upstreams list: /v1/models must show it once.
SHARED_MODEL = "shared-model"

C = Case
# fmt: off
CASES = [
    # openai (chat completions) upstream: real OpenAI / DeepSeek captures.
    C("openai.text", "openai", "oa", "openai-chat/oai-py_text_usage_done.sse",
      "gpt-text", "gpt-text", ("text",)),
    C("openai.parallel-tools", "openai", "oa", "openai-chat/oai-py_tool-calls-parallel.sse",
      "gpt-tools", "oa/gpt-tools", ("tools",), min_tools=2),
    C("openai.reasoning", "openai", "oa",
      "openai-compatible-chat/vercel_deepseek-reasoner_reasoning-content.jsonl",
      "deepseek-reasoner", "reasoner", ("reasoning", "text")),
    C("openai.refusal", "openai", "oa", "openai-chat/oai-py_refusal.sse",
      "gpt-refusal", "gpt-refusal", ("refusal",)),
    # anthropic upstream: real Claude captures.
    C("anthropic.text", "anthropic", "an", "anthropic/vercel_text_sonnet45.jsonl",
      "claude-text", "claude-text", ("text",)),
    C("anthropic.parallel-tools", "anthropic", "an",
      "anthropic/vercel_tool-use-first-block_caller.jsonl",
      "claude-tools", "an/claude-tools", ("tools",), min_tools=3),
    C("anthropic.thinking", "anthropic", "an", "anthropic/vercel_thinking-signature_text.jsonl",
      "claude-thinking", "claude-sonnet-4-6", ("reasoning", "text")),
    # responses upstream: real OpenAI / Azure / LM Studio (/v1/responses) captures...
    C("responses.text", "responses", "rs", "responses/vercel_openai-gpt41nano_text.jsonl",
      "resp-text", "resp-text", ("text",)),
    C("responses.reasoning-summary", "responses", "rs",
      "responses/vercel_azure-codex_reasoning-summary_function-calls.step1.jsonl",
      "resp-reasoning-summary", "codex", ("reasoning", "tools"), min_tools=1),
    C("responses.reasoning-text", "responses", "rs",
      "lmstudio/vercel_lmstudio-v1-responses_reasoning-text_function-call.1.jsonl",
      "zai-org/glm-4.7-flash", "zai-org/glm-4.7-flash", ("reasoning", "text", "tools"),
      min_tools=1),
    # ...and, as no real Responses capture has parallel function calls, OpenAI's parallel
    # tool-call capture translated into Responses events by our pipeline.
    C("responses.parallel-tools", "responses", "rs", "openai-chat/oai-py_tool-calls-parallel.sse",
      "resp-tools", "rs/resp-tools", ("tools",), min_tools=2),
    # lmstudio (native /api/v1/chat) upstream: there is no real capture of this protocol
    # (tests/fixtures has only the doc-examples event catalogue, not a stream), so its
    # streams are real recordings of other protocols translated to "lmstudio" with
    # streamscope.translation.offline.translate_frames.
    C("lmstudio.text", "lmstudio", "lm", "lmstudio/vercel_lmstudio-v1-responses_text.jsonl",
      "google/gemma-7b-it", "google/gemma-7b-it", ("text",)),
    C("lmstudio.parallel-tools", "lmstudio", "lm", "openai-chat/oai-py_tool-calls-parallel.sse",
      "local-tools", "lm/local-tools", ("tools",), min_tools=2),
    C("lmstudio.reasoning", "lmstudio", "lm",
      "anthropic/vercel_thinking-summarized-signature.jsonl",
      "local-thinking", "local-thinker", ("reasoning", "text")),
]
# Passthrough: the client speaks the upstream's protocol and gets its bytes unchanged.
PASSTHROUGH = [
    C("openai-passthrough", "openai", "oa-pt", "openai-chat/oai-py_tool-calls-parallel.sse",
      "pt-gpt", "pt-gpt", ("tools",), min_tools=2, passthrough=True),
    C("anthropic-passthrough", "anthropic", "an-pt", "anthropic/ant-py_text-then-tool-use.sse",
      "pt-claude", "an-pt/pt-claude", ("text", "tools"), min_tools=1, passthrough=True),
    C("responses-passthrough", "responses", "rs-pt",
      "responses/vercel_azure-codex_reasoning-summary_function-calls.step1.jsonl",
      "pt-resp", "pt-resp", ("reasoning", "tools"), min_tools=1, passthrough=True),
]
# fmt: on
SAME_PROTOCOL_CLIENT = {"openai": "chat", "anthropic": "messages", "responses": "responses"}
CLIENT_PATH = {
    "chat": "/v1/chat/completions",
    "messages": "/v1/messages",
    "responses": "/v1/responses",
}


def configured_models(name: str) -> list[str]:
    """An upstream's model list: the cases asked for by their bare name, and (for two
    upstreams) a model listed twice."""
    models = [
        c.upstream_model
        for c in CASES + PASSTHROUGH
        if c.upstream == name and c.client_model == c.upstream_model
    ]
    return models + ([SHARED_MODEL] if name in ("oa", "oa-pt") else [])


@dataclass
class Env:
    up: UpstreamServer
    proxy: Running

    def request_for(self, nonce: str) -> RecordedRequest:
        """The one upstream request whose body carries ``nonce``."""
        found = [r for r in self.up.requests if nonce.encode() in r.body]
        assert len(found) == 1, f"{len(found)} upstream requests carry the nonce"
        return found[0]


@pytest.fixture(scope="module")
def env() -> Iterator[Env]:
    with run_in_thread() as up:
        handler = upstream_handler(CASES + PASSTHROUGH)
        for path in KIND_PATH.values():
            up.route("POST", path, handler)
        base = {
            "openai": up.url + "/v1",
            "responses": up.url + "/v1",
            "anthropic": up.url,
            "lmstudio": up.url,
        }
        upstreams = [
            {
                "name": name,
                "protocol": OLD_KIND.get(kind, kind),
                "mode": mode,
                "base_url": base[kind],
                "models": configured_models(name),
                "accounts": [{"name": "main", "api_key": ACCOUNT_KEY[name]}],
            }
            for name, (kind, mode) in UPSTREAMS.items()
        ]
        config = make_config(upstreams, keepalive_seconds=0)
        config.aliases.update(ALIASES)
        with proxied(config) as proxy:
            yield Env(up, proxy)
        assert up.errors == []


def nonce_prompt() -> tuple[str, str, str]:
    nonce = uuid.uuid4().hex
    return nonce, f"Answer as recorded. [{nonce}]", f"Hello from the matrix [{nonce}]"


def check_upstream_request(
    req: RecordedRequest,
    case: Case,
    system: str,
    user: str,
    stream_upstream: bool,
    translated: bool = False,
) -> None:
    """The request the proxy made: path, auth, model after routing, body protocol."""
    assert req.method == "POST"
    assert req.path == KIND_PATH[case.kind]
    key = ACCOUNT_KEY[case.upstream]
    if case.kind == "anthropic":
        assert req.headers.get("x-api-key") == key
        assert req.headers.get("anthropic-version") == "2023-06-01"
        assert "authorization" not in req.headers
    else:
        assert req.headers.get("authorization") == f"Bearer {key}"
        assert "x-api-key" not in req.headers
    assert all(KEY not in v for v in req.headers.values()), "the local key went upstream"
    body = req.json
    assert isinstance(body, dict)
    assert body["model"] == case.upstream_model
    # Repair mode always streams from the upstream, also for a non-streaming client.
    assert bool(body.get("stream")) is stream_upstream
    seen_system, seen_user, limit = prompt_seen(case.kind, body)
    assert (seen_system, seen_user, limit) == (system, user, MAX_TOKENS)
    if not case.passthrough:
        assert not FOREIGN_FIELDS[case.kind] & body.keys(), body
    if case.kind == "openai" and translated:
        # a translation asks for usage (the client's protocol needs counts); a Chat
        # client's own body goes as the client wrote it
        assert body["stream_options"] == {"include_usage": True}


def check_case_carries_what_it_is_for(case: Case, w: dict[str, Any]) -> None:
    """The expectation is not empty where the case was chosen to cover something."""
    assert w["usage"][0] > 0 and w["usage"][1] > 0
    for what in case.covers:
        if what == "tools":
            assert len(w["tool_calls"]) >= case.min_tools
            assert all(isinstance(args, dict) and args for _, args in w["tool_calls"])
        else:
            # Refusal becomes text for an Anthropic client (test_translate's rule).
            assert w[what] or (what == "refusal" and w["text"]), what


def check_finish(case: Case, client: str, result: dict[str, Any]) -> None:
    finish = case.response.choice(0).finish
    assert finish is not None
    if client == "chat":
        assert result["finish"] == TO_OPENAI_CHAT[finish]
    elif client == "messages":
        assert result["finish"] == TO_ANTHROPIC[finish]
    else:
        assert result["finish"] == "completed"


def pair_id(client: str, case: Case) -> str:
    return f"{client}-via-{case.id}"


PAIRS = [(client, case) for case in CASES for client in CLIENT_PROTOCOL]


def test_the_matrix_covers_every_pair() -> None:
    kinds = {c.kind for c in CASES}
    assert kinds == set(KIND_PATH)
    for kind in kinds:
        covered = {what for c in CASES if c.kind == kind for what in c.covers}
        assert {"text", "tools", "reasoning"} <= covered, kind
        assert any(c.min_tools >= 2 for c in CASES if c.kind == kind), kind
    assert {(cl, c.kind) for cl, c in PAIRS} == {
        (cl, k) for cl in CLIENT_PROTOCOL for k in KIND_PATH
    }
    # Native recordings are replayed as they are; only the gaps are translated.
    assert all(not c.translated for c in CASES if c.kind in ("openai", "anthropic"))
    assert all(c.translated for c in CASES if c.kind == "lmstudio")


@pytest.mark.parametrize("case", CASES + PASSTHROUGH, ids=lambda c: c.id)
def test_the_upstream_stream_says_what_the_recording_says(case: Case) -> None:
    # Above all for the translated streams (LM Studio native, parallel Responses calls):
    # what the upstream sends means what the real recording meant, for every client.
    for client, protocol in CLIENT_PROTOCOL.items():
        assert want(case, client) == expected(case.source_response, protocol), client


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "create"])
@pytest.mark.parametrize(("client", "case"), PAIRS, ids=[pair_id(*p) for p in PAIRS])
def test_sdk_assembles_the_upstream_answer(env: Env, client: str, case: Case, stream: bool) -> None:
    nonce, system, user = nonce_prompt()
    result = call_sdk(client, stream, env.proxy.url, env.proxy.key, case.client_model, system, user)
    w = want(case, client)
    check_case_carries_what_it_is_for(case, w)
    assert got(result) == w
    check_finish(case, client, result)
    # The client sees the name it asked for (an alias, upstream/model); asked for by the
    # upstream's own name, the upstream's reported model.
    if case.client_model != case.upstream_model:
        assert result["model"] == case.client_model
    else:
        assert result["model"] == case.response.model
    if client == "messages" and case.kind == "anthropic":
        # Thinking signatures reach an Anthropic client unchanged.
        assert result["signatures"] == signatures(case.response)
    # A translated request always streams from the upstream; the same protocol on both
    # sides gets the client's own body (streaming as the client asked), in repair mode too.
    same = CLIENT_PROTOCOL[client] == case.protocol
    req = env.request_for(nonce)
    check_upstream_request(req, case, system, user, stream or not same, translated=not same)
    if same:
        assert not FOREIGN_FIELDS[case.kind] & req.json.keys()


# -- passthrough -------------------------------------------------------------------------


def raw_body(client: str, model: str, system: str, user: str, stream: bool) -> dict[str, Any]:
    if client == "chat":
        body: dict[str, Any] = {
            "model": model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "max_completion_tokens": MAX_TOKENS,
        }
        if stream:
            body["stream_options"] = {"include_usage": True}
    elif client == "messages":
        body = {
            "model": model,
            "system": system,
            "max_tokens": MAX_TOKENS,
            "messages": [{"role": "user", "content": user}],
        }
    else:
        body = {
            "model": model,
            "instructions": system,
            "input": user,
            "max_output_tokens": MAX_TOKENS,
        }
    return {**body, "stream": stream}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "create"])
@pytest.mark.parametrize("case", PASSTHROUGH, ids=[c.id for c in PASSTHROUGH])
def test_passthrough_sends_the_upstream_bytes_unchanged(env: Env, case: Case, stream: bool) -> None:
    client = SAME_PROTOCOL_CLIENT[case.kind]
    nonce, system, user = nonce_prompt()
    body = raw_body(client, case.client_model, system, user, stream)
    headers = {"authorization": f"Bearer {env.proxy.key}"}
    if case.kind == "anthropic":
        headers = {"x-api-key": env.proxy.key, "anthropic-version": "2023-06-01"}
    received = bytearray()
    with (
        httpx.Client(timeout=30, trust_env=False) as http,
        http.stream(
            "POST", env.proxy.url + CLIENT_PATH[client], json=body, headers=headers
        ) as response,
    ):
        assert response.status_code == 200
        for chunk in response.iter_raw():
            received += chunk
    if stream:
        assert response.headers["content-type"].startswith("text/event-stream")
        assert bytes(received) == b"".join(case.chunks)
    else:
        # The upstream's JSON body (written by UpstreamServer with json.dumps), as it was.
        assert response.headers["content-type"].startswith("application/json")
        assert bytes(received) == json.dumps(case.json_body).encode()
    req = env.request_for(nonce)
    check_upstream_request(req, case, system, user, stream_upstream=stream)
    # Passthrough sends the client's own body, only the model replaced.
    assert req.json == {**body, "model": case.upstream_model}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "create"])
@pytest.mark.parametrize("case", PASSTHROUGH, ids=[c.id for c in PASSTHROUGH])
def test_sdk_assembles_a_passthrough_answer(env: Env, case: Case, stream: bool) -> None:
    client = SAME_PROTOCOL_CLIENT[case.kind]
    nonce, system, user = nonce_prompt()
    result = call_sdk(client, stream, env.proxy.url, env.proxy.key, case.client_model, system, user)
    w = want(case, client)
    check_case_carries_what_it_is_for(case, w)
    assert got(result) == w
    check_finish(case, client, result)
    # Passthrough does not touch the body: the model is the upstream's own.
    assert result["model"] == case.response.model
    if client == "messages":
        assert result["signatures"] == signatures(case.response)
    check_upstream_request(env.request_for(nonce), case, system, user, stream_upstream=stream)


# -- /v1/models ----------------------------------------------------------------------------


def expected_models() -> list[str]:
    out: list[str] = []
    for name in UPSTREAMS:
        out += [m for m in configured_models(name) if m not in out]
    return out + [a for a in ALIASES if a not in out]


def test_models_lists_the_configured_models_and_aliases(env: Env) -> None:
    with openai.OpenAI(
        api_key=env.proxy.key, base_url=env.proxy.v1, max_retries=0, timeout=30
    ) as oc:
        listed = list(oc.models.list())
    ids = [m.id for m in listed]
    assert ids == expected_models()
    assert len(ids) == len(set(ids))
    assert ids.count(SHARED_MODEL) == 1
    owners = {m.id: m.owned_by for m in listed}
    assert owners[SHARED_MODEL] == "oa"  # the first upstream that lists it
    assert owners["gpt-text"] == "oa" and owners["claude-text"] == "an"
    assert owners["google/gemma-7b-it"] == "lm" and owners["pt-resp"] == "rs-pt"
    # Every configured model and alias is there, and nothing else.
    every = {m for name in UPSTREAMS for m in configured_models(name)} | set(ALIASES)
    assert set(ids) == every
    # The lists are configured: the upstream was never asked for its models.
    assert not [r for r in env.up.requests if r.method == "GET"]


def test_models_in_anthropic_shape_for_the_anthropic_sdk(env: Env) -> None:
    with anthropic.Anthropic(
        api_key=env.proxy.key, base_url=env.proxy.url, max_retries=0, timeout=30
    ) as ac:
        ids = [m.id for m in ac.models.list()]
    assert ids == expected_models()
