"""Every test is of exactly one kind (tests/suites.py), so that ``-m core`` runs the sans-io
core alone and the parallel run knows what it may put side by side; the kinds are the
markers pyproject.toml registers; a ``core`` test cannot reach for a socket or a process."""

from __future__ import annotations

import socket
import subprocess
import sys
import tomllib

import pytest

from tests import suites


def test_every_collected_test_has_exactly_one_kind(request: pytest.FixtureRequest) -> None:
    # The session's items: the whole suite in a full run, the tests asked for otherwise.
    wrong = {}
    for item in request.session.items:
        kinds = suites.marked(item)
        if len(kinds) != 1:
            wrong[item.nodeid] = kinds
    assert not wrong, (
        f"{len(wrong)} test(s) with no kind or several (give one in tests/suites.py's "
        f"BY_PATH or mark the test): {dict(list(wrong.items())[:20])}"
    )


def test_the_kinds_are_the_registered_markers() -> None:
    pyproject = tomllib.loads((suites.TESTS.parent / "pyproject.toml").read_text())
    markers = pyproject["tool"]["pytest"]["ini_options"]["markers"]
    registered = {line.split(":")[0].strip(): line for line in markers}
    for kind, meaning in suites.SUITES.items():
        assert registered.get(kind) == f"{kind}: {meaning}"
    assert set(suites.BY_PATH.values()) <= set(suites.SUITES)
    for path in suites.BY_PATH:  # a moved or deleted test leaves no stale entry
        assert (suites.TESTS / path).exists(), path


@pytest.mark.core
def test_a_core_test_cannot_open_a_socket_or_start_a_process() -> None:
    with socket.socket() as sock, pytest.raises(suites.NotCoreError, match="tried to connect"):
        sock.connect(("127.0.0.1", 9))
    with socket.socket() as sock, pytest.raises(suites.NotCoreError, match="bind"):
        sock.bind(("127.0.0.1", 0))
    with pytest.raises(suites.NotCoreError, match="start a process"):
        subprocess.run([sys.executable, "-c", "pass"], check=False)
    a, b = socket.socketpair()  # an event loop's wake-up pair is allowed
    a.close()
    b.close()


@pytest.mark.sockets
def test_other_kinds_may() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
    assert subprocess.run([sys.executable, "-c", "pass"], check=False).returncode == 0
