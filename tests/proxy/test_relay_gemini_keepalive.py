"""A Gemini client's keepalive is a chunk it reads as nothing, not an SSE comment.

Google's SDKs read a Gemini stream by lines, and google-genai raises on a comment line
("Failed to parse response as JSON. Raw response: : keepalive"): a Gemini client of an
upstream that thinks longer than the keepalive interval failed. Over real sockets, with
the demo's ``demo-slow`` (silent past several keepalive intervals after its stream
opened: the relay's watchdog writes the keepalives), google-genai gets the whole answer;
the SSE stream holds no comment line and its keepalives are the codec's keepalive chunk;
the JSON-array form (no ``alt=sse``) gets them as array elements, its bytes one JSON array;
a Chat client of the same stream still gets ``: keepalive`` comments.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import httpx
from google import genai
from google.genai import types

from streamscope.codecs import get_codec
from streamscope.codecs.gemini.common import KEEPALIVE
from streamscope.config import Config
from streamscope.wire import SSEDecoder
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import Running, proxied

INTERVAL = 0.3
# demo-slow's wait: seven keepalive intervals, where the checks ask for three keepalives,
# so that a busy machine's late timers (the relay's watchdog and the demo's wait are both
# the loop's) still leave them room
SILENCE = 2.1
TEXT = "Sorry for the wait: this answer started after a long silence on purpose."


def slow_config() -> Config:
    return demo_config(keepalive=INTERVAL, slow_seconds=SILENCE)


def genai_text(running: Running, model: str) -> str:
    client = genai.Client(api_key=running.key, http_options=types.HttpOptions(base_url=running.url))
    chunks = client.models.generate_content_stream(model=model, contents="hi")
    return "".join(chunk.text or "" for chunk in chunks)


@dataclass
class Piece:
    t: float  # seconds since the request
    body: bytes


def gemini_raw(running: Running, model: str, sse: bool) -> list[Piece]:
    """The answer's bytes as they came, each read with its time."""
    path = f"/v1beta/models/{model}:streamGenerateContent" + ("?alt=sse" if sse else "")
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    pieces = []
    started = time.monotonic()
    with httpx.stream(
        "POST",
        running.url + path,
        json=body,
        headers={"x-goog-api-key": running.key},
        timeout=20,
    ) as r:
        assert r.status_code == 200, r.read()
        for chunk in r.iter_raw():
            pieces.append(Piece(time.monotonic() - started, chunk))
    return pieces


def check_sse_keepalives(pieces: list[Piece]) -> None:
    """No comment line; before the first text, keepalive chunks spread over the silence."""
    raw = b"".join(p.body for p in pieces)
    assert not any(line.startswith(b":") for line in raw.splitlines()), raw[:300]
    decoder = SSEDecoder()
    frames = [f for p in pieces for f in decoder.feed(p.body, round(p.t * 1e9))]
    keep = get_codec("gemini").keepalive_frame()
    payloads = [json.loads(f.data) for f in frames if f.data is not None]
    first_text = next(i for i, f in enumerate(frames) if f.data and "Sorry" in f.data)
    keepalives = [f for f in frames[:first_text] if f.raw == keep]
    assert len(keepalives) >= 3, [f.raw for f in frames[:first_text]]
    times = [f.arrival_ns / 1e9 for f in keepalives]
    assert times[-1] - times[0] >= 2 * INTERVAL * 0.9  # spread over the silence
    text = "".join(
        part.get("text", "")
        for p in payloads
        for c in p.get("candidates", [])
        for part in c.get("content", {}).get("parts", [])
    )
    assert text == TEXT


def check_array_keepalives(pieces: list[Piece]) -> None:
    """One JSON array; keepalive elements came, each in its own read, before the text."""
    elements = json.loads(b"".join(p.body for p in pieces))
    assert isinstance(elements, list)
    first_text = next(i for i, e in enumerate(elements) if "Sorry" in json.dumps(e))
    assert elements[:first_text].count(KEEPALIVE) >= 3, elements[:first_text]
    early = [p for p in pieces if b"Sorry" not in p.body and p.t < SILENCE]
    assert len(early) >= 3  # the array's keepalives went out as the silence went on
    text = "".join(
        part.get("text", "")
        for e in elements
        for c in e.get("candidates", [])
        for part in c.get("content", {}).get("parts", [])
    )
    assert text == TEXT


def test_google_genai_reads_a_slow_stream_whole_through_keepalives() -> None:
    with proxied(slow_config()) as running:
        assert genai_text(running, "demo-slow") == TEXT


def test_gemini_keepalives_are_chunks_on_sse_and_elements_in_the_array() -> None:
    with proxied(slow_config()) as running:
        check_sse_keepalives(gemini_raw(running, "demo-slow", sse=True))
        check_array_keepalives(gemini_raw(running, "demo-slow", sse=False))


def test_a_chat_client_still_gets_keepalive_comments() -> None:
    body = {"model": "demo-slow", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with (
        proxied(slow_config()) as running,
        httpx.stream(
            "POST",
            running.v1 + "/chat/completions",
            json=body,
            headers={"authorization": f"Bearer {running.key}"},
            timeout=20,
        ) as r,
    ):
        raw = r.read()
    frames = SSEDecoder().feed(raw, 0)
    assert sum(f.comments == ("keepalive",) for f in frames) >= 3
    assert frames[-1].data == "[DONE]"
