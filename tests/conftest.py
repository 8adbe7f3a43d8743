"""Suite-wide setup: Qt renders offscreen (set before anything imports Qt), the data dir
is an empty temporary folder, and tests marked ``qasync`` run on a qasync loop (the GUI's
loop) instead of plain asyncio.

NOTE (docs/stack-notes.md): ``qtbot.waitSignal`` inside an async test runs a nested Qt loop
that cannot step other asyncio tasks; await signals through asyncio futures instead.

The suite reads nothing outside the repository (a plain clone has nothing beside it): an
audit hook, installed here before collection, makes opening or listing a path beside the
checkout raise :class:`OutsideRepositoryError`, and a test that did so fails even if the
error was caught.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import tempfile
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# The app's data dir (user replays, captures) is a fresh empty folder for the suite:
# a developer's own files must not change what tests see.
os.environ["STREAMSCOPE_DATA_DIR"] = tempfile.mkdtemp(prefix="streamscope-test-data-")


# --- no reads outside the repository --------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]


class OutsideRepositoryError(PermissionError):
    """A test (or the code it runs) opened or listed a path beside the repository."""


def guarded_areas(repo: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(guarded, allowed) path prefixes for a checkout at ``repo``, each ending in a
    separator.

    Beside the repository is its parent folder, minus the repository itself. When that
    parent is also where legitimate files live (``/``, the home folder, the temp folder,
    or a folder holding one of these, as with a clone at ``/tmp/main``), nothing can be
    guarded there without refusing the system's own files, so nothing is. sys.prefix,
    sys.base_prefix and the temp folder stay readable wherever they are.
    """

    def forms(path: str | Path) -> set[str]:
        return {os.path.join(os.path.abspath(path), ""), os.path.join(os.path.realpath(path), "")}

    parent = forms(repo.parent)
    busy = forms("/") | forms(os.path.expanduser("~")) | forms(tempfile.gettempdir())
    if any(b.startswith(p) for b in busy for p in parent):
        return (), ()
    exempt = forms(sys.prefix) | forms(sys.base_prefix) | forms(tempfile.gettempdir())
    # A folder that holds the parent (the temp folder, for a clone at /tmp/ci/main) is no
    # exemption: it would exempt everything beside the clone. Tests' own temp folders
    # are elsewhere in it, and not guarded anyway.
    exempt = {e for e in exempt if not any(p.startswith(e) for p in parent)}
    return tuple(parent), tuple(forms(repo) | exempt)


_GUARDED, _ALLOWED = guarded_areas(REPO)
_GUARDED_EVENTS = frozenset({"open", "os.listdir", "os.scandir"})
# Paths read beside the repository during the run; each test fails on its own.
OUTSIDE_READS: list[str] = []


def _outside_repository(path: str) -> bool:
    """Whether ``path`` (absolute, normalised) is beside the repository."""
    probe = path + os.sep
    return probe.startswith(_GUARDED) and not probe.startswith(_ALLOWED)


def _guard_reads(event: str, args: tuple[Any, ...]) -> None:
    """Audit hook: refuse to open or list a path beside the repository.

    ``open`` covers ``open()``, ``os.open`` and ``Path.read_*``; ``os.listdir`` and
    ``os.scandir`` cover ``iterdir``, ``glob``, ``rglob`` and ``os.walk``. A bare
    ``stat`` (``Path.exists``, ``is_file``) raises no audit event, so is not seen.
    """
    if event not in _GUARDED_EVENTS:
        return
    target = args[0] if args else None
    if target is None:
        target = "."
    elif isinstance(target, int):  # an open file descriptor
        return
    try:
        path = os.fsdecode(target)
    except TypeError:
        return
    if not os.path.isabs(path):
        path = os.path.join(os.getcwd(), path)
    path = os.path.normpath(path)
    if _outside_repository(path):
        OUTSIDE_READS.append(path)
        raise OutsideRepositoryError(
            f"tests must not read outside the repository: {path}; copy it into tests/fixtures"
        )


if not getattr(sys, "_streamscope_read_guard", False):  # once, even if imported twice
    sys.addaudithook(_guard_reads)
    sys._streamscope_read_guard = True  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _no_reads_outside_repository() -> Any:
    """Fail the test if it read beside the repository, even if it caught the error."""
    start = len(OUTSIDE_READS)
    yield
    seen = OUTSIDE_READS[start:]
    del OUTSIDE_READS[start:]
    if seen:
        pytest.fail(
            "tests must not read outside the repository (copy it into tests/fixtures): "
            + ", ".join(sorted(set(seen))),
            pytrace=False,
        )


