"""The agent CLIs people point at a local proxy: Claude Code, Codex CLI and Qwen Code.

Each is an npm package at a pinned version (:data:`AGENTS`). ``install_agent`` puts one
into ``<data_dir>/clients/agents/<id>`` as ``realclients.node`` does the Node SDKs (npm
of the exact version, a lock, a ``.complete`` marker written only once npm succeeded,
with the version installed, the seconds and the bytes it took). Claude Code and Codex
are native binaries that npm takes from an optional platform package; Qwen Code is
JavaScript run by ``node``.

``run_agent`` runs one non-interactively against a base URL (a proxy, or a replay server
for "Run in real clients") with a key, a model and a prompt, in a working folder, and
reads what it assembled (:mod:`.agent_output`). Offline, as measured by tracing its
network calls: HOME (and the CLI's own config folder) is a fresh temporary folder, the
environment holds only PATH and the CLI's own variables, and each CLI is configured so
that nothing but the base URL is called:

- Claude Code: ``ANTHROPIC_BASE_URL`` (the root: the SDK adds ``/v1/messages``),
  ``ANTHROPIC_API_KEY``; ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` is what stops its
  calls to api.anthropic.com and the ``HEAD /api/hello`` probe of the base URL
  (``DISABLE_TELEMETRY``, ``DISABLE_AUTOUPDATER``, ``DISABLE_ERROR_REPORTING`` are set
  too); ``CLAUDE_CODE_MAX_RETRIES=0``: an error is reported at once, not after ten
  retries over two minutes. ``claude -p PROMPT --output-format stream-json --verbose
  --model M --max-turns N``.
- Codex: ``$CODEX_HOME/config.toml`` names a model provider at ``BASE/v1`` with
  ``wire_api = "responses"``, the key in ``STREAMSCOPE_API_KEY``, no retries; approvals
  never, a read-only sandbox; update check, analytics, feedback and OpenTelemetry off,
  and the ``plugins`` and ``remote_plugin`` features off (their start-up sync called
  github.com and chatgpt.com). ``codex exec --json --skip-git-repo-check
  --strict-config -m M PROMPT``. Codex has no turn limit: a run ends when the model
  answers in text, or at the timeout.
- Qwen Code: ``OPENAI_BASE_URL`` (``BASE/v1``), ``OPENAI_API_KEY``, ``OPENAI_MODEL``;
  ``~/.qwen/settings.json`` turns usage statistics (sent to an Aliyun RUM endpoint),
  telemetry and auto-update off and HTTP retries to 0 (a stream that breaks is still
  tried three times). ``qwen -p PROMPT --output-format stream-json
  --max-session-turns N``.

Every process gets stdin closed and runs in a session of its own, so a timeout ends the
CLI and whatever it started.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from streamscope.lint.clients import NODE_MISSING
from streamscope.realclients.agent_output import (
    Assembled,
    ToolCall,
    ToolResult,
    read_codex,
    read_stream_json,
)
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

Output = Literal["stream-json", "codex"]
KEY_VARIABLE = "STREAMSCOPE_API_KEY"  # where Codex reads the key (its config names it)


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


# Exact versions, as `npm view PACKAGE version` gave them.
AGENTS: tuple[AgentSpec, ...] = (
    AgentSpec(
        "claude-code",
        "Claude Code",
        "anthropic",
        "@anthropic-ai/claude-code",
        "2.1.332",
        "claude",
        "stream-json",
    ),
    AgentSpec("codex", "Codex CLI", "responses", "@openai/codex", "0.171.0", "codex", "codex"),
    AgentSpec(
        "qwen-code",
        "Qwen Code",
        "openai-chat",
        "@qwen-code/qwen-code",
        "0.24.4",
        "qwen",
        "stream-json",
    ),
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


# -- running one ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Target:
    """Where a CLI sends its requests: a base URL without ``/v1`` (each CLI is given the
    form its own SDK expects), the key and the model."""

    base_url: str
    key: str
    model: str


@dataclass(frozen=True, slots=True)
class Invocation:
    """The command line, environment and folder a run uses."""

    argv: list[str]
    env: dict[str, str]
    cwd: Path
    home: Path


@dataclass(slots=True)
class AgentRun:
    """What one run of an agent CLI did: what it assembled (text, reasoning, tool calls
    and the results it sent back, the error it ended with), its exit code, whether the
    timeout ended it, how long it took, and the tail of its stderr."""

    agent: str
    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    error: str | None = None
    notices: list[str] = field(default_factory=list)
    answers: int = 0
    exit_code: int | None = None
    timed_out: bool = False
    duration_ms: float = 0.0
    stderr: str = ""
    skipped: str | None = None


QWEN_SETTINGS = {
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False},
    "model": {"generationConfig": {"maxRetries": 0}},
}


def _toml(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


def codex_config(target: Target) -> str:
    """``$CODEX_HOME/config.toml`` for a run against ``target``."""
    return f"""model = {_toml(target.model)}
model_provider = "streamscope"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

[features]
plugins = false
remote_plugin = false

[model_providers.streamscope]
name = "StreamScope"
base_url = {_toml(target.base_url.rstrip("/") + "/v1")}
env_key = "{KEY_VARIABLE}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""


