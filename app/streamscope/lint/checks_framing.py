"""Transport checks, the same for every protocol: what the SSE layer saw (re-read from the
frames' exact bytes), the last frame's blank line, JSON spread over several ``data:``
lines, and the Content-Type."""

from __future__ import annotations

import json

from streamscope.findings import Finding
from streamscope.lint.stream import Hit, Observed, counted
from streamscope.model.events import End, MessageStart, PartEnd, Progress
from streamscope.wire import SSEDecoder
from streamscope.wire.frame import Frame

_NOT_CONTENT = (End, MessageStart, PartEnd, Progress)


def wire_findings(frames: list[Frame]) -> list[Finding]:
    """What the SSE decoder notices about these frames' bytes (BOM, invalid UTF-8, unknown
    fields, an unterminated last frame); frame indexes match ``frames``."""
    decoder = SSEDecoder()
    decoder.feed(b"".join(f.raw for f in frames), 0)
    decoder.flush(0)
    return decoder.findings


def content_type_hits(content_type: str | None) -> list[Hit]:
    if content_type is None:
        return []
    mime = content_type.split(";", 1)[0].strip().lower()
    if mime == "text/event-stream":
        return []
    return [Hit("framing.content-type", None, f"Content-Type is {content_type!r}")]


def final_blank_line(obs: Observed) -> list[Hit]:
    """The last frame was never dispatched by a blank line: what does it carry?"""
    if not obs.frames or obs.frames[-1].terminated:
        return []
    last = len(obs.frames) - 1
    carried = [
        type(e).__name__ for i, e in obs.events if i == last and not isinstance(e, _NOT_CONTENT)
    ]
    if carried:
        return [
            Hit(
                "framing.last-frame-lost",
                last,
                f"the stream ends inside its last frame, which carries {', '.join(carried)}",
            )
        ]
    return [Hit("framing.no-final-blank-line", last, "the stream ends inside its last frame")]


def multiline_data(obs: Observed) -> list[Hit]:
    hits: list[int] = []
    for index, frame in enumerate(obs.frames):
        data = frame.data
        if data is not None and "\n" in data:
            try:
                json.loads(data)
            except ValueError:
                continue  # joined frames: the decoder's single-newline finding says so
            hits.append(index)
    return counted("framing.multiline-data", hits, "a JSON payload spans several data: lines")
