"""The agent CLIs as real clients (app/streamscope/realclients/agent_jobs.py, through
``run_many`` in realclients/run.py): what a run assembled becomes the runner's result, a
CLI that is not installed is skipped with how to install it, the jobs run a bounded
number at a time, each for a bounded time, and a cancel leaves no CLI running.

The CLIs are the real ones (installed once into the test cache: tests/clients), run
against a loopback :class:`~streamscope.realclients.server.ReplayServer`. What each one
makes of every lint rule's example and every replay stream, beside its profile's claims:
test_compare_profiles_proven.py."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamscope.lint.clients import AGENT_INSTALL, NODE_MISSING, clients_for
from streamscope.realclients import StreamInput, run_many
from streamscope.realclients.agent_jobs import AgentJob, result_of, run_agent_jobs
from streamscope.realclients.agent_output import ToolCall
from streamscope.realclients.agent_run import AgentRun
from streamscope.realclients.agents import BY_ID as AGENT_SPECS
from streamscope.realclients.agents import agents_dir
from streamscope.realclients.node import MARKER, node_tools
from streamscope.realclients.server import Replay, ReplayServer
from tests.clients.agent_support import DATA_DIR, installed
from tests.support import FIXTURES, load

pytestmark = pytest.mark.timeout(600)

ANTHROPIC = b"".join(f.raw for f in load(FIXTURES / "anthropic" / "ant-py_basic-text.sse").frames)
CHAT = b"".join(f.raw for f in load(FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse").frames)
SSE = [("content-type", "text/event-stream")]


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["call_a", "call_b", ""]), st.sampled_from(["f", "g"]), st.text()
        ),
        max_size=6,
    )
)
def test_a_call_asked_again_counts_once_with_its_last_arguments(
    calls: list[tuple[str, str, str]],
) -> None:
    """A CLI that asks again prints the calls of every attempt under the same ids: the
    result keeps each id once, where it first came, with the last attempt's arguments;
    calls without an id are all kept."""
    run = AgentRun("qwen-code", tool_calls=[ToolCall(i, n, a) for i, n, a in calls])
    want: dict[str, list[str]] = {}
    for n, (ident, name, arguments) in enumerate(calls):
        want[ident or f"#{n}"] = [name, arguments]
    assert result_of(run)["tool_calls"] == list(want.values())


def test_a_run_becomes_the_runners_result() -> None:
    run = AgentRun("claude-code", text="Hi", reasoning="r", error=None, usage=(5, 7))
    run.duration_ms = 12.5
    assert result_of(run) == {
        "text": "Hi",
        "reasoning": "r",
        "tool_calls": [],
        "finish": None,  # no CLI prints the finish reason it read
        "usage": [5, 7],
        "error": None,
        "duration_ms": 12.5,
    }
    assert result_of(AgentRun("codex", error="boom"))["usage"] is None


def test_an_agent_cli_not_installed_is_skipped_with_how_to_install_it(tmp_path: Path) -> None:
    runs = asyncio.run(run_many([StreamInput(ANTHROPIC, "anthropic")], data_dir=tmp_path))
    by_id = {r.client: r for r in runs[0]}
    assert list(by_id) == [c.id for c in clients_for("anthropic")]  # the CLI last
    assert by_id["claude-code"].skipped == (AGENT_INSTALL if node_tools() else NODE_MISSING)
    assert by_id["claude-code"].text == "" and by_id["claude-code"].error is None


def test_a_cli_that_cannot_start_is_its_rows_error_not_the_runs(tmp_path: Path) -> None:
    """An install marked complete whose executable is gone: the job says why it could not
    run; the other jobs and the run go on."""
    spec = AGENT_SPECS["claude-code"]
    folder = agents_dir(tmp_path) / spec.id
    folder.mkdir(parents=True)
    (folder / MARKER).write_text(json.dumps({"pins": spec.pins, "version": spec.version}))
    jobs = [AgentJob("a", "claude-code", "http://127.0.0.1:9"), AgentJob("b", "codex", "x")]
    results = asyncio.run(run_agent_jobs(jobs, tmp_path, 10))
    assert results["a"]["error"].startswith("claude-code could not run: FileNotFoundError")
    assert results["b"] == {"error": "codex is not installed"}


def test_jobs_run_a_bounded_number_at_a_time() -> None:
    """Three Claude Code jobs, one at a time: the run lasts at least their three
    durations; each assembled the replayed text."""
    installed("claude-code")

    async def three() -> tuple[float, dict[str, dict[str, object]]]:
        async with ReplayServer({"s": Replay(ANTHROPIC, 200, SSE)}) as server:
            jobs = [AgentJob(str(n), "claude-code", server.base("s")) for n in range(3)]
            start = time.perf_counter()
            out = await run_agent_jobs(jobs, DATA_DIR, 60, concurrency=1)
            return (time.perf_counter() - start) * 1000, out

    wall_ms, results = asyncio.run(three())
    assert set(results) == {"0", "1", "2"}
    assert all(r["error"] is None and r["text"] == "Hello there!" for r in results.values())
    assert wall_ms >= 0.95 * sum(float(str(r["duration_ms"])) for r in results.values())


def test_a_job_is_bounded_in_time() -> None:
    """Qwen Code needs seconds to start: given one, it is stopped and says so."""
    installed("qwen-code")

    async def short() -> dict[str, dict[str, object]]:
        async with ReplayServer({"s": Replay(CHAT, 200, SSE)}) as server:
            return await run_agent_jobs([AgentJob("j", "qwen-code", server.base("s"))], DATA_DIR, 1)

    result = asyncio.run(short())["j"]
    assert result["error"] == "Qwen Code did not finish within 1 s"
    assert float(str(result["duration_ms"])) < 10_000


def _cli_processes() -> set[int]:
    """Processes working in a job's folder (``streamscope-<agent>-work-…``)."""
    found = set()
    root = Path(tempfile.gettempdir())
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            with contextlib.suppress(OSError):
                cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
                if (
                    cwd.parent == root
                    and cwd.name.startswith("streamscope-")
                    and "-work-" in cwd.name
                ):
                    found.add(int(pid))
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_cancelled_run_leaves_no_agent_cli_running() -> None:
    installed("qwen-code")

    async def cancel_midway() -> None:
        before = _cli_processes()
        task = asyncio.ensure_future(
            run_many(
                [StreamInput(CHAT, "openai-chat")] * 2, clients=["qwen-code"], data_dir=DATA_DIR
            )
        )
        async with asyncio.timeout(30):
            while not (_cli_processes() - before):  # noqa: ASYNC110 - a CLI to start
                await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not (_cli_processes() - before)  # killed and reaped before the cancel returns

    asyncio.run(cancel_midway())
