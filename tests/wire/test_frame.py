"""One SSE frame as it crossed the wire: what it holds, and what it costs to keep."""

from __future__ import annotations

from streamscope.wire import SSEDecoder, decode_all


def test_a_data_frame_holds_nothing_the_garbage_collector_walks() -> None:
    """A long stream keeps tens of thousands of frames alive in the GUI process (the
    frame table, the capture): each object the collector tracks per frame lengthens every
    pass over them (the window's longest stalls were such passes). A frame's only
    container field, its comments, is a tuple: the empty one is shared and untracked."""
    import gc

    frames = SSEDecoder().feed(b"data: {}\n\n" * 500 + b": keepalive\n\n", arrival_ns=0)
    assert len(frames) == 501
    assert not any(gc.is_tracked(f.comments) for f in frames[:-1])
    assert len({id(f.comments) for f in frames[:-1]}) == 1
    assert frames[-1].comments == ("keepalive",)


def test_a_keepalive_is_comment_only_and_stray_blank_lines_are_empty() -> None:
    keepalive, data, named, stray = decode_all(b": keepalive\n\ndata: {}\n\nevent: ping\n\n\n\n")
    assert keepalive.is_comment_only and not keepalive.is_empty
    assert not data.is_comment_only and not data.is_empty
    assert not named.is_comment_only and not named.is_empty  # an event line alone is news
    assert stray.is_empty and not stray.is_comment_only
    assert b"".join(f.raw for f in (keepalive, data, named, stray)) == (
        b": keepalive\n\ndata: {}\n\nevent: ping\n\n\n\n"
    )
