"""A Gemini client whose upstream keeps its headers back gets its stream started early
(:class:`~streamscope.proxy.commit.EarlyStart`) with Gemini's keepalive, a chunk it
reads as nothing: before, the early start wrote ``: keepalive`` comments, on which
google-genai raises. Over real sockets, a demo account that waits (fault ``slow``) past
several keepalive intervals before it answers: google-genai gets the whole answer, the
SSE stream holds no comment line, the JSON-array form gets keepalive elements."""

from __future__ import annotations

import json

from streamscope.codecs.gemini.common import KEEPALIVE
from streamscope.config import Config
from tests.proxy.harness import KEY, proxied
from tests.proxy.test_relay_gemini_keepalive import (
    INTERVAL,
    SILENCE,
    Piece,
    gemini_raw,
    genai_text,
    slow_config,
)

ANSWER = 'You said: "hi". This is the StreamScope demo backend.'


def waiting_config() -> Config:
    """The demo's only account waits ``SILENCE`` seconds before it answers."""
    config = slow_config().model_dump(mode="json")
    config["upstreams"][0]["accounts"] = [{"name": "waits", "fault": "slow"}]
    config["proxy"]["api_keys"] = [KEY]  # (dumped masked)
    return Config.model_validate(config)


def _before_answer(pieces: list[Piece]) -> bytes:
    return b"".join(p.body for p in pieces if p.t < SILENCE)


def test_google_genai_reads_an_early_started_stream_whole() -> None:
    with proxied(waiting_config()) as running:
        assert genai_text(running, "demo-chat") == ANSWER


def test_the_early_start_writes_gemini_keepalives_on_sse_and_in_the_array() -> None:
    with proxied(waiting_config()) as running:
        sse = gemini_raw(running, "demo-chat", sse=True)
        array = gemini_raw(running, "demo-chat", sse=False)
    early = _before_answer(sse)
    assert b":" not in early[:1] and b"\n:" not in early
    frames = early.split(b"\r\n\r\n")
    keep = json.dumps(KEEPALIVE, separators=(",", ":")).encode()
    assert sum(f == b"data: " + keep for f in frames) >= int(SILENCE / INTERVAL) - 1, early
    elements = json.loads(b"".join(p.body for p in array))
    said = "".join(
        part.get("text", "")
        for e in elements
        for c in e.get("candidates", [])
        for part in c.get("content", {}).get("parts", [])
    )
    assert said == ANSWER
    assert elements[: int(SILENCE / INTERVAL) - 1] == [KEEPALIVE] * (int(SILENCE / INTERVAL) - 1)
