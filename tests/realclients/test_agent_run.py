"""Running the agent CLIs (app/streamscope/realclients/agent_run.py).

- ``prepare``: the offline recipe each CLI gets (its config files in a fresh HOME, only
  PATH and its own variables from the environment, no retries), read back from what it
  writes;
- ``run_agent`` on the real CLIs (installed once into the test cache) against a
  :class:`~streamscope.realclients.server.ReplayServer` serving a recorded stream, as
  "Run in real clients" will: each assembles the text, reasoning and tool calls our own
  decoder reads from the same bytes, and a tool call ends the run at its one turn (Codex,
  which has no turn limit, asked again 90 times in 4 s before ``run_agent`` watched for
  it). (Through the proxy, with a tool round trip: tests/clients/test_agent_clis.py.)
"""

from __future__ import annotations

import asyncio
import json
import tomllib
from pathlib import Path

import pytest

from streamscope.analysis.decode import decode_frames
from streamscope.codecs import get_codec
from streamscope.model.assemble import assemble
from streamscope.model.events import (
    End,
    Finish,
    MessageStart,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from streamscope.realclients.agent_run import KEY_VARIABLE, AgentRun, Target, prepare, run_agent
from streamscope.realclients.agents import AGENTS, BY_ID, AgentInstall
from streamscope.realclients.server import Replay, ReplayServer
from streamscope.wire.decoder import decode_all
from streamscope.wire.frame import Frame
from tests.clients.agent_support import installed
from tests.codecs.gemini.recorded import sse_bytes
from tests.support import FIXTURES, load

TARGET = Target("http://127.0.0.1:9/", "sk-local-abc", "demo-tools")


def fake_install(agent: str, tmp_path: Path) -> AgentInstall:
    return AgentInstall(BY_ID[agent], tmp_path / "install", "0", 0.0, 0, cold=False)


@pytest.fixture
def leaky_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Variables a user's shell may hold, which must not reach the CLI."""
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "HTTPS_PROXY"):
        monkeypatch.setenv(name, "from-the-users-shell")


@pytest.mark.usefixtures("leaky_env")
def test_claude_code_gets_its_base_url_key_and_no_nonessential_traffic(tmp_path: Path) -> None:
    how = prepare(fake_install("claude-code", tmp_path), TARGET, "hi", tmp_path, tmp_path / "h")
    assert how.env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"  # the SDK adds /v1
    assert how.env["ANTHROPIC_API_KEY"] == "sk-local-abc"
    assert how.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert how.env["CLAUDE_CODE_MAX_RETRIES"] == "0"
    assert how.env["HOME"] == str(tmp_path / "h")
    assert "HTTPS_PROXY" not in how.env and "OPENAI_API_KEY" not in how.env
    assert how.argv[1:3] == ["-p", "hi"] and "stream-json" in how.argv
    assert how.argv[how.argv.index("--model") + 1] == "demo-tools"
    assert how.argv[how.argv.index("--max-turns") + 1] == "4"


@pytest.mark.usefixtures("leaky_env")
def test_codex_gets_a_model_provider_at_the_base_url(tmp_path: Path) -> None:
    home = tmp_path / "h"
    how = prepare(fake_install("codex", tmp_path), TARGET, "hi", tmp_path, home)
    config = tomllib.loads((home / ".codex" / "config.toml").read_text())
    provider = config["model_providers"][config["model_provider"]]
    assert provider["base_url"] == "http://127.0.0.1:9/v1"
    assert provider["wire_api"] == "responses"
    assert how.env[provider["env_key"]] == "sk-local-abc" and provider["env_key"] == KEY_VARIABLE
    assert provider["request_max_retries"] == provider["stream_max_retries"] == 0
    assert config["sandbox_mode"] == "read-only" and config["approval_policy"] == "never"
    assert config["analytics"]["enabled"] is False and config["features"]["plugins"] is False
    assert config["check_for_update_on_startup"] is False
    assert how.env["CODEX_HOME"] == str(home / ".codex")
    assert "OPENAI_API_KEY" not in how.env
    assert how.argv[1:3] == ["exec", "--json"] and how.argv[-1] == "hi"


