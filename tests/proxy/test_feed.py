"""The live feed, ``GET /admin/events`` (proxy/feed.py), over a real socket: what a window
attached from elsewhere hears, resuming after ``Last-Event-ID``, and a stop that does
not wait for it. The stream is read by httpx-sse, a parser that is not ours."""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from httpx_sse import ServerSentEvent, aconnect_sse

from streamscope.proxy.app import ProxyApp
from streamscope.proxy.feed import EventFeed
from streamscope.proxy.server import ProxyServer
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import KEY, Running, make_config, proxied

HI = [{"role": "user", "content": "hi"}]


def _ask(running: Running, model: str = "demo-chat") -> str:
    r = httpx.post(
        running.v1 + "/chat/completions",
        json={"model": model, "stream": True, "messages": HI},
        headers={"authorization": f"Bearer {running.key}"},
        timeout=10,
    )
    assert r.status_code == 200
    return r.headers["x-request-id"]


@contextmanager
def _listening(
    running: Running, last_id: str | None = None
) -> Iterator[queue.Queue[ServerSentEvent | None]]:
    """The feed's events, as a reader on its own loop hears them (None: the stream
    ended). Leaving the block cancels the reader (a blocked read ends at once)."""
    heard: queue.Queue[ServerSentEvent | None] = queue.Queue()
    headers = {"x-api-key": running.key}
    if last_id is not None:
        headers["last-event-id"] = last_id
    opened = threading.Event()
    loop = asyncio.new_event_loop()

    async def read() -> None:
        try:
            async with (
                httpx.AsyncClient(timeout=httpx.Timeout(10, read=60)) as client,
                aconnect_sse(client, "GET", running.url + "/admin/events", headers=headers) as s,
            ):
                assert s.response.status_code == 200
                opened.set()
                async for event in s.aiter_sse():
                    heard.put(event)
        except httpx.HTTPError:
            pass
        finally:
            opened.set()
            heard.put(None)

    task = loop.create_task(read())

    def run() -> None:
        with contextlib.suppress(asyncio.CancelledError):
            loop.run_until_complete(task)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert opened.wait(10)
    try:
        yield heard
    finally:
        loop.call_soon_threadsafe(task.cancel)
        thread.join(10)
        loop.close()


def _until(heard: queue.Queue[ServerSentEvent | None], name: str, **match: Any) -> ServerSentEvent:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        event = heard.get(timeout=max(0.01, deadline - time.monotonic()))
        assert event is not None, f"the stream ended before {name}"
        data = json.loads(event.data) if event.data else {}
        if event.event == name and all(data.get(k) == v for k, v in match.items()):
            return event
    raise AssertionError(f"no {name} {match} within 10 s")


def test_a_window_hears_each_new_flow_its_verdict_and_a_clear() -> None:
    with proxied(demo_config()) as running, _listening(running) as heard:
        flow_id = _ask(running)
        added = _until(heard, "flow.added", id=flow_id)
        summary = json.loads(added.data)
        assert (summary["model"], summary["status"], summary["verdict"]) == ("demo-chat", 200, None)
        assert added.id and added.id.split("-")[-1].isdigit()
        # Someone reads the list: the flow is linted then, and its verdict is news.
        listed = httpx.get(
            running.url + "/admin/flows", headers={"x-api-key": running.key}, timeout=10
        )
        assert listed.json()["flows"][0]["verdict"] == "ok"
        updated = json.loads(_until(heard, "flow.updated", id=flow_id).data)
        assert updated["verdict"] == "ok" and updated["lint"] == {"errors": 0, "warnings": 0}
        cleared = httpx.delete(
            running.url + "/admin/flows", headers={"x-api-key": running.key}, timeout=10
        )
        assert cleared.status_code == 200
        _until(heard, "flows.cleared")


