"""Replay exact bytes into the real clients and report what each one assembled.

:func:`run_in_clients` serves one stream from a :class:`~.server.ReplayServer` on a
loopback socket and points every client of its protocol at it; :func:`run_many` does the
same for many streams at once (one server, one Node process), which is what a test suite
needs. Python SDKs run in worker threads (they block); the Node clients run in one
``node`` process (:mod:`streamscope.realclients.node`); the agent CLIs a process per
stream, a few at a time (:mod:`streamscope.realclients.agent_jobs`). A client that is not
installed is ``skipped`` with how to install it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamscope.lint.clients import BY_ID, CLIENTS, ClientSpec
from streamscope.realclients import node
from streamscope.realclients.agent_jobs import CONCURRENCY, AgentJob, run_agent_jobs
from streamscope.realclients.python_clients import quiet_clients, run_python_client
from streamscope.realclients.server import Replay, ReplayServer
from streamscope.realclients.specs import availability

PYTHON_THREADS = 4
# What each client appends to its base URL decides the base it is given: the Anthropic
# SDKs add /v1/messages, the Google SDKs /v1/models/{model}:streamGenerateContent (given
# a base URL they ask /v1), @ai-sdk/google (whose base ends in /v1beta) /models/…, every
# other client
# /chat/completions, /responses or /messages.
BASE_PATH: dict[str, str] = {
    "anthropic-python": "",
    "anthropic-node": "",
    "google-genai-python": "",
    "google-genai-node": "",
    "ai-google": "/v1beta",
}


@dataclass(slots=True)
class ClientRun:
    """What one client made of the stream: the text, reasoning and tool calls
    ``(name, arguments JSON)`` it assembled, its finish reason and usage
    ``(input, output)``, the error it raised or reported (None: none) and that error's
    classes, its own first, then their bases (an SDK's; none from an agent CLI), or why
    it did not run (``skipped``: how to install it)."""

    client: str
    name: str
    protocol: str
    text: str = ""
    reasoning: str = ""
    tool_calls: list[tuple[str, str]] = field(default_factory=list)
    finish: str | None = None
    usage: tuple[int | None, int | None] | None = None
    error: str | None = None
    skipped: str | None = None
    duration_ms: float = 0.0
    error_types: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "name": self.name,
            "protocol": self.protocol,
            "text": self.text,
            "reasoning": self.reasoning,
            "tool_calls": [list(c) for c in self.tool_calls],
            "finish": self.finish,
            "usage": list(self.usage) if self.usage is not None else None,
            "error": self.error,
            "skipped": self.skipped,
            "duration_ms": round(self.duration_ms, 1),
            "error_types": self.error_types,
        }


@dataclass(frozen=True, slots=True)
class StreamInput:
    """One stream to replay: its exact bytes, protocol, HTTP status and headers (None:
    ``Content-Type: text/event-stream`` only)."""

    raw: bytes
    protocol: str
    status: int = 200
    headers: list[tuple[str, str]] | None = None


def _selected(protocol: str, clients: Sequence[str] | None) -> list[ClientSpec]:
    if clients is not None:
        unknown = [c for c in clients if c not in BY_ID]
        if unknown:
            raise ValueError(f"unknown clients: {', '.join(unknown)} (known: {', '.join(BY_ID)})")
    return [c for c in CLIENTS if c.protocol == protocol and (clients is None or c.id in clients)]


def _from_result(spec: ClientSpec, result: dict[str, Any]) -> ClientRun:
    usage = result.get("usage")
    calls = result.get("tool_calls") or []
    finish = result.get("finish")
    return ClientRun(
        spec.id,
        spec.name,
        spec.protocol,
        text=str(result.get("text") or ""),
        reasoning=str(result.get("reasoning") or ""),
        tool_calls=[
            (_text(c[0]), _text(c[1])) for c in calls if isinstance(c, list) and len(c) == 2
        ],
        finish=None if finish is None else str(finish),
        usage=(usage[0], usage[1]) if isinstance(usage, list) and len(usage) == 2 else None,
        error=None if result.get("error") is None else str(result["error"]),
        error_types=[str(t) for t in result.get("error_types") or []],
        duration_ms=float(result.get("duration_ms") or 0.0),
    )


async def run_in_clients(
    raw: bytes,
    protocol: str,
    *,
    status: int = 200,
    headers: list[tuple[str, str]] | None = None,
    clients: list[str] | None = None,
    timeout: float = 30,  # noqa: ASYNC109 - each client's own timeout, passed on
    data_dir: Path | None = None,
) -> list[ClientRun]:
    """Serve ``raw`` (with ``status`` and ``headers``) on a loopback socket to every
    installed client of ``protocol`` (or those of ``clients``), and return what each
    assembled, in :data:`~.specs.CLIENTS` order. Nothing is fetched: Node clients come
    from ``streamscope clients install`` (in ``data_dir``, default the data directory),
    the agent CLIs from ``streamscope clients install --agents``."""
    runs = await run_many(
        [StreamInput(raw, protocol, status, headers)],
        clients=clients,
        timeout=timeout,
        data_dir=data_dir,
    )
    return runs[0]


async def run_many(
    streams: Sequence[StreamInput],
    *,
    clients: Sequence[str] | None = None,
    timeout: float = 30,  # noqa: ASYNC109 - each client's own timeout, passed on
    data_dir: Path | None = None,
    node_concurrency: int = 8,
    agent_concurrency: int = CONCURRENCY,
    agent_timeout: float | None = None,
) -> list[list[ClientRun]]:
    """:func:`run_in_clients` for many streams at once: one server, one Node process, the
    agent CLIs ``agent_concurrency`` processes at a time, each for at most
    ``agent_timeout`` seconds (None: ``timeout``)."""
    plan: list[list[tuple[ClientSpec, str | None]]] = []
    missing: dict[str, str | None] = {}
    for stream in streams:
        specs = _selected(stream.protocol, clients)
        for spec in specs:
            if spec.id not in missing:
                missing[spec.id] = availability(spec, data_dir)
        plan.append([(spec, missing[spec.id]) for spec in specs])
    replays = {
        str(n): Replay(s.raw, s.status, s.headers or [("content-type", "text/event-stream")])
        for n, s in enumerate(streams)
    }
    async with ReplayServer(replays) as server:
        jobs: list[dict[str, str]] = []
        agent_jobs: list[AgentJob] = []
        python: list[tuple[str, ClientSpec, str]] = []
        for n, specs_of in enumerate(plan):
            for spec, why in specs_of:
                if why is not None:
                    continue
                base = server.base(str(n)) + BASE_PATH.get(spec.id, "/v1")
                job_id = f"{n}:{spec.id}"
                if spec.runtime == "agent":  # each CLI adds /v1 itself where it needs it
                    agent_jobs.append(AgentJob(job_id, spec.id, server.base(str(n))))
                elif spec.runtime == "node":
                    jobs.append({"id": job_id, "client": spec.id, "baseURL": base})
                else:
                    python.append((job_id, spec, base))
        results: dict[str, dict[str, Any]] = {}
        node_task = asyncio.create_task(
            node.run_node_jobs(jobs, data_dir, timeout, node_concurrency)
        )
        agent_task = asyncio.create_task(
            run_agent_jobs(
                agent_jobs,
                data_dir,
                timeout if agent_timeout is None else agent_timeout,
                agent_concurrency,
            )
        )
        gate = asyncio.Semaphore(PYTHON_THREADS)

        async def one(job_id: str, spec: ClientSpec, base: str) -> None:
            async with gate:
                start = time.perf_counter()
                out = await asyncio.to_thread(run_python_client, spec.id, base, timeout)
                out["duration_ms"] = (time.perf_counter() - start) * 1000
                results[job_id] = out

        try:
            with quiet_clients():
                await asyncio.gather(*(one(*p) for p in python))
            results.update(await node_task)
            results.update(await agent_task)
        finally:
            # cancelled: the node process and the agent CLIs are killed, and reaped
            pending = [t for t in (node_task, agent_task) if not t.done()]
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)
    out: list[list[ClientRun]] = []
    for n, specs_of in enumerate(plan):
        runs: list[ClientRun] = []
        for spec, why in specs_of:
            if why is not None:
                runs.append(ClientRun(spec.id, spec.name, spec.protocol, skipped=why))
            else:
                runs.append(_from_result(spec, results.get(f"{n}:{spec.id}", {})))
        out.append(runs)
    return out


def _text(value: Any) -> str:
    """A client's name or arguments as text: a missing one (null) is "", not "None"."""
    return "" if value is None else str(value)
