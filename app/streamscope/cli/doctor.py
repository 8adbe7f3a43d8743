"""``streamscope doctor [--config FILE] [--host H] [--port P] [--accounts] [--timeout S] [--json]``.

Runs :func:`streamscope.doctor.run_checks` and prints one line per check (``ok``,
``warn``, ``FAIL``, ``skip``, the check's name, what was seen), a ``fix:`` line under
each warning and failure, and a summary; ``--json`` writes ``{"checks": [...], "ok": …}``
instead. Exit status: 0 when nothing failed (warnings allowed), 1 when a check failed (a
config that does not load included), 2 for wrong options. The config file is only read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the checks import the proxy and httpx: only when doctor runs
    from streamscope.doctor import Check

LABELS = {"ok": "ok", "warn": "warn", "fail": "FAIL", "skip": "skip"}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Register ``doctor``; the caller adds the proxy options (--config, --host, --port)
    that every command running or checking the proxy shares."""
    p = sub.add_parser(
        "doctor",
        help="check the config, the port and the upstreams, and say what to fix",
        description=(
            "Check the config file, whether the proxy's port is free, whether each "
            "upstream answers (and takes its key), and with --accounts each account with "
            "one tiny request; print what to fix. The config file is never written."
        ),
    )
    p.add_argument(
        "--accounts",
        action="store_true",
        help="also send one tiny request per account (spends a token each)",
    )
    p.add_argument(
        "--timeout",
        type=_seconds,
        default=10.0,
        metavar="SECONDS",
        help="to wait for each connection and answer (default: 10)",
    )
    p.add_argument("--json", action="store_true", help="write the checks as one JSON document")
    return p


def _seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"must be more than 0, not {text}")
    return seconds


def run(args: argparse.Namespace) -> int:
    from streamscope.config import default_config_path
    from streamscope.doctor import Options, run_checks

    options = Options(
        config_path=args.config or default_config_path(),
        host=args.host,
        port=args.port,
        accounts=args.accounts,
        timeout=args.timeout,
    )
    checks = asyncio.run(run_checks(options))
    failed = any(c.status == "fail" for c in checks)
    if args.json:
        document = {"checks": [c.to_json() for c in checks], "ok": not failed}
        print(json.dumps(document, ensure_ascii=False, indent=2))
    else:
        _print(checks)
    return 1 if failed else 0


def _print(checks: list[Check]) -> None:
    from streamscope.doctor.check import count

    width = max(len(c.name) for c in checks)
    for c in checks:
        print(f"{LABELS[c.status]:<5} {c.name:<{width}}  {c.detail}")
        if c.fix and c.status != "ok":
            print(f"{'':<5} {'':<{width}}  fix: {c.fix}")
    n = {s: sum(c.status == s for c in checks) for s in LABELS}
    summary = f"{n['ok']} ok, {count(n['warn'], 'warning')}, {n['fail']} failed"
    print(summary + (f", {n['skip']} skipped" if n["skip"] else ""))


__all__ = ["add_parser", "run"]
