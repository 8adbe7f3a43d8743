"""The JSON-array stream reader (wire/jsonarray.py), as properties: whatever the elements
and however their bytes are cut into chunks, the frames' bytes joined are the stream,
each element's data is its JSON text, each frame arrives with the chunk that completed
it, and the array's closing bracket is a frame of its own; a stream cut short says so."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.wire.jsonarray import JSONArrayReader, is_array_stream, read_array

JSONS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
SEPARATORS = st.sampled_from(["", " ", "\r\n", "\n  ", "\t"])


def _array(items: list[Any], seps: list[str], indent: int | None) -> bytes:
    gaps = seps + [""] * (len(items) + 2)
    body = ",".join(gaps[i] + json.dumps(item, indent=indent) for i, item in enumerate(items))
    return ("[" + body + gaps[len(items)] + "]" + gaps[len(items) + 1]).encode()


def _read(data: bytes, cuts: list[int]) -> tuple[list[Any], JSONArrayReader]:
    reader = JSONArrayReader()
    frames, at, n = [], 0, 0
    for size in [*cuts, len(data)]:
        piece = data[at : at + size]
        frames += [(f, n) for f in reader.feed(piece, n)]
        at += size
        n += 1
    frames += [(f, n) for f in reader.flush(n)]
    return frames, reader


@settings(max_examples=200, deadline=None)
@given(
    st.lists(JSONS, max_size=6),
    st.lists(SEPARATORS, max_size=8),
    st.sampled_from([None, 2]),
    st.lists(st.integers(1, 30), max_size=12),
)
def test_any_array_cut_anywhere_reads_as_its_elements(
    items: list[Any], seps: list[str], indent: int | None, cuts: list[int]
) -> None:
    data = _array(items, seps, indent)
    frames, reader = _read(data, cuts)
    assert b"".join(f.raw for f, _ in frames) == data
    elements = [f for f, _ in frames if f.data is not None]
    assert [json.loads(f.data) for f in elements] == json.loads(data)
    closer = next(i for i, (f, _) in enumerate(frames) if f.data is None)
    closing = frames[closer][0].raw.split()  # its own frame, with the blank before it
    assert b"".join(closing) == (b"]" if items else b"[]")
    assert not reader.findings
    # Each frame arrived with the chunk that holds its last byte (a bare number, true,
    # false or null: the byte after it, which shows that it ended).
    ends, at = [], 0
    for size in [*cuts, len(data)]:
        at += size
        ends.append(min(at, len(data)))
    pos = 0
    for frame, n in frames:
        pos += len(frame.raw)
        if frame.data is not None:
            last = pos if frame.data[:1] in '{["' else pos + 1
            assert n == next(i for i, end in enumerate(ends) if end >= last)
    assert read_array(data) and [f.raw for f in read_array(data)] == [f.raw for f, _ in frames]


@settings(max_examples=100, deadline=None)
@given(st.lists(JSONS, min_size=1, max_size=4), st.integers(1, 200))
def test_a_stream_cut_short_keeps_its_bytes_and_says_so(items: list[Any], keep: int) -> None:
    data = _array(items, [], None)
    cut = data[: min(keep, len(data) - 1)]
    frames, reader = _read(cut, [])
    assert b"".join(f.raw for f, _ in frames) == cut
    assert {f.code for f in reader.findings} & {"cut-element", "unclosed-array"}


def test_what_is_no_array_is_said() -> None:
    frames, reader = _read(b'{"a": 1}', [])
    assert b"".join(f.raw for f, _ in frames) == b'{"a": 1}'
    assert [f.code for f in reader.findings][0] == "not-an-array"
    frames, reader = _read(b'[{"a": 1}] x', [])
    assert [f.data for f, _ in frames] == ['{"a": 1}', None, None]
    assert [f.code for f in reader.findings] == ["after-array"]


def test_only_a_json_answer_that_opens_an_array_is_an_array_stream() -> None:
    assert is_array_stream("application/json; charset=UTF-8", [b"", b" \r\n", b"[{"])
    assert not is_array_stream("application/json", [b'{"error": {}}'])
    assert not is_array_stream("text/event-stream", [b"[1]"])
    assert not is_array_stream("application/json", [b'data: {"x": 1}\n\n'])  # SSE mislabelled
    assert not is_array_stream(None, [b"[1]"])
