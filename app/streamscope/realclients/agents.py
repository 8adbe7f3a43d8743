"""The agent CLIs people point at a local proxy: Claude Code, Codex CLI, Qwen Code and
Gemini CLI.

Each is an npm package at a pinned version (:data:`AGENTS`). ``install_agent`` puts one
into ``<data_dir>/clients/agents/<id>`` as ``realclients.node`` does the Node SDKs (npm
of the exact version, a lock, a ``.complete`` marker written only once npm succeeded,
with the version installed, the seconds and the bytes it took). Claude Code and Codex
are native binaries that npm takes from an optional platform package; Qwen Code and
Gemini CLI are JavaScript run by ``node``. Running one offline against a base URL, and
reading what it assembled: :mod:`.agent_run`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from streamscope.lint.clients import AGENT_PINS, NODE_MISSING
from streamscope.realclients.node import (
    MARKER,
    InstallError,
    default_data_dir,
    locked,
    node_tools,
    npm_install,
    read_marker,
    read_versions,
)

Output = Literal["stream-json", "codex", "gemini"]


@dataclass(frozen=True, slots=True)
class AgentSpec:
    """One agent CLI: its id, name, the protocol it speaks, its npm package at a pinned
    version, the command npm links for it and the shape of its output."""

    id: str
    name: str
    protocol: str
    package: str
    version: str
    command: str
    output: Output

    @property
    def pins(self) -> dict[str, str]:
        return {self.package: self.version}


def _agent(
    agent_id: str, name: str, protocol: str, package: str, command: str, output: Output
) -> AgentSpec:
    return AgentSpec(agent_id, name, protocol, package, AGENT_PINS[package], command, output)


# The versions are lint.clients' AGENT_PINS (which the profiles were proven with).
AGENTS: tuple[AgentSpec, ...] = (
    _agent(
        "claude-code",
        "Claude Code",
        "anthropic",
        "@anthropic-ai/claude-code",
        "claude",
        "stream-json",
    ),
    _agent("codex", "Codex CLI", "responses", "@openai/codex", "codex", "codex"),
    _agent("qwen-code", "Qwen Code", "openai-chat", "@qwen-code/qwen-code", "qwen", "stream-json"),
    _agent("gemini-cli", "Gemini CLI", "gemini", "@google/gemini-cli", "gemini", "gemini"),
)
BY_ID = {a.id: a for a in AGENTS}


@dataclass(frozen=True, slots=True)
class AgentInstall:
    """An installed agent CLI: its folder, the version npm installed, how long the cold
    install took and how many bytes it holds."""

    spec: AgentSpec
    path: Path
    version: str
    install_seconds: float
    size_bytes: int
    cold: bool

    @property
    def executable(self) -> Path:
        suffix = ".cmd" if sys.platform == "win32" else ""
        return self.path / "node_modules" / ".bin" / (self.spec.command + suffix)


def agents_dir(data_dir: Path | None = None) -> Path:
    return (data_dir or default_data_dir()) / "clients" / "agents"


def installed_agent(spec: AgentSpec, data_dir: Path | None = None) -> AgentInstall | None:
    """``spec`` installed in ``data_dir`` at its pinned version, or None."""
    path = agents_dir(data_dir) / spec.id
    marker = read_marker(path, spec.pins)
    if marker is None:
        return None
    return AgentInstall(
        spec,
        path,
        str(marker.get("version", "")),
        float(marker.get("install_seconds", 0)),
        int(marker.get("size_bytes", 0)),
        cold=False,
    )


def missing_agent(spec: AgentSpec, data_dir: Path | None = None) -> str | None:
    """None when the CLI can run, else how to get it."""
    if node_tools() is None:
        return NODE_MISSING
    if installed_agent(spec, data_dir) is None:
        return "streamscope clients install --agents"
    return None


def _size(path: Path) -> int:
    """Bytes under ``path``, a file hard-linked twice counted once (npm links Claude
    Code's binary from its platform package)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                st = os.lstat(os.path.join(root, name))
                if (st.st_dev, st.st_ino) not in seen:
                    seen.add((st.st_dev, st.st_ino))
                    total += st.st_size
    return total


async def install_agent(
    spec: AgentSpec, data_dir: Path | None = None, *, npm_seconds: float = 900
) -> AgentInstall:
    """Install ``spec`` at its pinned version (once: a finished install is reused).
    Raises :class:`~.node.InstallError` with npm's words."""
    path = agents_dir(data_dir) / spec.id
    with locked(path.parent / f"{spec.id}.lock"):
        have = installed_agent(spec, data_dir)
        if have is not None:
            return have
        seconds = await npm_install(path, spec.pins, npm_seconds)
        version = read_versions(path, spec.pins).get(spec.package, "")
        if version != spec.version:
            raise InstallError(f"npm installed {spec.package} {version or 'nothing'}")
        size = await asyncio.to_thread(_size, path)
        marker = {"pins": spec.pins, "version": version, "install_seconds": seconds}
        marker["size_bytes"] = size
        (path / MARKER).write_text(json.dumps(marker, indent=1))
        return AgentInstall(spec, path, version, seconds, size, cold=True)


__all__ = [
    "AGENTS",
    "BY_ID",
    "AgentInstall",
    "AgentSpec",
    "agents_dir",
    "install_agent",
    "installed_agent",
    "missing_agent",
]
