"""The agent CLIs as real clients: a replayed stream run in Claude Code, Codex CLI, Qwen
Code or Gemini CLI, read back as the result every other real client gives.

:func:`~.run.run_many` hands each stream whose protocol an installed agent CLI speaks to
:func:`run_agent_jobs`: each job is one process (:func:`~.agent_run.run_agent`: offline,
a fresh HOME, an empty working folder of its own, one turn), a few at a time
(:data:`CONCURRENCY`: each CLI spends a second or more of CPU starting, and Qwen Code
waits seconds between the retries it makes of a broken stream), each bounded in time.

What a run assembled becomes the runner's result: the text, reasoning and tool calls of
the answer the CLI kept, its error, the usage it reported. A CLI that asks again after a
broken stream (Qwen Code's retries, Claude Code's request without streaming) prints the
calls of every attempt under the same ids: each id counts once, as the CLI runs it once.
No finish reason: none of the CLIs prints the one it read. No reasoning from Gemini CLI:
it prints no thought part.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamscope.realclients.agent_run import AgentRun, Target, run_agent
from streamscope.realclients.agents import BY_ID, installed_agent

CONCURRENCY = 2
PROMPT = "Say hello."
KEY = "sk-streamscope-replay"
MODEL = "replay"


@dataclass(frozen=True, slots=True)
class AgentJob:
    """One stream for one agent CLI: the job's id, the CLI's id and the base URL the
    stream is served under (without ``/v1``: each CLI is given the form it expects)."""

    id: str
    client: str
    base_url: str


def _calls(run: AgentRun) -> list[list[str]]:
    """``[name, arguments]`` of each call the CLI kept: an id seen again (a retried
    answer) is the same call, and the last attempt's arguments stand."""
    kept: dict[str, list[str]] = {}
    for n, call in enumerate(run.tool_calls):
        kept[call.id or f"#{n}"] = [call.name, call.arguments]
    return list(kept.values())


def result_of(run: AgentRun) -> dict[str, Any]:
    """A run as the real-client runner's result (the shape ``run_clients.mjs`` prints)."""
    return {
        "text": run.text,
        "reasoning": run.reasoning,
        "tool_calls": _calls(run),
        "finish": None,
        "usage": list(run.usage) if run.usage is not None else None,
        "error": run.error,
        "duration_ms": run.duration_ms,
    }


async def _one(job: AgentJob, data_dir: Path | None, seconds: float) -> dict[str, Any]:
    install = installed_agent(BY_ID[job.client], data_dir)
    if install is None:  # removed since the runner looked
        return {"error": f"{job.client} is not installed"}
    start = time.perf_counter()
    workdir = Path(tempfile.mkdtemp(prefix=f"streamscope-{job.client}-work-"))
    try:
        run = await run_agent(
            install,
            Target(job.base_url, KEY, MODEL, replay=True),
            PROMPT,
            workdir,
            seconds=seconds,
            max_turns=1,
        )
    finally:
        await asyncio.to_thread(shutil.rmtree, workdir, True)
    out = result_of(run)
    out["duration_ms"] = (time.perf_counter() - start) * 1000
    return out


async def run_agent_jobs(
    jobs: list[AgentJob],
    data_dir: Path | None,
    per_job_s: float,
    concurrency: int = CONCURRENCY,
) -> dict[str, dict[str, Any]]:
    """Run the jobs, ``concurrency`` processes at a time, each for at most ``per_job_s``;
    results by job id. A cancel ends every process started (``run_agent`` kills its
    process group) before it returns."""
    gate = asyncio.Semaphore(max(1, concurrency))
    results: dict[str, dict[str, Any]] = {}

    async def one(job: AgentJob) -> None:
        async with gate:
            try:
                results[job.id] = await _one(job, data_dir, per_job_s)
            except Exception as exc:  # noqa: BLE001 - one CLI's failure is its row's error
                results[job.id] = {"error": f"{job.client} could not run: {exc!r}"}

    async with asyncio.TaskGroup() as group:  # a cancel ends them all
        for job in jobs:
            group.create_task(one(job))
    return results


__all__ = ["CONCURRENCY", "AgentJob", "result_of", "run_agent_jobs"]
