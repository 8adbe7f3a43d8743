"""Running Gemini CLI (app/streamscope/realclients/agent_run.py), as "Run in real clients"
runs it, and what it shows of a Gemini stream.

- ``prepare``: its offline recipe (the API-key auth, statistics, telemetry, updates and
  IDE integration off, one attempt per request, the turn limit; a replay gets no tool),
  read back from what it writes;
- offline, proven with a trap: every proxy variable points at a loopback server that
  records what reaches it. With the statistics on (a control run) Gemini CLI sends
  ``CONNECT play.googleapis.com:443`` there; as ``prepare`` configures it, nothing, and the
  replay server gets one request, at the stream's path;
- what it shows, run on real recordings (tests/fixtures/gemini) each with one defect,
  and how many requests it sends: the error it reports, the text it keeps, its exit code.
  With its retries left at their default it asks again 3 times for a stream without a
  finish reason and prints each attempt's text; ``general.maxAttempts = 1`` keeps a run
  to one request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from streamscope.realclients import agent_run
from streamscope.realclients.agent_run import (
    AgentRun,
    Target,
    gemini_settings,
    prepare,
    read_output,
    run_agent,
)
from streamscope.realclients.agents import BY_ID, AgentInstall
from streamscope.realclients.server import Replay, ReplayServer
from tests.clients.agent_support import installed
from tests.lint.gemini_cases import BLOCKED, TEXT, TOOL, chunks, sse

pytestmark = pytest.mark.timeout(600)

TARGET = Target("http://127.0.0.1:9/", "sk-local-abc", "demo-tools")
SSE = [("content-type", "text/event-stream")]
STREAM_PATH = "/r/s/v1beta/models/replay:streamGenerateContent?alt=sse"


@pytest.fixture
def leaky_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Variables a user's shell may hold, which must not reach the CLI."""
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "HTTPS_PROXY"):
        monkeypatch.setenv(name, "from-the-users-shell")


def fake_install(tmp_path: Path) -> AgentInstall:
    return AgentInstall(BY_ID["gemini-cli"], tmp_path / "install", "0", 0.0, 0, cold=False)


@pytest.mark.usefixtures("leaky_env")
def test_gemini_cli_gets_its_base_url_key_and_offline_settings(tmp_path: Path) -> None:
    home = tmp_path / "h"
    how = prepare(fake_install(tmp_path), TARGET, "hi", tmp_path, home, max_turns=3)
    assert how.env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:9"  # the SDK adds /v1beta
    assert how.env["GEMINI_API_KEY"] == "sk-local-abc"  # ours, not the shell's
    assert "GOOGLE_API_KEY" not in how.env and "HTTPS_PROXY" not in how.env
    assert how.env["HOME"] == str(home) and Path(how.env["TMPDIR"]).parent == home
    assert how.env["GEMINI_CLI_NO_RELAUNCH"] == "true"
    settings = json.loads((home / ".gemini" / "settings.json").read_text())
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert settings["security"]["folderTrust"]["enabled"] is False
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert settings["telemetry"]["enabled"] is False and settings["ide"]["enabled"] is False
    assert settings["general"]["enableAutoUpdate"] is False
    assert settings["general"]["maxAttempts"] == 1
    assert settings["model"]["maxSessionTurns"] == 3
    assert "tools" not in settings  # through a proxy it runs its read-only tools
    assert how.argv[1:3] == ["-p", "hi"] and "stream-json" in how.argv
    assert how.argv[how.argv.index("-m") + 1] == "demo-tools"


def test_a_replay_gets_no_built_in_tool() -> None:
    replayed = Target(TARGET.base_url, TARGET.key, TARGET.model, replay=True)
    assert gemini_settings(replayed, 1)["tools"] == {"core": []}


