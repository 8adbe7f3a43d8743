"""Running an agent CLI (:mod:`.agents`) offline against a base URL, and what it did.

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
  --strict-config -m M PROMPT``. Codex has no turn limit (on a replayed tool call it
  asked again 90 times in 4 s), so ``run_agent`` watches its session file and ends it
  once it has sent back the results of its last allowed answer.
- Qwen Code: ``OPENAI_BASE_URL`` (``BASE/v1``), ``OPENAI_API_KEY``, ``OPENAI_MODEL``;
  ``~/.qwen/settings.json`` turns usage statistics (sent to an Aliyun RUM endpoint),
  telemetry and auto-update off and HTTP retries to 0 (a stream that breaks is still
  tried three times). ``qwen -p PROMPT --output-format stream-json
  --max-session-turns N`` (the limit reached: exit 53).
- Gemini CLI: ``GOOGLE_GEMINI_BASE_URL`` (the root: its SDK adds ``/v1beta/models/M:
  streamGenerateContent?alt=sse``, the only call it makes), ``GEMINI_API_KEY`` (sent in
  ``x-goog-api-key``); ``~/.gemini/settings.json`` picks the API-key auth (without it:
  "Invalid auth method selected", exit 41), turns folder trust off (else it refuses an
  untrusted folder), usage statistics off (they resolve and call play.googleapis.com),
  telemetry, auto-update and IDE integration off, ``general.maxAttempts`` to 1 (by
  default a 5xx is tried 10 times over more than five minutes, and a stream without a
  finish reason 4 times over 7 s, its text printed again each time) and
  ``model.maxSessionTurns`` to N (the limit reached: exit 53). ``GEMINI_CLI_NO_RELAUNCH``
  keeps it from starting itself again to raise its heap (a second node start, ~1 s of
  CPU); ``TMPDIR`` is in HOME, where it writes its error reports. ``gemini -p PROMPT
  --output-format stream-json -m M``. An API error ends it with the HTTP status (mod 256).

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

from streamscope.realclients.agent_output import (
    Assembled,
    ToolCall,
    ToolResult,
    codex_asked_again,
    read_codex,
    read_gemini,
    read_stream_json,
)
from streamscope.realclients.agents import AgentInstall, AgentSpec

KEY_VARIABLE = "STREAMSCOPE_API_KEY"  # where Codex reads the key (its config names it)


@dataclass(frozen=True, slots=True)
class Target:
    """Where a CLI sends its requests: a base URL without ``/v1`` (each CLI is given the
    form its own SDK expects), the key and the model."""

    base_url: str
    key: str
    model: str
    # A recorded stream replayed ("Run in real clients"): the calls in it came from
    # someone else's conversation, so the CLI's command tools are switched off.
    replay: bool = False


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
    and the results it sent back, the error it ended with, the usage it reported), its
    exit code, whether it stopped at its turn limit (``max_turns``: not an error) or the
    timeout ended it, how long it took, and the tail of its stderr."""

    agent: str
    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    error: str | None = None
    notices: list[str] = field(default_factory=list)
    answers: int = 0
    usage: tuple[int | None, int | None] | None = None
    exit_code: int | None = None
    turn_limit: bool = False
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


GEMINI_SETTINGS: dict[str, dict[str, object]] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {
        "enableAutoUpdate": False,
        "enableAutoUpdateNotification": False,
        "maxAttempts": 1,
        "retryFetchErrors": False,
    },
    "ide": {"enabled": False},
}


def gemini_settings(target: Target, max_turns: int) -> dict[str, object]:
    """``~/.gemini/settings.json`` for a run against ``target``: a replay gets no built-in
    tool (``tools.core`` empty: read_file, glob, grep_search and google_web_search are
    registered in a headless run, and a replayed call of one would run)."""
    settings: dict[str, object] = {**GEMINI_SETTINGS, "model": {"maxSessionTurns": max_turns}}
    if target.replay:
        settings["tools"] = {"core": []}
    return settings


