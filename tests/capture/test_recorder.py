"""Capture through a real proxy: both legs of every flow, exact bytes and times,
client frames linked to the upstream frames they came from, secrets masked everywhere,
retention limits, bodies stored once.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest

from streamscope.analysis.view import leg_events
from streamscope.capture.flow import Flow
from streamscope.config import Config
from streamscope.proxy.server import ProxyServer
from streamscope.wire import SSEDecoder
from tests.proxy.harness import KEY, Running, make_config
from tests.sdk_clients import message_summary
from tests.support import running_in_thread
from tests.upstream_server import RecordedRequest, Script, fast_stream_script, run_in_thread

UPSTREAM_KEY = "sk-upstream-PLANTED-0123456789abcdef-zzzz"
N = 4


def _config(url: str, mode: str = "repair", **capture: Any) -> Config:
    config = make_config(
        [
            {
                "name": "up",
                "protocol": "openai-chat",
                "base_url": url + "/v1",
                "default": True,
                "mode": mode,
                "models": ["m"],
                "accounts": [{"name": "main", "api_key": UPSTREAM_KEY}],
            }
        ],
        keepalive_seconds=2.0,
    )
    for key, value in capture.items():
        setattr(config.capture, key, value)
    return config


def proxied(config: Config, capture_path: Path | None = None) -> Any:
    async def start() -> ProxyServer:
        from streamscope.proxy.app import ProxyApp

        server = ProxyServer(config, app=ProxyApp(config, capture_path=capture_path))
        await server.start()
        return server

    async def stop(server: ProxyServer) -> None:
        await server.stop()

    return running_in_thread(start, stop, "proxy")


@pytest.fixture
def upstream() -> Iterator[Any]:
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", fast_stream_script(N))
        yield up


def _admin(running: Running, path: str) -> httpx.Response:
    return httpx.get(running.url + path, headers={"x-api-key": KEY}, timeout=10)


def _flows(server: ProxyServer) -> list[dict[str, Any]]:
    assert server.app.flows is not None
    server.app.flows.flush()
    items, _ = server.app.flows.summaries()
    return [s.to_json() for s in items]  # as /admin/flows lists them


def _flow(server: ProxyServer, flow_id: str) -> Flow:
    assert server.app.flows is not None
    flow = server.app.flows.get(flow_id)
    assert flow is not None
    return flow


def test_both_legs_of_a_translated_stream_are_captured_and_linked(upstream: Any) -> None:
    with proxied(_config(upstream.url)) as (server, _):
        running = Running(server.url, KEY, server, None)  # type: ignore[arg-type]
        with (
            anthropic.Anthropic(api_key=KEY, base_url=server.url, max_retries=0) as client,
            client.messages.stream(
                model="m", max_tokens=20, messages=[{"role": "user", "content": "hi"}]
            ) as s,
        ):
            assert message_summary(s.get_final_message())["text"] == "t0 t1 t2 t3 "
        raw_client = httpx.post(
            server.url + "/v1/messages",
            json={
                "model": "m",
                "max_tokens": 20,
                "stream": True,
                "messages": [{"role": "user", "content": "hi"}],
            },
            headers={"x-api-key": KEY, "anthropic-version": "2023-06-01"},
        )
        summaries = _flows(server)
        assert len(summaries) == 2
        newest = summaries[0]
        assert newest["client_protocol"] == "anthropic" and newest["upstream"] == "up"
        assert newest["account"] == "main" and newest["status"] == 200
        assert newest["id"] == raw_client.headers["x-request-id"]
        flow = _flow(server, newest["id"])

    # The upstream leg: the exact bytes the upstream wrote, in order, timed.
    sent_upstream = b"".join(c for c in fast_stream_script(N).chunks if isinstance(c, bytes))
    assert flow.upstream_leg.raw() == sent_upstream
    assert flow.upstream_leg.protocol == "openai-chat" and flow.upstream_leg.status == 200
    times = [f.t_ns for f in flow.upstream_leg.frames]
    assert times == sorted(times) and times[0] >= (flow.upstream_leg.sent_ns or 0) > 0
    # The client leg: the exact bytes the client received, every frame with its send time.
    assert flow.client_leg.raw() == raw_client.content
    assert flow.client_leg.protocol == "anthropic" and flow.client_leg.status == 200
    assert all(f.t_ns >= times[0] for f in flow.client_leg.frames)
    # Each text delta the client got is linked to the upstream frame that carried it.
    up_events = leg_events(flow.upstream_leg)
    for event in leg_events(flow.client_leg):
        if event["type"] != "text_delta":
            continue
        frame = flow.client_leg.frames[event["frame"]]
        (source,) = frame.sources
        texts = [e["text"] for e in up_events if e["frame"] == source and e["type"] == "text_delta"]
        assert texts == [event["text"]]
    # The request as received and as sent on, secrets masked.
    assert dict(flow.request.headers)["x-api-key"] == "…" + KEY[-4:]
    assert json.loads(flow.request.body)["model"] == "m"
    assert flow.upstream_request is not None
    assert flow.upstream_request.url == upstream.url + "/v1/chat/completions"
    assert dict(flow.upstream_request.headers)["authorization"] == "Bearer …" + UPSTREAM_KEY[-4:]
    assert json.loads(flow.upstream_request.body)["messages"] == [{"role": "user", "content": "hi"}]
    assert [a.failure_class for a in flow.info.attempts] == ["ok"]
    assert running.url  # (the admin API is tested below)


def test_passthrough_legs_are_byte_identical(upstream: Any) -> None:
    with proxied(_config(upstream.url, mode="passthrough")) as (server, _):
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]}
        r = httpx.post(server.url + "/v1/chat/completions", json=body, headers={"x-api-key": KEY})
        (summary,) = _flows(server)
        flow = _flow(server, summary["id"])
    assert flow.client_leg.raw() == flow.upstream_leg.raw() == r.content
    assert [f.sources for f in flow.client_leg.frames] == [
        (i,) for i in range(len(flow.upstream_leg.frames))
    ]


def test_non_streaming_requests_are_flows_and_refused_ones_are_not(upstream: Any) -> None:
    # A body that is not JSON is turned away at the door: counted as a refusal, never a
    # flow (a flood of them must not push real flows out of retention).
    upstream.route(
        "POST",
        "/v1/chat/completions",
        lambda req: (
            fast_stream_script(N) if req.json.get("stream") else Script(body_json={"choices": []})
        ),
    )
    with proxied(_config(upstream.url)) as (server, _):
        ok = httpx.post(
            server.url + "/v1/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "x"}]},
            headers={"x-api-key": KEY},
        )
        bad = httpx.post(
            server.url + "/v1/chat/completions", content=b"{not json", headers={"x-api-key": KEY}
        )
        flows = {f["id"]: f for f in _flows(server)}
        body_flow = _flow(server, ok.headers["x-request-id"])
        assert server.app.flows is not None
        bad_flow = server.app.flows.get(bad.headers["x-request-id"])
        refusals = server.app.refusals.recent()
    assert flows[ok.headers["x-request-id"]]["status"] == 200
    assert body_flow.client_leg.body == ok.content and body_flow.client_leg.frames == []
    assert bad.status_code == 400 and bad_flow is None
    assert bad.headers["x-request-id"] not in flows and len(flows) == 1
    assert [(r.reason, r.status, r.path) for r in refusals] == [
        ("not-json", 400, "/v1/chat/completions")
    ]


def _leak(data: bytes) -> bool:
    return UPSTREAM_KEY.encode() in data or KEY.encode() in data


def test_a_planted_key_is_in_no_stored_byte_and_no_export(tmp_path: Path) -> None:
    # The upstream echoes its key in the stream's text, and the client sends it in its
    # own prompt: both must be masked in the flow, the database and every export.
    def echoing(req: RecordedRequest) -> Script:
        frames = fast_stream_script(2).chunks
        leak = {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "m",
            "choices": [
                {"index": 0, "delta": {"content": f"key={UPSTREAM_KEY}"}, "finish_reason": None}
            ],
        }
        return Script(
            chunks=[frames[0], b"data: " + json.dumps(leak).encode() + b"\n\n", *frames[1:]]
        )

    db = tmp_path / "flows.sqlite3"
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", echoing)
        with proxied(_config(up.url), capture_path=db) as (server, _):
            body = {
                "model": "m",
                "stream": True,
                "messages": [{"role": "user", "content": f"my key {KEY}"}],
            }
            r = httpx.post(
                server.url + "/v1/chat/completions",
                json=body,
                headers={"authorization": f"Bearer {KEY}"},
            )
            assert b"key=" in r.content
            (summary,) = _flows(server)
            running = Running(server.url, KEY, server, None)  # type: ignore[arg-type]
            views = [
                _admin(running, f"/admin/flows/{summary['id']}").content,
                _admin(running, f"/admin/flows/{summary['id']}/client.sse").content,
                _admin(running, f"/admin/flows/{summary['id']}/upstream.sse").content,
                _admin(running, f"/admin/flows/{summary['id']}.har").content,
                _admin(running, "/admin/flows").content,
            ]
            flow = _flow(server, summary["id"])
    masked = b"key=" + b"*" * (len(UPSTREAM_KEY) - 4) + b"zzzz"  # masked in place
    assert masked in flow.upstream_leg.raw()
    for data in views:
        assert not _leak(data)
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert stored and not _leak(stored)


def test_retention_keeps_the_newest_flows_within_count_and_size(upstream: Any) -> None:
    with proxied(_config(upstream.url, max_flows=3)) as (server, _):
        ids = []
        for i in range(5):
            body = {
                "model": "m",
                "stream": True,
                "messages": [{"role": "user", "content": f"q{i}"}],
            }
            r = httpx.post(
                server.url + "/v1/chat/completions", json=body, headers={"x-api-key": KEY}
            )
            ids.append(r.headers["x-request-id"])
        kept = [f["id"] for f in _flows(server)]
    assert kept == ids[:1:-1]  # the newest three, newest first

    big = "x" * 40_000
    with proxied(_config(upstream.url, max_megabytes=0.1)) as (server, _):
        for i in range(5):
            body = {
                "model": "m",
                "stream": True,
                "messages": [{"role": "user", "content": big + str(i)}],
            }
            httpx.post(server.url + "/v1/chat/completions", json=body, headers={"x-api-key": KEY})
        kept = _flows(server)
        assert server.app.flows is not None
        assert server.app.flows.stored_bytes() <= 0.1 * 1024 * 1024
    assert 1 <= len(kept) < 5


@pytest.mark.parametrize(
    ("mode", "path", "blobs"),
    [
        ("passthrough", "/v1/chat/completions", [3]),
        ("repair", "/v1/chat/completions", [3]),
        ("repair", "/v1/messages", [3, 3]),
    ],
    ids=["passthrough", "repair", "translated"],
)
def test_bodies_are_stored_once(
    upstream: Any, tmp_path: Path, mode: str, path: str, blobs: list[int]
) -> None:
    db = tmp_path / "flows.sqlite3"
    with proxied(_config(upstream.url, mode=mode), capture_path=db) as (server, _):
        body = {
            "model": "m",
            "stream": True,
            "max_tokens": 50,
            "messages": [{"role": "user", "content": "same " * 2000}],
        }
        for _ in range(3):
            httpx.post(server.url + path, json=body, headers={"x-api-key": KEY})
        assert len(_flows(server)) == 3
    with sqlite3.connect(db) as conn:
        refs = conn.execute("SELECT refs FROM blobs WHERE LENGTH(data) > 5000").fetchall()
    # The client's body and the body sent upstream, each the same in all three flows:
    # stored once and used three times. With one protocol on both sides the client's
    # body goes on as the same bytes in either mode (one blob for both); a translation
    # sends another request (two blobs).
    assert sorted(r for (r,) in refs) == blobs


def test_the_admin_api_lists_shows_exports_and_clears(upstream: Any) -> None:
    with proxied(_config(upstream.url)) as (server, _):
        running = Running(server.url, KEY, server, None)  # type: ignore[arg-type]
        for _ in range(3):
            body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]}
            httpx.post(server.url + "/v1/chat/completions", json=body, headers={"x-api-key": KEY})
        _flows(server)
        page = _admin(running, "/admin/flows?offset=1&limit=1").json()
        assert page["total"] == 3 and len(page["flows"]) == 1
        flow_id = page["flows"][0]["id"]
        detail = _admin(running, f"/admin/flows/{flow_id}").json()
        assert detail["id"] == flow_id
        texts = [e["text"] for e in detail["legs"]["client"]["events"] if e["type"] == "text_delta"]
        assert "".join(texts) == "t0 t1 t2 t3 "
        timing = detail["legs"]["client"]["timing"]
        assert timing["frames"] == len(detail["legs"]["client"]["frames"])
        # This client asked for no usage: the 4 tokens are counted from its deltas.
        assert timing["output_tokens"] == 4 and timing["tokens_estimated"] is True
        up_timing = detail["legs"]["upstream"]["timing"]
        assert up_timing["output_tokens"] == 4 and up_timing["tokens_estimated"] is False
        assert detail["proxy_overhead_ms"] is not None and detail["proxy_overhead_ms"] >= 0
        sidecar = _admin(running, f"/admin/flows/{flow_id}/client.sse.timing").json()
        assert len(sidecar) == timing["frames"]
        har = _admin(running, f"/admin/flows/{flow_id}.har").json()
        assert har["log"]["version"] == "1.2" and len(har["log"]["entries"]) == 2
        client_sse = _admin(running, f"/admin/flows/{flow_id}/client.sse")
        assert client_sse.headers["content-type"] == "text/event-stream"
        assert SSEDecoder().feed(client_sse.content, 0)[-1].data == "[DONE]"
        assert _admin(running, "/admin/flows/nope").status_code == 404
        assert _admin(running, f"/admin/flows/{flow_id}/sideways.sse").status_code == 404
        assert _admin(running, "/admin/flows?limit=x").status_code == 400
        cleared = httpx.delete(server.url + "/admin/flows", headers={"x-api-key": KEY}).json()
        assert cleared == {"deleted": 3}
        assert _admin(running, "/admin/flows").json()["total"] == 0
