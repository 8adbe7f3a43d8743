"""Timing of one leg of a flow: time to first token, tokens/s, gaps, keepalives.

Computed from the captured frames alone (no I/O, no clock): the leg's chunks are read
as SSE frames (:func:`streamscope.capture.sse.leg_frames`; a frame arrived with the
chunk that completed it) and decoded with the leg's protocol's codec. All times are in
milliseconds since the flow started, like the capture's; ``None`` means unknown.

- ``headers_ms``: the response headers arrived (upstream leg) / were sent (client leg);
- ``first_byte_ms``: the first chunk; ``first_data_ms``: the first frame with ``data``
  (keepalive comments do not count);
- ``first_reasoning_ms`` / ``first_content_ms`` / ``first_tool_call_ms``: the frames that
  brought the first reasoning (or redacted reasoning), the first answer text or refusal,
  the first tool call start;
- ``total_ms``: the leg ended (``ended_ns``; else its last chunk);
- ``output_tokens``: the stream's final usage (``tokens_estimated`` False); without one,
  one token per non-empty text, reasoning, refusal or tool-argument delta (True);
- ``tokens_per_second``: over the generation window, from the first output delta
  (reasoning, text, refusal or tool arguments) to the last: ``(tokens - 1) / window``,
  since the first token opens the window; None under two tokens or for a zero window;
- ``gap_*``: the gaps between consecutive chunks (p50 and p90 interpolated linearly
  between ranks, as numpy's default does), None with fewer than two chunks;
- ``longest_silence_ms`` and ``longest_silence_frame``: the longest wait the reader of
  this leg sat through once the headers were in: the headers -> first chunk wait, or an
  inter-chunk gap; the frame is the index in ``leg.frames`` of the chunk that ended it;
- ``keepalives``: comment-only frames (``: keepalive``).

A leg with a whole body (not a stream) has headers and total times only, and its output
tokens from the usage in the body (as its protocol's ``decode_response`` reads it).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from streamscope.capture.flow import Flow, Leg
from streamscope.capture.sse import leg_frames
from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.model.assemble import merge_usage
from streamscope.model.events import (
    Event,
    ReasoningDelta,
    RedactedReasoning,
    RefusalDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    Usage,
)


@dataclass(frozen=True, slots=True)
class LegTiming:
    """The timing of one leg (see the module docstring for each field)."""

    streamed: bool
    frames: int  # captured chunks
    headers_ms: float | None = None
    first_byte_ms: float | None = None
    first_data_ms: float | None = None
    first_reasoning_ms: float | None = None
    first_content_ms: float | None = None
    first_tool_call_ms: float | None = None
    total_ms: float | None = None
    output_tokens: int | None = None
    tokens_estimated: bool = False
    generation_ms: float | None = None  # the generation window
    tokens_per_second: float | None = None
    gap_p50_ms: float | None = None
    gap_p90_ms: float | None = None
    gap_max_ms: float | None = None
    longest_silence_ms: float | None = None
    longest_silence_frame: int | None = None
    keepalives: int = 0

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _ms(ns: int | None) -> float | None:
    return None if ns is None else ns / 1e6


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of non-empty ``values``, interpolated linearly."""
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def leg_timing(leg: Leg) -> LegTiming:
    """The timing of ``leg`` (a stream's, or a whole body's)."""
    if leg.body is not None:
        return _body_timing(leg)
    if not leg.frames:
        return LegTiming(
            streamed=True, frames=0, headers_ms=_ms(leg.headers_ns), total_ms=_ms(leg.ended_ns)
        )
    decoder = get_codec(leg.protocol).stream_decoder() if leg.protocol in PROTOCOLS else None
    first_data: int | None = None
    first_reasoning: int | None = None
    first_content: int | None = None
    first_tool: int | None = None
    token_times: list[int] = []
    usage: Usage | None = None
    keepalives = 0

    def take(events: list[Event], t: int) -> None:
        nonlocal first_reasoning, first_content, first_tool, usage
        for ev in events:
            if isinstance(ev, Usage):
                usage = merge_usage(usage, ev)
            elif isinstance(ev, TextDelta | RefusalDelta):
                if ev.text:
                    first_content = t if first_content is None else first_content
                    token_times.append(t)
            elif isinstance(ev, ReasoningDelta):
                if ev.text:
                    first_reasoning = t if first_reasoning is None else first_reasoning
                    token_times.append(t)
            elif isinstance(ev, RedactedReasoning):
                first_reasoning = t if first_reasoning is None else first_reasoning
            elif isinstance(ev, ToolCallDelta):
                if ev.arguments:
                    token_times.append(t)
            elif isinstance(ev, ToolCallStart):
                first_tool = t if first_tool is None else first_tool

    for _, frame in leg_frames(leg):
        t = frame.arrival_ns
        if frame.is_comment_only:
            keepalives += 1
        if frame.data is not None and first_data is None:
            first_data = t
        if decoder is not None:
            take(decoder.decode(frame), t)
    last = leg.frames[-1].t_ns
    if decoder is not None:
        take(decoder.finish(), last)

    if usage is not None and usage.output_tokens is not None:
        tokens, estimated = usage.output_tokens, False
    else:
        tokens, estimated = len(token_times), True
    window = token_times[-1] - token_times[0] if token_times else None
    rate = None
    if window is not None and window > 0 and tokens >= 2:
        rate = (tokens - 1) / (window / 1e9)

    gaps = [max(0, b.t_ns - a.t_ns) for a, b in pairwise(leg.frames)]
    silences = [(g, i + 1) for i, g in enumerate(gaps)]
    if leg.headers_ns is not None:
        silences.insert(0, (max(0, leg.frames[0].t_ns - leg.headers_ns), 0))
    silence, silence_frame = max(silences, key=lambda s: s[0]) if silences else (None, None)
    gaps_ms = [g / 1e6 for g in gaps]
    return LegTiming(
        streamed=True,
        frames=len(leg.frames),
        headers_ms=_ms(leg.headers_ns),
        first_byte_ms=_ms(leg.frames[0].t_ns),
        first_data_ms=_ms(first_data),
        first_reasoning_ms=_ms(first_reasoning),
        first_content_ms=_ms(first_content),
        first_tool_call_ms=_ms(first_tool),
        total_ms=_ms(leg.ended_ns if leg.ended_ns is not None else last),
        output_tokens=tokens,
        tokens_estimated=estimated,
        generation_ms=_ms(window),
        tokens_per_second=rate,
        gap_p50_ms=percentile(gaps_ms, 0.5) if gaps_ms else None,
        gap_p90_ms=percentile(gaps_ms, 0.9) if gaps_ms else None,
        gap_max_ms=max(gaps_ms) if gaps_ms else None,
        longest_silence_ms=_ms(silence),
        longest_silence_frame=silence_frame,
        keepalives=keepalives,
    )


