"""``streamscope clients install|list|run`` and ``streamscope lint --clients FILE``.

``install`` puts the pinned Node clients into the data directory (the only command that
fetches anything; ``--agents``: the agent CLIs too, :mod:`streamscope.realclients.agents`);
``list`` shows each client (the agent CLIs among them), its versions and whether it can
run; ``run FILE`` (and ``lint --clients FILE``) replays the file's exact bytes into every
installed client of its protocol, the agent CLIs too (a process each, one turn), and
prints, per client, what it assembled beside the linter's prediction, marking where they
differ. Exit status: 0 when every client that ran
agrees with the linter, 1 when one does not, 2 when the input cannot be read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from streamscope.codecs.preview_text import short
from streamscope.lint.clients import CLIENTS, PROFILE_OF, PYTHON_EXTRA
from streamscope.realclients.compare import Verdict, compare, intended_answer
from streamscope.realclients.node import InstallError, install_node_clients, installed, node_dir
from streamscope.realclients.run import ClientRun, run_in_clients
from streamscope.realclients.specs import availability, python_version


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``clients`` sub-command."""
    p = sub.add_parser(
        "clients",
        help="install the real clients and replay a stream into them",
        description=(
            "Real clients (openai-python, anthropic-python; in Node the Vercel AI SDK "
            "providers Cherry Studio runs on and the official SDKs; the agent CLIs Claude "
            "Code, Codex CLI and Qwen Code) to replay a recorded stream into. The Python SDKs "
            f"come with {PYTHON_EXTRA}; the Node clients with `streamscope "
            "clients install` (Node.js >= 20 and npm), the agent CLIs with `streamscope "
            "clients install --agents`."
        ),
    )
    what = p.add_subparsers(dest="clients_command", metavar="ACTION", required=True)
    install = what.add_parser(
        "install", help="install the pinned Node clients into the data directory"
    )
    install.add_argument(
        "--agents",
        action="store_true",
        help="also install the agent CLIs (Claude Code, Codex CLI, Qwen Code; ~1 GB)",
    )
    what.add_parser("list", help="list the clients, their versions and whether they can run")
    run = what.add_parser("run", help="replay a recorded stream into the installed clients")
    add_run_options(run)
    run.add_argument("file", help="the recording ('-' for stdin)")


def add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--only",
        action="append",
        metavar="CLIENT",
        help="run only this client (repeatable; see `streamscope clients list`)",
    )
    p.add_argument("--timeout", type=float, default=30, help="seconds per client (default 30)")


def run(args: argparse.Namespace) -> int:
    if args.clients_command == "install":
        return _install(getattr(args, "agents", False))
    if args.clients_command == "list":
        return _list()
    return run_file(args)


def _install(agents: bool = False) -> int:
    print(f"Installing the Node clients into {node_dir()} …", flush=True)
    try:
        done = asyncio.run(install_node_clients())
    except InstallError as exc:
        print(f"streamscope: error: {exc}", file=sys.stderr)
        return 2
    how = f"installed in {done.install_seconds:.0f} s" if done.cold else "already installed"
    print(f"{how}: " + ", ".join(f"{n} {v}" for n, v in done.versions.items()))
    return _install_agents() if agents else 0


def _install_agents() -> int:
    from streamscope.realclients.agents import AGENTS, agents_dir, install_agent

    print(f"Installing the agent CLIs into {agents_dir()} …", flush=True)
    for spec in AGENTS:
        try:
            got = asyncio.run(install_agent(spec))
        except InstallError as exc:
            print(f"streamscope: error: {spec.name}: {exc}", file=sys.stderr)
            return 2
        how = f"installed in {got.install_seconds:.0f} s" if got.cold else "already installed"
        size = f"{got.size_bytes / 1e6:.0f} MB"
        print(f"{spec.name} ({spec.package} {got.version}, {size}): {how}", flush=True)
    return 0