@pytest.mark.usefixtures("leaky_env")
def test_qwen_code_gets_the_openai_variables_and_settings(tmp_path: Path) -> None:
    home = tmp_path / "h"
    how = prepare(fake_install("qwen-code", tmp_path), TARGET, "hi", tmp_path, home, max_turns=2)
    assert how.env["OPENAI_BASE_URL"] == "http://127.0.0.1:9/v1"
    assert how.env["OPENAI_API_KEY"] == "sk-local-abc"  # ours, not the shell's
    assert how.env["OPENAI_MODEL"] == "demo-tools"
    settings = json.loads((home / ".qwen" / "settings.json").read_text())
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert settings["telemetry"]["enabled"] is False
    assert settings["general"]["enableAutoUpdate"] is False
    assert how.argv[how.argv.index("--max-session-turns") + 1] == "2"


RECORDED = {
    "anthropic": FIXTURES / "anthropic" / "ant-py_basic-text.sse",
    "responses": FIXTURES / "responses" / "vercel_azure-gpt51_text-minimal.jsonl",
    "openai-chat": FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse",
    "gemini": FIXTURES / "gemini" / "vercel_gemini3pro_text_signature.chunks.txt",
}
ASKED = {  # the path each CLI asks below its base URL
    "anthropic": "/v1/messages",
    "responses": "/v1/responses",
    "openai-chat": "/v1/chat/completions",
    "gemini": "/v1beta/models/replayed:streamGenerateContent",
}


def recorded(path: Path) -> tuple[bytes, list[Frame]]:
    """A recording's bytes and frames (a Gemini chunk list framed as Google frames it)."""
    if path.name.endswith(".chunks.txt"):
        raw = sse_bytes(path)
        return raw, decode_all(raw)
    frames = load(path).frames
    return b"".join(f.raw for f in frames), frames


@pytest.mark.parametrize("agent", [a.id for a in AGENTS])
def test_a_cli_run_on_a_replayed_stream_reads_what_it_assembled(agent: str, tmp_path: Path) -> None:
    install = installed(agent)
    raw, frames = recorded(RECORDED[install.spec.protocol])
    decoded = decode_frames(frames, install.spec.protocol)
    want = assemble(e for _, e in decoded.events).choice(0).text
    headers = [("content-type", "text/event-stream")]

    async def replay() -> tuple[AgentRun, list[tuple[str, str]]]:
        async with ReplayServer({"s": Replay(raw, 200, headers)}) as server:
            target = Target(server.base("s"), "sk-local-replay", "replayed")
            run = await run_agent(install, target, "Say hello.", tmp_path, seconds=90, max_turns=1)
            return run, server.requests

    run, requests = asyncio.run(replay())
    assert run.error is None and run.exit_code == 0, run
    assert run.text == want
    assert run.tool_calls == []
    paths = {path.split("?")[0] for _, path in requests}
    assert paths == {"/r/s" + ASKED[install.spec.protocol]}, requests


TOOL_CALLS = {
    "anthropic": FIXTURES / "anthropic" / "ant-py_text-then-tool-use.sse",
    "responses": FIXTURES
    / "responses"
    / "vercel_openai-codex_reasoning-summary_encrypted_function-calls.step1.jsonl",
    "openai-chat": FIXTURES / "openai-chat" / "oai-py_tool-call-single.sse",
    "gemini": FIXTURES / "gemini" / "vercel_gemini3pro_tool-call.chunks.txt",
}


