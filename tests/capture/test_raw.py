"""The compact capture form (capture/raw.py): what is stored rebuilds the frames exactly,
whatever the sends were, and the relay's chunks link client frames to their sources."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.capture.flow import RequestRecord
from streamscope.capture.info import FlowInfo
from streamscope.capture.raw import NO_SOURCE, RawFlow, RawLeg, pack, to_flow, unpack
from streamscope.wire import SSEDecoder, encode_comment
from tests.support import FIXTURES, load

CHAT = load(FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse").frames
WIRE = b"".join(f.raw for f in CHAT)


def _flow(client: RawLeg, upstream: RawLeg | None = None) -> RawFlow:
    return RawFlow("f", 0.0, FlowInfo(), RequestRecord(), None, upstream or RawLeg(), client)


@given(st.lists(st.integers(-(2**62), 2**62), max_size=50))
def test_packed_arrays_round_trip(values: list[int]) -> None:
    assert unpack(pack(values)) == values


def test_a_leg_restores_from_its_stored_parts() -> None:
    leg = RawLeg(
        protocol="openai-chat",
        status=200,
        headers=[("a", "b")],
        data=b"xyz",
        sizes=[1, 2],
        times=[5, 9],
        base_ns=4,
        entry_frames=[1, 0],
        entry_chunks=[2, 1],
        entry_marks=[1, 0],
        chunk_sizes=[1, 1, 1],
        marks=[2],
    )
    back = RawLeg.restore(leg.meta(), leg.data, leg.arrays())
    assert back == leg
    # Upstream frame 0 made two chunks; the third is the proxy's own (a keepalive, say).
    assert back.chunk_sources() == [0, 0, NO_SOURCE]


_ints = st.lists(st.integers(-(2**62), 2**62), max_size=6)


@given(st.lists(_ints, min_size=len(RawLeg.ARRAYS), max_size=len(RawLeg.ARRAYS)))
def test_the_arrays_are_stored_as_their_lengths_then_each_in_turn(lists: list[list[int]]) -> None:
    # The layout flows stored before read back by (and named by the hash of): the
    # lengths, packed, then each array packed, in the order of RawLeg.ARRAYS.
    leg = RawLeg(**dict(zip(RawLeg.ARRAYS, lists, strict=True)))
    layout = pack([len(v) for v in lists]) + b"".join(pack(v) for v in lists)
    assert leg.arrays() == layout
    assert RawLeg.restore(leg.meta(), b"", layout) == leg


def test_upstream_frames_keep_their_bytes_and_times() -> None:
    upstream = RawLeg(
        protocol="openai-chat",
        data=WIRE,
        sizes=[len(f.raw) for f in CHAT],
        times=[1000 * i for i in range(len(CHAT))],
    )
    flow = to_flow(_flow(RawLeg(streamed=False), upstream))
    assert [f.raw for f in flow.upstream_leg.frames] == [f.raw for f in CHAT]
    assert [f.t_ns for f in flow.upstream_leg.frames] == upstream.times


@settings(max_examples=60)
@given(st.lists(st.integers(1, len(WIRE) - 1), max_size=12, unique=True))
def test_client_frames_do_not_depend_on_how_the_bytes_were_sent(cuts: list[int]) -> None:
    keepalive = encode_comment("keepalive")
    data = keepalive + WIRE  # a keepalive written before the relay took over
    bounds = [0, *sorted(c + len(keepalive) for c in cuts), len(data)]
    sizes = [b - a for a, b in zip(bounds, bounds[1:], strict=False) if b > a]
    times = [10 * (i + 1) for i in range(len(sizes))]
    client = RawLeg(
        protocol="openai-chat",
        data=data,
        sizes=sizes,
        times=times,
        # The relay wrote one batch of all upstream frames, one chunk each.
        entry_frames=[len(CHAT)],
        entry_chunks=[len(CHAT)],
        entry_marks=[len(CHAT)],
        chunk_sizes=[len(f.raw) for f in CHAT],
        marks=list(range(1, len(CHAT) + 1)),
    )
    frames = to_flow(_flow(client)).client_leg.frames
    assert [f.raw for f in frames] == [keepalive] + [f.raw for f in CHAT]
    assert frames[0].sources == ()  # not the relay's: no source
    assert [f.sources for f in frames[1:]] == [(i,) for i in range(len(CHAT))]
    # Each frame is timed by the send that completed it.
    ends = [sum(sizes[: i + 1]) for i in range(len(sizes))]
    offset = 0
    for frame in frames:
        offset += len(frame.raw)
        first_send_done = next(i for i, e in enumerate(ends) if e >= offset)
        assert frame.t_ns == times[first_send_done]


def test_a_body_leg_is_a_body() -> None:
    client = RawLeg(protocol="openai-chat", streamed=False, data=b'{"ok":1}', sizes=[8], times=[3])
    flow = to_flow(_flow(client))
    assert flow.client_leg.body == b'{"ok":1}' and flow.client_leg.frames == []
    assert SSEDecoder().feed(flow.client_leg.raw(), 0) == []
