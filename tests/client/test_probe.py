"""``streamscope probe``'s request (:func:`streamscope.client.probe.probe`) against the proxy
and its demo backend on a real port: the request a protocol's clients send, each frame
reported as it arrives, the answer read; URLs taken as each SDK takes its base URL. The
command's printing is tests/cli/test_probe.py's."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from streamscope.client.probe import probe
from streamscope.wire.frame import Frame
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import KEY, Running, proxied

BASE = {"openai-chat": "/v1", "responses": "/v1", "anthropic": "", "lmstudio": "", "gemini": ""}
ENDPOINT = {
    "openai-chat": "/v1/chat/completions",
    "responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "lmstudio": "/api/v1/chat",
    "gemini": "/v1beta/models/demo-chat:streamGenerateContent?alt=sse",
}


@pytest.fixture(scope="module")
def running() -> Iterator[Running]:
    with proxied(demo_config()) as running:
        yield running


@pytest.mark.parametrize("protocol", list(BASE))
async def test_a_probe_reports_each_frame_and_reads_the_answer(
    running: Running, protocol: str
) -> None:
    seen: list[tuple[int, float, Frame]] = []
    result = await probe(
        running.url + BASE[protocol],
        protocol,
        "demo-chat",
        "ping",
        KEY,
        max_tokens=64,
        on_frame=lambda i, ms, f: seen.append((i, ms, f)),
    )
    assert result.status == "done" and result.http_status == 200
    assert result.url == running.url + ENDPOINT[protocol]
    assert [i for i, _, _ in seen] == list(range(len(seen))) and result.frames == len(seen)
    times = [ms for _, ms, _ in seen]
    assert times == sorted(times) and times[0] >= 0
    assert b"".join(f.raw for _, _, f in seen) == b"".join(f.raw for f in result.leg.frames)
    assert result.response is not None
    assert result.response.choice(0).text.startswith('You said: "ping".')
    assert result.lint is not None and not result.lint.errors


async def test_the_request_streams_asks_for_usage_and_bounds_the_tokens(running: Running) -> None:
    result = await probe(running.v1, "openai-chat", "demo-chat", "hi", KEY, max_tokens=7)
    body = result.request_body
    assert body is not None
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert 7 in (body.get("max_tokens"), body.get("max_completion_tokens"))
    assert result.response is not None and result.response.usage is not None


async def test_a_url_that_names_the_endpoint_is_used_as_it_is(running: Running) -> None:
    url = running.url + "/v1/messages"
    result = await probe(url, "anthropic", "demo-chat", "hi", KEY)
    assert result.url == url and result.http_status == 200


async def test_nothing_listening_is_a_result_without_status_not_an_exception() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    result = await probe(url, "openai-chat", "m", "hi")
    assert result.http_status is None and result.response is None
    assert result.error and result.status.startswith("error")


async def test_an_unknown_protocol_is_refused_before_anything_is_sent() -> None:
    with pytest.raises(ValueError, match="bedrock"):
        await probe("http://127.0.0.1:9/v1", "bedrock", "m")
