"""Every Python client connects with the README's base URLs.

Real clients, a real proxy on a real loopback port, the demo backend behind it. The
official ``openai`` and ``anthropic`` SDKs run in this process (they are test
dependencies); LangChain, LiteLLM, pydantic-ai, openai-agents, instructor and the ``llm``
CLI run in venvs of their own (tests/clients/support.py) through tests/clients/py_runner.py.

Each client is run twice: with the base URL the README's table says to paste, which must
stream the demo's answer (the exact text, more than one chunk, the finish, the usage where
the client exposes it), and with the *other* form (``/v1`` added or left off), which
either works too (the proxy also serves each endpoint without ``/v1``) or, for the
clients that append ``/v1/messages`` themselves, gets a 404 naming the doubled ``/v1``.
The proxy's captured flows show the path and the key header each client really sent.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from streamscope.lint.sender import sender_of
from tests.clients.support import (
    DOUBLED,
    DOUBLED_HINT,
    INSTALL_TIMEOUT,
    PATH,
    PYTHON_PINS,
    ROOT,
    V1,
    WORKS,
    Seen,
    expected_output_tokens,
    expected_text,
    flows_by_nonce,
    python_venv,
)
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import Running, proxied

# The first test to run may pay for a cold install of the clients' venvs.
pytestmark = pytest.mark.timeout(INSTALL_TIMEOUT)

RUNNER = str(Path(__file__).with_name("py_runner.py"))


@dataclass(frozen=True)
class Client:
    name: str  # py_runner.py's name for it
    protocol: str
    base: str  # what the README says to paste after http://127.0.0.1:PORT
    key_header: str  # the header the client sends the key in
    finish: str  # the finish it reports for demo-chat
    other: str  # what the other base URL form gives: WORKS or DOUBLED
    group: str = "clients"  # its venv (support.PYTHON_PINS)
    model: str = "demo-chat"


# fmt: off
CLIENTS = [
    Client("langchain-openai", "openai-chat", V1, "authorization", "stop", WORKS),
    # anthropic-python 2.x sends the key as a Bearer token, so its wrappers do too.
    Client("langchain-anthropic", "anthropic", ROOT, "authorization", "end_turn", DOUBLED),
    Client("litellm-openai", "openai-chat", V1, "authorization", "stop", WORKS),
    Client("litellm-anthropic", "anthropic", ROOT, "x-api-key", "stop", DOUBLED),
    Client("pydantic-ai-openai", "openai-chat", V1, "authorization", "stop", WORKS),
    Client("pydantic-ai-responses", "responses", V1, "authorization", "stop", WORKS),
    Client("pydantic-ai-anthropic", "anthropic", ROOT, "authorization", "stop", DOUBLED),
    Client("agents-chat", "openai-chat", V1, "authorization", "response.completed", WORKS),
    Client("agents-responses", "responses", V1, "authorization", "completed", WORKS),
    # instructor extracts a model through a tool call: demo-tools calls the tool it is
    # given with arguments made from the tool's JSON Schema.
    Client("instructor", "openai-chat", V1, "authorization", "tool_calls", WORKS,
           group="instructor", model="demo-tools"),
    Client("llm-cli", "openai-chat", V1, "authorization", "stop", WORKS),
]
# fmt: on
BY_NAME = {c.name: c for c in CLIENTS}
# The lint profile each client's request names (its User-Agent: lint/sender.py): a
# wrapper that keeps the official SDK's User-Agent names the SDK's; one that sends its
# own (pydantic-ai/2.68.0, Agents/Python 0.24.0, langchain-anthropic/1.7.10) or calls
# the API on its own HTTP names none.
SENDER = {
    "langchain-openai": "openai-python-chat",
    "langchain-anthropic": None,
    "litellm-openai": "openai-python-chat",
    "litellm-anthropic": None,
    "pydantic-ai-openai": None,
    "pydantic-ai-responses": None,
    "pydantic-ai-anthropic": None,
    "agents-chat": None,
    "agents-responses": None,
    "instructor": "openai-python-chat",
    "llm-cli": "openai-python-chat",
}
FORMS = ("documented", "other")


def other_base(client: Client) -> str:
    return ROOT if client.base == V1 else V1


@dataclass
class Result:
    client: Client
    form: str
    base_url: str
    prompt: str
    out: dict[str, Any]  # py_runner.py's summary
    seen: list[Seen]  # what the proxy captured of it (a refused request is no flow)


@dataclass
class Env:
    proxy: Running
    results: dict[tuple[str, str], Result]


def _start(python: str, jobs: list[dict[str, Any]]) -> subprocess.Popen[str]:
    env_extra = {
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of the cost map at import
        "OPENAI_AGENTS_DISABLE_TRACING": "1",
        "LANGSMITH_TRACING": "false",
    }
    return subprocess.Popen(
        [python, RUNNER, json.dumps(jobs)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env_extra},
    )


@pytest.fixture(scope="module")
def env() -> Iterator[Env]:
    venvs = {group: python_venv(group) for group in PYTHON_PINS}
    with proxied(demo_config()) as proxy:
        jobs: dict[str, list[dict[str, Any]]] = {}
        for client in CLIENTS:
            for form in FORMS:
                base = client.base if form == "documented" else other_base(client)
                nonce = uuid.uuid4().hex[:12]
                job = {
                    "client": client.name,
                    "form": form,
                    "base_url": proxy.url + base,
                    "key": proxy.key,
                    "model": client.model,
                    "prompt": f"Hello from {client.name} [{nonce}]",
                    "nonce": nonce,
                }
                jobs.setdefault(client.group, []).append(job)
        # The big venv's clients in two processes (two cores; each process imports a
        # family of clients once for both its forms), instructor in a third.
        big = jobs.pop("clients")
        first = [j for j in big if j["client"].startswith(("langchain", "litellm"))]
        rest = [j for j in big if j not in first]
        batches = [*jobs.items(), ("clients", first), ("clients", rest)]
        running = [
            (batch, _start(str(venvs[g].path / "bin" / "python"), batch)) for g, batch in batches
        ]
        outs: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for batch, proc in running:
            stdout, stderr = proc.communicate(timeout=300)
            lines = stdout.strip().splitlines()
            assert proc.returncode == 0 and lines, f"py_runner failed:\n{stdout}\n{stderr[-4000:]}"
            outs += zip(batch, json.loads(lines[-1]), strict=True)
        # Wait for the flows of the requests that got an answer; refused ones have none.
        answered = [job["nonce"] for job, out in outs if out["error"] is None]
        refused = [job["nonce"] for job, out in outs if out["error"] is not None]
        seen = {**flows_by_nonce(proxy, answered), **flows_by_nonce(proxy, refused, wait=0)}
        results = {
            (job["client"], job["form"]): Result(
                BY_NAME[job["client"]],
                job["form"],
                job["base_url"],
                job["prompt"],
                out,
                seen[job["nonce"]],
            )
            for job, out in outs
        }
        yield Env(proxy, results)


def check_streamed(r: Result, path: str) -> None:
    """The demo's answer arrived whole, streamed, finished, counted, over ``path``."""
    out, client = r.out, r.client
    assert out["error"] is None, f"{client.name} with {r.base_url}: {out['error']}"
    if client.name == "instructor":
        # The extracted object: the demo made it from the response model's schema.
        assert set(out["extra"]["object"]) == {"location", "unit"}
        assert out["extra"]["object"]["unit"] in ("celsius", "fahrenheit")
        assert out["chunks"] > 1, "instructor streamed no partial objects"
    else:
        assert out["text"] == expected_text(r.prompt)
        if out["chunks"] != -1:  # the llm CLI writes its stream to its own stdout
            assert out["chunks"] > 1, "the answer did not arrive in pieces"
        usage = out["usage"]
        assert usage is not None and usage["input"] >= 1, usage
        assert usage["output"] == expected_output_tokens(r.prompt), usage
    assert out["finish"] == client.finish
    assert len(r.seen) == 1, f"{len(r.seen)} flows carry the prompt"
    assert r.seen[0].path == path
    assert r.seen[0].key_headers == {client.key_header}, r.seen[0]
    said = [("user-agent", r.seen[0].user_agent)]
    assert sender_of(said, path) == SENDER[client.name], r.seen[0]


