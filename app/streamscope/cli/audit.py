"""``streamscope audit --url URL --protocol P --key K [--model M] [--out DIR]
[--clients a,b] [--html FILE] [--compare DIR]``: send the audit's battery to a relay and
say, per real client, what would break and why.

Progress goes to stderr, one line per probe as its answer is judged; the table
(probe x client) and a summary line per client to stdout. Exit status: 0 when no client
breaks on any answer and the audit was not stopped, 1 otherwise (so a relay's CI can run
it), 2 for a usage error (an unknown protocol or client, no key, no model to ask for, an
unreadable --compare folder, an --out or --html that cannot be written).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from streamscope.audit.battery import battery
from streamscope.audit.report import AuditReport, ProbeResult
from streamscope.codecs import PROTOCOLS
from streamscope.redact import Redactor

BATTERY = ", ".join(p.id for p in battery("openai-chat", "m"))
MARK = {"works": "ok", "unclean": "~", "breaks": "BREAKS", "not-run": "-"}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "audit",
        help="send a battery of requests to a relay and say what breaks which client",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Audit a relay (a provider, a reseller, a gateway): send it a fixed battery of "
            "14 requests in its protocol, one at a time, each with a max_tokens and never "
            "retried, and run every answer through the linter and each installed real "
            "client of the protocol.\n\nThe battery: " + BATTERY + " (a short and a long "
            "text, a forced tool call, two parallel calls, a tool with no arguments, a "
            "tool-result turn, reasoning, a cut by max_tokens, usage asked, non-streamed "
            "forms, a bad key and an unknown model for the error envelopes).\n\n"
            "A probe with no answer in --first-byte seconds, or silent --idle seconds, is "
            "reported hung. A 429, a refused key, an unreachable relay or a 404 to the first "
            "request (a model the relay lacks) stops the audit."
            "\n\nExit status: 0 when no client breaks on any answer, 1 when one does or the "
            "audit was stopped, 2 for a usage error."
        ),
    )
    p.add_argument("--url", required=True, help="the relay's base URL, as its SDKs take it")
    p.add_argument("--protocol", required=True, help=f"one of {', '.join(PROTOCOLS)}")
    p.add_argument("--key", help="the relay's API key (default: $STREAMSCOPE_KEY)")
    p.add_argument("--model", help="the model to ask (default: the first the relay lists)")
    p.add_argument("--out", type=Path, help="write report.json and every flow (.sse, .har)")
    p.add_argument("--clients", help="only these clients (ids, comma-separated)")
    p.add_argument("--html", type=Path, help="write a self-contained HTML report")
    p.add_argument("--compare", type=Path, help="an earlier --out folder to lay beside this run")
    p.add_argument("--no-clients", action="store_true", help="judge by the linter alone")
    p.add_argument("--concurrency", type=int, default=1, help="probes at once (default 1)")
    p.add_argument("--first-byte", type=float, default=30.0, help="seconds (default 30)")
    p.add_argument("--idle", type=float, default=30.0, help="seconds (default 30)")


class UsageError(Exception):
    """A usage error: one line on stderr, exit status 2."""


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except UsageError as exc:
        print(f"streamscope: error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    from streamscope.audit.output import read_out, write_out
    from streamscope.audit.run import Limits, Target, audit, audit_clients

    if args.protocol not in PROTOCOLS:
        raise UsageError(f"unknown protocol {args.protocol!r} (known: {', '.join(PROTOCOLS)})")
    key = args.key if args.key is not None else os.environ.get("STREAMSCOPE_KEY", "")
    if not key:
        raise UsageError("no key: give --key or set $STREAMSCOPE_KEY")
    if args.concurrency < 1 or args.first_byte <= 0 or args.idle <= 0:
        raise UsageError("--concurrency, --first-byte and --idle must be positive")
    clients = [c.strip() for c in args.clients.split(",") if c.strip()] if args.clients else None
    mask = Redactor([key])
    try:
        audit_clients(args.protocol, clients)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    before = None
    if args.compare is not None:
        try:
            before = read_out(args.compare).report
        except (ValueError, OSError) as exc:
            raise UsageError(f"--compare: {exc}") from None
    model = args.model or _first_model(args.url, args.protocol, key, mask)
    target = Target(args.url, args.protocol, key, model)
    seen: set[str] = set()

    def progress(result: ProbeResult) -> None:
        if result.probe in seen:
            return
        seen.add(result.probe)
        status = "-" if result.status is None else str(result.status)
        tail = f": {result.detail}" if result.detail else ""
        line = f"[{len(seen):2}] {result.probe:<22} {result.outcome} (HTTP {status}){tail}"
        print(mask.text(line)[:300], file=sys.stderr, flush=True)

    limits = Limits(first_byte=args.first_byte, idle=args.idle)
    try:
        done = asyncio.run(
            audit(
                target,
                clients=clients,
                on_result=progress,
                run_clients=not args.no_clients,
                concurrency=args.concurrency,
                limits=limits,
            )
        )
    except ValueError as exc:
        raise UsageError(mask.text(str(exc))) from None
    print(mask.text(render(done.report)))
    if before is not None:
        from streamscope.audit.compare import table

        print("\n" + mask.text(table(before, done.report)))
    try:
        if args.out is not None:
            write_out(done, args.out)
        if args.html is not None:
            from streamscope.audit.html import render as html
            from streamscope.private import write_private

            write_private(args.html, mask.text(html(done.report, done.flows, previous=before)))
    except OSError as exc:
        raise UsageError(f"cannot write: {exc.strerror or exc}") from None
    return done.report.exit_status()


def _first_model(url: str, protocol: str, key: str, mask: Redactor) -> str:
    """The first model the relay lists (``--model`` not given)."""
    from streamscope.client.compose import Composition
    from streamscope.client.models import fetch_models

    try:
        models = asyncio.run(fetch_models(Composition(url, protocol, "-", key=key)))
    except ValueError as exc:
        said = mask.text(str(exc))
        raise UsageError(
            f"no --model given, and the relay's models cannot be listed: {said}"
        ) from None
    if not models:
        raise UsageError("no --model given, and the relay lists none")
    return models[0]


def render(report: AuditReport) -> str:
    """The report as text: one row per probe (outcome, status, timing, each client's
    grade under its number), the clients' legend, each finding that breaks or troubles a
    client, and the summary line per client."""
    clients = report.clients
    head = f"{'probe':<22} {'outcome':<13} {'http':>4} {'ttft ms':>8} {'tok/s':>7} {'gap ms':>7}"
    lines = [
        f"audit of {report.target} ({report.protocol}, model {report.model})",
        "",
        head + "".join(f" {f'c{n + 1}':>6}" for n in range(len(clients))),
    ]
    for r in report.results:
        row = (
            f"{r.probe:<22} {r.outcome:<13} {_n(r.status):>4} {_f(r.ttft_ms):>8} "
            f"{_f(r.tokens_per_second):>7} {_f(r.gap_max_ms):>7}"
        )
        for c in clients:
            cell = r.cells.get(c.id)
            row += f" {MARK[cell.grade] if cell else '':>6}"
        lines.append(row)
    lines.append("")
    for n, c in enumerate(clients):
        version = f" {c.version}" if c.version else " (not run here: the linter's word)"
        lines.append(f"c{n + 1}: {c.name}{version}")
    # each cause once per client, with the probes it came with (not a line per cell)
    grouped: dict[tuple[str, str, str, str, int | None], list[str]] = {}
    for r in report.results:
        for cell in r.cells.values():
            if cell.grade in ("breaks", "unclean"):
                key = (cell.client, cell.grade, cell.finding, cell.detail, cell.frame)
                grouped.setdefault(key, []).append(r.probe)
    number = {c.id: f"c{n + 1}" for n, c in enumerate(clients)}
    said = [
        f"  {number.get(client, client)} {client}: {MARK[grade]} {finding}"
        + (f" at frame {frame}" if frame is not None else "")
        + f" ({', '.join(probes)})"
        + (f": {detail}" if detail else "")
        for (client, grade, finding, detail, frame), probes in grouped.items()
    ]
    if said:
        lines += ["", "what breaks, and why:", *said]
    if report.stopped:
        lines += ["", f"stopped: {report.stopped}"]
    lines += ["", *report.summary_lines()]
    return "\n".join(lines)


def _n(value: int | None) -> str:
    return "-" if value is None else str(value)


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


__all__ = ["add_parser", "render", "run"]
