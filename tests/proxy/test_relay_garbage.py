"""A relayed answer leaves no cyclic garbage: what the proxy made for it (the relay, its
pipeline, the upstream response, the exchange) is freed by reference counting when the
flow is stored, not left for the garbage collector.

Garbage in cycles costs the proxy twice: the collector runs more often (the objects
count towards its next pass until it frees them) and each pass walks them. One cycle per
streamed answer (the upstream's end re-raised where the capture reads the stream's tail,
tying that frame, and the relay with it, into the exception's traceback) made capture on
spend ~120 µs a request in the collector at saturation (tests/bench/bench_capacity.py).

Over real sockets (the scriptable upstream, the proxy on its own port, capture on), with
the collector off while the requests run; then one pass that keeps what it finds
(``gc.DEBUG_SAVEALL``) must find nothing of StreamScope's.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterator

import httpx
import pytest

from tests.proxy.harness import Running, proxied
from tests.proxy.test_relay_streaming import (
    CLIENTS,
    ENDPOINT,
    _config,
    body_for,
    recorded,
    scenario,
    scripted_upstream,
    stream,
)
from tests.upstream_server import UpstreamServer, fast_stream_script


@pytest.fixture(scope="module")
def up() -> Iterator[UpstreamServer]:
    with scripted_upstream() as server:
        yield server


@pytest.fixture(scope="module")
def proxy(up: UpstreamServer) -> Iterator[Running]:
    with proxied(_config(up, keepalive_seconds=0, idle_timeout_seconds=5)) as p:
        yield p


def whole(p: Running, client: str, model: str) -> str:
    """A non-streamed request; its request id."""
    with httpx.Client(timeout=10) as http:
        r = http.post(
            p.url + ENDPOINT[client],
            json=body_for(client, model, stream=False),
            headers={"authorization": f"Bearer {p.key}"},
        )
    assert r.status_code == 200, r.text
    return r.headers["x-request-id"]


def ours_left_in_cycles() -> Counter[str]:
    """StreamScope's objects that only the collector would free, by type."""
    counts: Counter[str] = Counter()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        for thing in gc.garbage:
            module = getattr(type(thing), "__module__", "") or ""
            if module.startswith("streamscope"):
                counts[type(thing).__name__] += 1
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return counts


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("upstream", ["openai", "anthropic", "openai-pt"])
@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
def test_an_answer_leaves_no_garbage_in_cycles(
    proxy: Running, client: str, upstream: str, streamed: bool
) -> None:
    protocol = "anthropic" if upstream == "anthropic" else "openai-chat"
    model = f"{upstream}/{scenario(fast_stream_script(5, protocol))}"
    stream(proxy, client, model)  # (a first answer: what the first one loads is loaded)
    gc.collect()
    gc.disable()
    try:
        ids = []
        for _ in range(3):
            if streamed:
                got = stream(proxy, client, model)
                assert got.status == 200
                ids.append(got.headers["x-request-id"])
            else:
                ids.append(whole(proxy, client, model))
        for request_id in ids:  # the flow stored: the proxy is done with the request
            recorded(proxy, request_id)
        counts = ours_left_in_cycles()
    finally:
        gc.enable()
    assert not counts, f"left in cycles: {dict(counts)}"


def test_the_check_finds_a_cycle_that_is_there() -> None:
    """The check itself: an object of StreamScope's in a cycle is found."""
    from streamscope.capture.recorder import FlowRecorder

    gc.collect()
    gc.disable()
    try:
        recorder = FlowRecorder("cycle", "openai-chat", 1024)
        recorder.request_headers = [recorder]  # (a cycle: only the collector frees it)
        del recorder
        counts = ours_left_in_cycles()
    finally:
        gc.enable()
    assert counts["FlowRecorder"] == 1
