"""Transport checks the same for every protocol (``lint/checks_framing.py``): what the
SSE layer notices in the frames' exact bytes, the Content-Type, a last frame never
dispatched by its blank line (and whether it carried content), and JSON spread over
several ``data:`` lines."""

from __future__ import annotations

from streamscope.lint.checks_framing import (
    content_type_hits,
    final_blank_line,
    multiline_data,
    wire_findings,
)
from streamscope.lint.stream import Hit
from streamscope.wire import decode_all
from tests.lint.observed import observe
from tests.lint.streams import ANT_TEXT, CHAT_TEXT, RESP_TEXT, chat, native, payloads


def codes(data: bytes) -> list[tuple[str, int | None]]:
    return [(f.code, f.frame) for f in wire_findings(decode_all(data))]


def test_what_the_sse_layer_notices_points_at_the_frame() -> None:
    clean = native(CHAT_TEXT)
    assert codes(clean) == []
    assert codes(b"\xef\xbb\xbf" + clean) == [("bom", 0)]
    assert codes(b'data: {"a":1}\n\nretry: 5\nfoo: bar\ndata: {"b":2}\n\n') == [
        ("unknown-field", 1)  # retry is SSE's own field
    ]
    assert codes(b'data: {"a":1}\n\ndata: {"b":2}') == [("unterminated-final-frame", 1)]


def test_only_text_event_stream_is_an_sse_content_type() -> None:
    assert content_type_hits(None) == []  # not known (a file)
    assert content_type_hits("text/event-stream") == []
    assert content_type_hits("Text/Event-Stream; charset=utf-8") == []
    assert content_type_hits("application/json") == [
        Hit("framing.content-type", None, "Content-Type is 'application/json'")
    ]


def test_a_last_frame_without_its_blank_line_is_lost_if_it_carried_content() -> None:
    whole = native(CHAT_TEXT)
    assert final_blank_line(observe(whole, "openai-chat")) == []
    done_only = observe(whole.rstrip(b"\n"), "openai-chat")  # the last frame is [DONE]
    last = len(done_only.frames) - 1
    assert final_blank_line(done_only) == [
        Hit("framing.no-final-blank-line", last, "the stream ends inside its last frame"),
        Hit("chat.missing-done", last, NEVER_SEEN),
    ]
    usage_last = observe(chat(payloads(CHAT_TEXT), done=False).rstrip(b"\n"), "openai-chat")
    assert final_blank_line(usage_last) == [
        Hit(
            "framing.no-final-blank-line",
            len(usage_last.frames) - 1,
            "the stream ends inside its last frame, which carries only Usage",
        )
    ]
    cut = chat(payloads(CHAT_TEXT)[:5], done=False).rstrip(b"\n")  # ends on a text delta
    assert final_blank_line(observe(cut, "openai-chat")) == [
        Hit(
            "framing.last-frame-lost",
            4,
            "the stream ends inside its last frame, which carries TextDelta",
        )
    ]


NEVER_SEEN = (
    "the terminator is the last frame, which no blank line ends: a client that follows the "
    "SSE specification never sees it"
)


def test_a_terminator_no_blank_line_ends_is_missing_to_a_client() -> None:
    """`message_stop` and `response.completed` in a last frame never dispatched are never
    seen: @anthropic-ai/sdk, openai-python's responses.stream() and Codex raise as for a
    stream without them (run: tests/realclients), so it is the missing terminator's rule."""
    for source, protocol, rule in (
        (ANT_TEXT, "anthropic", "anthropic.missing-message-stop"),
        (RESP_TEXT, "responses", "responses.missing-terminal"),
    ):
        obs = observe(native(source).rstrip(b"\n"), protocol)
        last = len(obs.frames) - 1
        hits = final_blank_line(obs)
        assert Hit(rule, last, NEVER_SEEN) in hits, hits
        assert native(source).endswith(b"\n\n")  # whole, it has none
        assert final_blank_line(observe(native(source), protocol)) == []


def test_json_over_several_data_lines_is_counted_joined_frames_are_not() -> None:
    body = (
        b'data: {"a":\ndata: 1}\n\n'
        b'data: {"a":1}\ndata: {"b":2}\n\n'  # two frames joined: the decoder says so
        b'data: {"c":\ndata: 3}\n\n'
    )
    assert multiline_data(observe(body, "openai-chat")) == [
        Hit(
            "framing.multiline-data",
            0,
            "a JSON payload spans several data: lines (2 frames, the first at frame 0)",
        )
    ]
    assert multiline_data(observe(native(CHAT_TEXT), "openai-chat")) == []
