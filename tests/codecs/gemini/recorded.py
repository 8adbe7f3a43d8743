"""The Gemini recordings of tests/fixtures/gemini, read as their SSE streams.

``.chunks.txt`` files hold one GenerateContentResponse per line (the SSE framing taken
off by the repository they come from); Google frames each as ``data: <json>`` and a
blank line with CRLF line ends, which is how they are framed here. They are not
``.jsonl`` files: ``streamscope.recording`` cannot tell a Gemini stream yet (the
protocol is not registered), and the shared corpus would read them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from streamscope.codecs.gemini import CODEC
from streamscope.findings import Finding
from streamscope.model.events import Event
from streamscope.wire.decoder import decode_all
from streamscope.wire.frame import Frame

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "gemini"
STREAMS = sorted(FIXTURES.glob("*.chunks.txt"))
BODIES = sorted(FIXTURES.glob("*.json"))


def chunks(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def sse_bytes(path: Path) -> bytes:
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    return b"".join(b"data: " + line.encode() + b"\r\n\r\n" for line in lines)


def decode(frames: list[Frame]) -> tuple[list[Event], list[Finding], bool]:
    decoder = CODEC.stream_decoder()
    events = decoder.decode_stream(frames)
    return events, decoder.findings, decoder.complete


def decode_bytes(data: bytes) -> tuple[list[Event], list[Finding], bool]:
    return decode(decode_all(data))


_MADE_UP = re.compile(r"gemini_call_[0-9a-f]+")


def comparable(events: list[Event]) -> list[str]:
    """Events as text, the ids a decoder made up numbered by first appearance (each
    decode makes new ones)."""
    seen: dict[str, str] = {}

    def number(m: re.Match[str]) -> str:
        return seen.setdefault(m[0], f"made-up-{len(seen)}")

    return [_MADE_UP.sub(number, repr(ev)) for ev in events]
