"""Frames flow as they come: a paced upstream's first frame reaches
the client within one pace interval, through every translation and in passthrough, and
the captured client leg's time to first byte is that real one.

The upstream sends a real recording (tests/fixtures/openai-chat/oai-py_text_usage_done.sse,
as each upstream kind's protocol writes it): its first frame (the stream's opening: a role
chunk, ``message_start``, ``response.created``, ``chat.start``) at once, the rest
:data:`PACE` seconds later. The proxy used to hold that opening until the first content
came, so a model that opens its stream and then thinks showed the client nothing (or
only keepalives): the role chunk and the first token arrived together, a pace late.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from streamscope.config import OLD_KIND
from streamscope.proxy.paths import ENDPOINTS
from streamscope.wire import SSEDecoder
from tests.proxy.harness import KEY, Running, make_config, proxied
from tests.proxy.matrix_support import KIND_PATH, Case
from tests.proxy.test_relay_streaming import body_for, path_for
from tests.upstream_server import RecordedRequest, Script, run_in_thread

PACE = 0.6  # seconds between the upstream's first frame and the next
SOURCE = "openai-chat/oai-py_text_usage_done.sse"
KINDS = ("openai", "anthropic", "responses", "lmstudio")
CLIENTS = {protocol: path for path, protocol in ENDPOINTS.items()}  # client -> endpoint
CASES = {
    kind: Case(kind, kind, f"up-{kind}", SOURCE, f"paced-{kind}", f"paced-{kind}", ())
    for kind in KINDS
}
PASSTHROUGH = {"openai": "openai-chat", "anthropic": "anthropic", "responses": "responses"}


def _paced(request: RecordedRequest) -> Script:
    model = str((request.json or {}).get("model", ""))
    case = CASES[model.removeprefix("paced-").removesuffix("-pt")]
    # The pause after the first frame is the one that tells: a proxy holding the
    # opening sends it with what follows, a pace late (the rest come at once).
    first, *rest = case.chunks
    while first.startswith(b":") and rest:  # (a comment of the translation: with the frame)
        first += rest.pop(0)
    return Script(chunks=[first, PACE, *rest])


@pytest.fixture(scope="module")
def running() -> Iterator[Running]:
    with run_in_thread() as up:
        for path in KIND_PATH.values():
            up.route("POST", path, _paced)
        upstreams: list[dict[str, Any]] = []
        for kind in KINDS:
            base = up.url + ("/v1" if kind in ("openai", "responses") else "")
            account = [{"name": "a", "api_key": "sk-upstream-paced"}]
            upstreams.append(
                {
                    "name": f"up-{kind}",
                    "protocol": OLD_KIND.get(kind, kind),
                    "base_url": base,
                    "accounts": account,
                }
                | {"models": [f"paced-{kind}"]}
            )
            if kind in PASSTHROUGH:
                upstreams.append(
                    {
                        "name": f"pt-{kind}",
                        "protocol": OLD_KIND.get(kind, kind),
                        "base_url": base,
                        "mode": "passthrough",
                    }
                    | {"accounts": account, "models": [f"paced-{kind}-pt"]}
                )
        # keepalives every 5 s: none within the first pace, so what arrives is a frame
        with proxied(make_config(upstreams, keepalive_seconds=5.0)) as proxy:
            yield proxy


def _first_frame_after(running: Running, client: str, model: str) -> tuple[float, str]:
    """Seconds from the request to the client's first SSE frame (not a comment), and the
    request id."""
    body = body_for(client, model)
    headers = {"authorization": f"Bearer {KEY}"}
    decoder = SSEDecoder()
    with httpx.Client(timeout=30) as http:
        t0 = time.monotonic()
        url = running.url + path_for(client, CLIENTS[client], model)
        with http.stream("POST", url, json=body, headers=headers) as r:
            assert r.status_code == 200, r.read()
            first = None
            for chunk in r.iter_raw():  # read to the end: the flow completes
                frames = decoder.feed(chunk, time.monotonic_ns())
                if first is None and any(not f.is_comment_only for f in frames):
                    first = time.monotonic() - t0
            assert first is not None, "no frame at all"
            return first, r.headers["x-request-id"]


PAIRS = [(c, k, False) for c in CLIENTS for k in KINDS] + [
    (p, k, True) for k, p in PASSTHROUGH.items()
]


@pytest.mark.parametrize(
    "client,kind,passthrough", PAIRS, ids=[f"{c}<-{k}{'-pt' if p else ''}" for c, k, p in PAIRS]
)
def test_the_first_frame_arrives_within_one_pace(
    running: Running, client: str, kind: str, passthrough: bool
) -> None:
    model = f"paced-{kind}" + ("-pt" if passthrough else "")
    first, flow_id = _first_frame_after(running, client, model)
    assert first < PACE, f"the first frame came after {first:.3f} s (pace {PACE} s)"
    flows = running.server.app.flows
    assert flows is not None
    flows.flush()
    flow = flows.get(flow_id)
    assert flow is not None
    # The captured client leg: its first frame went out as the upstream's first came in.
    up_first = flow.upstream_leg.frames[0].t_ns
    client_first = flow.client_leg.frames[0].t_ns
    assert client_first - up_first < PACE * 1e9 / 2


SLOW_FIRST = 2.0  # seconds the upstream keeps its first frame back (headers at once)


@pytest.mark.parametrize("window", [0.0, 0.4])
def test_a_slow_first_frame_starts_the_stream_within_the_commit_window(window: float) -> None:
    # Bounded and configurable: the proxy reads the upstream's first frame before it
    # commits (so a failure there can go to another account), but a streaming client
    # gets its stream started (headers and a keepalive) after commit_window_seconds.
    case = CASES["openai"]

    def slow(request: RecordedRequest) -> Script:
        return Script(chunks=[SLOW_FIRST, *case.chunks])

    with run_in_thread() as up:
        up.route("POST", KIND_PATH["openai"], slow)
        upstream = {
            "name": "up",
            "protocol": "openai-chat",
            "base_url": up.url + "/v1",
            "accounts": [{"name": "a", "api_key": "sk-upstream-paced"}],
            "models": ["slow"],
        }
        config = make_config([upstream], keepalive_seconds=5.0, commit_window_seconds=window)
        with proxied(config) as running, httpx.Client(timeout=30) as http:
            body = body_for("openai-chat", "slow")
            headers = {"authorization": f"Bearer {KEY}"}
            t0 = time.monotonic()
            with http.stream(
                "POST", running.url + CLIENTS["openai-chat"], json=body, headers=headers
            ) as r:
                started = time.monotonic() - t0
                arrivals = [(time.monotonic() - t0, chunk) for chunk in r.iter_raw()]
    assert r.status_code == 200 and "text/event-stream" in r.headers["content-type"]
    assert started < window + 0.5, started
    first_at, first = arrivals[0]
    assert first.startswith(b": keepalive") and first_at < window + 0.5, arrivals[0]
    data_at = next(t for t, c in arrivals if b"data:" in c)
    assert data_at >= SLOW_FIRST - 0.1  # the stream itself when the upstream sent it
    assert b"data: [DONE]" in b"".join(c for _, c in arrivals)


@pytest.mark.parametrize("kind", KINDS)
def test_a_gemini_array_streams_first_element_arrives_within_one_pace(
    running: Running, kind: str
) -> None:
    # (no ?alt=sse: one JSON array, its first element the stream's opening)
    path = path_for("gemini", CLIENTS["gemini"], f"paced-{kind}").removesuffix("?alt=sse")
    body = body_for("gemini", f"paced-{kind}")
    headers = {"authorization": f"Bearer {KEY}"}
    with httpx.Client(timeout=30) as http:
        t0 = time.monotonic()
        with http.stream("POST", running.url + path, json=body, headers=headers) as r:
            assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
            arrivals = [(time.monotonic() - t0, chunk) for chunk in r.iter_raw() if chunk]
    first_at, first = arrivals[0]
    assert first.startswith(b'[{"candidates"') and first_at < PACE, arrivals[:2]
    assert len(json.loads(b"".join(c for _, c in arrivals))) > 2
