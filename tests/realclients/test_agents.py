"""The agent CLIs' specs and install (app/streamscope/realclients/agents.py): an install
counts only once npm finished, at its pinned version, and says its size (a file npm
hard-links twice counted once); the CLIs install at their pinned versions. (Running them:
test_agent_run.py; through the proxy: tests/clients/test_agent_clis.py.)"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from streamscope.realclients.agents import AGENTS, BY_ID, _size, agents_dir, installed_agent
from streamscope.realclients.node import MARKER
from tests.clients.agent_support import installed


def test_an_install_counts_only_at_its_pinned_version(tmp_path: Path) -> None:
    spec = BY_ID["codex"]
    folder = agents_dir(tmp_path) / spec.id
    folder.mkdir(parents=True)
    assert installed_agent(spec, tmp_path) is None  # npm never finished: no marker
    other = {"pins": {spec.package: "0.0.1"}, "version": "0.0.1", "install_seconds": 3}
    (folder / MARKER).write_text(json.dumps(other))
    assert installed_agent(spec, tmp_path) is None  # another pin: installed again
    mine = {"pins": spec.pins, "version": spec.version, "install_seconds": 9.5, "size_bytes": 7}
    (folder / MARKER).write_text(json.dumps(mine))
    got = installed_agent(spec, tmp_path)
    assert got is not None and (got.version, got.install_seconds, got.size_bytes) == (
        spec.version,
        9.5,
        7,
    )
    assert got.executable.parent == folder / "node_modules" / ".bin"


def test_size_counts_a_hard_linked_file_once(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"x" * 1000)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_bytes(b"y" * 10)
    os.link(tmp_path / "a", tmp_path / "sub" / "a-again")
    assert _size(tmp_path) == 1010


@pytest.mark.parametrize("agent", [a.id for a in AGENTS])
def test_each_cli_installs_at_its_pinned_version(agent: str) -> None:
    got = installed(agent)
    assert got.version == got.spec.version and got.executable.exists()
    assert got.size_bytes > 10_000_000 and got.install_seconds > 0
    meta = json.loads((got.path / "node_modules" / got.spec.package / "package.json").read_text())
    assert meta["version"] == got.spec.version
