"""The agent CLIs for the tests: each installed once, at its pinned version, into the test
cache (``$STREAMSCOPE_TEST_CACHE/agent-clis``, a data directory whose
``clients/agents/<id>`` folders ``realclients.agents.install_agent`` fills and marks
complete). A machine without node/npm skips the test; a failed install fails it with
npm's words. Gemini CLI is installed the same way and run here (``run_gemini_cli``)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from streamscope.realclients.agents import BY_ID, AgentInstall, AgentSpec, install_agent
from streamscope.realclients.node import InstallError, node_tools
from tests.clients.support import CACHE

DATA_DIR = CACHE / "agent-clis"
_installs: dict[str, AgentInstall] = {}


def installed(agent: str) -> AgentInstall:
    """The agent CLI ``agent`` (an id of ``realclients.agents.AGENTS``), installed."""
    if node_tools() is None:
        pytest.skip("node and npm are needed for the agent CLIs and are not on PATH")
    if agent not in _installs:
        try:
            _installs[agent] = asyncio.run(install_agent(BY_ID[agent], DATA_DIR))
        except InstallError as exc:
            pytest.fail(f"installing {agent} failed: {exc}")
    return _installs[agent]


# -- Gemini CLI ---------------------------------------------------------------------------
# Not one of realclients.agents.AGENTS yet (those carry lint profiles proven by running
# them, and Gemini CLI has none): installed and run here the same way, with the same
# installer.

GEMINI_CLI = AgentSpec(
    "gemini-cli", "Gemini CLI", "gemini", "@google/gemini-cli", "0.61.0", "gemini", "stream-json"
)
# ~/.gemini/settings.json for an offline run: the API-key auth chosen (else `gemini -p`
# exits 41, "Invalid auth method selected."), usage statistics, telemetry and the update
# check off, one attempt per request, no folder-trust prompt. Traced with strace, a run
# so configured connects to the base URL and nothing else.
GEMINI_SETTINGS = {
    "general": {
        "enableAutoUpdate": False,
        "enableAutoUpdateNotification": False,
        "maxAttempts": 1,
        "retryFetchErrors": False,
    },
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
}


@dataclass
class GeminiRun:
    """What ``gemini -p --output-format stream-json`` printed: the assistant's text, the
    tool calls it ran (``tool_use``: id, name, parameters), their results (``tool_result``:
    id to status), its final status, and its exit code and stderr."""

    text: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)
    results: dict[str, str] = field(default_factory=dict)
    status: str | None = None
    exit_code: int | None = None
    stderr: str = ""
    stdout: str = ""


def run_gemini_cli(
    base_url: str, key: str, model: str, prompt: str, workdir: Path, home: Path, seconds: float
) -> GeminiRun:
    """Run Gemini CLI once, non-interactively, in ``workdir`` with HOME ``home``, pointed
    at ``base_url`` (``GOOGLE_GEMINI_BASE_URL``: the root; it adds ``/v1beta/...``)."""
    if node_tools() is None:
        pytest.skip("node and npm are needed for the agent CLIs and are not on PATH")
    try:
        install = asyncio.run(install_agent(GEMINI_CLI, DATA_DIR))
    except InstallError as exc:
        pytest.fail(f"installing Gemini CLI failed: {exc}")
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(GEMINI_SETTINGS, indent=1))
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home)}
    env |= {"NO_PROXY": "127.0.0.1,localhost", "GOOGLE_GEMINI_BASE_URL": base_url}
    env |= {"GEMINI_API_KEY": key}
    argv = [str(install.executable), "-p", prompt, "-m", model, "--output-format", "stream-json"]
    proc = subprocess.Popen(
        argv,
        cwd=workdir,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a timeout ends the CLI and whatever it started
    )
    try:
        out, err = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(
            f"Gemini CLI did not finish within {seconds:.0f} s\n{out[-2000:]}\n{err[-2000:]}"
        )
    run = GeminiRun(exit_code=proc.returncode, stderr=err[-4000:], stdout=out[-8000:])
    for line in out.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "message" and event.get("role") == "assistant":
            run.text += event.get("content", "")
        elif kind == "tool_use":
            run.calls.append(event)
        elif kind == "tool_result":
            run.results[event["tool_id"]] = event.get("status", "")
        elif kind == "result":
            run.status = event.get("status")
    return run