def _body_timing(leg: Leg) -> LegTiming:
    tokens: int | None = None
    if leg.protocol in PROTOCOLS and leg.body:
        try:
            body = json.loads(leg.body)
            codec = get_codec(leg.protocol)
            usage = codec.decode_response(body).usage if isinstance(body, dict) else None
        except (ValueError, TypeError, KeyError, AttributeError):
            usage = None  # not this protocol's body: the tokens stay unknown
        tokens = usage.output_tokens if usage is not None else None
    return LegTiming(
        streamed=False,
        frames=0,
        headers_ms=_ms(leg.headers_ns),
        total_ms=_ms(leg.ended_ns),
        output_tokens=tokens,
    )


def proxy_overhead_ms(flow: Flow) -> float | None:
    """What the proxy added before the first data frame: the client leg's first data
    frame minus the upstream leg's (None when either leg has none)."""
    client = _first_data_ns(flow.client)
    upstream = _first_data_ns(flow.upstream)
    if client is None or upstream is None:
        return None
    return (client - upstream) / 1e6


def _first_data_ns(leg: Leg) -> int | None:
    return next((f.arrival_ns for _, f in leg_frames(leg) if f.data is not None), None)


__all__ = ["LegTiming", "leg_timing", "percentile", "proxy_overhead_ms"]
