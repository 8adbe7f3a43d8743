"""The free port offered when the configured one is taken (:mod:`streamscope.proxy.ports`),
checked against real sockets: a port someone listens on is not free, the first free one
above it is offered, else one the system picks."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest

from streamscope.proxy.ports import free_port, is_free
from streamscope.proxy.server import bind

HOST = "127.0.0.1"
NOT_HERE = "192.0.2.1"  # TEST-NET-1: no address of this machine


def _listen(port: int) -> socket.socket:
    """A listening socket made as another program would (no SO_REUSEADDR)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((HOST, port))
        sock.listen()
    except OSError:
        sock.close()
        raise
    return sock


@contextmanager
def _held_pair() -> Iterator[int]:
    """Two neighbouring ports, ``p`` and ``p + 1``, both listened on; yields ``p``."""
    for _ in range(50):
        with ExitStack() as held:
            first = held.enter_context(_listen(0))
            port = first.getsockname()[1]
            if port + 2 >= 65536:
                continue
            try:
                held.enter_context(_listen(port + 1))
            except OSError:
                continue  # someone has p + 1: try another pair
            yield port
            return
    pytest.skip("no two neighbouring ports could be held")


def test_a_port_someone_listens_on_is_not_free_until_they_let_go() -> None:
    sock = _listen(0)
    port = sock.getsockname()[1]
    assert not is_free(HOST, port)
    sock.close()
    assert is_free(HOST, port)
    bind(HOST, port).close()  # and the proxy's own bind agrees


@pytest.mark.parametrize("port", [0, -1, 65536, 70000])
def test_a_port_outside_1_to_65535_is_never_free(port: int) -> None:
    assert not is_free(HOST, port)


def test_the_first_free_port_above_the_taken_one_is_offered() -> None:
    with _held_pair() as taken:
        if not is_free(HOST, taken + 2):
            pytest.skip("the port after the held pair is in use")
        assert free_port(HOST, taken) == taken + 2  # taken + 1 is held too: skipped


def test_with_no_free_port_in_the_scan_the_system_picks_one() -> None:
    with _held_pair() as taken:
        offered = free_port(HOST, taken, scan=1)  # only taken + 1, which is held
        assert offered is not None and offered not in (taken, taken + 1)
        assert is_free(HOST, offered)
        without_a_taken_port = free_port(HOST)
        assert without_a_taken_port is not None and is_free(HOST, without_a_taken_port)


def test_a_host_that_is_not_this_machine_has_no_free_port() -> None:
    assert not is_free(NOT_HERE, 8787)
    assert free_port(NOT_HERE, 8787) is None
