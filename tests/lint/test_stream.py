"""What the structural checks look at (``lint/stream.py``): the frames' JSON payloads with
their frame index — frames an upstream joined with single newlines split back into their
lines, a JSON payload spread over several ``data:`` lines read whole, ``[DONE]`` and
what is no JSON object left out — and one hit for a defect seen in many frames."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.lint.stream import Hit, Observed, counted, frame_payloads
from streamscope.wire import decode_all
from tests.lint.streams import CHAT_TEXT, native, payloads


def test_a_recordings_payloads_with_their_frame_index() -> None:
    frames = decode_all(native(CHAT_TEXT))
    found = frame_payloads(frames)
    assert [p for _, p in found] == payloads(CHAT_TEXT)  # [DONE] left out
    assert [i for i, _ in found] == [i for i, f in enumerate(frames) if f.data != "[DONE]"]


def test_joined_frames_are_split_and_a_spread_payload_is_whole() -> None:
    frames = decode_all(
        b'data: {"a":1}\ndata: {"b":2}\n\n'  # two frames joined by a single newline
        b'data: {"c":\ndata: 3}\n\n'  # one JSON payload over two data: lines
        b": keepalive\n\n"
        b'data: [1, 2]\ndata: "x"\n\n'  # JSON, but no object
        b'data: {"d":4}\ndata: not json\n\n'  # a line that is no JSON: nothing
        b'data: {"e":5}\ndata: [DONE]\n\n'
    )
    assert frame_payloads(frames) == [(0, {"a": 1}), (0, {"b": 2}), (1, {"c": 3}), (5, {"e": 5})]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.dictionaries(st.text(), st.integers() | st.text()), min_size=2, max_size=6))
def test_any_objects_joined_in_one_frame_come_back_in_order(objects: list[dict[str, Any]]) -> None:
    body = "".join(f"data: {json.dumps(o)}\n" for o in objects) + "\n"
    (frame,) = decode_all(body.encode())
    assert frame_payloads([frame]) == [(0, o) for o in objects]


def test_counted_is_one_hit_at_the_first_frame() -> None:
    assert counted("chat.usage-fields", [], "bad usage") == []
    assert counted("chat.usage-fields", [4], "bad usage") == [
        Hit("chat.usage-fields", 4, "bad usage")
    ]
    assert counted("chat.usage-fields", [4, 7, 9], "bad usage") == [
        Hit("chat.usage-fields", 4, "bad usage (3 frames, the first at frame 4)")
    ]


def test_observed_finds_payloads_by_type() -> None:
    obs = Observed("anthropic", [], [(0, {"type": "ping"}), (2, {"type": "a"}), (3, {"x": 1})])
    assert list(obs.of_type("a", "b")) == [(2, {"type": "a"})]
    assert obs.first_index(lambda p: "x" in p) == 3
    assert obs.first_index(lambda p: p.get("type") == "b") is None