class Trap:
    """A loopback server that records the first line of whatever reaches it (a proxy
    gets ``CONNECT host:443``) and closes."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Trap:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        self._server = await asyncio.start_server(self._serve, sock=sock)
        self.port = sock.getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            self.seen.append((await reader.readline()).decode("latin-1").strip())
        writer.close()


async def _trapped(install: AgentInstall, tmp_path: Path, statistics: bool) -> tuple[Any, ...]:
    """Run the CLI as ``prepare`` sets it up on a replayed text stream, every proxy
    variable pointing at a trap (``statistics``: with usage statistics turned back on);
    what the trap saw, the replay server's requests and what the CLI printed."""
    raw = sse(chunks(TEXT))
    async with ReplayServer({"s": Replay(raw, 200, SSE)}) as server, Trap() as trap:
        target = Target(server.base("s"), "sk-local-replay", "replay", replay=True)
        home = tmp_path / f"home-{statistics}"
        how = prepare(install, target, "Say hello.", tmp_path, home, max_turns=1)
        if statistics:
            settings = home / ".gemini" / "settings.json"
            written = json.loads(settings.read_text())
            written["privacy"]["usageStatisticsEnabled"] = True
            settings.write_text(json.dumps(written))
        proxy = f"http://127.0.0.1:{trap.port}"
        env = how.env | {v: proxy for v in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy")}
        proc = await asyncio.create_subprocess_exec(
            *how.argv,
            cwd=how.cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, _ = await asyncio.wait_for(proc.communicate(), 90)
        await asyncio.sleep(0.2)  # a connection made as it exited
        return trap.seen, server.requests, out.decode()


def test_gemini_cli_calls_nothing_but_the_base_url(tmp_path: Path) -> None:
    install = installed("gemini-cli")
    seen, requests, _ = asyncio.run(_trapped(install, tmp_path, statistics=True))
    assert "CONNECT play.googleapis.com:443 HTTP/1.1" in seen, seen  # the trap catches
    seen, requests, out = asyncio.run(_trapped(install, tmp_path, statistics=False))
    assert seen == [], seen
    assert requests == [("POST", STREAM_PATH)], requests
    assert read_output(install.spec, out, tmp_path).text  # it answered


def _text(items: list[dict[str, Any]]) -> str:
    """The text parts of a recording's chunks, joined (what a client shows)."""
    return "".join(
        p.get("text", "")
        for c in items
        for cand in c.get("candidates", [])
        for p in cand.get("content", {}).get("parts", [])
        if not p.get("thought")
    )


def replay(raw: bytes, tmp_path: Path, status: int = 200) -> tuple[AgentRun, int]:
    """What Gemini CLI made of ``raw`` (served with ``status``) as the runner runs it (a
    replay, one turn), and how many requests it sent."""
    install = installed("gemini-cli")
    headers = SSE if status == 200 else [("content-type", "application/json")]

    async def run() -> tuple[AgentRun, int]:
        async with ReplayServer({"s": Replay(raw, status, headers)}) as server:
            target = Target(server.base("s"), "sk-local-replay", "replay", replay=True)
            got = await run_agent(install, target, "Say hello.", tmp_path, seconds=120, max_turns=1)
            return got, len(server.requests)

    return asyncio.run(run())


def _without_finish(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for item in items:
        for cand in item.get("candidates", []):
            cand.pop("finishReason", None)
    return items


def _finished(items: list[dict[str, Any]], reason: str) -> list[dict[str, Any]]:
    items[-1]["candidates"][0]["finishReason"] = reason
    return items


ERROR = {"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}}


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))  # as the CLI prints a body it parsed


NO_FINISH = "Model stream ended without a finish reason."
# name -> (the stream, its status, the error Gemini CLI reports (None: none), the
# recording's chunks whose text it shows, its exit status)
CASES: dict[str, tuple[bytes, int, str | None, list[dict[str, Any]], int]] = {
    "recorded": (sse(chunks(TEXT)), 200, None, chunks(TEXT), 0),
    "no-finish-reason": (sse(_without_finish(chunks(TEXT))), 200, NO_FINISH, chunks(TEXT), 0),
    # the error element is not read as an error: the stream merely lacks its finish
    "error-element": (sse([*chunks(TEXT)[:1], ERROR]), 200, NO_FINISH, chunks(TEXT)[:1], 0),
    "cut-mid-chunk": (
        sse(chunks(TEXT)[:1]) + sse([json.dumps(chunks(TEXT)[1]).encode()[:40]], end=b""),
        200,
        "[API Error: Incomplete JSON segment at the end]",
        chunks(TEXT)[:1],
        1,
    ),
    "max-tokens": (sse(_finished(chunks(TEXT), "MAX_TOKENS")), 200, None, chunks(TEXT), 0),
    "safety": (sse(_finished(chunks(TEXT), "SAFETY")), 200, None, chunks(TEXT), 0),
    "prompt-blocked": (sse(chunks(BLOCKED)), 200, NO_FINISH, [], 0),
    # an HTTP error: its body in the message, the status (mod 256) as the exit code
    "http-500": (json.dumps(ERROR).encode(), 500, f"[API Error: {_compact(ERROR)}]", [], 244),
}


@pytest.mark.parametrize("case", list(CASES))
def test_what_gemini_cli_shows_of_a_stream(case: str, tmp_path: Path) -> None:
    raw, status, error, shown, exit_code = CASES[case]
    run, requests = replay(raw, tmp_path, status)
    assert requests == 1, run  # no retry: general.maxAttempts = 1
    assert run.error == error, run
    assert run.text == _text(shown), run
    assert run.exit_code == exit_code and not run.turn_limit and not run.timed_out, run


def test_a_whole_function_call_is_run_once_and_ends_the_turn(tmp_path: Path) -> None:
    run, requests = replay(sse(chunks(TOOL)), tmp_path)
    [call] = [p["functionCall"] for p in chunks(TOOL)[0]["candidates"][0]["content"]["parts"]]
    assert [(c.name, json.loads(c.arguments)) for c in run.tool_calls] == [
        (call["name"], call["args"])
    ]
    assert [r.call_id for r in run.tool_results] == [run.tool_calls[0].id]
    assert run.tool_results[0].is_error and "not found" in run.tool_results[0].text  # no tools
    assert run.turn_limit and run.error is None and run.exit_code == 53 and requests == 1, run


def test_its_retries_left_alone_it_asks_again_and_prints_each_attempt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control for the runner's bound: without ``general.maxAttempts`` Gemini CLI
    asks 3 more times for a stream without a finish reason (waiting about 1, 2 and 4 s)
    and prints each attempt's text, then fails as it does on the first."""
    general = dict(agent_run.GEMINI_SETTINGS["general"])
    del general["maxAttempts"]
    monkeypatch.setattr(
        agent_run, "GEMINI_SETTINGS", agent_run.GEMINI_SETTINGS | {"general": general}
    )
    raw, _, error, shown, _ = CASES["no-finish-reason"]
    run, requests = replay(raw, tmp_path)
    assert requests == 4 and run.text == _text(shown) * 4 and run.error == error, run
