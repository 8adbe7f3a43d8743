"""A live feed that misbehaves, from a real server on its own port:
an event that cannot be read is skipped and counted, and the follower goes on; a feed
that ends or sends a line over the bound is asked again, and the status says so (never
"live" while it is not); the line bound holds memory to it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from streamscope.capture.events import FlowAdded, FlowEvent
from streamscope.remote import RemoteFlows
from streamscope.remote import flows as remote_flows

GOOD = {"id": "f-good", "model": "m", "outcome": "complete"}


@asynccontextmanager
async def _feed_server(
    answer: Callable[[int, dict[str, str], asyncio.StreamWriter], object],
) -> AsyncIterator[str]:
    """A server whose n-th GET of /admin/events gets ``answer(n, headers, writer)``."""
    asked = 0

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal asked
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (h.partition(":") for h in head[1:] if h)}
        asked += 1
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
        )
        try:
            result = answer(asked, headers, writer)
            if asyncio.iscoroutine(result):
                await result
            await writer.drain()
        except (ConnectionError, OSError):
            pass
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()


def _event(name: str, data: str, event_id: str) -> bytes:
    return f"event: {name}\nid: {event_id}\ndata: {data}\n\n".encode()


async def _until(check: Callable[[], bool], seconds: float = 10) -> None:
    for _ in range(int(seconds / 0.02)):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("not in time")


async def test_an_unreadable_event_is_skipped_and_counted_and_the_feed_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(remote_flows, "RETRY", 0.05)
    seen_ids: list[str | None] = []

    def answer(n: int, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
        seen_ids.append(headers.get("last-event-id"))
        if n == 1:
            writer.write(_event("flow.added", "{not json", "e-1"))
            writer.write(_event("flow.added", "[1, 2]", "e-2"))  # no object: .get would die
            writer.write(_event("flow.added", '{"model": "no id"}', "e-3"))
            writer.write(_event("flows.deleted", '{"ids": 5}', "e-4"))
            writer.write(_event("flow.added", json.dumps(GOOD), "e-5"))
        # then the connection closes: a dropped feed, asked again after e-5

    async with _feed_server(answer) as url:
        remote = RemoteFlows(url, "sk-admin-hostile-feed-test-0000")
        heard: list[FlowEvent] = []
        statuses: list[str] = []
        remote.subscribe(heard.append)
        remote.status.subscribe(statuses.append)
        await remote.start()
        try:
            await _until(lambda: len(seen_ids) >= 2)
            assert [e.summary.id for e in heard if isinstance(e, FlowAdded)] == ["f-good"]
            assert remote.skipped == 4
            assert seen_ids[:2] == [None, "e-5"]  # skipped or told, none is asked again
            assert remote._task is not None and not remote._task.done()
            assert statuses[0] == "live" and "retrying: the feed ended" in statuses
            await _until(lambda: not remote.live)
            assert statuses[-1].startswith("retrying")
        finally:
            await remote.aclose()


async def test_a_line_over_the_bound_is_a_dropped_feed_read_no_further(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 400 MB line once took the window from 45 to 570 MB: the follower stops reading
    at the bound (here 64 KiB) and says why; the server could not push the rest."""
    monkeypatch.setattr(remote_flows, "RETRY", 5.0)
    monkeypatch.setattr(remote_flows, "MAX_LINE", 64 * 1024)
    sent = [0]

    async def answer(n: int, headers: dict[str, str], writer: asyncio.StreamWriter) -> None:
        if n > 1:
            return
        writer.write(b"event: flow.added\ndata: ")
        block = b"x" * 65536
        for _ in range(400):  # 25 MiB of one line, if anyone would read it
            writer.write(block)
            await writer.drain()
            sent[0] += len(block)

    async with _feed_server(answer) as url:
        remote = RemoteFlows(url, "sk-admin-hostile-feed-test-0000")
        statuses: list[str] = []
        remote.status.subscribe(statuses.append)
        await remote.start()
        try:
            await _until(lambda: any("SSE line of more than 65536 bytes" in s for s in statuses))
            assert not remote.live and remote._task is not None and not remote._task.done()
            await asyncio.sleep(0.3)
            # what the server got into the socket: the bound, plus socket buffers (a few
            # MiB at most), never the 25 MiB
            assert sent[0] < 12 * 1024 * 1024
        finally:
            await remote.aclose()
