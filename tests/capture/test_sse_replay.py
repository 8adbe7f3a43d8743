"""An ``.sse`` export (app/streamscope/capture/sse.py) replayed through a real proxy: dropped
into a replay folder of the demo upstream, an exported leg plays byte for byte at the
recorded pace (passthrough, its ``.timing`` sidecar read), the proxy's capture of it
exports the same again, and it assembles in an official SDK (repair)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from streamscope.analysis.reading import LegReading
from streamscope.analysis.timing import overhead_ms
from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.capture.har import to_har
from streamscope.capture.sse import export_sse, export_timing
from streamscope.recording import read_recording
from streamscope.translation.offline import translate_frames
from tests.capture.test_har import (
    ANTHROPIC_TOOL,
    CHAT_SSE,
    JSON,
    MS,
    RESPONSES_TEXT,
    _json,
    _round_trip,
    har_problems,
)
from tests.proxy.demo_support import ask, demo_config
from tests.proxy.harness import Running, proxied
from tests.support import load
from tests.translation.sdk_expect import expected, got

# -- an export replayed through a real proxy -------------------------------------------------

SDK_CASES = {  # client -> (recording, protocol)
    "chat": (CHAT_SSE, "openai-chat"),
    "messages": (ANTHROPIC_TOOL, "anthropic"),
    "responses": (RESPONSES_TEXT, "responses"),
}
ENDPOINT = {
    "openai-chat": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "responses": "/v1/responses",
}
SPAN_S = 0.15  # the recorded stream lasts this long: the replay must take as long


def _paced_leg(path: Path) -> Leg:
    rec = load(path)
    step = SPAN_S * 1e9 / (len(rec.frames) - 1)
    frames = [CapturedFrame(f.raw, 3 * MS + round(i * step)) for i, f in enumerate(rec.frames)]
    return Leg(rec.protocol, 200, [("content-type", "text/event-stream")], frames=frames)


@pytest.fixture(scope="module")
def replay_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("replays")
    for client, (path, _) in SDK_CASES.items():
        leg = _paced_leg(path)
        (folder / f"export-{client}.sse").write_bytes(export_sse(leg))
        (folder / f"export-{client}.sse.timing").write_bytes(export_timing(leg))
    return folder


def _proxy(replay_dir: Path, mode: str) -> Iterator[Running]:
    config = demo_config(keepalive=5.0)
    config.upstreams[0].mode = mode  # type: ignore[assignment]
    config.upstreams[0].demo.replay_dirs = [str(replay_dir)]
    with proxied(config) as running:
        yield running


@pytest.fixture(scope="module")
def passthrough(replay_dir: Path) -> Iterator[Running]:
    yield from _proxy(replay_dir, "passthrough")


@pytest.fixture(scope="module")
def repair(replay_dir: Path) -> Iterator[Running]:
    yield from _proxy(replay_dir, "repair")


def _post(running: Running, protocol: str, model: str) -> httpx.Response:
    body: JSON = {"model": model, "stream": True, "max_tokens": 50}
    body |= {"messages": [{"role": "user", "content": "hi"}], "input": "hi"}
    if protocol == "responses":
        del body["messages"], body["max_tokens"]
    elif protocol != "anthropic":
        del body["input"]
    headers = {"authorization": f"Bearer {running.key}"}
    return httpx.post(running.url + ENDPOINT[protocol], json=body, headers=headers, timeout=30)


@pytest.mark.parametrize("client", list(SDK_CASES))
def test_an_export_replays_byte_for_byte_at_its_pace(
    passthrough: Running, replay_dir: Path, client: str
) -> None:
    path, protocol = SDK_CASES[client]
    exported = (replay_dir / f"export-{client}.sse").read_bytes()
    began = time.monotonic()
    response = _post(passthrough, protocol, f"replay/export-{client}")
    elapsed = time.monotonic() - began
    assert response.status_code == 200
    assert response.content == exported
    assert elapsed >= SPAN_S * 0.9  # the .timing sidecar was read (else: no pacing at all)


def test_a_captured_replay_exports_again(passthrough: Running, replay_dir: Path) -> None:
    # The proxy's capture of a replayed export: its upstream leg is the export again, at
    # about the recorded pace, and the flow survives a HAR round trip exactly.
    exported = (replay_dir / "export-messages.sse").read_bytes()
    response = _post(passthrough, "anthropic", "replay/export-messages")
    flows = passthrough.server.app.flows
    assert flows is not None
    flows.flush()
    flow = flows.get(response.headers["x-request-id"])
    assert flow is not None
    assert export_sse(flow.upstream_leg) == exported == export_sse(flow.client_leg)
    timing = LegReading(flow.upstream_leg).timing
    assert timing.total_ms is not None and timing.first_byte_ms is not None
    assert timing.total_ms - timing.first_byte_ms >= SPAN_S * 1e3 * 0.9
    assert len(json.loads(export_timing(flow.upstream_leg))) == len(read_recording(exported).frames)
    assert _json(_round_trip([flow])) == _json([flow])
    assert har_problems(to_har([flow])) == []
    overhead = overhead_ms(
        timing, LegReading(flow.client_leg).timing
    )  # same clock: the proxy sends after it receives
    assert overhead is not None and 0 <= overhead < 1000


@pytest.mark.parametrize("client", list(SDK_CASES))
def test_an_export_replays_to_the_official_sdk(repair: Running, client: str) -> None:
    path, protocol = SDK_CASES[client]
    rec = load(path)
    _, pipeline = translate_frames(rec.frames, rec.protocol, rec.protocol)
    want = expected(pipeline.assembler.response, protocol)
    assert want["text"] or want["tool_calls"]
    assert got(ask(repair, client, f"replay/export-{client}", stream=True)) == want
