"""The byte-level SSE decoder: framing rules, raw bytes, arrival times, limits, findings."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.wire import FrameTooLarge, SSEDecoder, decode_all, encode_comment, encode_frame
from streamscope.wire.frame import Frame
from tests.support import fixture_files


def feed_in_pieces(data: bytes, cuts: list[int]) -> tuple[list[Frame], SSEDecoder]:
    decoder = SSEDecoder()
    frames: list[Frame] = []
    prev = 0
    for i, cut in enumerate(sorted(set(cuts)) + [len(data)]):
        frames += decoder.feed(data[prev:cut], arrival_ns=i)
        prev = cut
    frames += decoder.flush(arrival_ns=10_000)
    return frames, decoder


def fields(frames: list[Frame]) -> list[tuple[object, ...]]:
    return [
        (f.raw, f.event, f.data, f.id, f.retry, tuple(f.comments), f.terminated) for f in frames
    ]


def test_basic_fields_and_raw_bytes() -> None:
    data = b'event: a\ndata: {"x":1}\nid: 7\nretry: 300\n\n: ping\n\ndata: b\n\n'
    frames = decode_all(data)
    assert [(f.event, f.data, f.id, f.retry) for f in frames] == [
        ("a", '{"x":1}', "7", 300),
        (None, None, None, None),
        (None, "b", None, None),
    ]
    assert frames[1].comments == ("ping",) and frames[1].is_comment_only
    assert b"".join(f.raw for f in frames) == data


def test_multiline_data_joined_with_lf_and_one_leading_space_stripped() -> None:
    frames = decode_all(b"data:first\ndata:  second\ndata\n\n")
    assert frames[0].data == "first\n second\n"


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_line_ends(eol: bytes) -> None:
    data = eol.join([b"event: e", b"data: 1", b"", b"data: 2", b"", b""])
    frames = decode_all(data)
    assert [(f.event, f.data) for f in frames] == [("e", "1"), (None, "2")]
    assert b"".join(f.raw for f in frames) == data


def test_cr_at_chunk_end_then_lf_is_one_line_end() -> None:
    frames, _ = feed_in_pieces(b"data: 1\r\n\r\ndata: 2\r\n\r\n", [8, 9, 10])
    assert [f.data for f in frames] == ["1", "2"]


def test_utf8_split_across_chunks() -> None:
    data = 'data: {"t":"héllo 日本 🎉"}\n\n'.encode()
    cut = data.index("🎉".encode()) + 2  # inside the 4-byte sequence
    frames, decoder = feed_in_pieces(data, [cut])
    assert frames[0].data == '{"t":"héllo 日本 🎉"}'
    assert decoder.findings == []


def test_bom_is_stripped_and_reported() -> None:
    decoder = SSEDecoder()
    frames = decoder.feed(b"\xef\xbb\xbfdata: x\n\n") + decoder.flush()
    assert frames[0].data == "x" and frames[0].raw.startswith(b"\xef\xbb\xbf")
    assert [f.code for f in decoder.findings] == ["bom"]


def test_final_frame_without_blank_line_is_delivered_and_reported() -> None:
    decoder = SSEDecoder()
    frames = decoder.feed(b"data: 1\n\ndata: 2\n", arrival_ns=5)
    assert [f.data for f in frames] == ["1"]
    last = decoder.flush(arrival_ns=9)
    assert [(f.data, f.terminated, f.arrival_ns) for f in last] == [("2", False, 9)]
    assert [f.code for f in decoder.findings] == ["unterminated-final-frame"]


def test_final_line_without_any_line_end() -> None:
    decoder = SSEDecoder()
    frames = decoder.feed(b"event: x\ndata: 2") + decoder.flush()
    assert [(f.event, f.data, f.terminated) for f in frames] == [("x", "2", False)]


def test_arrival_time_is_that_of_the_completing_chunk() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a", arrival_ns=100) == []
    assert decoder.feed(b"bc\n", arrival_ns=200) == []
    frames = decoder.feed(b"\ndata: d\n\n", arrival_ns=300)
    assert [(f.data, f.arrival_ns) for f in frames] == [("abc", 300), ("d", 300)]


def test_invalid_utf8_is_an_error_finding_not_a_crash() -> None:
    decoder = SSEDecoder()
    frames = decoder.feed(b"data: \xff\xfe\n\n") + decoder.flush()
    assert frames[0].data == "\ufffd\ufffd"
    assert [f.code for f in decoder.findings] == ["invalid-utf8"]


def test_unknown_field_and_bad_retry() -> None:
    decoder = SSEDecoder()
    frames = decoder.feed(b"foo: bar\nretry: 1x\ndata: y\n\n") + decoder.flush()
    assert frames[0].retry is None and frames[0].data == "y"
    assert [f.code for f in decoder.findings] == ["unknown-field"]


def test_stray_blank_lines_are_kept_in_raw() -> None:
    data = b"\n\ndata: a\n\n\n\n"
    frames = decode_all(data)
    assert [f.data for f in frames] == ["a", None]
    assert frames[1].is_empty
    assert b"".join(f.raw for f in frames) == data


def test_line_over_limit_raises_clear_error_without_buffering_on() -> None:
    decoder = SSEDecoder(max_line_bytes=1000)
    decoder.feed(b"data: " + b"x" * 500)
    with pytest.raises(FrameTooLarge, match="1000 bytes"):
        for _ in range(10):
            decoder.feed(b"x" * 200)


def test_line_over_limit_in_one_chunk() -> None:
    with pytest.raises(FrameTooLarge):
        SSEDecoder(max_line_bytes=100).feed(b"data: " + b"y" * 200 + b"\n\n")


def test_frame_of_many_short_lines_over_limit() -> None:
    with pytest.raises(FrameTooLarge, match="frame"):
        SSEDecoder(max_line_bytes=100).feed(b"data: 0123456789\n" * 20)


def test_default_limit_is_16_mib() -> None:
    assert SSEDecoder().max_line_bytes == 16 * 1024 * 1024


# -- properties -----------------------------------------------------------------------

_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=30
)
_eol = st.sampled_from([b"\n", b"\r\n", b"\r"])


@st.composite
def sse_streams(draw: st.DrawFn, eol: st.SearchStrategy[bytes] = _eol) -> bytes:
    """Streams mixing every line kind and line end, sometimes without a final blank line."""
    out = b""
    for _ in range(draw(st.integers(0, 6))):
        lines = draw(
            st.lists(
                st.one_of(
                    st.builds(lambda t: b"data: " + t.encode(), _text),
                    st.builds(lambda t: b"data:" + t.encode(), _text),
                    st.builds(lambda t: b"event: " + t.encode(), _text),
                    st.builds(lambda t: b": " + t.encode(), _text),
                    st.builds(lambda t: b"id: " + t.encode(), _text),
                    st.just(b"retry: 1500"),
                ),
                min_size=1,
                max_size=4,
            )
        )
        for line in lines:
            out += line + draw(eol)
        out += draw(eol) * draw(st.integers(1, 2))
    if draw(st.booleans()):
        out += b"data: tail" + draw(st.sampled_from([b"", b"\n", b"\r"]))
    return out


@settings(max_examples=300, deadline=None)
@given(data=sse_streams(), cuts=st.lists(st.integers(0, 400), max_size=12))
def test_any_split_gives_the_same_frames_and_raw_bytes(data: bytes, cuts: list[int]) -> None:
    whole, d1 = feed_in_pieces(data, [])
    split, d2 = feed_in_pieces(data, [c for c in cuts if c <= len(data)])
    assert fields(split) == fields(whole)
    assert b"".join(f.raw for f in split) == data
    assert [f.code for f in d1.findings] == [f.code for f in d2.findings]


@settings(max_examples=300, deadline=None)
@given(data=sse_streams(st.just(b"\n")))
def test_whole_frames_fast_path_matches_the_line_by_line_path(data: bytes) -> None:
    # Fed whole, LF-only frames of data/event lines take the fast path; fed a byte at a
    # time, no piece holds a blank line and every line goes the general way.
    whole, d1 = feed_in_pieces(data, [])
    by_byte, d2 = feed_in_pieces(data, list(range(1, len(data))))
    assert fields(whole) == fields(by_byte)
    assert [f.raw for f in whole] == [f.raw for f in by_byte]
    assert [(f.code, f.frame) for f in d1.findings] == [(f.code, f.frame) for f in d2.findings]


@settings(max_examples=200, deadline=None)
@given(cuts=st.lists(st.integers(0, 5000), max_size=20), index=st.integers(0, 100))
def test_real_recordings_split_anywhere_give_the_same_frames(cuts: list[int], index: int) -> None:
    sse = [p for p in fixture_files() if p.suffix == ".sse"]
    data = sse[index % len(sse)].read_bytes()
    whole, _ = feed_in_pieces(data, [])
    split, _ = feed_in_pieces(data, [c for c in cuts if c <= len(data)])
    assert fields(split) == fields(whole)
    assert b"".join(f.raw for f in split) == data


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _text | st.text(max_size=10) | st.just("a\r\nb\rc"),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(
    payloads=st.lists(
        st.tuples(st.one_of(st.none(), st.sampled_from(["message_start", "x.y"])), _json),
        max_size=6,
    ),
    cuts=st.lists(st.integers(0, 600), max_size=8),
)
def test_encode_decode_round_trip(
    payloads: list[tuple[str | None, object]], cuts: list[int]
) -> None:
    import json

    data = b"".join(encode_frame(p, event=e) for e, p in payloads) + encode_comment("keepalive")
    frames, decoder = feed_in_pieces(data, [c for c in cuts if c <= len(data)])

    # A str is written as it is (its line breaks become data lines, joined back with LF);
    # anything else as single-line JSON.
    def expected(p: object) -> str:
        if isinstance(p, str):
            return re.sub(r"\r\n|\r", "\n", p)
        return json.dumps(p, ensure_ascii=False, separators=(",", ":"))

    assert [(f.event, f.data) for f in frames[:-1]] == [(e, expected(p)) for e, p in payloads]
    assert frames[-1].comments == ("keepalive",)
    assert decoder.findings == []
    assert all(f.terminated for f in frames)