@pytest.mark.parametrize("name", [c.name for c in CLIENTS])
def test_documented_base_url_streams_the_demo_answer(env: Env, name: str) -> None:
    r = env.results[(name, "documented")]
    check_streamed(r, PATH[r.client.protocol])


@pytest.mark.parametrize("name", [c.name for c in CLIENTS])
def test_the_other_base_url_form_works_or_names_the_mistake(env: Env, name: str) -> None:
    r = env.results[(name, "other")]
    if r.client.other == WORKS:  # no /v1: the proxy serves /chat/completions too
        check_streamed(r, PATH[r.client.protocol].removeprefix("/v1"))
        return
    # A base URL ending in /v1 for a client that appends /v1/messages itself.
    error = r.out["error"] or ""
    assert "/v1/v1/messages" in error and DOUBLED_HINT in error, error
    assert "not_found_error" in error or "404" in error, error
    assert r.seen == []  # refused at the door: no flow


def test_the_clients_venvs_hold_the_pinned_versions() -> None:
    for group, pins in PYTHON_PINS.items():
        venv = python_venv(group)
        names = [p.split("==")[0].split("[")[0] for p in pins]
        script = (
            "import importlib.metadata as m, json, sys;"
            "print(json.dumps({n: m.version(n) for n in sys.argv[1:]}))"
        )
        done = subprocess.run(
            [str(venv.path / "bin" / "python"), "-c", script, *names],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        versions = json.loads(done.stdout)
        assert versions == {n: p.split("==")[1] for n, p in zip(names, pins, strict=True)}


# -- the official SDKs, in this process ------------------------------------------------


def _openai(env: Env, base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=env.proxy.url + base, api_key=env.proxy.key, max_retries=0)


@pytest.mark.parametrize("base", [V1, ROOT], ids=["documented-v1", "other-no-v1"])
def test_openai_sdk_chat_stream(env: Env, base: str) -> None:
    prompt = f"openai chat {uuid.uuid4().hex[:8]}"
    with (
        _openai(env, base) as oc,
        oc.chat.completions.stream(
            model="demo-chat",
            messages=[{"role": "user", "content": prompt}],
            stream_options={"include_usage": True},
        ) as stream,
    ):
        deltas = [e for e in stream if e.type == "content.delta"]
        final = stream.get_final_completion()
    assert len(deltas) > 1
    assert final.choices[0].message.content == expected_text(prompt)
    assert final.choices[0].finish_reason == "stop"
    assert final.usage is not None
    assert final.usage.completion_tokens == expected_output_tokens(prompt)


@pytest.mark.parametrize("base", [V1, ROOT], ids=["documented-v1", "other-no-v1"])
def test_openai_sdk_responses_stream(env: Env, base: str) -> None:
    prompt = f"openai responses {uuid.uuid4().hex[:8]}"
    with _openai(env, base) as oc, oc.responses.stream(model="demo-chat", input=prompt) as stream:
        deltas = [e for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert len(deltas) > 1
    assert final.output_text == expected_text(prompt)
    assert final.status == "completed"
    assert final.usage is not None
    assert final.usage.output_tokens == expected_output_tokens(prompt)


@pytest.mark.parametrize("form", ["base_url", "azure_endpoint"])
def test_openai_sdk_azure_client(env: Env, form: str) -> None:
    """``AzureOpenAI`` puts ``/deployments/{model}`` in every path (under
    ``azure_endpoint``, ``/openai/deployments/...``) and sends the key as ``api-key``:
    the proxy serves those paths as the plain endpoints."""
    where = {"base_url": env.proxy.v1} if form == "base_url" else {"azure_endpoint": env.proxy.url}
    client = openai.AzureOpenAI(
        **where, api_key=env.proxy.key, api_version="2024-10-21", max_retries=0
    )
    prompt = f"azure {uuid.uuid4().hex[:8]}"
    with client:
        answer = client.chat.completions.create(
            model="demo-chat", messages=[{"role": "user", "content": prompt}]
        )
    assert answer.choices[0].message.content == expected_text(prompt)


def _anthropic(env: Env, base: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=env.proxy.url + base, api_key=env.proxy.key, max_retries=0)


def test_anthropic_sdk_stream(env: Env) -> None:
    prompt = f"anthropic {uuid.uuid4().hex[:8]}"
    with (
        _anthropic(env, ROOT) as ac,
        ac.messages.stream(
            model="demo-chat", max_tokens=256, messages=[{"role": "user", "content": prompt}]
        ) as stream,
    ):
        pieces = list(stream.text_stream)
        final = stream.get_final_message()
    assert len(pieces) > 1
    assert "".join(pieces) == expected_text(prompt)
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens == expected_output_tokens(prompt)
    (seen,) = flows_by_nonce(env.proxy, [prompt])[prompt]
    assert (seen.path, seen.key_headers) == ("/v1/messages", {"authorization"})
    assert sender_of([("user-agent", seen.user_agent)], seen.path) == "anthropic-python"


def test_anthropic_sdk_with_v1_gets_a_404_naming_the_doubled_v1(env: Env) -> None:
    with _anthropic(env, V1) as ac, pytest.raises(anthropic.NotFoundError) as caught:
        ac.messages.create(
            model="demo-chat", max_tokens=64, messages=[{"role": "user", "content": "hi"}]
        )
    assert caught.value.status_code == 404
    body: Any = caught.value.body
    assert body["type"] == "error" and body["error"]["type"] == "not_found_error"
    assert "POST /v1/v1/messages" in body["error"]["message"]
    assert DOUBLED_HINT in body["error"]["message"]
