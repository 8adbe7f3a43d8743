"""The agent CLIs for the tests: each installed once, at its pinned version, into the test
cache (``$STREAMSCOPE_TEST_CACHE/agent-clis``, a data directory whose
``clients/agents/<id>`` folders ``realclients.agents.install_agent`` fills and marks
complete). A machine without node/npm skips the test; a failed install fails it with
npm's words."""

from __future__ import annotations

import asyncio

import pytest

from streamscope.realclients.agents import BY_ID, AgentInstall, install_agent
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
