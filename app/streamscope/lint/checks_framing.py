"""Transport checks, the same for every protocol: what the SSE layer saw (re-read from the
frames' exact bytes), the last frame's blank line (and the terminator a client never
sees when it is that frame), JSON spread over several ``data:`` lines, and the
Content-Type."""

from __future__ import annotations

import json

from streamscope.findings import Finding
from streamscope.lint.stream import Hit, Observed, counted
from streamscope.model.events import End, Finish, MessageStart, PartEnd, Progress, Usage
from streamscope.wire import SSEDecoder
from streamscope.wire.frame import Frame

_NOT_CONTENT = (End, MessageStart, PartEnd, Progress)
_END_ONLY = (Finish, Usage)  # losing these leaves the answer whole: not content
TERMINATOR_RULES = {
    "openai-chat": "chat.missing-done",
    "anthropic": "anthropic.missing-message-stop",
    "responses": "responses.missing-terminal",
    "lmstudio": "lmstudio.missing-chat-end",
}
"""Each protocol's rule of a stream without its terminator."""


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
    """The last frame was never dispatched by a blank line: does it carry content (text,
    reasoning, tool calls, an error), or only the end (its usage or finish, or nothing)?"""
    if not obs.frames or obs.frames[-1].terminated:
        return []
    last = len(obs.frames) - 1
    carried = list(
        dict.fromkeys(
            type(e).__name__ for i, e in obs.events if i == last and not isinstance(e, _NOT_CONTENT)
        )
    )
    lost = [name for name in carried if name not in {t.__name__ for t in _END_ONLY}]
    said = "the stream ends inside its last frame"
    hits: list[Hit] = []
    if any(i == last and isinstance(e, End) for i, e in obs.events):
        # The terminator itself is never dispatched: to a client the stream has none.
        hits.append(
            Hit(
                TERMINATOR_RULES[obs.protocol],
                last,
                "the terminator is the last frame, which no blank line ends: a client that "
                "follows the SSE specification never sees it",
            )
        )
    if lost:
        return [
            Hit("framing.last-frame-lost", last, f"{said}, which carries {', '.join(lost)}"),
            *hits,
        ]
    if carried:
        said += f", which carries only {', '.join(carried)}"
    if obs.protocol == "gemini":  # the Google SDKs read lines: it breaks them (rules_gemini)
        return [Hit("gemini.no-final-blank-line", last, said), *hits]
    return [Hit("framing.no-final-blank-line", last, said), *hits]


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
    said = "a JSON payload spans several data: lines"
    if obs.protocol == "gemini":  # @google/genai parses each data: line alone (rules_gemini)
        return counted("gemini.multiline-data", hits, said)
    return counted("framing.multiline-data", hits, said)
