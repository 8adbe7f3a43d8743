"""Run the battery against a relay: send each probe once, capture its answer as a flow,
judge it for every client of the protocol, and gather the :class:`Audit`.

Probes go one at a time (``concurrency`` more at once only when asked), each through the
client pane's :class:`~streamscope.client.session.ClientSession` (its leg keeps every
read's exact bytes and arrival time). Nothing is ever retried. Each probe's time is
bounded (:class:`Limits`): no answer within ``first_byte`` seconds, or a silence of
``idle`` seconds in its middle, and it is cancelled as ``hung``, saying where.

A 429 stops the audit (the rest is not sent: it never retries into a ban), and so does a
401/403 to a probe sent with the right key (every request would fail the same) and a
relay that cannot be reached; :attr:`AuditReport.stopped` says why.

The key is registered with a :class:`~streamscope.redact.Redactor` and masked in all that
is kept: each flow's request (headers, body, URL), the answer's bytes (same length, so
frame offsets stay true), headers, and every message the report quotes.

Then each answer is judged (:mod:`streamscope.audit.judge`): linted, and — streamed
answers and the error probes' answers — run in every installed real client of the
protocol at once (:func:`streamscope.realclients.run.run_many`: one Node process for all
of them). ``on_result`` is called for each probe when its answer is linted, then again
when the real clients have run (same probe id: the later replaces the earlier);
``on_flow`` with each probe's flow just before its first ``on_result`` (the window opens
a row's flow while the audit runs).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from streamscope.audit import delivery, judge
from streamscope.audit.battery import Probe, battery
from streamscope.audit.report import (
    AuditReport,
    Cell,
    ClientInfo,
    Finding,
    Grade,
    Outcome,
    ProbeResult,
)
from streamscope.capture.flow import CapturedFrame, Flow, Leg, RequestRecord
from streamscope.capture.info import FlowInfo
from streamscope.capture.masking import mask_headers
from streamscope.capture.outcome import Outcome as FlowOutcome
from streamscope.client.result import ClientResult
from streamscope.client.session import ClientSession, SessionLimits
from streamscope.codecs import get_codec
from streamscope.lint.clients import BY_ID, ClientSpec, clients_for
from streamscope.lint.profiles import PROFILES, profiles_for
from streamscope.realclients.compare import intended_answer
from streamscope.realclients.run import StreamInput, run_many
from streamscope.realclients.specs import availability, python_version
from streamscope.redact import Redactor

ResultCallback = Callable[[ProbeResult], None]


@dataclass
class Target:
    """The relay audited: its base URL (as the protocol's SDKs take it), protocol, key
    and the model every probe asks for (but the unknown-model probe)."""

    url: str
    protocol: str
    key: str
    model: str


@dataclass(frozen=True)
class Limits:
    """Seconds a probe may take: to its answer's first byte (headers, then a byte of the
    body), between two reads, and in all; ``connect``: to connect."""

    first_byte: float = 30.0
    idle: float = 30.0
    total: float = 180.0
    connect: float = 10.0


@dataclass
class Audit:
    """An audit's report and its flows (one per probe sent, keyed by
    :attr:`ProbeResult.flow`; the ``client`` leg is the relay's answer as received)."""

    report: AuditReport
    flows: dict[str, Flow] = field(default_factory=dict)


@dataclass
class _Sent:
    probe: Probe
    flow: Flow
    result: ProbeResult
    client_result: ClientResult | None = None


def audit_clients(protocol: str, clients: Sequence[str] | None) -> list[ClientSpec | str]:
    """The clients an audit grades: the real clients of the protocol (only those of
    ``clients`` when given; ``ValueError`` for an unknown id), or for a protocol with
    none, its lint profiles (ids)."""
    if clients is not None:
        unknown = [c for c in clients if c not in BY_ID and c not in PROFILES]
        if unknown:
            raise ValueError(f"unknown clients: {', '.join(unknown)} (known: {', '.join(BY_ID)})")
    specs = [s for s in clients_for(protocol) if clients is None or s.id in clients]
    if specs or clients_for(protocol):
        return list(specs)
    return [p.id for p in profiles_for(protocol) if clients is None or p.id in clients]