def test_pool_changes_are_in_the_feed() -> None:
    demo = {"name": "demo", "protocol": "demo", "default": True, "accounts": [{"name": "healthy"}]}
    with proxied(make_config([demo])) as running, _listening(running) as heard:
        r = httpx.post(
            running.url + "/admin/pool/demo/healthy/disable",
            headers={"x-api-key": running.key},
            timeout=10,
        )
        assert r.status_code == 200
        event = _until(heard, "pool.account", upstream="demo", account="healthy")
        assert json.loads(event.data)["state"]["status"] == "disabled"


def test_a_reconnect_resumes_after_the_last_event_it_had() -> None:
    with proxied(demo_config()) as running:
        with _listening(running) as heard:
            first = _until(heard, "flow.added", id=_ask(running))
        later = [_ask(running), _ask(running)]
        flows = running.server.app.flows
        assert flows is not None
        flows.flush()
        with _listening(running, last_id=first.id) as heard:
            got = [_until(heard, "flow.added", id=flow_id) for flow_id in later]
        numbers = [int(e.id.rsplit("-", 1)[1]) for e in (first, *got)]
        assert numbers == sorted(numbers) and len(set(numbers)) == 3  # in order, each once


def test_an_id_the_feed_cannot_resume_from_gets_a_reset_first() -> None:
    with proxied(demo_config()) as running:
        for stale in ("another-process-12", "garbage", f"{running.server.app.core.feed.epoch}-99"):
            with _listening(running, last_id=stale) as heard:
                first = heard.get(timeout=10)
                assert first is not None and first.event == "reset"
                assert "no longer kept" in json.loads(first.data)["reason"]


def test_the_feed_is_the_admin_apis_and_a_stop_does_not_wait_for_it() -> None:
    server = contextlib.ExitStack()
    running = server.enter_context(proxied(demo_config()))
    try:
        no_key = httpx.get(running.url + "/admin/events", timeout=10)
        assert no_key.status_code == 401
        from_a_page = httpx.get(
            running.url + "/admin/events",
            headers={"x-api-key": running.key, "origin": "https://evil.example"},
            timeout=10,
        )
        assert from_a_page.status_code == 403
        with _listening(running) as heard:
            opened = heard.get(timeout=5)  # the stream says where the client is
            assert opened is not None and opened.event == "feed.open"
            assert opened.id == f"{json.loads(opened.data)['epoch']}-0"
            began = time.monotonic()
            server.close()  # the proxy stops with a window attached
            stopped = time.monotonic() - began
            assert heard.get(timeout=5) is None  # its stream ended
        assert stopped < 2  # not the 3 s a graceful stop gives open requests
    finally:
        server.close()


def test_the_ring_gives_back_what_was_missed_and_knows_what_it_lost() -> None:
    class Quiet:  # no store, no pool: events published by hand
        def subscribe(self, *_: Any) -> Any:
            return lambda: None

    feed = EventFeed(Quiet(), None)  # type: ignore[arg-type]
    for n in range(5):
        feed.publish("flow.added", {"id": f"f{n}"})
    first = f"{feed.epoch}-1"
    assert [e.n for e in feed.missed(first) or []] == [2, 3, 4, 5]
    assert feed.missed(f"{feed.epoch}-5") == [] and feed.missed(None) == []
    assert feed.missed(f"{feed.epoch}-6") is None  # from the future: another process
    assert feed.missed("beef-1") is None
    frame = (feed.missed(first) or [])[0].frame.decode()
    assert frame == f'id: {feed.epoch}-2\nevent: flow.added\ndata: {{"id":"f1"}}\n\n'


