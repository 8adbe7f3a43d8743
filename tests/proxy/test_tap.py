"""The flow's tap: the relay tells it every batch it takes, and stops at the first no.

A stream of a recorded fixture is relayed (``StreamRelay``, in passthrough) from an
answer that hands its frames over in several batches, as network reads do, to a client
``send`` that keeps what it is sent. A tap that takes every batch is told each one with
the chunks it became; :class:`NullTap` is told the first and never again, and the
client's bytes are the same either way; through a real proxy too, with capture on (the
recorder is the tap) or off (no store: the null tap).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

import httpx
import pytest

from streamscope.capture.store import FlowStore
from streamscope.codecs import get_codec
from streamscope.config import Config, ProxyConfig
from streamscope.proxy.exchange_record import Exchange
from streamscope.proxy.relay import StreamRelay
from streamscope.proxy.tap import NULL_TAP, FlowTap, NullTap
from streamscope.translation.pipeline import StreamPipeline
from streamscope.wire import decode_all
from streamscope.wire.frame import Frame
from tests.proxy.harness import KEY, proxied
from tests.support import FIXTURES
from tests.upstream_server import fast_stream_script, run_in_thread

STREAM = FIXTURES / "openai-chat" / "oai-py_finish-length.sse"


class _Answer:
    """An upstream's streamed answer, its frames in batches of ``size``."""

    status = 200
    content_type = "text/event-stream"

    def __init__(self, frames: list[Frame], size: int) -> None:
        self._batches = [frames[i : i + size] for i in range(0, len(frames), size)]

    @property
    def headers(self) -> Mapping[str, str]:
        return {"content-type": self.content_type}

    async def batches(self) -> AsyncIterator[list[Frame]]:
        for batch in self._batches:
            yield batch

    async def read(self, limit: int = 0) -> bytes:
        raise AssertionError("a stream is not read whole")

    async def drain(self) -> None:
        return None


class _Counting(NullTap):
    """The null tap, counting the batches it is offered."""

    __slots__ = ("offered",)

    def __init__(self) -> None:
        self.offered = 0

    def log_batch(self, batch: Sequence[Frame], out: list[bytes], marks: Sequence[int]) -> bool:
        self.offered += 1
        return super().log_batch(batch, out, marks)


class _Keeping:
    """A tap that takes every batch and keeps what it is told."""

    def __init__(self) -> None:
        self.batches: list[tuple[int, int, list[int]]] = []  # frames, chunks, marks
        self.own: list[bytes] = []
        self.messages: list[Any] = []

    def request(
        self, method: str, url: str, headers: list[Any], body: bytes, query: bytes = b""
    ) -> None:
        return None

    def upstream_attempt(self, protocol: str) -> None:
        return None

    def upstream_sent(self, url: str, headers: list[Any], body: bytes) -> None:
        return None

    def upstream_response(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        return None

    def upstream_body_whole(self, body: bytes) -> None:
        return None

    def log_batch(self, batch: Sequence[Frame], out: list[bytes], marks: Sequence[int]) -> bool:
        self.batches.append((len(batch), len(out), list(marks)))
        return True

    def check(self) -> bool:
        return True

    def client_chunks(self, chunks: list[bytes]) -> None:
        self.own += chunks

    def client_message(self, message: Any) -> None:
        self.messages.append(message)


def _relay(tap: FlowTap, size: int) -> tuple[bytes, int]:
    """The client's bytes of the fixture's stream relayed through ``tap``, and how many
    batches the answer had."""
    frames = decode_all(STREAM.read_bytes())
    answer = _Answer(frames, size)
    codec = get_codec("openai-chat")
    exchange = Exchange("r1", "POST", "/v1/chat/completions", tap=tap)
    relay = StreamRelay(
        StreamPipeline(codec, codec, passthrough=True), answer, ProxyConfig(), exchange
    )
    sent: list[bytes] = []

    async def send(message: Any) -> None:
        sent.append(message["body"])

    async def run() -> None:
        await relay.run(send, keepalive=False)
        await relay.finish_upstream()

    asyncio.run(run())
    return b"".join(sent), len(answer._batches)


def test_a_tap_that_takes_frames_is_told_every_batch_and_its_chunks() -> None:
    tap = _Keeping()
    body, batches = _relay(tap, size=2)
    frames = len(decode_all(STREAM.read_bytes()))
    assert batches > 2  # (several reads, as the network makes them)
    assert [n for n, _, _ in tap.batches] == [min(2, frames - i) for i in range(0, frames, 2)]
    for n, chunks, marks in tap.batches:
        assert len(marks) == n  # after each frame, the chunks so far
        assert marks == sorted(marks) and (not marks or marks[-1] == chunks)
    assert body.startswith(b"data: ") and body.rstrip().endswith(b"data: [DONE]")


def test_the_null_tap_is_offered_one_batch_and_the_client_gets_the_same_bytes() -> None:
    counting = _Counting()
    body, batches = _relay(counting, size=2)
    assert batches > 2
    assert counting.offered == 1  # it said no: the relay stopped handing frames over
    kept, _ = _relay(_Keeping(), size=2)
    assert body == kept


def test_the_null_tap_takes_nothing() -> None:
    frames = decode_all(b"data: {}\n\n")
    assert NULL_TAP.log_batch(frames, [b"x"], [1]) is False
    assert NULL_TAP.check() is False
    assert Exchange("r", "POST", "/").tap is NULL_TAP  # a request nobody captures


def _stored(store: FlowStore) -> int:
    """The flows stored, once the one under way is (the app hands it over after the
    client's last byte went out: the test may read before that)."""
    deadline = time.monotonic() + 10
    while True:
        store.settle()  # (what was handed over is written)
        total = store.summaries(0, 10)[1]
        if total or time.monotonic() > deadline:
            return total
        time.sleep(0.02)


@pytest.mark.parametrize("capture", [True, False])
def test_a_stream_through_the_proxy_is_the_same_with_capture_on_or_off(capture: bool) -> None:
    script = fast_stream_script(50)
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", script)
        config = Config.model_validate(
            {
                "proxy": {"host": "127.0.0.1", "port": 0, "api_keys": [KEY]},
                "upstreams": [
                    {
                        "name": "pt",
                        "protocol": "openai-chat",
                        "base_url": f"{up.url}/v1",
                        "mode": "passthrough",
                        "models": ["m"],
                    }
                ],
                "capture": {"enabled": capture},
            }
        )
        with proxied(config) as running:
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
            auth = {"authorization": f"Bearer {KEY}"}
            with httpx.stream(
                "POST", running.v1 + "/chat/completions", json=body, headers=auth, timeout=10
            ) as answer:
                got = b"".join(answer.iter_raw())
            core = running.server.app.core
            assert (core.flows is not None) is capture
            flows = _stored(core.flows) if core.flows is not None else 0
    sent = b"".join(chunk for chunk in script.chunks if isinstance(chunk, bytes))
    assert got == sent  # passthrough: the upstream's bytes, whoever listens
    assert core.in_flight == 0  # the capture opened for the flow was closed
    assert flows == (1 if capture else 0)