def _base_env(home: Path) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home)}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    for name in ("LANG", "LC_ALL", "SYSTEMROOT", "COMSPEC", "PATHEXT", "TMPDIR", "TEMP", "TMP"):
        if name in os.environ:
            env[name] = os.environ[name]
    if sys.platform == "win32":
        env["USERPROFILE"] = env["APPDATA"] = env["LOCALAPPDATA"] = str(home)
    return env


def prepare(
    install: AgentInstall,
    target: Target,
    prompt: str,
    workdir: Path,
    home: Path,
    *,
    max_turns: int = 4,
) -> Invocation:
    """Write the CLI's configuration into ``home`` and say how to run it."""
    spec = install.spec
    env = _base_env(home)
    exe = str(install.executable)
    base = target.base_url.rstrip("/")
    if spec.id == "claude-code":
        env |= {
            "ANTHROPIC_BASE_URL": base,
            "ANTHROPIC_API_KEY": target.key,
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
        }
        argv = [exe, "-p", prompt, "--output-format", "stream-json", "--verbose"]
        argv += ["--model", target.model, "--max-turns", str(max_turns)]
    elif spec.id == "codex":
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(codex_config(target))
        env |= {"CODEX_HOME": str(codex_home), KEY_VARIABLE: target.key}
        argv = [exe, "exec", "--json", "--skip-git-repo-check", "--strict-config"]
        argv += ["-m", target.model, prompt]
    elif spec.id == "qwen-code":
        settings = home / ".qwen" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps(QWEN_SETTINGS, indent=1))
        env |= {
            "OPENAI_BASE_URL": base + "/v1",
            "OPENAI_API_KEY": target.key,
            "OPENAI_MODEL": target.model,
        }
        argv = [exe, "-p", prompt, "--output-format", "stream-json"]
        argv += ["--max-session-turns", str(max_turns)]
    else:
        raise ValueError(f"unknown agent CLI {spec.id!r}")
    return Invocation(argv, env, workdir, home)


def read_output(spec: AgentSpec, stdout: str, home: Path) -> Assembled:
    """What the CLI assembled, from its stdout (and, for Codex, its session files)."""
    if spec.output == "codex":
        files = sorted((home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
        rollout = "".join(f.read_text("utf-8", "replace") for f in files)
        return read_codex(stdout, rollout)
    return read_stream_json(stdout)


async def run_agent(
    install: AgentInstall,
    target: Target,
    prompt: str,
    workdir: Path,
    *,
    seconds: float = 120,
    max_turns: int = 4,
    home: Path | None = None,
) -> AgentRun:
    """Run the CLI once against ``target`` in ``workdir``, for at most ``seconds``
    (``home``: where its HOME is, a temporary folder removed afterwards when None), and
    read what it assembled."""
    own_home = home is None
    home = (
        Path(tempfile.mkdtemp(prefix=f"streamscope-{install.spec.id}-")) if home is None else home
    )
    try:
        return await _run(install, target, prompt, workdir, home, seconds, max_turns)
    finally:
        if own_home:
            await asyncio.to_thread(shutil.rmtree, home, True)


async def _run(
    install: AgentInstall,
    target: Target,
    prompt: str,
    workdir: Path,
    home: Path,
    seconds: float,
    max_turns: int,
) -> AgentRun:
    how = prepare(install, target, prompt, workdir, home, max_turns=max_turns)
    run = AgentRun(install.spec.id)
    start = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *how.argv,
        cwd=how.cwd,
        env=how.env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=sys.platform != "win32",
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), seconds)
    except TimeoutError:
        run.timed_out = True
        _kill(proc)
        out, err = await proc.communicate()
    except asyncio.CancelledError:
        _kill(proc)
        await asyncio.shield(proc.wait())
        raise
    run.duration_ms = (time.monotonic() - start) * 1000
    run.exit_code = proc.returncode
    run.stderr = "\n".join(err.decode("utf-8", "replace").splitlines()[-30:])
    got = await asyncio.to_thread(read_output, install.spec, out.decode("utf-8", "replace"), home)
    run.text, run.reasoning, run.error = got.text, got.reasoning, got.error
    run.tool_calls, run.tool_results = got.tool_calls, got.tool_results
    run.notices, run.answers = got.notices, got.answers
    if run.timed_out:
        run.error = run.error or f"{install.spec.name} did not finish within {seconds:.0f} s"
    elif run.error is None and proc.returncode:
        tail = run.stderr.splitlines()[-3:]
        run.error = f"{install.spec.name} exited {proc.returncode}: " + " ".join(tail)
    return run


def _kill(proc: asyncio.subprocess.Process) -> None:
    """End the CLI and what it started (its session's process group)."""
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if sys.platform != "win32":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()


__all__ = [
    "AGENTS",
    "BY_ID",
    "AgentInstall",
    "AgentRun",
    "AgentSpec",
    "Invocation",
    "Target",
    "agents_dir",
    "codex_config",
    "install_agent",
    "installed_agent",
    "missing_agent",
    "prepare",
    "read_output",
    "run_agent",
]
