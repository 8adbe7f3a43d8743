"""Timing of a leg (app/streamscope/analysis/timing.py): legs built by hand from real recordings'
frames at chosen times, so every expected value is known exactly. The chart series
(``series``) are checked the same way, and against the timing on every recording; both
are read through :class:`~streamscope.analysis.reading.LegReading`, the one API."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.analysis.decode import decode_leg
from streamscope.analysis.reading import LegReading
from streamscope.analysis.timing import (
    LegSeries,
    LegTiming,
    overhead_ms,
    percentile,
    series_of,
    timing_of,
)
from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.wire.frame import Frame
from tests.support import FIXTURES, fixture_files, load

MS = 1_000_000
ANTHROPIC_TEXT = FIXTURES / "anthropic" / "ant-py_basic-text.sse"  # Hello there! (6 tokens)
CHAT_USAGE = FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse"
DEEPSEEK_TOOLS = FIXTURES / "openai-compatible-chat" / "vercel_deepseek-reasoner_tool-call.jsonl"
KEEPALIVE = b": keepalive\n\n"


def frames_of(path: Path) -> tuple[list[Frame], str]:
    rec = load(path)
    return rec.frames, rec.protocol


def leg_at(path: Path, times_ms: Sequence[float], **fields: Any) -> Leg:
    frames, protocol = frames_of(path)
    assert len(frames) == len(times_ms)
    captured = [CapturedFrame(f.raw, round(t * MS)) for f, t in zip(frames, times_ms, strict=True)]
    return Leg(protocol=protocol, status=200, frames=captured, **fields)


# ant-py_basic-text.sse: 0 message_start, 1 content_block_start, 2 ping, 3-5 the text
# deltas "Hello", " there", "!", 6 content_block_stop, 7 message_delta (output_tokens 6),
# 8 message_stop.
BASIC_TIMES = [10, 12, 13, 20, 30, 45, 46, 47, 48]


def test_a_text_stream_at_known_times() -> None:
    leg = leg_at(ANTHROPIC_TEXT, BASIC_TIMES, headers_ns=5 * MS, ended_ns=50 * MS)
    t = LegReading(leg).timing
    assert t.streamed and t.frames == 9
    assert (t.headers_ms, t.first_byte_ms, t.first_data_ms) == (5.0, 10.0, 10.0)
    assert (t.first_content_ms, t.first_reasoning_ms, t.first_tool_call_ms) == (20.0, None, None)
    assert t.total_ms == 50.0
    assert (t.output_tokens, t.tokens_estimated) == (6, False)  # message_delta's usage
    assert t.generation_ms == 25.0  # first text delta (20) -> last (45)
    assert t.tokens_per_second == pytest.approx(5 / 0.025)  # 5 more tokens after the first
    # gaps 2, 1, 7, 10, 15, 1, 1, 1 -> sorted 1 1 1 1 2 7 10 15
    assert t.gap_p50_ms == pytest.approx(1.5)
    assert t.gap_p90_ms == pytest.approx(10 + 0.3 * 5)
    assert t.gap_max_ms == 15.0
    assert (t.longest_silence_ms, t.longest_silence_frame) == (15.0, 5)
    assert t.keepalives == 0


def test_without_an_end_time_the_total_is_the_last_frame() -> None:
    assert LegReading(leg_at(ANTHROPIC_TEXT, BASIC_TIMES)).timing.total_ms == 48.0


def test_the_wait_for_the_first_frame_is_a_silence_too() -> None:
    leg = leg_at(ANTHROPIC_TEXT, [400, *BASIC_TIMES[1:]], headers_ns=5 * MS)
    leg.frames[0].t_ns = 9 * MS  # 4 ms after the headers... then
    leg.headers_ns = 0  # ...9 ms after them: still shorter than the 15 ms gap
    assert LegReading(leg).timing.longest_silence_frame == 5
    leg.headers_ns = -30 * MS  # headers 39 ms before the first frame
    t = LegReading(leg).timing
    assert (t.longest_silence_ms, t.longest_silence_frame) == (39.0, 0)
    assert t.gap_max_ms == 15.0  # gaps are between frames only


def test_keepalives_are_counted_and_are_not_data() -> None:
    frames, protocol = frames_of(ANTHROPIC_TEXT)
    retry = b"retry: 3000\n\n"  # no data, but not a comment either
    raws = [KEEPALIVE, *[f.raw for f in frames[:4]], KEEPALIVE, retry, *[f.raw for f in frames[4:]]]
    times = [3, 10, 12, 13, 20, 25, 26, 30, 45, 46, 47, 48]
    leg = Leg(protocol, frames=[CapturedFrame(r, t * MS) for r, t in zip(raws, times, strict=True)])
    t = LegReading(leg).timing
    assert t.keepalives == 2
    assert (t.first_byte_ms, t.first_data_ms, t.first_content_ms) == (3.0, 10.0, 20.0)
    assert t.output_tokens == 6
    assert t.frames == 12


def test_a_frame_arrives_with_the_chunk_that_completes_it() -> None:
    frames, protocol = frames_of(ANTHROPIC_TEXT)
    hello = frames[3].raw
    raws = [f.raw for f in frames[:3]] + [hello[:20], hello[20:]] + [f.raw for f in frames[4:]]
    times = [10, 12, 13, 18, 20, 30, 45, 46, 47, 48]
    leg = Leg(protocol, frames=[CapturedFrame(r, t * MS) for r, t in zip(raws, times, strict=True)])
    t = LegReading(leg).timing
    assert t.first_content_ms == 20.0
    assert t.first_byte_ms == 10.0


def _without_usage(path: Path) -> tuple[list[Frame], str]:
    frames, protocol = frames_of(path)
    return [f for f in frames if '"usage"' not in (f.data or "")], protocol


def test_without_usage_tokens_are_counted_from_the_deltas() -> None:
    frames, protocol = _without_usage(CHAT_USAGE)
    leg = Leg(protocol, frames=[CapturedFrame(f.raw, i * MS) for i, f in enumerate(frames)])
    content = [
        i
        for i, f in enumerate(frames)
        if f.data != "[DONE]" and json.loads(f.data or "{}")["choices"][0]["delta"].get("content")
    ]
    t = LegReading(leg).timing
    assert (t.output_tokens, t.tokens_estimated) == (len(content), True)
    assert t.first_content_ms == float(content[0])
    assert t.generation_ms == float(content[-1] - content[0])
    assert t.tokens_per_second == pytest.approx(
        (len(content) - 1) / ((content[-1] - content[0]) / 1e3)
    )


def test_with_usage_the_provider_count_wins() -> None:
    frames, protocol = frames_of(CHAT_USAGE)
    leg = Leg(protocol, frames=[CapturedFrame(f.raw, i * MS) for i, f in enumerate(frames)])
    usage = json.loads(next(f.data for f in frames if '"usage"' in (f.data or "")) or "")
    t = LegReading(leg).timing
    assert (t.output_tokens, t.tokens_estimated) == (usage["usage"]["completion_tokens"], False)


def test_reasoning_then_a_tool_call() -> None:
    frames, protocol = frames_of(DEEPSEEK_TOOLS)
    leg = Leg(protocol, frames=[CapturedFrame(f.raw, 10 * i * MS) for i, f in enumerate(frames)])

    def first(pred: object) -> float:
        for i, f in enumerate(frames):
            if f.data and f.data != "[DONE]":
                choices = json.loads(f.data).get("choices") or [{}]
                delta = choices[0].get("delta") or {}
                if pred(delta):  # type: ignore[operator]
                    return 10.0 * i
        raise AssertionError("not in the recording")

    t = LegReading(leg).timing
    assert t.first_reasoning_ms == first(lambda d: d.get("reasoning_content"))
    assert t.first_tool_call_ms == first(lambda d: d.get("tool_calls"))
    assert t.first_content_ms is None  # the answer is only the call
    assert t.first_reasoning_ms is not None and t.first_tool_call_ms is not None
    assert t.first_reasoning_ms < t.first_tool_call_ms
    assert t.tokens_estimated is False and t.tokens_per_second is not None


def test_too_few_tokens_or_no_window_gives_no_rate() -> None:
    frames, protocol = frames_of(ANTHROPIC_TEXT)
    same_time = Leg(protocol, frames=[CapturedFrame(f.raw, 7 * MS) for f in frames])
    t = LegReading(same_time).timing
    assert t.tokens_per_second is None and t.generation_ms == 0.0
    assert (t.gap_p50_ms, t.gap_p90_ms, t.gap_max_ms) == (0.0, 0.0, 0.0)
    one = Leg(protocol, frames=[CapturedFrame(f.raw, i * MS) for i, f in enumerate(frames[:4])])
    t = LegReading(one).timing  # one text delta; message_start's usage says output_tokens 1
    assert (t.output_tokens, t.tokens_estimated, t.tokens_per_second) == (1, False, None)


def test_a_leg_without_frames() -> None:
    t = LegReading(Leg("anthropic", headers_ns=3 * MS, ended_ns=4 * MS)).timing
    assert (t.frames, t.headers_ms, t.total_ms, t.first_byte_ms) == (0, 3.0, 4.0, None)
    assert t.output_tokens is None and t.gap_max_ms is None and t.longest_silence_ms is None


def test_an_unknown_protocol_still_has_frame_timing() -> None:
    frames, _ = frames_of(ANTHROPIC_TEXT)
    leg = Leg("", frames=[CapturedFrame(f.raw, i * MS) for i, f in enumerate(frames)])
    t = LegReading(leg).timing
    assert (t.first_data_ms, t.first_content_ms, t.output_tokens) == (0.0, None, 0)
    assert t.gap_max_ms == 1.0


def test_a_whole_body_has_headers_total_and_its_usage() -> None:
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 7, "total_tokens": 10},
    }
    leg = Leg(
        "openai-chat", 200, body=json.dumps(body).encode(), headers_ns=8 * MS, ended_ns=9 * MS
    )
    t = LegReading(leg).timing
    assert t == LegTiming(streamed=False, frames=0, headers_ms=8.0, total_ms=9.0, output_tokens=7)
    anthropic: dict[str, Any] = {
        "type": "message",
        "id": "m",
        "role": "assistant",
        "model": "c",
        "content": [],
    }
    anthropic["usage"] = {"input_tokens": 1, "output_tokens": 4}
    leg = Leg("anthropic", 200, body=json.dumps(anthropic).encode())
    assert LegReading(leg).timing.output_tokens == 4


@pytest.mark.parametrize("body", [b"", b"not json", b"[1, 2]", b'{"error": {"message": "x"}}'])
def test_a_body_without_usage_has_unknown_tokens(body: bytes) -> None:
    t = LegReading(Leg("openai-chat", 500, body=body, headers_ns=MS, ended_ns=MS)).timing
    assert (t.streamed, t.output_tokens, t.total_ms) == (False, None, 1.0)


def test_to_json_is_plain_json() -> None:
    data = LegReading(leg_at(ANTHROPIC_TEXT, BASIC_TIMES, headers_ns=5 * MS)).timing.to_json()
    assert json.loads(json.dumps(data)) == data
    assert data["first_content_ms"] == 20.0 and data["output_tokens"] == 6


THINKING = FIXTURES / "anthropic" / "vercel_thinking-signature_text.jsonl"


def test_the_ttft_is_the_first_reasoning_text_not_the_empty_thinking_start() -> None:
    """A thinking block opens empty: the first token is its first text."""
    frames, _ = frames_of(THINKING)
    first = next(i for i, f in enumerate(frames) if "thinking_delta" in (f.data or ""))
    text = next(i for i, f in enumerate(frames) if "text_delta" in (f.data or ""))
    times = [float(i) for i in range(len(frames))]
    t = LegReading(leg_at(THINKING, times)).timing
    assert (t.first_token_ms, t.first_reasoning_ms) == (float(first), float(first))
    assert t.first_content_ms == float(text) > float(first)  # the answer's own figure


def test_proxy_overhead_is_first_data_client_minus_upstream() -> None:
    upstream = leg_at(ANTHROPIC_TEXT, BASIC_TIMES)
    frames, protocol = frames_of(ANTHROPIC_TEXT)
    client_raws = [KEEPALIVE, *[f.raw for f in frames]]  # the proxy's keepalive is not data
    client_times = [5.0] + [t + 0.9 for t in BASIC_TIMES]
    client = Leg(
        protocol,
        frames=[
            CapturedFrame(r, round(t * MS)) for r, t in zip(client_raws, client_times, strict=True)
        ],
    )
    up, down = LegReading(upstream).timing, LegReading(client).timing
    assert overhead_ms(up, down) == pytest.approx(0.9)
    only_keepalive = Leg(protocol, frames=[CapturedFrame(KEEPALIVE, MS)])
    assert overhead_ms(up, LegReading(only_keepalive).timing) is None
    assert overhead_ms(LegReading(Leg()).timing, down) is None


def test_percentile_interpolates_between_ranks() -> None:
    assert percentile([5.0], 0.9) == 5.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5
    assert percentile([4.0, 1.0, 3.0, 2.0], 0.0) == 1.0
    assert percentile([4.0, 1.0, 3.0, 2.0], 1.0) == 4.0


FIXTURE_FRAMES = frames_of(ANTHROPIC_TEXT)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 50 * MS), min_size=9, max_size=9),
    st.sets(st.integers(0, 8), max_size=4),  # not after the unterminated last frame
)
def test_invariants_whatever_the_times(steps: list[int], keepalive_at: set[int]) -> None:
    frames, protocol = FIXTURE_FRAMES
    raws = [f.raw for f in frames]
    for i in sorted(keepalive_at, reverse=True):
        raws.insert(i, KEEPALIVE)
        steps.insert(i, 0)
    times, now = [], 0
    for step in steps[: len(raws)] + [0] * (len(raws) - len(steps)):
        now += step
        times.append(now)
    leg = Leg(protocol, frames=[CapturedFrame(r, t) for r, t in zip(raws, times, strict=True)])
    t = LegReading(leg).timing
    assert t.keepalives == len(keepalive_at)
    assert t.gap_p50_ms is not None and t.gap_p90_ms is not None and t.gap_max_ms is not None
    assert 0 <= t.gap_p50_ms <= t.gap_p90_ms <= t.gap_max_ms
    assert t.gap_max_ms == max(b - a for a, b in zip(times, times[1:], strict=False)) / 1e6
    assert t.longest_silence_ms == t.gap_max_ms  # no headers time: gaps only
    assert t.first_byte_ms is not None and t.first_data_ms is not None
    assert t.first_content_ms is not None and t.total_ms is not None
    assert t.first_byte_ms <= t.first_data_ms <= t.first_content_ms <= t.total_ms
    assert t.output_tokens == 6
    if t.tokens_per_second is not None:
        assert t.tokens_per_second > 0
    else:
        assert t.generation_ms == 0.0


# -- the chart series -------------------------------------------------------------------


def test_series_of_a_text_stream_at_known_times() -> None:
    leg = leg_at(ANTHROPIC_TEXT, BASIC_TIMES, headers_ns=5 * MS, ended_ns=50 * MS)
    s = LegReading(leg).series
    assert s.tokens == [(20.0, 1), (30.0, 2), (45.0, 3)]  # "Hello", " there", "!"
    waits = [5.0, 2, 1, 7, 10, 15, 1, 1, 1]  # the first since the headers
    assert s.gaps == [(float(t), float(g)) for t, g in zip(BASIC_TIMES, waits, strict=True)]
    assert s.keepalives == [] and s.total_ms == 50.0
    assert s.longest_gap == 5 and not s.empty
    t = LegReading(leg).timing
    assert s.gaps[5][1] == t.longest_silence_ms and t.longest_silence_frame == 5


def test_series_without_a_headers_time_start_with_no_wait() -> None:
    s = LegReading(leg_at(ANTHROPIC_TEXT, BASIC_TIMES)).series
    assert s.gaps[0] == (10.0, 0.0) and s.total_ms == 48.0


def test_series_mark_keepalives_and_count_every_chunk() -> None:
    frames, protocol = frames_of(ANTHROPIC_TEXT)
    raws = [KEEPALIVE, *[f.raw for f in frames[:4]], KEEPALIVE, *[f.raw for f in frames[4:]]]
    times = [3, 10, 12, 13, 20, 25, 30, 45, 46, 47, 48]
    leg = Leg(protocol, frames=[CapturedFrame(r, t * MS) for r, t in zip(raws, times, strict=True)])
    s = LegReading(leg).series
    assert s.keepalives == [3.0, 25.0]
    assert len(s.gaps) == LegReading(leg).timing.frames == 11
    assert s.tokens[-1] == (45.0, 3)


def test_a_frame_split_over_chunks_counts_when_it_is_complete() -> None:
    frames, protocol = frames_of(ANTHROPIC_TEXT)
    hello = frames[3].raw
    raws = [f.raw for f in frames[:3]] + [hello[:20], hello[20:]] + [f.raw for f in frames[4:]]
    times = [10, 12, 13, 18, 20, 30, 45, 46, 47, 48]
    leg = Leg(protocol, frames=[CapturedFrame(r, t * MS) for r, t in zip(raws, times, strict=True)])
    s = LegReading(leg).series
    assert s.tokens[0] == (20.0, 1)
    assert [t for t, _ in s.gaps] == [float(t) for t in times]


def test_several_deltas_in_one_chunk_are_one_point() -> None:
    frames, protocol = frames_of(ANTHROPIC_TEXT)
    raws = [f.raw for f in frames[:3]] + [b"".join(f.raw for f in frames[3:6])]
    raws += [f.raw for f in frames[6:]]
    leg = Leg(protocol, frames=[CapturedFrame(r, i * MS) for i, r in enumerate(raws)])
    assert LegReading(leg).series.tokens == [(3.0, 3)]


def test_series_of_a_body_or_of_nothing_are_empty() -> None:
    body = Leg("openai-chat", 200, body=b"{}", headers_ns=MS, ended_ns=2 * MS)
    assert LegReading(body).series == LegSeries()
    assert LegReading(body).timing == timing_of(body, decode_leg(body))
    nothing = LegReading(Leg("anthropic", ended_ns=4 * MS)).series
    assert nothing.empty and nothing.longest_gap is None and nothing.total_ms == 4.0


def _stripped(frames: list[Frame]) -> list[Frame]:
    return [f for f in frames if '"usage"' not in (f.data or "")]


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_series_agree_with_the_timing_on_every_recording(path: Path) -> None:
    frames, protocol = frames_of(path)
    for kept in (frames, _stripped(frames)):  # with the provider's usage, and without
        times = [(i * i) % 7 + 3 * i for i in range(len(kept))]  # uneven, increasing
        captured = [CapturedFrame(f.raw, t * MS) for f, t in zip(kept, times, strict=True)]
        leg = Leg(protocol, frames=captured, headers_ns=0)
        reading = LegReading(leg)
        s, t = reading.series, reading.timing
        decoded = decode_leg(leg)  # each alone, scanning on its own: the same figures
        assert (timing_of(leg, decoded), series_of(leg, decoded)) == (t, s)
        assert len(s.gaps) == t.frames == len(kept)
        assert len(s.keepalives) == t.keepalives
        assert s.longest_gap is not None
        assert s.gaps[s.longest_gap][1] == t.longest_silence_ms
        assert s.longest_gap == t.longest_silence_frame
        counts = [n for _, n in s.tokens]
        assert counts == sorted(set(counts)) and all(n > 0 for n in counts)
        if t.tokens_estimated:
            assert (counts[-1] if counts else 0) == t.output_tokens
        if s.tokens:
            assert t.generation_ms == s.tokens[-1][0] - s.tokens[0][0]
            assert t.first_content_ms is None or t.first_content_ms >= s.tokens[0][0]


def test_without_usage_the_series_end_at_the_estimate() -> None:
    frames, protocol = _without_usage(CHAT_USAGE)
    leg = Leg(protocol, frames=[CapturedFrame(f.raw, i * MS) for i, f in enumerate(frames)])
    t = LegReading(leg).timing
    assert t.tokens_estimated and t.output_tokens is not None and t.output_tokens > 2
    assert LegReading(leg).series.tokens[-1][1] == t.output_tokens