def _info(spec: ClientSpec | str, run_clients: bool, data_dir: Path | None) -> ClientInfo:
    if isinstance(spec, str):
        return ClientInfo(spec, PROFILES[spec].name)
    version = ""
    if run_clients and availability(spec, data_dir) is None:
        package, pinned = list(spec.package_versions.items())[-1]
        found = python_version(package) if spec.runtime == "python" else pinned
        version = found or pinned
    return ClientInfo(spec.id, spec.name, version)


async def audit(
    target: Target,
    *,
    clients: Sequence[str] | None = None,
    on_result: ResultCallback | None = None,
    on_flow: Callable[[Flow], None] | None = None,  # the window: a row's flow, live
    run_clients: bool = True,
    concurrency: int = 1,
    limits: Limits = Limits(),
    data_dir: Path | None = None,
    client_timeout: float = 30.0,
) -> Audit:
    """Send the battery to ``target`` and judge every answer (see the module docstring).
    ``ValueError`` for an unknown protocol or client, or an empty model."""
    probes = battery(target.protocol, target.model)
    specs = audit_clients(target.protocol, clients)
    mask = Redactor([target.key])
    report = AuditReport(
        target=mask.url(target.url),
        protocol=target.protocol,
        model=target.model,
        started=time.time(),
        clients=[_info(s, run_clients, data_dir) for s in specs],
    )
    ids = [c.id for c in report.clients]
    sent: dict[int, _Sent] = {}
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(n: int, probe: Probe) -> None:
        async with gate:
            if report.stopped:
                return  # the rest is not sent
            done = await _send(n, probe, target, limits, mask)
            sent[n] = done
            stop = _stop_reason(done, first=n == 0)
            if stop and not report.stopped:
                report.stopped = stop
            _lint_cells(done, ids, mask)
            if on_flow is not None:  # (before its result: a row shown can be opened)
                on_flow(done.flow)
            if on_result is not None:
                on_result(done.result)

    await asyncio.gather(*(one(n, p) for n, p in enumerate(probes)))
    ordered = [sent[n] for n in sorted(sent)]
    if run_clients and any(not isinstance(s, str) for s in specs):
        await _run_clients(ordered, target.protocol, ids, mask, data_dir, client_timeout)
        if on_result is not None:
            for done in ordered:
                on_result(done.result)
    report.results = [s.result for s in ordered]
    report.finished = time.time()
    return Audit(report, {s.flow.id: s.flow for s in ordered})


# -- sending one probe ------------------------------------------------------------------------


async def _send(n: int, probe: Probe, target: Target, limits: Limits, mask: Redactor) -> _Sent:
    composition = probe.for_target(target.url, target.key)
    session = ClientSession(
        composition,
        limits=SessionLimits(read_timeout=limits.total + 5, connect_timeout=limits.connect),
    )
    session.request_body = probe.body()  # (with the tool choice the composer cannot say)
    started = time.time()
    t0 = time.monotonic()
    task = asyncio.ensure_future(session.run())
    hung = ""
    try:
        while not task.done():
            await asyncio.wait({task}, timeout=0.05)
            if not task.done():
                hung = _hung(session, time.monotonic() - t0, limits)
                if hung:
                    session.cancel()
                    break
        result = await task
    except asyncio.CancelledError:
        task.cancel()
        raise
    leg = _masked_leg(result.leg, mask)
    flow = Flow(
        id=f"{n + 1:02d}-{probe.id}",
        started=started,
        started_ns=0,
        client_protocol=target.protocol,
        info=FlowInfo(model=composition.model),
        request=RequestRecord(
            "POST",
            mask.url(session.url),
            [(k, mask.text(v)) for k, v in session.request_headers.items()],
            mask.data(_json_bytes(session.request_body)),
        ),
        client_leg=leg,
        duration_ns=leg.ended_ns,
    )
    outcome, detail = _outcome(probe, result, hung)
    flow.info.outcome = _flow_outcome(outcome, result)
    flow.info.outcome_detail = mask.text(detail)
    timing = result.timing
    probe_result = ProbeResult(
        probe=probe.id,
        title=probe.title,
        stream=probe.stream,
        outcome=outcome,
        flow=flow.id,
        status=leg.status,
        detail=mask.text(detail),
        ttft_ms=timing.first_token_ms,
        tokens_per_second=timing.tokens_per_second,
        gap_max_ms=timing.gap_max_ms,
    )
    return _Sent(probe, flow, probe_result, result)


