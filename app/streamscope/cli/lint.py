"""``streamscope lint FILE|- [--protocol …] [--client PROFILE] [--json]``.

Lints a recorded stream (raw SSE, JSON lines, or a whole non-SSE body: a ``.json`` file is
always read as the body of a 200 answer) and prints one line per finding — severity,
rule, frame, what was seen, which clients break — then, apart, what the provider did and
said correctly on the wire (its outcomes: the answer cut by its length limit, its content
filter, a refusal, its own error), then the verdict: led by the client that sent it
(``--sender``, or a HAR entry's User-Agent; else the first client it breaks), then each
cause once with every client it breaks. With ``--client`` only the findings that break
that client (and every outcome), and its verdict. Exit status: 0 when
no error-level finding is shown — an outcome is none: a well-formed stream the provider
cut, filtered, refused or ended in its error exits 0 and says what happened — 1 when one
is, 2 when the input cannot be read or linted (one line on stderr). A ``.har`` file
(:func:`run_har`) is linted entry by entry (:mod:`streamscope.analysis.har_lint` reads
it), with the same options and exit status.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from streamscope.analysis.har_lint import lint_har
from streamscope.codecs import PROTOCOLS
from streamscope.lint.check import LintError, lint_bytes
from streamscope.lint.profiles import GROUPS, PROFILES, members
from streamscope.lint.report import LintFinding, LintReport
from streamscope.lint.verdict import judge
from streamscope.model.events import JSON


class _Unusable(Exception):
    """Input or options that cannot be linted: one line, exit status 2."""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``lint`` sub-command."""
    p = sub.add_parser(
        "lint",
        help="explain what in a recorded stream breaks which client",
        description=(
            "Check a recorded stream (raw SSE, one JSON payload per line, or a whole .json "
            "body) against the wire contract: every finding names the rule, the frame, the "
            "clients that break and the fix; what the provider did (a cut, a filter, a "
            "refusal, its error) is said apart; then a verdict per client. Exit status 0 "
            "when no error-level finding (the provider's doing is none), 1 when there are, "
            "2 when the input is unreadable."
        ),
    )
    p.add_argument("file", help="the recording ('-' for stdin)")
    p.add_argument(
        "--protocol",
        default="auto",
        metavar="{auto," + ",".join(PROTOCOLS) + "}",
        help="the stream's protocol (default: detect it)",
    )
    p.add_argument(
        "--client",
        metavar="{" + ",".join(PROFILES) + "}",
        help="only the findings that break this client, and its verdict; "
        + "; ".join(f"{g} means all of {', '.join(m)}" for g, m in GROUPS.items())
        + " (each was one profile once)",
    )
    p.add_argument(
        "--sender",
        metavar="{" + ",".join(PROFILES) + "}",
        help="the client that sent it: the verdict leads with what it does (a HAR entry's "
        "is read from its request's User-Agent)",
    )
    p.add_argument("--json", action="store_true", help="write the report as JSON")
    p.add_argument(
        "--clients",
        action="store_true",
        help="also replay the stream into the installed real clients (streamscope.realclients) "
        "and show what each assembled beside the linter's prediction",
    )


def client_ids(report: LintReport | None, client: str) -> list[str]:
    """The profiles ``--client`` names: itself, or an old shared profile's members
    (:data:`GROUPS`), those that speak the report's protocol when any does."""
    protocol = None if report is None else report.protocol
    speaking = members(client, frozenset({protocol})) if protocol else []
    return speaking or members(client)


def client_findings(report: LintReport | None, client: str | None) -> list[LintFinding]:
    """The findings ``--client`` shows: all of them, or those that break that client (one
    of its members, for an old shared profile)."""
    findings = [] if report is None else report.findings
    if client is None:
        return list(findings)
    ids = client_ids(report, client)
    return [f for f in findings if any(f.breaks(who) is not None for who in ids)]


def report_json(report: LintReport, client: str | None) -> dict[str, Any]:
    """The report as JSON; with ``--client``, only what concerns that client (or the
    members of an old shared profile: their findings and each one's verdict)."""
    if client is None or client in PROFILES:
        return report.to_json(client)
    findings = client_findings(report, client)
    return {
        **report.to_json(),
        "errors": sum(1 for f in findings if f.severity == "error"),
        "findings": [f.to_json() for f in findings],
        "verdicts": {who: report.verdict_line(who) for who in client_ids(report, client)},
    }


def run(args: argparse.Namespace) -> int:
    try:
        report = _lint(args)
    except _Unusable as exc:
        print(f"streamscope: error: {exc}", file=sys.stderr)
        return 2
    client: str | None = args.client
    findings = client_findings(report, client)
    if args.json:
        print(json.dumps(report_json(report, client), ensure_ascii=False, indent=2))
    else:
        _print(report, findings, client, getattr(args, "sender", None))
    return 1 if any(f.severity == "error" for f in findings) else 0