def _toml(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid TOML basic string


# Codex runs the shell calls it is given, read-only sandbox or not (reads are allowed):
# a replayed stream's calls must not run on this machine.
_REPLAY_FEATURES = "shell_tool = false\nunified_exec = false\nview_image = false\n"


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
{_REPLAY_FEATURES if target.replay else ""}
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
        if target.replay:  # no built-in tool (it ran an allowed Bash command, say)
            argv += ["--tools", ""]
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
        if target.replay:  # no core tool (its read_file read any file it was given)
            argv += ["--core-tools", "none"]
    elif spec.id == "gemini-cli":
        settings = home / ".gemini" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps(gemini_settings(target, max_turns), indent=1))
        (home / "tmp").mkdir(exist_ok=True)
        env |= {
            "GOOGLE_GEMINI_BASE_URL": base,
            "GEMINI_API_KEY": target.key,
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "TMPDIR": str(home / "tmp"),
        }
        if sys.platform == "win32":
            env["TEMP"] = env["TMP"] = str(home / "tmp")
        argv = [exe, "-p", prompt, "--output-format", "stream-json", "-m", target.model]
    else:
        raise ValueError(f"unknown agent CLI {spec.id!r}")
    return Invocation(argv, env, workdir, home)


QWEN_TURN_LIMIT = 53  # Qwen Code's exit status at --max-session-turns
TURN_LIMIT_EXIT = {"qwen-code": QWEN_TURN_LIMIT, "gemini-cli": 53}  # Gemini CLI's too


def _rollout(home: Path) -> str:
    files = sorted((home / ".codex" / "sessions").rglob("rollout-*.jsonl"))
    return "".join(f.read_text("utf-8", "replace") for f in files)


def read_output(
    spec: AgentSpec, stdout: str, home: Path, max_turns: int | None = None
) -> Assembled:
    """What the CLI assembled, from its stdout (and, for Codex, its session files, up
    to its ``max_turns``-th answer)."""
    if spec.output == "codex":
        return read_codex(stdout, _rollout(home), max_turns)
    if spec.output == "gemini":
        return read_gemini(stdout)
    return read_stream_json(stdout)


async def _codex_turn_guard(proc: asyncio.subprocess.Process, home: Path, max_turns: int) -> bool:
    """End Codex once it has asked again after the results of its ``max_turns``-th answer
    (a replay would answer it for ever); True when it did. Not at the results themselves:
    Codex records a call's result before it has read the rest of its answer, and an
    answer that then fails (``response.incomplete``) must be let fail; killed at the
    results, the run raced that error and, under load, lost it."""
    while proc.returncode is None:
        await asyncio.sleep(0.05)
        if codex_asked_again(await asyncio.to_thread(_rollout, home), max_turns):
            _kill(proc)
            return True
    return False


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
    guard = None
    if install.spec.output == "codex":
        guard = asyncio.create_task(_codex_turn_guard(proc, home, max_turns))
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
    finally:
        if guard is not None:
            guard.cancel()
    stopped = (
        guard is not None
        and guard.done()
        and not guard.cancelled()
        and guard.exception() is None
        and guard.result()
    )
    run.duration_ms = (time.monotonic() - start) * 1000
    run.exit_code = proc.returncode
    run.stderr = "\n".join(err.decode("utf-8", "replace").splitlines()[-30:])
    stdout = out.decode("utf-8", "replace")
    got = await asyncio.to_thread(read_output, install.spec, stdout, home, max_turns)
    run.text, run.reasoning, run.error = got.text, got.reasoning, got.error
    run.tool_calls, run.tool_results = got.tool_calls, got.tool_results
    run.notices, run.answers = got.notices, got.answers
    run.usage = got.usage
    limit_exit = proc.returncode == TURN_LIMIT_EXIT.get(install.spec.id, -1)
    run.turn_limit = bool(got.turn_limit or stopped or limit_exit)
    if run.timed_out:
        run.error = run.error or f"{install.spec.name} did not finish within {seconds:.0f} s"
    elif run.error is None and proc.returncode and not run.turn_limit:
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
    "KEY_VARIABLE",
    "AgentRun",
    "Invocation",
    "Target",
    "codex_config",
    "gemini_settings",
    "prepare",
    "read_output",
    "run_agent",
]
