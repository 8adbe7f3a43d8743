"""One frame in a few words: what it adds to the answer, not the start of its JSON.

Every OpenAI Chat chunk starts with ``{"id":"chatcmpl-…`` and every Responses event with
``{"type":"response.…``, so the start of a frame's data tells frames apart poorly. The
frame table and ``streamscope probe`` show :func:`frame_preview` instead: the text a
delta adds, the fragment of a tool call's arguments, the reasoning, or for any other
event its own payload in short (``message_start claude-…``, ``finish: stop``,
``usage 12→34``, ``[DONE]``, ``: keepalive``).

It reads ONE frame with no state: the codecs' decoders are state machines (a chat
tool-call fragment after the first carries no name; an Anthropic delta needs its block's
start), so a decoder fed a single frame mid-stream drops or misreads what it carries.
Each codec reads its own frame shapes instead (:meth:`Codec.preview`); this module does
the transport's part (comments, ``[DONE]``, frames joined by single newlines) and falls
back to the data itself for anything no codec knows. It never raises.
"""

from __future__ import annotations

import json

from streamscope.codecs import UnknownProtocol, all_codecs, get_codec
from streamscope.model.events import JSON
from streamscope.wire.frame import Frame


def frame_preview(frame: Frame, protocol: str | None = None) -> str:
    """What ``frame`` carries, in short (a line; may contain line breaks from the text
    itself, which the caller shows as it likes). ``protocol`` selects the reading
    (``openai-chat``, ``anthropic``, ``responses``, ``lmstudio``); None or an unknown
    one reads typed events generically and otherwise shows the data as it is."""
    data = frame.data
    if data is None:
        if frame.comments:
            return ": " + " / ".join(c.strip() for c in frame.comments)
        parts = []
        if frame.id is not None:
            parts.append(f"id: {frame.id}")
        if frame.retry is not None:
            parts.append(f"retry: {frame.retry}")
        if frame.event is not None:
            parts.append(f"event: {frame.event}")
        return "  ".join(parts)
    stripped = data.strip()
    if stripped == "[DONE]":
        return "[DONE]"
    return _data_preview(data, frame.event, protocol, joined=True)


def _data_preview(data: str, event: str | None, protocol: str | None, joined: bool) -> str:
    try:
        payload = json.loads(data)
    except ValueError:
        lines = data.splitlines()
        if joined and len(lines) > 1 and all(map(_is_json, lines)):
            # Frames an upstream separated with a single newline: one SSE event whose
            # lines are each a frame's data (the decoder reads them so, too).
            previews = [_data_preview(line, event, protocol, False) for line in lines]
            return " ⏎ ".join(p for p in previews if p)
        return data
    if not isinstance(payload, dict):
        return "[DONE]" if data.strip() == "[DONE]" else data
    try:
        text = _read(payload, event, protocol)
    except (AttributeError, TypeError, ValueError, KeyError, IndexError):
        text = None  # an odd shape: the data itself says more
    return data if text is None else text


def _read(payload: JSON, event: str | None, protocol: str | None) -> str | None:
    """The protocol's codec reads the payload; with no protocol (or an unknown one) the
    first codec that recognises it does."""
    if protocol is not None:
        try:
            return get_codec(protocol).preview(payload, event)
        except UnknownProtocol:
            pass
    for codec in all_codecs():
        if codec.sniff(payload, event):
            return codec.preview(payload, event)
    return None


def _is_json(line: str) -> bool:
    if line.strip() == "[DONE]":
        return True
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


__all__ = ["frame_preview"]
