"""The agent CLIs people point at a local proxy, run through StreamScope.

Claude Code, Codex CLI, Qwen Code and Gemini CLI are installed by the test at their
pinned versions (``realclients.agents.install_agent``, cached under
``$STREAMSCOPE_TEST_CACHE``) and run offline (``run_agent``: a temporary HOME, telemetry,
updates and retries off; Gemini CLI with the API-key auth, over Gemini's endpoints)
against a real proxy on a real port, with ``demo-tools`` as the model:

- over the demo, in the protocol the CLI speaks;
- over a translated OpenAI-chat upstream: a second StreamScope proxy serving the demo is
  the first one's upstream with protocol ``openai-chat``, so Anthropic -> chat and
  Responses -> chat and Gemini -> chat translation is exercised for real (Qwen Code
  speaks chat already: chat -> chat through two proxies).

Each run is a tool round trip: the demo calls one of the CLI's own harmless tools (a
file read where there is one), the CLI runs it, sends the result back and prints the
demo's final text. It is checked from the CLI's own output (the call, the result it
made, the text that quotes it) and from the captured flows (the second request carries
the result, on the client leg and, translated, on the upstream leg). Only a machine
without node/npm skips; a failed install fails with npm's words.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamscope.cli import main
from streamscope.demo.harmless import HARMLESS, classify
from streamscope.lint.clients import PROFILE_OF
from streamscope.lint.sender import sender_of
from streamscope.model.request import ToolDef
from streamscope.realclients.agent_run import AgentRun, Target, run_agent
from streamscope.realclients.agents import AGENTS, BY_ID
from tests.clients.agent_support import DATA_DIR, installed
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import Running, make_config, proxied

RUN_SECONDS = 120  # one CLI run, however it ends
MAX_TURNS = 4  # a tool round trip needs two
ROUTES = ("demo", "chat-upstream")
# The tool the demo calls from each CLI's own tools, by the rule table of
# streamscope.demo.harmless: a file read where the CLI offers one.
CALLED = {
    "claude-code": "Read",
    "codex": "get_goal",
    "qwen-code": "read_file",
    "gemini-cli": "read_file",
}
# What each CLI sends (the README's base-URL table says the same).
SENDS = {
    "claude-code": ("/v1/messages?beta=true", "x-api-key"),
    "codex": ("/v1/responses", "authorization"),
    "qwen-code": ("/v1/chat/completions", "authorization"),
    "gemini-cli": ("/v1beta/models/demo-tools:streamGenerateContent?alt=sse", "x-goog-api-key"),
}


@pytest.fixture(scope="module")
def proxies() -> Iterator[dict[str, Running]]:
    """``demo``: a proxy serving the demo; ``chat-upstream``: a proxy whose only
    upstream is the first one, spoken to in OpenAI chat."""
    with proxied(demo_config()) as demo:
        chat = {
            "name": "chat",
            "protocol": "openai-chat",
            "base_url": demo.v1,
            "default": True,
            "accounts": [{"api_key": demo.key}],
        }
        with proxied(make_config([chat])) as front:
            yield {"demo": demo, "chat-upstream": front}


def flows_with(running: Running, nonce: str, wait: float = 3.0) -> list[dict[str, Any]]:
    """The captured flows (details, oldest first) whose client request carries
    ``nonce``; polls briefly, as a flow is stored just after its last byte."""
    auth = {"Authorization": f"Bearer {running.key}"}
    deadline = time.monotonic() + wait
    with httpx.Client(base_url=running.url, headers=auth, timeout=10) as http:
        while True:
            found = []
            listing = http.get("/admin/flows", params={"limit": 200}).raise_for_status().json()
            for flow in listing["flows"]:
                detail = http.get(f"/admin/flows/{flow['id']}").raise_for_status().json()
                if nonce in body_text(detail["request"]):
                    found.append(detail)
            if len(found) >= 2 or time.monotonic() > deadline:
                return sorted(found, key=lambda d: d["started"])
            time.sleep(0.1)


def body_text(request: dict[str, Any] | None) -> str:
    raw = base64.b64decode((request or {}).get("body_b64") or "")
    return raw.decode("utf-8", "replace")


def carried_results(protocol: str, body: dict[str, Any]) -> dict[str, str]:
    """The tool results a request body carries, by call id, as text."""
    out: dict[str, str] = {}
    if protocol == "anthropic":
        for message in body.get("messages", []):
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if block.get("type") == "tool_result":
                    out[block["tool_use_id"]] = json.dumps(block.get("content"))
    elif protocol == "responses":
        for item in body.get("input", []):
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                out[item["call_id"]] = json.dumps(item.get("output"))
    elif protocol == "gemini":
        for content in body.get("contents", []):
            for part in content.get("parts", []):
                if "functionResponse" in part:
                    answer = part["functionResponse"]
                    out[answer.get("id") or answer["name"]] = json.dumps(answer.get("response"))
    else:
        for message in body.get("messages", []):
            if message.get("role") == "tool":
                out[message["tool_call_id"]] = json.dumps(message.get("content"))
    return out


def run_cli(agent: str, running: Running, tmp_path: Path) -> tuple[AgentRun, str, str]:
    """Run ``agent`` once through ``running``; the run, the prompt's nonce and the
    README's."""
    install = installed(agent)
    prompt_nonce, file_nonce = uuid.uuid4().hex[:12], uuid.uuid4().hex[:12]
    work = tmp_path / "work"
    work.mkdir()
    (work / "README.md").write_text(f"# Demo project\nThe marker is {file_nonce}.\n")
    prompt = f"Read README.md and tell me what it says (run {prompt_nonce})."
    target = Target(running.url, running.key, "demo-tools")
    run = asyncio.run(
        run_agent(
            install,
            target,
            prompt,
            work,
            seconds=RUN_SECONDS,
            max_turns=MAX_TURNS,
            home=tmp_path / "home",
        )
    )
    return run, prompt_nonce, file_nonce


