"""The network's failure family (net/errors.py): httpx's failures become the family's at
the one edge (each class to its own, the httpx one kept as the cause), met on real
sockets as the clients meet them."""

from __future__ import annotations

import socket

import httpx
import pytest

from streamscope.net import errors
from streamscope.net.errors import from_httpx, httpx_errors

CASES = [
    (httpx.ConnectTimeout("t"), errors.ConnectTimeout),
    (httpx.PoolTimeout("t"), errors.ConnectTimeout),
    (httpx.ReadTimeout("t"), errors.ReadTimeout),
    (httpx.WriteTimeout("t"), errors.WriteTimeout),
    (httpx.ConnectError("c"), errors.ConnectError),
    (httpx.ReadError("r"), errors.ReadError),
    (httpx.WriteError("w"), errors.WriteError),
    (httpx.RemoteProtocolError("p"), errors.RemoteProtocolError),
    (httpx.LocalProtocolError("p"), errors.LocalProtocolError),
    (httpx.UnsupportedProtocol("u"), errors.UnsupportedProtocol),
    (httpx.DecodingError("d"), errors.DecodingError),
    (httpx.TooManyRedirects("loop"), errors.NetError),
]


@pytest.mark.parametrize(("theirs", "ours"), CASES)
def test_each_httpx_failure_becomes_its_own_class_of_the_family(
    theirs: httpx.HTTPError, ours: type[errors.NetError]
) -> None:
    mapped = from_httpx(theirs)
    assert type(mapped) is ours and str(mapped) == str(theirs)


def test_the_family_is_one_tree() -> None:
    timeouts = (errors.ConnectTimeout, errors.ReadTimeout, errors.WriteTimeout)
    assert all(issubclass(t, errors.NetTimeout) for t in timeouts)
    assert issubclass(errors.AnswerTooLarge, errors.DecodingError)
    protocol = (errors.RemoteProtocolError, errors.LocalProtocolError)
    assert all(issubclass(p, errors.ProtocolError) for p in protocol)
    assert all(
        issubclass(cls, errors.NetError)
        for cls in vars(errors).values()
        if isinstance(cls, type) and cls.__module__ == errors.__name__
    )
    assert not issubclass(errors.NetError, httpx.HTTPError)  # (no client's class above)


async def test_a_refused_connection_through_httpx_is_the_familys_connect_error() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with httpx.AsyncClient(trust_env=False) as client:
        with pytest.raises(errors.ConnectError) as caught, httpx_errors():
            await client.get(f"http://127.0.0.1:{port}/")
    assert isinstance(caught.value.__cause__, httpx.ConnectError)


async def test_a_silent_server_through_httpx_is_the_familys_read_timeout() -> None:
    with socket.socket() as silent:  # listens (the kernel completes the handshake), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        async with httpx.AsyncClient(trust_env=False, timeout=0.2) as client:
            with pytest.raises(errors.ReadTimeout), httpx_errors():
                await client.get(f"http://127.0.0.1:{port}/")


def test_what_is_not_an_httpx_failure_goes_through_as_it_is() -> None:
    with pytest.raises(ValueError, match="not ours"), httpx_errors():
        raise ValueError("not ours")
