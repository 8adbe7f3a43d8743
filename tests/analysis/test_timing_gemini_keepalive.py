"""A Gemini leg's keepalives are chunks, not comments (the proxy writes its codec's
``keepalive_frame()``): timing counts them as keepalives, never as data or as the first
content, whether they come as SSE frames or as elements of the JSON-array form."""

from __future__ import annotations

from typing import Any

from streamscope.analysis.reading import LegReading
from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.codecs import get_codec
from streamscope.codecs.gemini.stream_encode import gemini_frame

MS = 1_000_000
KEEP = get_codec("gemini").keepalive_frame()
TEXT = gemini_frame({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hi"}]}}]})
END = gemini_frame(
    {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "!"}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2},
    }
)


def _leg(raws: list[bytes], times_ms: list[int], **fields: Any) -> Leg:
    frames = [CapturedFrame(r, t * MS) for r, t in zip(raws, times_ms, strict=True)]
    return Leg("gemini", 200, frames=frames, **fields)


def test_keepalive_chunks_are_counted_and_the_first_content_comes_after_them() -> None:
    leg = _leg([KEEP, KEEP, TEXT, KEEP, END], [100, 200, 300, 400, 500])
    t = LegReading(leg).timing
    assert t.keepalives == 3
    assert t.first_content_ms == 300  # the text, not the first keepalive
    assert LegReading(leg).series.keepalives == [100.0, 200.0, 400.0]


def test_an_empty_text_chunk_with_more_in_it_is_no_keepalive() -> None:
    opening = gemini_frame(
        {
            "candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "index": 0}],
            "responseId": "r1",
        }
    )
    assert LegReading(_leg([opening, TEXT, END], [10, 20, 30])).timing.keepalives == 0


def test_an_sse_comment_on_a_gemini_leg_still_counts() -> None:
    assert LegReading(_leg([b": keepalive\n\n", TEXT, END], [10, 20, 30])).timing.keepalives == 1


def test_the_json_array_forms_keepalive_elements_count_too() -> None:
    element = KEEP.removeprefix(b"data: ").strip()
    raws = [b"[" + element, b",\n" + TEXT.removeprefix(b"data: ").strip()]
    raws += [b",\n" + element, b",\n" + END.removeprefix(b"data: ").strip(), b"]"]
    leg = _leg(
        raws,
        [10, 20, 30, 40, 50],
        headers=[("content-type", "application/json")],
    )
    t = LegReading(leg).timing
    assert t.keepalives == 2 and t.first_content_ms == 20
