"""Checks of a Gemini stream that its decoder does not make alone: Google sends each chunk
as one ``data: `` line and a blank line, and the Google SDKs read lines, not SSE events,
so a comment, an ``event:`` or ``id:`` line, or ``data:`` with no space (all legal SSE)
break them; and a stream that ends before a ``finishReason`` (the decoder's
``missing-terminator``) is one rule when it made a function call and another when it
did not, since Gemini CLI runs such a call and fails on any other such stream
(``rules_gemini``)."""

from __future__ import annotations

from streamscope.lint.stream import Hit, Observed, counted
from streamscope.model.events import ToolCallStart


def _bare_data(raw: bytes) -> bool:
    """A ``data:`` line with no space after the colon (``data:{…}``)."""
    return any(
        line.startswith(b"data:") and not line.startswith(b"data: ")
        for line in raw.lstrip(b"\xef\xbb\xbf").splitlines()
    )


def unfinished(obs: Observed) -> list[Hit]:
    if "missing-terminator" not in obs.codes:
        return []
    said = "the stream ended before a chunk with a finishReason"
    if any(isinstance(e, ToolCallStart) for _, e in obs.events):
        return [Hit("gemini.call-without-finish-reason", None, f"{said}, after a function call")]
    return [Hit("gemini.missing-finish-reason", None, said)]


def check(obs: Observed) -> list[Hit]:
    comments = [i for i, f in enumerate(obs.frames) if f.comments]
    fields = [i for i, f in enumerate(obs.frames) if f.event is not None or f.id is not None]
    bare = [i for i, f in enumerate(obs.frames) if _bare_data(f.raw)]
    return [
        *counted("gemini.sse-comment", comments, "a comment line (an SSE keepalive)"),
        *counted("gemini.sse-fields", fields, "an `event:` or `id:` line"),
        *counted("gemini.data-without-space", bare, "`data:` with no space after it"),
        *unfinished(obs),
    ]