@pytest.fixture
def outside_reads() -> list[str]:
    """The paths refused so far in this test; a test that reads beside the repository on
    purpose (the guard's own test) empties it so as not to fail."""
    return OUTSIDE_READS


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    """A read beside the repository while a module is collected (at its import, say) is
    that module's collection error, even if the code caught the refusal: an error report
    fails the run serially and under xdist alike, where a worker's exit status is not the
    run's."""
    start = len(OUTSIDE_READS)
    report = yield
    seen = OUTSIDE_READS[start:]
    if seen and report.outcome != "failed":
        del OUTSIDE_READS[start:]
        report.outcome = "failed"
        report.longrepr = (
            "tests must not read outside the repository (copy it into tests/fixtures): "
            + ", ".join(sorted(set(seen)))
        )
    return report


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Reads beside the repository outside any test or collection (in a session hook,
    say) fail the run."""
    if OUTSIDE_READS:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(
                "tests must not read outside the repository (copy it into tests/fixtures): "
                + ", ".join(sorted(set(OUTSIDE_READS))),
                red=True,
            )


def _close_transport(transport: Any) -> None:
    transport.close()


def _close_dropped_clients() -> None:
    """Every blocking HTTP client closes its connections when it is dropped, before the
    garbage collector can find their sockets.

    NOTE: the SDKs' clients (openai-python, anthropic-python, google-genai) each hold a
    blocking client of ``httpx2`` (what these SDKs now build on) or ``httpx`` and sit in
    reference cycles of their own (``client.chat`` refers back to the client), so a
    client a test drops is freed by a later collection, in some later test, which may
    finalize its socket before the wrapper that would have closed it: an "unclosed
    socket" ResourceWarning, which this suite makes an error, in a test that had nothing
    to do with it (CI failed so once). A finalizer holding the client's transport (not
    the client) keeps the sockets out of the garbage and closes them when the client
    goes: the collector calls it before any ``__del__``. A client still in use (a cached
    one, shared by tests) is left alone.
    """
    for name in ("httpx", "httpx2"):
        try:
            client_class: Any = __import__(name).Client
        except ImportError:
            continue
        original = client_class.__init__

        def init(self: Any, *args: Any, __original: Any = original, **kwargs: Any) -> None:
            __original(self, *args, **kwargs)
            weakref.finalize(self, _close_transport, self._transport)

        client_class.__init__ = init


if not getattr(sys, "_streamscope_closing_clients", False):  # once, even if imported twice
    _close_dropped_clients()
    sys._streamscope_closing_clients = True  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _collect_qt_garbage(request: pytest.FixtureRequest) -> Any:
    """After a qasync test, collect its Qt objects on the main thread.

    NOTE: left to the garbage collector, a closed qasync loop's timer objects may be
    collected later in another thread (a proxy serving in a background thread, say) and
    leave a dangling timer in the main thread's Qt dispatcher: pytest-qt's next
    processEvents() then segfaults (seen with gdb in QTimerInfoList::activateTimers).
    """
    yield
    if request.node.get_closest_marker("qasync") is not None:
        gc.collect()


# --- the suite's kinds (tests/suites.py) and how they share workers --------------------------

# Kinds whose tests run on one worker under ``--dist loadgroup``: PostgreSQL is one server
# per pytest process (one worker: one server); the built artefacts and the real clients
# are each heavy on CPU and on shared caches, so one at a time beside the rest.
ONE_WORKER = {"postgres": "postgres", "packaging": "packaging", "clients": "clients"}


# The one-worker groups, longest first (measured serially: the real clients ~500 s, the
# packaging ~200 s, PostgreSQL ~90 s), ahead of everything else.
_GROUP_ORDER = {"clients": 0, "packaging": 1, "postgres": 2}


def _group_of(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("xdist_group")
    return str(marker.args[0]) if marker is not None and marker.args else None


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from tests import suites

    groups = config.pluginmanager.hasplugin("xdist")
    for item in items:
        kinds = suites.marked(item)
        if not kinds:
            kind = suites.kind_of(item)
            if kind is not None:
                item.add_marker(kind)
                kinds = [kind]
        group = ONE_WORKER.get(kinds[0]) if len(kinds) == 1 else None
        if groups and group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
    if groups and config.getoption("dist", "no") == "loadgroup":
        # xdist hands the groups out in collection order, each whole to one worker: the
        # longest first, so that no worker is left alone with the real clients' minutes
        # at the end while the other idles (the same order on every worker: a stable sort)
        items.sort(key=lambda item: _GROUP_ORDER.get(_group_of(item), len(_GROUP_ORDER)))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    """A ``core`` test that reaches for the network or a process fails (tests/suites.py).
    Not in the teardown: a session fixture (a PostgreSQL server) ends in the last test's."""
    from tests import suites

    with suites.guard_core(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    from tests import suites

    with suites.guard_core(item):
        return (yield)


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], Any]]:
    if item.get_closest_marker("qasync") is None:
        return {"asyncio": asyncio.new_event_loop}
    from PySide6.QtWidgets import QApplication

    from streamscope.gui.event_loop import QtEventLoop

    def factory() -> Any:  # the window's loop, as run_window() makes it
        return QtEventLoop(QApplication.instance() or QApplication([]))

    return {"qasync": factory}


# --- a real PostgreSQL server (tests.postgres), for the shared storage -----------------------


@pytest.fixture(scope="session")
def postgres_server() -> Any:
    """One throwaway PostgreSQL cluster for the session (skips, saying why, where none can
    be started: CI installs Debian's package, so there it runs)."""
    from tests import postgres

    reason = postgres.why_not()
    if reason is not None:
        pytest.skip(reason)
    with postgres.running() as server:
        yield server


@pytest.fixture
def pg_url(postgres_server: Any) -> str:
    """A fresh empty database on the session's server, for one test."""
    return str(postgres_server.new_database())
