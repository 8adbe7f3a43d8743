"""The agent CLIs in ``streamscope clients list|run`` and ``lint --clients``
(app/streamscope/cli/clients.py), with the data dir pointed at the test cache where
tests/clients installed them: listed ready at their pinned versions under their own
profiles, and run on a recording beside the linter's prediction for them."""

from __future__ import annotations

import json

import pytest

from streamscope.cli import main
from streamscope.lint.clients import AGENT_PINS, BY_ID
from streamscope.realclients.compare import intended_answer
from streamscope.recording import read_recording
from tests.clients.agent_support import DATA_DIR, installed
from tests.support import REPO

RECORDING = REPO / "resources" / "replay" / "recordings" / "anthropic-text.jsonl"
RAW = b"".join(f.raw for f in read_recording(RECORDING.read_bytes()).frames)
TEXT = intended_answer(RAW, "anthropic").text  # what our own decoder reads from it


@pytest.fixture
def agents_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """The data dir is the one the agent CLIs are installed in."""
    for agent in ("claude-code", "codex", "qwen-code"):
        installed(agent)
    monkeypatch.setenv("STREAMSCOPE_DATA_DIR", str(DATA_DIR))


@pytest.mark.usefixtures("agents_here")
def test_list_shows_the_installed_agent_clis_ready_under_their_profiles(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["clients", "list"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    for agent in ("claude-code", "codex", "qwen-code"):
        (package, version), *_ = BY_ID[agent].package_versions.items()
        assert version == AGENT_PINS[package]
        assert lines[agent].split()[1:4] == [BY_ID[agent].protocol, agent, package]
        assert lines[agent].endswith(f"{package} {version}  [ready]"), lines[agent]


@pytest.mark.usefixtures("agents_here")
def test_run_only_claude_code_prints_what_it_assembled_beside_its_profile(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["clients", "run", "--only", "claude-code", str(RECORDING)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.splitlines()[0] == "anthropic: 1 clients"
    assert "Claude Code (claude -p)  [claude-code]  agrees" in out
    assert f'text:       "{TEXT[:69]}…" ({len(TEXT)} chars)' in out
    pin = AGENT_PINS["@anthropic-ai/claude-code"]
    assert f"(the claude-code profile was proven with @anthropic-ai/claude-code {pin})" in out


@pytest.mark.usefixtures("agents_here")
def test_lint_clients_json_runs_the_agent_cli_of_the_protocol(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["lint", "--clients", "--json", str(RECORDING)])
    runs = {r["client"]: r for r in json.loads(capsys.readouterr().out)}
    assert code == 0
    claude = runs["claude-code"]
    assert claude["skipped"] is None and claude["error"] is None
    assert claude["text"] == TEXT and claude["usage"] is not None
    assert claude["verdict"]["profile"] == "claude-code" and claude["verdict"]["agrees"] is True
    assert all(r["verdict"]["agrees"] is not False for r in runs.values())
