"""net.http1, keep-alive: a connection is not reused once it has idled as long as the
upstream's ``Keep-Alive: timeout=N`` allows, less a second (the upstream may be closing
it as the request goes out: a request lost so would count against an account). Against
a real loopback server that announces its timeout and keeps to it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from streamscope.net.http1 import _idle_limit
from tests.net.test_http1 import client, post, read_request, server

Answer = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def keeping(timeout: float) -> Answer:
    """A server answering each request on a connection, which it closes after
    ``timeout`` seconds of idling, as it announces."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                await asyncio.wait_for(read_request(reader), timeout)
            except TimeoutError:
                return  # (the helper closes the connection)
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n"
                + f"keep-alive: timeout={timeout:g}, max=100\r\n\r\n".encode()
                + b"{}"
            )
            await writer.drain()

    return answer


async def test_a_connection_idle_too_long_for_the_upstream_is_not_reused() -> None:
    async with server(keeping(1.5)) as (url, connections):
        c = client()
        assert (await post(c, url))[0] == 200
        await asyncio.sleep(0.7)  # idle past 1.5 s less the margin: a new connection
        assert (await post(c, url))[0] == 200
        assert len(connections) == 2
        assert (await post(c, url))[0] == 200  # at once: the second is reused
        assert len(connections) == 2
        await c.aclose()


async def test_a_connection_within_its_keep_alive_is_reused() -> None:
    async with server(keeping(10)) as (url, connections):
        c = client()
        for _ in range(3):
            assert (await post(c, url))[0] == 200
            await asyncio.sleep(0.3)
        assert len(connections) == 1
        await c.aclose()


def test_the_keep_alive_header_is_read_as_rfc_9110_writes_it() -> None:
    assert _idle_limit(b"timeout=5, max=1000") == 4.0
    assert _idle_limit(b"max=100,  Timeout = 3") == 2.0
    assert _idle_limit(b"timeout=0.5") == 0.0
    assert _idle_limit(b"max=100") is None
    assert _idle_limit(b"timeout=soon") is None