def _read(args: argparse.Namespace) -> tuple[bytes, str | None]:
    """The input's bytes and the protocol asked for (None: auto), the options checked."""
    protocol = None if args.protocol == "auto" else args.protocol
    if protocol is not None and protocol not in PROTOCOLS:
        known = ", ".join(["auto", *PROTOCOLS])
        raise _Unusable(f"unknown protocol {protocol!r} (known: {known})")
    sender = getattr(args, "sender", None)  # (callers may build the namespace without it)
    if sender is not None and sender not in PROFILES:
        raise _Unusable(f"unknown client {sender!r} (known: {', '.join(PROFILES)})")
    if args.client is not None and args.client not in {*PROFILES, *GROUPS}:
        known = ", ".join([*PROFILES, *GROUPS])
        raise _Unusable(f"unknown client {args.client!r} (known: {known})")
    try:
        data = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        raise _Unusable(f"cannot read {args.file}: {exc.strerror or exc}") from None
    return data, protocol


def _lint(args: argparse.Namespace) -> LintReport:
    data, protocol = _read(args)
    try:
        return lint_bytes(data, protocol, is_body=args.file.endswith(".json"))
    except LintError as exc:
        raise _Unusable(f"{args.file}: {exc}") from None


def finding_line(f: LintFinding) -> str:
    """One finding as the CLI prints it: severity, rule, where, what, who breaks (or why
    it is no fault of the stream)."""
    who = ", ".join(f"{PROFILES[p].name} ({b.effect})" for p, b in f.clients.items())
    tail = f"  [breaks {who}]" if who else ""
    if f.excused:
        tail += f"  [not the stream's fault: {f.excused}]"
    return f"{f.severity:<7} {f.rule_id}  {f.at}: {f.message}{tail}"


PROVIDER_SECTION = "what the provider did:"


def outcome_lines(report: LintReport | None, indent: str = "") -> list[str]:
    """The section of what the provider did (no lines when it did nothing of note): its
    heading, then each outcome as it happened, with its rule and where."""
    if report is None or not report.outcomes:
        return []
    lines = [f"{indent}{PROVIDER_SECTION}"]
    lines += [f"{indent}  {f.happened}  ({f.rule_id}, {f.at})" for f in report.outcomes]
    return lines


def _print(
    report: LintReport, findings: list[LintFinding], client: str | None, sender: str | None
) -> None:
    for f in findings:
        print(finding_line(f))
    if findings:
        print()
    if lines := outcome_lines(report):
        print("\n".join(lines), end="\n\n")
    _print_tally(report, findings, client, "", sender)


def run_har(args: argparse.Namespace) -> int:
    """``lint`` for a ``.har`` file (same options and exit status)."""
    try:
        data, protocol = _read(args)
        try:
            results = lint_har(data, protocol)
        except ValueError as exc:
            raise _Unusable(f"{args.file}: {exc}") from None
    except _Unusable as exc:
        print(f"streamscope: error: {exc}", file=sys.stderr)
        return 2
    client: str | None = args.client
    failed = False
    shown: list[JSON] = []
    for about, report in results:
        findings = client_findings(report, client)
        failed |= any(f.severity == "error" for f in findings)
        shown.append({**about, "report": report_json(report, client) if report else None})
        if not args.json:
            _print_entry(about, report, findings, client)
    if args.json:
        print(json.dumps({"entries": shown}, ensure_ascii=False, indent=2))
    return 1 if failed else 0


def _print_entry(
    about: JSON, report: LintReport | None, findings: list[LintFinding], client: str | None
) -> None:
    leg = f" ({about['leg']} leg of flow {about['flow_id']})" if about["leg"] else ""
    method, url = about["method"] or "(no method)", about["url"] or "(no URL)"
    print(f"entry {about['entry']}{leg}: {method} {url}")
    if report is None:
        print(f"  not linted: {about.get('not_linted')}\n")
        return
    for f in findings:
        print(f"  {finding_line(f)}")
    for line in outcome_lines(report, "  "):
        print(line)
    _print_tally(report, findings, client, "  ", about.get("sender"))
    print()


def counted(n: int, word: str) -> str:
    """``1 finding``, ``2 findings``, ``0 errors``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def _print_tally(
    report: LintReport,
    findings: list[LintFinding],
    client: str | None,
    indent: str,
    sender: str | None = None,
) -> None:
    """The count of findings, then the verdict: with ``client``, that client's; else led
    by the ``sender``'s (the client that sent it, when known), each cause once with the
    clients it breaks (:func:`~streamscope.lint.verdict.judge`)."""
    errors = sum(1 for f in findings if f.severity == "error")
    tally = f"{counted(len(findings), 'finding')}, {counted(errors, 'error')}"
    print(f"{indent}{report.protocol or 'unknown protocol'}: {tally}")
    if client is not None:
        for who in client_ids(report, client):
            print(f"{indent}  {report.verdict_line(who)}")
        return
    judged = judge(report, sender)
    if judged.grade == "ok" and not judged.causes:
        names = ", ".join(p.name for p in report.profiles) or "any client"
        print(f"{indent}  ok: nothing in this stream is known to break {names}")
        return
    for line in judged.text.splitlines():
        print(f"{indent}  {line}")
