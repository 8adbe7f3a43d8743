"""Token counts where a protocol requires numbers and the upstream sent none: estimated
(input: the request's characters / 4; output: one per delta, or a whole answer's
characters / 4), and said to be, never passed off as measured."""

from __future__ import annotations

import math
import typing

from streamscope.model.estimate import (
    DELTAS,
    NOTE_BYTES,
    answer_with_estimates,
    input_estimate,
    is_note,
    lacks,
    with_estimates,
)
from streamscope.model.events import (
    Event,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from streamscope.model.request import Message, Request, TextPart, ToolDef
from streamscope.model.response import Choice, ReasoningOut, Response, TextOut, ToolCallOut
from streamscope.wire import decode_all


def request(text: str, model: str = "m", **kw: typing.Any) -> Request:
    return Request(model=model, messages=[Message("user", [TextPart(text)])], **kw)


def test_lacks_means_the_input_or_the_output_count_is_unknown() -> None:
    assert lacks(None) and lacks(Usage()) and lacks(Usage(5, None)) and lacks(Usage(None, 5))
    assert not lacks(Usage(0, 0))


def test_input_is_the_requests_characters_over_four_without_the_model_name() -> None:
    assert input_estimate(None) == 0
    base = input_estimate(request(""))
    assert input_estimate(request("x" * 400)) == base + 100
    assert input_estimate(request("x" * 401)) == base + 101  # rounded up
    assert input_estimate(request("", model="a-very-long-model-name" * 10)) == base
    # every string counts: a tool's schema too
    tool = ToolDef("f", parameters={"type": "object", "description": "y" * 40})
    assert input_estimate(request("", tools=[tool])) > base + 10


def test_a_stream_gets_only_the_counts_it_lacks() -> None:
    known = Usage(3, 4, cache_read_tokens=1)
    assert with_estimates(known, None, deltas=99) == (known, False)
    req = request("x" * 400)
    usage, estimated = with_estimates(Usage(None, 4, cache_read_tokens=1), req, deltas=99)
    assert estimated and usage == Usage(input_estimate(req), 4, cache_read_tokens=1)
    assert with_estimates(None, None, deltas=7) == (Usage(0, 7), True)


def test_output_deltas_are_the_content_deltas() -> None:
    kinds: list[type[Event]] = [TextDelta, ReasoningDelta, RefusalDelta, ToolCallDelta]
    assert DELTAS == {k.__dataclass_fields__["type"].default for k in kinds}


def test_a_whole_answer_estimates_its_output_from_its_characters() -> None:
    choice = Choice(
        parts=[TextOut("abcd" * 5), ReasoningOut("r" * 8), ToolCallOut("c", "f", '{"a":1}')]
    )
    resp = Response("id", "m", choices=[choice])
    out, estimated = answer_with_estimates(resp, None)
    assert estimated and out.usage == Usage(0, math.ceil((20 + 8 + 7) / 4))
    assert resp.usage is None  # the caller's response is left as it was
    full = Response("id", "m", choices=[choice], usage=Usage(1, 2))
    assert answer_with_estimates(full, None) == (full, False)


def test_the_note_is_an_sse_comment_the_decoder_reads_back() -> None:
    [frame] = decode_all(NOTE_BYTES)
    assert frame.is_comment_only and is_note(frame.comments[0])
    assert not is_note("keepalive")
