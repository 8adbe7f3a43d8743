"""The fake upstream server the proxy tests rely on: timing, drops, stalls, keep-alive."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from tests.support import fixture_files, load
from tests.upstream_server import (
    RecordedRequest,
    Script,
    UpstreamServer,
    fast_stream_script,
    fast_stream_text,
    run_in_thread,
    script_from_recording,
)


async def test_each_chunk_arrives_when_due() -> None:
    async with UpstreamServer() as up, httpx.AsyncClient() as client:
        up.route("POST", "/s", Script(chunks=[b"data: 1\n\n", 0.6, b"data: 2\n\n"]))
        start = time.monotonic()
        arrivals: list[tuple[float, bytes]] = []
        async with client.stream("POST", f"{up.url}/s", json={}) as resp:
            assert resp.status_code == 200
            assert resp.headers["content-type"] == "text/event-stream"
            assert resp.headers["transfer-encoding"] == "chunked"
            async for piece in resp.aiter_raw():
                arrivals.append((time.monotonic() - start, piece))
    assert b"".join(p for _, p in arrivals) == b"data: 1\n\ndata: 2\n\n"
    assert arrivals[0][1] == b"data: 1\n\n"
    assert arrivals[0][0] < 0.3  # well before the 0.6 s pause ends
    assert arrivals[-1][0] >= 0.55


async def test_drop_leaves_the_response_incomplete() -> None:
    async with UpstreamServer() as up, httpx.AsyncClient() as client:
        up.route("GET", "/d", Script(chunks=[b"data: 1\n\n"], drop=True))
        got = bytearray()
        with pytest.raises(httpx.RemoteProtocolError):
            async with client.stream("GET", f"{up.url}/d") as resp:
                async for piece in resp.aiter_raw():
                    got += piece
        assert got == b"data: 1\n\n"
        assert up.closed_at == []  # the server closed, not the client
        # the next request gets a fresh connection and a full answer
        up.route("GET", "/ok", Script(chunks=[b"x"]))
        assert (await client.get(f"{up.url}/ok")).content == b"x"
        assert up.connections == 2


async def test_json_drop_truncates_the_body() -> None:
    async with UpstreamServer() as up, httpx.AsyncClient() as client:
        up.route("GET", "/j", Script(body_json={"long": "x" * 100}, drop=True))
        with pytest.raises(httpx.RemoteProtocolError):
            await client.get(f"{up.url}/j")


async def test_client_disconnect_during_stall_is_recorded() -> None:
    async with UpstreamServer() as up, httpx.AsyncClient() as client:
        up.route("POST", "/stall", Script(chunks=[b"data: 1\n\n"], stall=30))
        async with client.stream("POST", f"{up.url}/stall", json={"a": 1}) as resp:
            async for _ in resp.aiter_raw():
                break
            gone = time.monotonic()
        # leaving the block closes the unfinished response, and so the connection
        closed = await up.wait_closed_connection(timeout=2)
        assert 0 <= closed - gone < 0.5
        assert up.closed_at == [closed]
        assert up.requests[0].cancelled_at == closed
        assert up.requests[0].finished_at is None


async def test_client_disconnect_during_slow_stream_and_sleep() -> None:
    async with UpstreamServer() as up, httpx.AsyncClient() as client:
        up.route("GET", "/slow", fast_stream_script(50, pace=0.2))
        async with client.stream("GET", f"{up.url}/slow") as resp:
            async for _ in resp.aiter_raw():
                break
            gone = time.monotonic()
        assert await up.wait_closed_connection(timeout=2) - gone < 0.5


async def test_wait_closed_connection_times_out() -> None:
    async with UpstreamServer() as up:
        with pytest.raises(TimeoutError):
            await up.wait_closed_connection(timeout=0.1)


async def test_keep_alive_reuses_one_connection() -> None:
    async with UpstreamServer() as up:
        async with httpx.AsyncClient() as client:
            up.route("POST", "/v1/chat/completions", fast_stream_script(3))
            up.route("GET", "/v1/models", Script(body_json={"data": []}))
            first = await client.post(f"{up.url}/v1/chat/completions", json={"n": 1})
            second = await client.get(f"{up.url}/v1/models")
            third = await client.post(f"{up.url}/v1/chat/completions", json={"n": 3})
            assert up.closed_at == []
        await up.wait_closed_connection(timeout=2)  # the client closed its pooled connection
    assert first.text.endswith("data: [DONE]\n\n")
    assert second.json() == {"data": []}
    assert second.headers["content-length"] == str(len(second.content))
    assert third.status_code == 200
    assert up.connections == 1
    assert [r.connection for r in up.requests] == [1, 1, 1]


async def test_requests_are_recorded() -> None:
    async with UpstreamServer() as up, httpx.AsyncClient() as client:
        up.route("POST", "/v1/messages", Script(body_json={"ok": True}))
        before = time.monotonic()
        resp = await client.post(
            f"{up.url}/v1/messages?beta=true",
            json={"model": "m", "stream": True},
            headers={"X-Api-Key": "k", "Anthropic-Version": "2023-06-01"},
        )
        await client.post(f"{up.url}/v1/messages", content=b"not json")
    assert resp.json() == {"ok": True}
    first, second = up.requests
    assert (first.method, first.path, first.query) == ("POST", "/v1/messages", "beta=true")
    assert first.json == {"model": "m", "stream": True}
    assert json.loads(first.body) == first.json
    assert first.headers["x-api-key"] == "k"
    assert first.headers["anthropic-version"] == "2023-06-01"
    assert before <= first.received_at <= second.received_at
    assert first.finished_at is not None
    assert (second.body, second.json) == (b"not json", None)


async def test_chunked_request_body_is_decoded() -> None:
    async def parts():
        yield b'{"a": '
        yield b"[1, 2]}"

    async with UpstreamServer() as up, httpx.AsyncClient() as client:
        up.route("POST", "/c", Script(body_json={}))
        resp = await client.post(f"{up.url}/c", content=parts())
    assert resp.status_code == 200
    assert up.requests[0].headers["transfer-encoding"] == "chunked"
    assert up.requests[0].json == {"a": [1, 2]}


async def test_unknown_route_is_a_json_404() -> None:
    async with UpstreamServer() as up, httpx.AsyncClient() as client:
        up.route("GET", "/known", Script())
        resp = await client.post(f"{up.url}/known")
    assert resp.status_code == 404
    assert "no route for POST /known" in resp.json()["error"]["message"]
    assert len(up.requests) == 1


async def test_script_lists_are_answered_in_turn_and_handlers_are_called() -> None:
    async def echo(req: RecordedRequest) -> Script:
        await asyncio.sleep(0)
        return Script(status=201, body_json={"got": req.json})

    def boom(req: RecordedRequest) -> Script:
        raise RuntimeError("handler bug")

    async with UpstreamServer() as up, httpx.AsyncClient() as client:
        turns = [Script(status=429, body_json={"error": "slow down"}), Script(chunks=[b"ok"])]
        up.route("POST", "/t", turns)
        up.route("*", "/echo", echo)
        up.route("GET", "/boom", boom)
        statuses = [(await client.post(f"{up.url}/t")).status_code for _ in range(3)]
        echoed = await client.put(f"{up.url}/echo", json=[1])
        failed = await client.get(f"{up.url}/boom")
        up.route("GET", "/none", lambda req: None)
        wrong = await client.get(f"{up.url}/none")
    assert statuses == [429, 200, 200]
    assert (echoed.status_code, echoed.json()) == (201, {"got": [1]})
    assert failed.status_code == wrong.status_code == 500
    assert [type(e) for e in up.errors] == [RuntimeError, TypeError]


async def test_status_headers_and_delay() -> None:
    script = Script(
        status=503,
        headers={"Retry-After": "1", "Content-Type": "text/plain"},
        chunks=[b"busy"],
        delay=0.3,
    )
    async with UpstreamServer() as up, httpx.AsyncClient() as client:
        up.route("GET", "/busy", script)
        start = time.monotonic()
        resp = await client.get(f"{up.url}/busy")
    assert time.monotonic() - start >= 0.25
    assert (resp.status_code, resp.text) == (503, "busy")
    assert resp.headers["retry-after"] == "1"
    assert resp.headers["content-type"] == "text/plain"


async def test_malformed_request_gets_400() -> None:
    async with UpstreamServer() as up:
        reader, writer = await asyncio.open_connection("127.0.0.1", up.port)
        try:
            writer.write(b"NONSENSE\r\n\r\n")
            answer = await reader.read()
        finally:
            writer.close()
            await writer.wait_closed()
    assert answer.startswith(b"HTTP/1.1 400 ")
    assert up.requests == []


async def test_pipelined_requests_continue_and_close_on_a_raw_socket() -> None:
    async with UpstreamServer() as up:
        up.route("POST", "/p", Script(body_json={"ok": 1}))
        reader, writer = await asyncio.open_connection("127.0.0.1", up.port)
        try:
            writer.write(
                b"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
                b"POST /p HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                b"Content-Length: 3\r\nConnection: close\r\n\r\n[1]"
            )
            answer = await asyncio.wait_for(reader.read(), 5)  # read() returns at close
        finally:
            writer.close()
            await writer.wait_closed()
    assert answer.count(b"HTTP/1.1 200 OK\r\n") == 2
    assert b"HTTP/1.1 100 Continue\r\n\r\n" in answer
    assert answer.endswith(b'connection: close\r\n\r\n{"ok": 1}')
    assert [r.json for r in up.requests] == [{}, [1]]
    assert up.closed_at == []  # the server closed this one


async def test_stop_closes_open_connections() -> None:
    up = await UpstreamServer().start()
    up.route("GET", "/stall", Script(stall=60))
    async with httpx.AsyncClient() as client:
        async with client.stream("GET", f"{up.url}/stall") as resp:
            assert resp.status_code == 200
            await up.stop()
            with pytest.raises(httpx.RemoteProtocolError):
                await resp.aread()
    with pytest.raises(RuntimeError):
        _ = up.url


def test_run_in_thread_with_a_sync_client() -> None:
    with run_in_thread() as up, httpx.Client() as client:
        up.route("POST", "/v1/chat/completions", fast_stream_script(5))
        up.route("GET", "/stall", Script(chunks=[b"data: 1\n\n"], stall=30))
        body = client.post(f"{up.url}/v1/chat/completions", json={"stream": True}).content
        with client.stream("GET", f"{up.url}/stall") as resp:
            next(resp.iter_raw())
            gone = time.monotonic()
        assert up.wait_closed_connection_sync(timeout=2) - gone < 0.5
    assert body.endswith(b"data: [DONE]\n\n")
    assert up.requests[0].json == {"stream": True}


def test_sync_waiter_times_out() -> None:
    with run_in_thread() as up, pytest.raises(TimeoutError):
        up.wait_closed_connection_sync(timeout=0.05)


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_script_from_recording_round_trips(path) -> None:
    frames = [f.raw for f in load(path).frames]
    script = script_from_recording(path)
    assert len(script.chunks) == len(frames)
    assert all(c.endswith(b"\n\n") or c.endswith(b"\r\n\r\n") for c in script.chunks[-1:])
    assert script.chunks[:-1] == frames[:-1]
    assert script.chunks[-1].startswith(frames[-1])
    if path.suffix == ".sse":
        original = path.read_bytes()
        joined = b"".join(script.chunks)
        assert joined.startswith(original) and len(joined) - len(original) <= 2


async def test_recording_served_paced_and_dropped() -> None:
    path = next(p for p in fixture_files("anthropic") if p.name == "ant-py_basic-text.sse")
    whole = script_from_recording(path)
    paced = script_from_recording(path, pace=0.05)
    dropped = script_from_recording(path, drop_after=3)
    assert paced.chunks[1] == 0.05 and paced.chunks[::2] == whole.chunks
    assert dropped.drop and dropped.chunks == whole.chunks[:3]
    async with UpstreamServer() as up, httpx.AsyncClient() as client:
        up.route("POST", "/v1/messages", [paced, dropped])
        start = time.monotonic()
        resp = await client.post(f"{up.url}/v1/messages", json={})
        elapsed = time.monotonic() - start
        assert resp.content == b"".join(whole.chunks)
        assert elapsed >= 0.05 * (len(whole.chunks) - 1) * 0.9
        got = bytearray()
        with pytest.raises(httpx.RemoteProtocolError):
            async with client.stream("POST", f"{up.url}/v1/messages", json={}) as r:
                async for piece in r.aiter_raw():
                    got += piece
        assert got == b"".join(whole.chunks[:3])


@pytest.mark.parametrize("protocol", ["openai-chat", "anthropic"])
def test_fast_stream_script_is_read_by_the_recording_reader(protocol: str) -> None:
    from streamscope.recording import read_recording

    script = fast_stream_script(4, protocol)
    rec = read_recording(b"".join(c for c in script.chunks if isinstance(c, bytes)))
    assert rec.protocol == protocol
    texts = []
    for frame in rec.frames:
        payload = json.loads(frame.data) if frame.data and frame.data != "[DONE]" else {}
        delta = (payload.get("choices") or [{}])[0].get("delta", {}).get("content")
        texts.append(delta or payload.get("delta", {}).get("text") or "")
    assert "".join(texts) == fast_stream_text(4)
    with pytest.raises(ValueError):
        fast_stream_script(1, "gopher")


def test_official_sdks_stream_from_the_server() -> None:
    import anthropic
    import openai

    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", fast_stream_script(6))
        up.route("POST", "/v1/messages", fast_stream_script(6, "anthropic"))
        oai = openai.OpenAI(api_key="sk-test", base_url=f"{up.url}/v1", max_retries=0)
        with oai.chat.completions.stream(
            model="m", messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            completion = stream.get_final_completion()
        oai.close()
        ant = anthropic.Anthropic(api_key="k", base_url=up.url, max_retries=0)
        with ant.messages.stream(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            message = stream.get_final_message()
        ant.close()
    assert completion.choices[0].message.content == fast_stream_text(6)
    assert completion.usage is not None and completion.usage.completion_tokens == 6
    assert message.content[0].text == fast_stream_text(6)
    assert (message.stop_reason, message.usage.output_tokens) == ("end_turn", 6)
    assert [r.path for r in up.requests] == ["/v1/chat/completions", "/v1/messages"]
    assert up.requests[0].json["stream"] is True