def _json_bytes(body: object) -> bytes:
    return json.dumps(body, ensure_ascii=False).encode() if body is not None else b""


def _hung(session: ClientSession, elapsed: float, limits: Limits) -> str:
    """Where the probe hangs ("" while it does not)."""
    leg = session.leg
    if elapsed > limits.total:
        return f"still not done after {limits.total:g} s"
    if leg.status is None:
        if elapsed > limits.first_byte:
            return f"no answer {limits.first_byte:g} s after the request was sent"
        return ""
    if not leg.frames:
        since = elapsed - (leg.headers_ns or 0) / 1e9
        if since > limits.first_byte:
            return (
                f"HTTP {leg.status} headers, then no byte of the body for {limits.first_byte:g} s"
            )
        return ""
    since = elapsed - leg.frames[-1].t_ns / 1e9
    if since > limits.idle:
        size = sum(len(f.raw) for f in leg.frames)
        return (
            f"silent for {limits.idle:g} s after frame {max(0, session.feed.frame_count - 1)} "
            f"({size} bytes in {len(leg.frames)} reads)"
        )
    return ""


def _masked_leg(leg: Leg, mask: Redactor) -> Leg:
    """The answer as kept: every secret masked at the same length (offsets stay true),
    the reads masked together, as the capture masks a leg (a key split across two reads
    is masked too), and the headers as the capture masks them (credentials by name)."""
    sizes = [len(f.raw) for f in leg.frames]
    joined = mask.same_length(b"".join(f.raw for f in leg.frames))
    frames, at = [], 0
    for f, size in zip(leg.frames, sizes, strict=True):
        frames.append(CapturedFrame(joined[at : at + size], f.t_ns))
        at += size
    return Leg(
        protocol=leg.protocol,
        status=leg.status,
        headers=mask_headers(leg.headers, mask),
        sent_ns=leg.sent_ns,
        headers_ns=leg.headers_ns,
        frames=frames,
        body=mask.same_length(leg.body) if leg.body is not None else None,
        ended_ns=leg.ended_ns,
        truncated=leg.truncated,
    )


def _outcome(probe: Probe, result: ClientResult, hung: str) -> tuple[Outcome, str]:
    status = result.leg.status
    if hung:
        return "hung", hung
    if status is None:
        return "unreachable", result.error or "no answer"
    said = result.error or f"HTTP {status}"
    if status == 429:
        return "rate-limited", said
    if status in (401, 403) and probe.kind == "answer":
        return "auth-failed", said
    if status >= 400:
        return ("answered" if probe.kind == "error" else "error-answer"), said
    note = result.lint.note() if result.lint is not None else None
    return "answered", note or ""


def _flow_outcome(outcome: Outcome, result: ClientResult) -> FlowOutcome:
    """The flow's outcome (capture.outcome's) of a probe's."""
    if outcome == "hung" or result.cancelled:
        return FlowOutcome.CLIENT_CANCELLED
    if (result.leg.status or 0) >= 400:
        return FlowOutcome.ERROR_ANSWER
    if outcome == "unreachable":
        return FlowOutcome.UPSTREAM_CUT
    return FlowOutcome.COMPLETE


def _stop_reason(done: _Sent, first: bool = False) -> str:
    r = done.result
    if first and r.status == 404 and done.probe.kind != "error":
        # the simplest request found nothing: a model the relay lacks, or a URL that is
        # not its API; every request would be the same 404
        return (
            f"HTTP 404 to {r.probe}, the simplest request: the relay has no such model or "
            f"endpoint ({r.detail}); check --model and --url; the rest was not sent"
        )
    if r.outcome == "rate-limited":
        return (
            f"rate-limited: HTTP 429 to {r.probe}; the rest was not sent (the audit never "
            "retries into a ban)"
        )
    if r.outcome == "auth-failed":
        return (
            f"auth failed: HTTP {r.status} to {r.probe} with the key given; every request "
            "would fail the same, so the rest was not sent"
        )
    if r.outcome == "unreachable":
        return f"unreachable: {r.detail}; the rest was not sent"
    return ""


