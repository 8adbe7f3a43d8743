"""Recorded streams on disk: raw SSE bytes, or one JSON payload per line.

``.jsonl`` recordings (as SDK test suites keep them) carry the payloads without SSE
framing. They are framed here the way the protocol frames them on the wire: an
``event:`` line equal to the payload's ``type`` for Anthropic, Responses and LM Studio,
bare ``data:`` lines plus the final ``data: [DONE]`` for OpenAI Chat.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from streamscope.codecs import all_codecs, body_protocol
from streamscope.findings import Finding
from streamscope.wire import SSEDecoder, encode_done, encode_frame
from streamscope.wire.frame import Frame


class RecordingError(ValueError):
    """The bytes are neither an SSE stream nor JSON lines of a known protocol."""


@dataclass(slots=True)
class Recording:
    frames: list[Frame]
    protocol: str
    framing: str  # "sse" or "jsonl"
    findings: list[Finding] = field(default_factory=list)


def _looks_like_jsonl(data: bytes) -> bool:
    first = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
    return first in (b"{", b"[")


def _frames_from_jsonl(data: bytes) -> list[Frame]:
    frames: list[Frame] = []
    for n, line in enumerate(data.decode("utf-8-sig").splitlines(), 1):
        if not line.strip():
            continue
        try:
            payload = json.loads(line)
        except ValueError as exc:
            raise RecordingError(f"line {n} is not JSON: {exc}") from None
        if not isinstance(payload, dict):
            raise RecordingError(f"line {n} is not a JSON object")
        kind = payload.get("type")
        event = kind if isinstance(kind, str) and "object" not in payload else None
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        frames.append(Frame(raw=encode_frame(text, event), arrival_ns=0, event=event, data=text))
    return frames


def _payloads(frame: Frame) -> list[tuple[Any, str | None]]:
    """A frame's JSON payloads: its data, or, for frames an upstream joined with single
    newlines (data that is not JSON), each line that is."""
    data = frame.data
    if data is None or data == "[DONE]":
        return []
    try:
        return [(json.loads(data), frame.event)]
    except ValueError:
        pass
    out: list[tuple[Any, str | None]] = []
    for line in data.split("\n")[:6]:
        try:
            out.append((json.loads(line), None))
        except ValueError:
            continue
    return out


def response_protocol(data: bytes) -> str | None:
    """The protocol whose non-streaming response a whole body is, by its shape (None
    when it is not JSON or no codec says it is theirs)."""
    try:
        body: Any = json.loads(data)
    except ValueError:
        return None
    return body_protocol(body)


def detect_protocol(frames: list[Frame]) -> str | None:
    """The protocol whose codec recognises the first frames with JSON data."""
    checked = 0
    for frame in frames:
        for payload, event in _payloads(frame):
            if not isinstance(payload, dict):
                continue
            for codec in all_codecs():
                if codec.sniff(payload, event):
                    return codec.name
            checked += 1
            if checked >= 5:
                return None
    return None


def read_recording(data: bytes, protocol: str | None = None) -> Recording:
    """Frames of a recording, with its protocol (given, or detected)."""
    if not data.strip():
        raise RecordingError("the file is empty")
    findings: list[Finding] = []
    if _looks_like_jsonl(data):
        frames, framing = _frames_from_jsonl(data), "jsonl"
    else:
        decoder = SSEDecoder()
        frames = decoder.feed(data, 0) + decoder.flush(0)
        findings = decoder.findings
        framing = "sse"
        if not any(f.data is not None for f in frames):
            raise RecordingError("no SSE data frames found (is this an SSE stream?)")
    detected = protocol or detect_protocol(frames)
    if detected is None:
        raise RecordingError("cannot tell which protocol this stream is (use --from)")
    if framing == "jsonl" and detected == "openai-chat":
        if not frames or frames[-1].data != "[DONE]":
            frames.append(Frame(raw=encode_done(), arrival_ns=0, data="[DONE]"))
    return Recording(frames, detected, framing, findings)