@pytest.mark.parametrize("behind", [3])
def test_the_ring_forgets_the_oldest(behind: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import streamscope.proxy.feed as feed_module

    monkeypatch.setattr(feed_module, "RING", behind)

    class Quiet:
        def subscribe(self, *_: Any) -> Any:
            return lambda: None

    feed = EventFeed(Quiet(), None)  # type: ignore[arg-type]
    for n in range(6):
        feed.publish("x", n)
    assert feed.missed(f"{feed.epoch}-3") == list(feed._ring)  # 4, 5, 6: all kept after 3
    assert feed.missed(f"{feed.epoch}-2") is None  # 3 is gone: cannot be told


async def test_the_embedded_proxy_listens_again_and_its_feed_goes_on() -> None:
    # The window's proxy keeps one app while its server stops and starts (a new port):
    # a stop ends the attached feeds, and the feed numbers on for the next ones.
    config = demo_config()
    app = ProxyApp(config)
    await app.start()

    async def first_added(server: ProxyServer) -> dict[str, Any]:
        async with (
            httpx.AsyncClient(timeout=10) as client,
            aconnect_sse(
                client, "GET", server.url + "/admin/events", headers={"x-api-key": KEY}
            ) as events,
        ):
            asked = await client.post(
                server.url + "/v1/chat/completions",
                json={"model": "demo-chat", "stream": True, "messages": HI},
                headers={"authorization": f"Bearer {KEY}"},
            )
            async for event in events.aiter_sse():
                if event.event == "flow.added":
                    data: dict[str, Any] = json.loads(event.data)
                    assert data["id"] == asked.headers["x-request-id"]
                    return {"event_id": event.id, **data}
        raise AssertionError("the feed ended without the flow")

    try:
        for _ in range(2):
            server = ProxyServer(config, app=app, lifespan=False)
            await server.start()
            try:
                got = await asyncio.wait_for(first_added(server), 10)
            finally:
                began = time.monotonic()
                await server.stop()
                assert time.monotonic() - began < 2
        assert got["event_id"].startswith(app.core.feed.epoch + "-")
    finally:
        await app.aclose()


async def test_a_client_that_falls_behind_is_reset_and_let_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import streamscope.proxy.feed as feed_module

    monkeypatch.setattr(feed_module, "QUEUE", 4)

    class Quiet:
        def subscribe(self, *_: Any) -> Any:
            return lambda: None

    feed = EventFeed(Quiet(), None)  # type: ignore[arg-type]
    sent: list[bytes] = []
    unblock = asyncio.Event()

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            if sent:  # every body after the first waits: a client that does not read
                await unblock.wait()
            sent.append(message.get("body", b""))

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()  # the client never says it left
        return {"type": "http.disconnect"}

    serving = asyncio.ensure_future(feed.stream(None, receive, send))
    await asyncio.sleep(0.01)
    feed.publish("x", 0)  # the stream takes this one, and blocks sending it
    await asyncio.sleep(0.01)
    for n in range(1, 10):  # the queue fills behind it
        feed.publish("x", n)
    assert not feed._clients  # let go
    unblock.set()
    await asyncio.wait_for(serving, 5)
    text = b"".join(sent).decode()
    assert "event: reset" in text and "fell too far behind" in text
    assert text.index("data: 0") < text.index("event: reset")


def test_an_event_is_made_into_its_frame_once_and_only_when_read() -> None:
    class Quiet:
        def subscribe(self, *_: Any) -> Any:
            return lambda: None

    class Counted:  # a snapshot that counts how often it is said as JSON
        said = 0

        def to_json(self) -> Any:
            Counted.said += 1
            return {"id": "f1"}

    feed = EventFeed(Quiet(), None)  # type: ignore[arg-type]
    feed._add("flow.added", Counted())
    feed.publish("flows.cleared", {})
    assert Counted.said == 0  # nobody has read it: no encoding
    kept = feed.missed(f"{feed.epoch}-0") or []
    frames = [kept[0].frame, *(e.frame for e in feed.missed(f"{feed.epoch}-0") or [])]
    assert Counted.said == 1  # once, however many read it
    assert frames[0] == f'id: {feed.epoch}-1\nevent: flow.added\ndata: {{"id":"f1"}}\n\n'.encode()
    assert frames[-1] == f"id: {feed.epoch}-2\nevent: flows.cleared\ndata: {{}}\n\n".encode()
