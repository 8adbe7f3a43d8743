"""demo-slow through the proxy when the keepalive interval is as long as its silence or
longer (a long silence before the first token, longer than the keepalive
interval): the silence grows to the interval + 1 s, so the client still sees a
keepalive before the first token."""

from __future__ import annotations

import time

import httpx

from streamscope.wire import SSEDecoder
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import proxied

KEEPALIVE = 0.3
SLOW = 0.1  # below the keepalive: demo-slow is silent for KEEPALIVE + 1 s instead


def test_demo_slow_outlasts_a_keepalive_longer_than_slow_seconds() -> None:
    config = demo_config(keepalive=KEEPALIVE, slow_seconds=SLOW)
    body = {"model": "demo-slow", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with proxied(config) as running:
        started = time.monotonic()
        with httpx.stream(
            "POST",
            running.v1 + "/chat/completions",
            json=body,
            headers={"authorization": f"Bearer {running.key}"},
            timeout=10,
        ) as r:
            assert r.status_code == 200
            decoder = SSEDecoder()
            frames = []
            first_data_at = None
            for chunk in r.iter_raw():
                for frame in decoder.feed(chunk, time.monotonic_ns()):
                    if frame.data is not None and first_data_at is None:
                        first_data_at = time.monotonic() - started
                    frames.append(frame)
    assert first_data_at is not None
    assert first_data_at >= KEEPALIVE + 1.0  # not SLOW: that is shorter than a keepalive
    first_data = next(i for i, f in enumerate(frames) if f.data is not None)
    keepalives = [f for f in frames[:first_data] if f.comments == ("keepalive",)]
    assert len(keepalives) >= 3  # 1.3 s of silence, a keepalive every 0.3 s
    assert frames[-1].data == "[DONE]"
    assert any(f.data and "Sorry" in f.data for f in frames)
