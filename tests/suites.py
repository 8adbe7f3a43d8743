"""The suite's kinds of test, one marker each, and which tests are of which kind.

A kind says what a test needs, and so how it may be run beside others (pytest-xdist):

- ``core``: in-process only: no socket to another address, no child process (the sans-io
  codecs, the linter, the model...). Checked while they run: a ``core`` test that
  connects, binds or starts a process fails (:func:`guard_core`).
- ``sockets``: real loopback servers and child processes of the app, on ports of their own.
- ``gui``: the Qt window and its widgets (offscreen), or a qasync loop.
- ``clients``: real client programs (the SDKs in other processes, Node clients, agent CLIs),
  installed under the shared cache ``~/.cache/streamscope-tests``.
- ``postgres``: a real PostgreSQL server; the session starts one per pytest process, so
  these run on one worker (one server, not one per worker).
- ``packaging``: the built artefacts (wheel, pipx, the one-folder app) and the tree as a
  whole (ruff and mypy, a plain clone running the suite).

Where a test's kind is: a marker on the test, its class or its module
(``pytestmark = pytest.mark.sockets``) wins; then what it asks for (the PostgreSQL
fixtures, Qt's); then its path in :data:`BY_PATH`, the longest entry that holds it.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

SUITES: dict[str, str] = {
    "core": "in-process only: no socket to another address, no child process (checked)",
    "sockets": "real loopback servers and child processes, on ports of their own",
    "gui": "the Qt window and widgets (offscreen), or a qasync loop",
    "clients": "real client programs (SDKs, Node, agent CLIs) from the shared test cache",
    "postgres": "a real PostgreSQL server (one per pytest process: run on one worker)",
    "packaging": "the built artefacts and the tree as a whole (wheel, pipx, lint, a clone)",
}

TESTS = Path(__file__).resolve().parent

# Path (from tests/: a folder, a file, or "." for the files directly in tests/) -> kind;
# the longest entry holding a test wins. A folder of mixed kinds names its majority and
# lists the files of the other kinds.
BY_PATH: dict[str, str] = {
    # folders of one kind (analysis: but two files)
    "analysis": "core",
    "analysis/test_view_diagnosis.py": "sockets",  # (flows made through a real proxy)
    "analysis/test_view_proxy_verdicts.py": "sockets",
    "codecs": "core",
    "conversation": "core",
    "lint": "core",
    "model": "core",
    "resources": "core",
    "translation": "core",
    "wire": "core",
    "gui": "gui",
    "clients": "clients",
    "replicas": "postgres",
    "packaging": "packaging",
    "net": "sockets",
    "remote": "sockets",
    # mixed folders
    "audit": "core",
    "audit/test_battery.py": "sockets",
    "audit/test_defects.py": "clients",
    "audit/test_defects_relay.py": "sockets",
    "audit/test_html.py": "sockets",
    "audit/test_html_chromium.py": "sockets",
    "audit/test_run.py": "sockets",
    "audit/test_run_clients.py": "clients",
    "capture": "core",
    "capture/test_har.py": "sockets",
    "capture/test_raw_gemini_array.py": "sockets",
    "capture/test_recorder.py": "sockets",
    "capture/test_recorder_admin_api.py": "sockets",
    "capture/test_recorder_google_keys.py": "sockets",
    "capture/test_sse_replay.py": "sockets",
    "capture/test_store_outage.py": "postgres",  # a server of its own, stopped and started
    "capture/test_store_durability.py": "sockets",
    "capture/test_store_settle.py": "sockets",
    "cli": "sockets",
    "cli/test_clients.py": "clients",
    "client": "sockets",
    "client/test_worker.py": "core",
    "client/test_feed.py": "core",
    "client/test_parts.py": "core",
    "client/test_preview.py": "core",
    "client/test_session_replay.py": "core",
    "client/test_tools.py": "core",
    "config": "sockets",
    "config/test_model_storage.py": "core",
    "config/test_model_tls.py": "core",
    "demo": "sockets",
    "demo/test_replay.py": "core",
    "demo/test_schema_args.py": "core",
    "doctor": "sockets",
    "doctor/test_check.py": "core",
    "pool": "core",
    "pool/test_shared.py": "postgres",  # (its outage test starts a server of its own)
    "pool/test_shared_faults.py": "postgres",
    "pool/test_store_restart.py": "sockets",
    "proxy": "sockets",
    "proxy/test_exchange_no_argument_tools.py": "clients",
    "proxy/test_gemini_api_array.py": "core",
    "proxy/test_upstreams.py": "core",
    "realclients": "clients",
    "realclients/test_agent_jobs.py": "sockets",
    "realclients/test_agent_jobs_claims.py": "sockets",
    "realclients/test_agent_jobs_provider_outcomes.py": "sockets",
    "realclients/test_agent_output.py": "sockets",
    "realclients/test_agent_output_gemini.py": "core",
    "realclients/test_agent_output_usage.py": "core",
    "realclients/test_agent_run.py": "sockets",
    "realclients/test_agent_run_gemini.py": "sockets",
    "realclients/test_compare_observed.py": "core",
    "realclients/test_python_clients.py": "sockets",
    "realclients/test_rows.py": "core",
    "realclients/test_server.py": "sockets",
    "storage": "sockets",
    "storage/test_database_faults.py": "core",
    "storage/test_schema.py": "core",
    "storage/test_supervise.py": "core",
    ".": "core",
    "test_cli.py": "sockets",
    "test_cli_storage_secrets.py": "sockets",
    "test_doctor.py": "sockets",
    "test_lint.py": "packaging",
    "test_plain_clone.py": "packaging",
    "test_private_files.py": "packaging",
    "test_redact.py": "sockets",
    "test_redact_credentials.py": "sockets",
    "test_redact_exits.py": "sockets",
    "test_redact_hostile_json.py": "sockets",
    "test_redact_pool_secrets.py": "sockets",
    "test_redact_storage_password.py": "sockets",
    "test_stack.py": "sockets",
    "test_upstream_server.py": "sockets",
}

# Fixtures that say a test's kind whatever its folder (first found wins).
BY_FIXTURE: tuple[tuple[str, str], ...] = (
    ("postgres_server", "postgres"),
    ("qtbot", "gui"),
    ("qapp", "gui"),
)


def marked(item: pytest.Item) -> list[str]:
    """The suite markers on ``item`` (on it, its class or its module), once each."""
    return [name for name in SUITES if item.get_closest_marker(name) is not None]


def kind_of(item: pytest.Item) -> str | None:
    """The kind the suite gives an unmarked ``item`` (None: none, which the suite's own
    test of the markers reports)."""
    names = getattr(item, "fixturenames", ())
    for fixture, kind in BY_FIXTURE:
        if fixture in names:
            return kind
    if item.get_closest_marker("qasync") is not None:
        return "gui"
    try:
        rel = Path(item.path).resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return None
    best = "." if "/" not in rel else ""
    for prefix in BY_PATH:
        if (rel == prefix or rel.startswith(prefix + "/")) and len(prefix) > len(best):
            best = prefix
    return BY_PATH.get(best)


# -- core tests stay in-process -----------------------------------------------------------

_INET = (socket.AF_INET, socket.AF_INET6)
_PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.posix_spawn", "os.exec", "os.fork"})
_core_running: list[str] = []  # the node id of the core test running now, if one is


class NotCoreError(RuntimeError):
    """A test marked ``core`` used the network or started a process."""


def _refuse_outside_work(event: str, args: tuple[Any, ...]) -> None:
    if not _core_running:
        return
    if event in ("socket.connect", "socket.bind"):
        sock = args[0]
        if getattr(sock, "family", None) not in _INET:
            return  # a socketpair or a Unix socket: an event loop's own wake-up
        what = f"{event.split('.')[1]} to {args[1]!r}"
    elif event in _PROCESS_EVENTS:
        what = f"start a process ({event})"
    else:
        return
    raise NotCoreError(
        f"{_core_running[0]} is marked core but tried to {what}: mark it sockets (or the"
        " kind it is) in tests/suites.py or on the test"
    )


if not getattr(sys, "_streamscope_core_guard", False):  # once, even if imported twice
    sys.addaudithook(_refuse_outside_work)
    sys._streamscope_core_guard = True  # type: ignore[attr-defined]


@contextmanager
def guard_core(item: pytest.Item) -> Iterator[None]:
    """Around a test's setup and call: while a ``core`` test runs, connecting or binding
    a socket to an address and starting a process raise :class:`NotCoreError`."""
    if item.get_closest_marker("core") is None:
        yield
        return
    _core_running.append(item.nodeid)
    try:
        yield
    finally:
        _core_running.clear()