def _list() -> int:
    from streamscope.realclients.agents import BY_ID as AGENTS
    from streamscope.realclients.agents import installed_agent

    have = installed()
    for spec in CLIENTS:
        if spec.runtime == "python":
            versions = {n: python_version(n) or "-" for n in spec.package_versions}
        elif spec.runtime == "agent":  # an agent CLI: its own folder
            agent = installed_agent(AGENTS[spec.id])
            versions = {n: agent.version if agent else "-" for n in spec.package_versions}
        else:
            got = have.versions if have else {}
            versions = {n: got.get(n, "-") for n in spec.package_versions}
        why = availability(spec)
        state = "ready" if why is None else f"not installed: {why}"
        pkgs = ", ".join(f"{n} {v}" for n, v in versions.items())
        print(f"{spec.id:<24} {spec.protocol:<12} {PROFILE_OF[spec.id]:<23} {pkgs}  [{state}]")
    return 0


def run_file(args: argparse.Namespace) -> int:
    """Replay ``args.file`` into the clients and print what each did beside the linter."""
    from streamscope.lint.check import LintError, lint_bytes
    from streamscope.recording import RecordingError, read_recording

    try:
        data = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        print(
            f"streamscope: error: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr
        )
        return 2
    is_body = args.file.endswith(".json")
    protocol = getattr(args, "protocol", "auto")
    try:
        report = lint_bytes(data, None if protocol in (None, "auto") else protocol, is_body=is_body)
        raw = data
        if not is_body and data.lstrip()[:1] in (b"{", b"[") and report.protocol:
            raw = b"".join(f.raw for f in read_recording(data, report.protocol).frames)
    except (LintError, RecordingError) as exc:
        print(f"streamscope: error: {args.file}: {exc}", file=sys.stderr)
        return 2
    if report.protocol is None or not any(c.protocol == report.protocol for c in CLIENTS):
        print(f"streamscope: error: no real client speaks {report.protocol}", file=sys.stderr)
        return 2
    headers = [("content-type", "application/json" if is_body else "text/event-stream")]
    try:
        runs = asyncio.run(
            run_in_clients(
                raw, report.protocol, headers=headers, clients=args.only, timeout=args.timeout
            )
        )
    except ValueError as exc:
        print(f"streamscope: error: {exc}", file=sys.stderr)
        return 2
    intended = intended_answer(raw, report.protocol, headers=headers)
    verdicts = compare(runs, report, intended)
    if getattr(args, "json", False):
        out = [r.to_json() | {"verdict": v.to_json()} for r, v in zip(runs, verdicts, strict=True)]
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        _print(report.protocol, runs, verdicts)
    return 1 if any(v.agrees is False for v in verdicts) else 0


def _proven(profile: str) -> str:
    from streamscope.lint.profiles import PROFILES

    return PROFILES[profile].proven or "no real client"


def _short(text: str, n: int = 70) -> str:
    if not text:
        return "-"
    one = " ".join(text.split())
    return json.dumps(short(one, n), ensure_ascii=False)


def _print(protocol: str, runs: list[ClientRun], verdicts: list[Verdict]) -> None:
    print(f"{protocol}: {len(runs)} clients")
    for run, v in zip(runs, verdicts, strict=True):
        mark = {True: "agrees", False: "DIFFERS", None: "skipped"}[v.agrees]
        print(f"\n{run.name}  [{v.profile}]  {mark}")
        if run.skipped:
            print(f"  not installed: {run.skipped}")
            continue
        calls = ", ".join(f"{n}({_short(a, 40)})" for n, a in run.tool_calls) or "-"
        usage = "-" if run.usage is None else f"{run.usage[0]} in / {run.usage[1]} out"
        print(f"  text:       {_short(run.text)} ({len(run.text)} chars)")
        print(f"  reasoning:  {_short(run.reasoning)}")
        print(f"  tool calls: {calls}")
        print(f"  finish:     {run.finish or '-'}   usage: {usage}   {run.duration_ms:.0f} ms")
        print(f"  error:      {_short(run.error or '', 200)}")
        print(f"  linter:     {v.prediction}")
        print(f"              (the {v.profile} profile was proven with {_proven(v.profile)})")
        print(
            f"  client did: {v.observed}"
            + (f" ({'; '.join(v.differences)})" if v.differences else "")
        )