def explain(run: AgentRun) -> str:
    return (
        f"error={run.error!r} exit={run.exit_code} timed_out={run.timed_out}\n"
        f"text={run.text!r}\ncalls={run.tool_calls}\nresults={run.tool_results}\n"
        f"notices={run.notices}\nstderr:\n{run.stderr}"
    )


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("agent", [a.id for a in AGENTS])
def test_a_tool_round_trip_through_the_proxy(
    proxies: dict[str, Running], agent: str, route: str, tmp_path: Path
) -> None:
    running = proxies[route]
    run, prompt_nonce, file_nonce = run_cli(agent, running, tmp_path)
    why = explain(run)
    assert run.error is None and run.exit_code == 0 and not run.timed_out, why

    # The CLI's own output: the demo's call of a harmless tool, run by the CLI.
    called = CALLED[agent]
    names = [c.name for c in run.tool_calls]
    assert called in names, why
    for call in run.tool_calls:
        assert classify(ToolDef(call.name, None, {"properties": json.loads(call.arguments)})) in (
            HARMLESS
        ), why
    results = {r.call_id: r for r in run.tool_results}
    assert {c.id for c in run.tool_calls} <= set(results), why  # every call was run
    mine = next(c for c in run.tool_calls if c.name == called)
    assert not results[mine.id].is_error, why
    reads = called in ("Read", "read_file")
    if reads and agent != "gemini-cli":  # Gemini CLI prints no output of a tool that ran
        assert file_nonce in results[mine.id].text, why  # the file the demo named is there
    # ... and the final text, which the demo made from the result it was sent.
    assert run.text.startswith("Thanks.") and f"{called} returned" in run.text, why
    if reads:
        assert file_nonce in run.text, why

    # The proxy's flows: the request after the call carries the CLI's result.
    flows = flows_with(running, prompt_nonce)
    assert len(flows) >= 2, [f["request"]["url"] for f in flows]
    path, key_header = SENDS[agent]
    protocol = BY_ID[agent].protocol
    for flow in flows:
        assert flow["request"]["url"] == path
        headers = {k.lower() for k, _ in flow["request"]["headers"]}
        assert key_header in headers
        # The flow's verdict leads with this CLI's: its request says who sent it.
        said = flow["request"]["headers"]
        assert sender_of(said, path) == PROFILE_OF[agent], said
    last = flows[-1]
    sent = carried_results(protocol, json.loads(body_text(last["request"])))
    assert mine.id in sent, sent
    if reads:
        assert file_nonce in sent[mine.id]
    if route == "chat-upstream":
        upstream = json.loads(body_text(last["upstream_request"]))
        forwarded = carried_results("openai-chat", upstream)
        assert mine.id in forwarded, upstream.get("messages")
        if reads:
            assert file_nonce in forwarded[mine.id]
        assert last["legs"]["upstream"]["protocol"] == "openai-chat"


def test_clients_install_agents_and_list(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``streamscope clients install --agents`` installs the CLIs once (the run above
    already did, in the same data directory) and ``clients list`` says they are ready."""
    for agent in AGENTS:
        installed(agent.id)
    monkeypatch.setenv("STREAMSCOPE_DATA_DIR", str(DATA_DIR))
    assert main(["clients", "install", "--agents"]) == 0
    out = capsys.readouterr().out
    for agent in AGENTS:
        assert f"{agent.name} ({agent.package} {agent.version}, " in out
        assert "already installed" in out.split(agent.name + " (")[1].splitlines()[0]
    assert main(["clients", "list"]) == 0
    listed = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    for agent in AGENTS:
        assert f"{agent.package} {agent.version}  [ready]" in listed[agent.id]
