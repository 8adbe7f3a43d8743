"""Writing SSE frames: ``event:``/``data:`` with single-line JSON and ``\\n\\n`` after every frame.

These are the only functions the codecs' encoders use to produce bytes, so the
transport rules of the wire contract (one-line JSON, a blank line after every frame,
comments for keepalive) hold for every protocol at once.
"""

from __future__ import annotations

import re
from typing import Any

from streamscope.wire.jsontext import dumps

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def encode_frame(data: Any, event: str | None = None, event_id: str | None = None) -> bytes:
    """One frame. ``data`` is serialised as compact single-line JSON unless it is a str.

    A str containing line breaks is split over several ``data:`` lines, which a
    spec-conforming decoder joins back with ``\\n``. ``event_id``: its ``id:`` line (what
    a client sends back as ``Last-Event-ID``; no protocol's stream has one).
    """
    if event_id is not None:
        return b"id: %b\n%b" % (event_id.encode(), encode_frame(data, event))
    if not isinstance(data, str):
        # (compact JSON holds no line break: those in its strings are escaped)
        frame = b"data: %b\n\n" % dumps(data)
        return frame if event is None else b"event: %b\n%b" % (event.encode(), frame)
    text = data
    if "\n" in text or "\r" in text:
        body = "".join(f"data: {line}\n" for line in _LINE_BREAK.split(text))
    else:
        body = f"data: {text}\n"
    if event is not None:
        return f"event: {event}\n{body}\n".encode()
    return f"{body}\n".encode()


def encode_comment(text: str = "keepalive") -> bytes:
    """A comment frame, for keepalive during upstream silence."""
    lines = _LINE_BREAK.split(text)
    return ("".join(f": {line}\n" for line in lines) + "\n").encode()


def encode_done() -> bytes:
    """The OpenAI Chat Completions terminator."""
    return b"data: [DONE]\n\n"
