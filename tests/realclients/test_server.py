"""The loopback server the real clients read from (app/streamscope/realclients/server.py),
on a real socket: each replay answers every path under its own prefix with its exact
bytes, status and headers (framing headers replaced by the body's exact length), and
anything else is a 404."""

from __future__ import annotations

import asyncio

import httpx

from streamscope.realclients.server import Replay, ReplayServer
from tests.support import FIXTURES

CHAT = (FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse").read_bytes()
ERROR = b'{"error": {"message": "overloaded", "type": "server_error"}}'


async def _raw_round_trip(port: int, request: bytes) -> bytes:
    """What the server sends back for ``request``, to the connection's close."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    answer = await reader.read()  # the server closes: the end of the body
    writer.close()
    await writer.wait_closed()
    return answer


def test_each_replay_is_served_exactly_under_its_own_prefix() -> None:
    replays = {
        "chat": Replay(CHAT),
        "error": Replay(ERROR, 503, [("Content-Type", "application/json"), ("x-id", "7")]),
    }

    async def main() -> None:
        async with ReplayServer(replays) as server, httpx.AsyncClient() as http:
            assert server.base("chat") == f"http://127.0.0.1:{server.port}/r/chat"
            stream = await http.post(server.base("chat") + "/v1/chat/completions", json={})
            assert stream.status_code == 200 and stream.content == CHAT
            assert stream.headers["content-type"] == "text/event-stream"  # none given
            error = await http.get(server.base("error") + "/messages")
            assert (error.status_code, error.content) == (503, ERROR)
            assert error.headers["content-type"] == "application/json"
            assert error.headers["x-id"] == "7"
            missing = await http.get(f"http://127.0.0.1:{server.port}/r/nope/v1/x")
            outside = await http.get(f"http://127.0.0.1:{server.port}/v1/chat/completions")
            assert missing.status_code == outside.status_code == 404
            assert missing.text == outside.text == "no such replay"  # said, not cut short
            assert server.requests == [
                ("POST", "/r/chat/v1/chat/completions"),
                ("GET", "/r/error/messages"),
                ("GET", "/r/nope/v1/x"),
                ("GET", "/v1/chat/completions"),
            ]

    asyncio.run(main())


def test_the_replays_framing_headers_give_way_to_the_exact_length() -> None:
    # A recording's headers may say chunked or compressed: the bytes served are neither.
    headers = [
        ("Transfer-Encoding", "chunked"),
        ("Content-Length", "1"),
        ("Content-Encoding", "gzip"),
        ("Connection", "keep-alive"),
        ("content-type", "text/event-stream; charset=utf-8"),
    ]
    replays = {"k": Replay(CHAT, 299, headers)}

    async def main() -> bytes:
        async with ReplayServer(replays) as server:
            return await _raw_round_trip(
                server.port, b"POST /r/k/x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
            )

    head, _, body = asyncio.run(main()).partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "HTTP/1.1 299 Status"  # no phrase for it: a word all the same
    assert sorted(lines[1:]) == sorted(
        [
            "content-type: text/event-stream; charset=utf-8",
            "connection: close",
            f"content-length: {len(CHAT)}",
        ]
    )
    assert body == CHAT


def test_a_request_that_is_no_http_gets_nothing_and_the_server_goes_on() -> None:
    async def main() -> None:
        async with ReplayServer({"k": Replay(b"data: x\n\n")}) as server:
            bad_length = b"GET /r/k/ HTTP/1.1\r\nContent-Length: many\r\n\r\n"
            assert await _raw_round_trip(server.port, bad_length) == b""
            async with httpx.AsyncClient() as http:
                ok = await http.get(server.base("k") + "/")
            assert ok.content == b"data: x\n\n"

    asyncio.run(main())


def test_leaving_closes_the_connections_a_client_left_open() -> None:
    """A client that opened a connection and sent nothing (a pool's spare one, or a client
    killed mid-request) is closed when the server is left, and its handler has ended: on
    Python 3.11 closing the listener leaves accepted connections open, and their sockets
    were found by the garbage collector in a later test."""

    async def main() -> None:
        async with ReplayServer({"chat": Replay(CHAT)}) as server:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"POST /r/chat/v1/chat/completions HTTP/1.1\r\n")  # no end of head
            await writer.drain()
            await asyncio.sleep(0.05)  # the server has accepted it and waits for the rest
            handlers = {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}
            assert handlers
        assert await asyncio.wait_for(reader.read(), 2) == b""  # closed by the server
        assert all(t.done() for t in handlers)
        writer.close()
        await writer.wait_closed()

    asyncio.run(main())