# -- judging ----------------------------------------------------------------------------------


def _lint_cells(done: _Sent, ids: list[str], mask: Redactor) -> None:
    """The linter's cells (and the findings) of one answer."""
    r, probe, cr = done.result, done.probe, done.client_result
    report = cr.lint if cr is not None else None
    if r.outcome in ("hung", "unreachable", "rate-limited", "auth-failed"):
        r.cells = {c: Cell(c, "not-run", r.outcome, r.detail) for c in ids}
        r.findings = judge.findings(report, mask.text) if r.outcome == "hung" else []
        return
    r.findings = judge.findings(report, mask.text)
    if probe.kind == "error":
        problem = _error_problem(done)
        if problem:
            r.findings.append(Finding("audit.error-envelope", "warning", problem))
        r.cells = {c: judge.error_lint_cell(c, r.status, problem) for c in ids}
        return
    if r.outcome == "error-answer":
        grade: Grade = "unclean" if probe.optional else "breaks"
        r.cells = {c: Cell(c, grade, f"HTTP {r.status}", r.detail) for c in ids}
        return
    response = cr.response if cr is not None else None
    for problem in probe.check(response):
        r.findings.append(Finding("audit.expected", "warning", mask.text(problem)))
    r.cells = {c: judge.lint_cell(c, report) for c in ids}
    if probe.stream:  # how it was delivered (audit.delivery): known to an audit only
        leg, protocol = done.flow.client_leg, done.flow.client_protocol
        said = [delivery.buffered(leg), delivery.no_ping(leg, protocol)]
        r.findings += [f for f in said if f is not None]
        _delivered(r)


def _delivered(r: ProbeResult) -> None:
    """A buffered delivery grades the cells that work "not cleanly" (lint's or ran)."""
    for f in r.findings:
        if f.rule == "audit.buffered":
            r.cells = delivery.graded(r.cells, f)


def _error_problem(done: _Sent) -> str:
    leg = done.flow.client_leg
    codec = get_codec(done.flow.client_protocol)
    parsed = codec.read_body(leg.raw(), leg.status or 200).json
    return judge.envelope_problem(
        done.flow.client_protocol, leg.status, parsed, done.probe.statuses
    )


def _runnable(done: _Sent) -> bool:
    r = done.result
    if done.probe.kind == "error":
        return r.outcome == "answered" and (r.status or 0) >= 400
    return r.outcome == "answered" and done.probe.stream


async def _run_clients(
    ordered: list[_Sent],
    protocol: str,
    ids: list[str],
    mask: Redactor,
    data_dir: Path | None,
    timeout: float,  # noqa: ASYNC109 - each client's own timeout, passed on
) -> None:
    """Every runnable answer in the real clients at once; their cells replace the lint's."""
    chosen = [s for s in ordered if _runnable(s)]
    if not chosen:
        return
    streams = [
        StreamInput(s.flow.client_leg.raw(), protocol, s.flow.client_leg.status or 200, _headers(s))
        for s in chosen
    ]
    runs = await run_many(streams, clients=ids, timeout=timeout, data_dir=data_dir)
    for done, stream, client_runs in zip(chosen, streams, runs, strict=True):
        r = done.result
        cr = done.client_result
        report = cr.lint if cr is not None else None
        if done.probe.kind == "error":
            problem = _error_problem(done)
            for run in client_runs:
                r.cells[run.client] = judge.error_ran_cell(run, r.status, problem, mask.text)
            continue
        intended = intended_answer(
            stream.raw, protocol, status=stream.status, headers=stream.headers
        )
        for run in client_runs:
            r.cells[run.client] = judge.ran_cell(run, intended, report, mask.text)
        _delivered(r)


def _headers(done: _Sent) -> list[tuple[str, str]]:
    """The answer's content type (what the clients read it by), or SSE's."""
    for name, value in done.flow.client_leg.headers:
        if name.lower() == "content-type":
            return [("content-type", value)]
    return [("content-type", "text/event-stream" if done.probe.stream else "application/json")]


__all__ = ["Audit", "Limits", "ResultCallback", "Target", "audit", "audit_clients"]
