"""Reading a file the user gives back as flows: a HAR log or a raw stream.

:func:`read_flows` tells the two apart by the content type, when it says, else by the
bytes: a JSON object with a ``log`` member is HAR (``har.from_har``: our exports exactly,
other tools' HAR one flow per entry); anything else is a recording for
``sse.import_sse`` (raw SSE, JSON lines, or a whole JSON response body).
"""

from __future__ import annotations

import json

from streamscope.capture.flow import Flow
from streamscope.capture.har import HarError, from_har
from streamscope.capture.sse import import_sse
from streamscope.recording import RecordingError
from streamscope.wire import FrameTooLarge, strictjson

SSE_TYPES = ("text/event-stream", "application/x-ndjson", "application/jsonl", "text/plain")
HAR_TYPE = "application/har+json"
_BLANK = b"\xef\xbb\xbf \t\r\n"


class UnreadableImport(ValueError):
    """The file is neither a HAR log nor a stream that can be read (one line: why)."""


def _har(data: bytes) -> dict[str, object] | None:
    """``data`` as a HAR log if it is a JSON object with a ``log`` member."""
    if data.lstrip(_BLANK)[:1] != b"{":
        return None
    try:
        parsed = json.loads(data.decode("utf-8-sig"))
    except ValueError:  # JSON lines, say (UnicodeDecodeError is a ValueError too)
        return None
    except RecursionError:
        raise UnreadableImport("JSON nested too deeply") from None
    return parsed if isinstance(parsed, dict) and "log" in parsed else None


def read_flows(
    data: bytes, content_type: str | None = None, protocol: str | None = None
) -> list[Flow]:
    """The flows in ``data``. ``content_type`` ``text/event-stream`` (or another stream
    type) reads it as a stream even if it looks like HAR, ``application/har+json`` as HAR
    only. ``protocol``: a raw stream's, when it cannot be detected (HAR entries say
    theirs). Raises :class:`UnreadableImport`."""
    media = (content_type or "").split(";")[0].strip().lower()
    har = None if media in SSE_TYPES else _har(data)
    if har is None and media == HAR_TYPE:
        raise UnreadableImport("not a HAR file: no JSON object with a log")
    try:
        flows = from_har(har) if har is not None else [import_sse(data, protocol=protocol)]
        if strictjson.maybe_surrogates(data):  # they could not be stored or exported
            strictjson.check_text([flow.to_json() for flow in flows])
    except UnicodeDecodeError:
        raise UnreadableImport("not UTF-8 text") from None
    except RecursionError:
        raise UnreadableImport("JSON nested too deeply") from None
    except (HarError, RecordingError, FrameTooLarge, ValueError) as exc:
        raise UnreadableImport(str(exc)) from None
    return flows


__all__ = ["UnreadableImport", "read_flows"]