@pytest.mark.parametrize("agent", [a.id for a in AGENTS])
def test_a_replayed_tool_call_ends_the_run_at_its_one_turn(agent: str, tmp_path: Path) -> None:
    """A replay answers every request with the same call: a CLI left alone would run the
    tool and ask again for ever. With ``max_turns=1`` each stops after its first answer,
    with the call it assembled, and says it stopped at its limit, not that it failed."""
    install = installed(agent)
    raw, frames = recorded(TOOL_CALLS[install.spec.protocol])
    decoded = decode_frames(frames, install.spec.protocol)
    choice = assemble(e for _, e in decoded.events).choice(0)
    want = [(c.name, json.loads(c.arguments)) for c in choice.tool_calls]
    headers = [("content-type", "text/event-stream")]

    async def replay() -> tuple[AgentRun, list[tuple[str, str]]]:
        async with ReplayServer({"s": Replay(raw, 200, headers)}) as server:
            target = Target(server.base("s"), "sk-local-replay", "replayed")
            run = await run_agent(install, target, "Go on.", tmp_path, seconds=60, max_turns=1)
            return run, server.requests

    run, requests = asyncio.run(replay())
    assert run.turn_limit and run.error is None and not run.timed_out, run
    assert [(c.name, json.loads(c.arguments)) for c in run.tool_calls] == want, run
    assert run.text == choice.text and run.reasoning.startswith(choice.reasoning[:40])
    # the one answer, then what the CLI asks while it is being stopped: a request in
    # flight, and Codex resends a stream cut under it (its own retries) until it is
    # gone, a few more under load (CI saw 4); a CLI left running would ask for ever
    assert len(requests) <= 6, requests


@pytest.mark.parametrize(
    ("agent", "tool", "arguments", "refused"),
    [
        ("codex", "exec_command", {"cmd": "echo $((6*7))"}, "unsupported call"),
        ("codex", "shell", {"command": ["bash", "-lc", "echo $((6*7))"]}, "unsupported call"),
        ("codex", "view_image", {"path": "/etc/hostname"}, "unsupported call"),
        ("claude-code", "Bash", {"command": "echo $((6*7))"}, "No such tool available"),
        ("claude-code", "Read", {"file_path": "/etc/hostname"}, "No such tool available"),
        ("qwen-code", "read_file", {"file_path": "/etc/hostname"}, "not available"),
        ("qwen-code", "run_shell_command", {"command": "echo $((6*7))"}, "declined"),
        ("gemini-cli", "read_file", {"file_path": "README.md"}, 'Tool "read_file" not found'),
        ("gemini-cli", "list_directory", {"dir_path": "."}, 'Tool "list_directory" not found'),
    ],
)
def test_no_cli_runs_a_tool_a_replayed_stream_asks_for(
    agent: str, tool: str, arguments: dict[str, object], refused: str, tmp_path: Path
) -> None:
    """A replayed stream's calls came from someone else's conversation. Left to
    themselves the CLIs ran some: Codex any shell call (its read-only sandbox allows
    reads) and view_image, Claude Code a Bash command it deems read-only, Qwen Code
    read_file on any path, Gemini CLI read_file, list_directory, glob and grep_search in
    its working folder (a headless run registers no shell or write tool). A replay
    switches their tools off: each answers the call as unavailable and nothing runs (a
    file the CLI could read says 42)."""
    install = installed(agent)
    (tmp_path / "README.md").write_text("42\n")
    events = [
        MessageStart("replayed_1", "m"),
        ToolCallStart(0, "call_1", tool),
        ToolCallDelta(0, json.dumps(arguments)),
        ToolCallEnd(0),
        Finish("tool_calls"),
        Usage(5, 5),
        End(),
    ]
    encoder = get_codec(install.spec.protocol).stream_encoder()
    raw = b"".join(b for e in events for b in encoder.encode(e)) + b"".join(encoder.finish())

    async def replay() -> AgentRun:
        headers = [("content-type", "text/event-stream")]
        async with ReplayServer({"s": Replay(raw, 200, headers)}) as server:
            target = Target(server.base("s"), "sk-local-replay", "replayed", replay=True)
            return await run_agent(install, target, "Go on.", tmp_path, seconds=60, max_turns=1)

    run = asyncio.run(replay())
    assert [c.name for c in run.tool_calls] == [tool], run
    [result] = run.tool_results
    assert "42" not in result.text and Path("/etc/hostname").read_text().strip() not in (
        result.text
    ), result
    assert refused in result.text, result
