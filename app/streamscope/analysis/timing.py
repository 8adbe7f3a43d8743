"""Timing of one leg of a flow: time to first token, tokens/s, gaps, keepalives.

Computed from the captured frames alone (no I/O, no clock), from the leg decoded once
(:func:`streamscope.analysis.decode.decode_leg`: its chunks read as SSE frames, a frame
arriving with the chunk that completed it, decoded with the protocol's codec). All times
are in milliseconds since the flow started, like the capture's; ``None`` means unknown.

- ``frames``: the SSE frames (comments and keepalives included): the frames table's
  rows; ``chunks``: the captured chunks (network reads), which the gaps are between;

- ``headers_ms``: the response headers arrived (upstream leg) / were sent (client leg);
- ``first_byte_ms``: the first chunk; ``first_data_ms``: the first frame with ``data``
  (keepalive comments do not count);
- ``first_token_ms``: the time to first token (TTFT), the one StreamScope shows
  everywhere: the frame that brought the first output a client can show, reasoning
  included (:func:`streamscope.model.events.is_token` says which and why);
- ``first_reasoning_ms`` / ``first_content_ms`` / ``first_tool_call_ms``: the frames that
  brought the first reasoning (or redacted reasoning), the first answer text or refusal,
  the first tool call start (the earliest of the three is ``first_token_ms``);
- ``total_ms``: the leg ended (``ended_ns``; else its last chunk);
- ``output_tokens``: the stream's final usage (``tokens_estimated`` False, unless the
  proxy marked it estimated with its comment: ``model.estimate``); without one,
  one token per non-empty text, reasoning, refusal or tool-argument delta (True);
- ``tokens_per_second``: over the generation window, from the first output delta
  (reasoning, text, refusal or tool arguments) to the last: ``(tokens - 1) / window``,
  since the first token opens the window; None under two tokens or for a zero window;
- ``gap_*``: the gaps between consecutive chunks (p50 and p90 interpolated linearly
  between ranks, as numpy's default does), None with fewer than two chunks;
- ``longest_silence_ms`` and ``longest_silence_frame``: the longest wait the reader of
  this leg sat through once the headers were in: the headers -> first chunk wait, or an
  inter-chunk gap; the frame is the number (the frames table's row) of the first SSE
  frame completed by the chunk that ended it;
- ``keepalives``: comment-only frames (``: keepalive``).

A leg with a whole body (not a stream) has headers and total times only, and its output
tokens from the usage in the body (as its protocol's ``decode_response`` reads it).

:func:`series_of` gives the same leg as series for a chart: the cumulative output
tokens over time (counted from the deltas exactly as the estimate above counts them),
the gap before every captured chunk, and the keepalives' times. Both read the leg
through one pass (``scan``) over the decoded leg, so the chart and the figures always
agree; :class:`streamscope.analysis.reading.LegReading` decodes a leg once and takes
both from it (and the lint and the events).
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from streamscope.analysis.decode import Decoded
from streamscope.capture.flow import Leg
from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.model.assemble import merge_usage
from streamscope.model.estimate import DELTAS, is_note
from streamscope.model.events import TRAITS, Event, Usage, is_token

# What output each event type brings (``Traits.output``): which first time it may set.
_OUTPUT = {tag: traits.output for tag, traits in TRAITS.items()}


@dataclass(frozen=True, slots=True)
class LegTiming:
    """The timing of one leg (see the module docstring for each field)."""

    streamed: bool
    frames: int  # SSE frames: the frames table's rows
    headers_ms: float | None = None
    first_byte_ms: float | None = None
    first_data_ms: float | None = None
    first_token_ms: float | None = None  # TTFT
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
    chunks: int = 0  # captured chunks (network reads): what the gaps are between

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


@dataclass(slots=True)
class Scan:
    """What one pass over a streamed leg's SSE frames found (times in ns)."""

    first_data: int | None = None
    first_token: int | None = None
    first_reasoning: int | None = None
    first_content: int | None = None
    first_tool: int | None = None
    # (time, tokens) for each SSE frame (or the decoder's end) that added output tokens
    token_frames: list[tuple[int, int]] = field(default_factory=list)
    usage: Usage | None = None
    usage_estimated: bool = False  # StreamScope's proxy estimated it (model.estimate)
    keepalives: list[int] = field(default_factory=list)

    def take(self, events: list[Event], t: int) -> None:
        tokens = 0
        for ev in events:
            if isinstance(ev, Usage):
                self.usage = merge_usage(self.usage, ev)
            elif is_token(ev):  # (output, and no empty delta: model.events)
                tokens += ev.type in DELTAS  # one each, as the estimate counts them
                self.first_token = t if self.first_token is None else self.first_token
                output = _OUTPUT[ev.type]
                if output == "content":
                    self.first_content = t if self.first_content is None else self.first_content
                elif output == "reasoning":
                    self.first_reasoning = (
                        t if self.first_reasoning is None else self.first_reasoning
                    )
                elif ev.type == "tool_call_start":  # (a call's start, not its arguments)
                    self.first_tool = t if self.first_tool is None else self.first_tool
        if tokens:
            self.token_frames.append((t, tokens))

    @property
    def delta_count(self) -> int:
        return sum(n for _, n in self.token_frames)


def scan(leg: Leg, decoded: Decoded) -> Scan:
    """One pass over a streamed leg's (with frames) decoded SSE frames and events."""
    out = Scan()
    frames, events = decoded.frames, decoded.events
    at, count = 0, len(events)
    noted = False  # the proxy's note that the next frame's usage is estimated
    # (a protocol whose keepalive is a chunk its clients read as nothing, not a comment)
    codec = get_codec(decoded.protocol) if decoded.protocol in PROTOCOLS else None
    codec = codec if codec is not None and codec.keepalive_is_data else None
    for index, frame in enumerate(frames):
        t = frame.arrival_ns
        if frame.is_comment_only:
            if any(is_note(c) for c in frame.comments):
                noted = True
            else:
                out.keepalives.append(t)
            continue
        if codec is not None and codec.is_keepalive(frame):
            out.keepalives.append(t)
            while at < count and events[at][0] == index:
                at += 1
            continue
        if frame.data is not None and out.first_data is None:
            out.first_data = t
        start = at
        while at < count and events[at][0] == index:
            at += 1
        if at > start:
            taken = [ev for _, ev in events[start:at]]
            out.take(taken, t)
            if any(isinstance(ev, Usage) and ev.output_tokens is not None for ev in taken):
                out.usage_estimated = noted  # (the last output count decides)
        noted = False
    if decoded.protocol is not None:
        out.take([ev for n, ev in events[at:] if n is None], leg.frames[-1].t_ns)
    return out


def _chunk_gaps(leg: Leg) -> list[int]:
    """The wait before each captured chunk, in ns (never negative): the first one's
    since the headers (0 when their time is unknown), then since the previous chunk."""
    frames = leg.frames
    first = 0 if leg.headers_ns is None else max(0, frames[0].t_ns - leg.headers_ns)
    return [first, *(max(0, b.t_ns - a.t_ns) for a, b in pairwise(frames))]


def timing_of(leg: Leg, decoded: Decoded, found: Scan | None = None) -> LegTiming:
    """The timing of ``leg`` from its decoding (and its :func:`scan`, when done)."""
    if leg.body is not None:
        return _body_timing(leg)
    if not leg.frames:
        return LegTiming(
            streamed=True, frames=0, headers_ms=_ms(leg.headers_ns), total_ms=_ms(leg.ended_ns)
        )
    scan_ = scan(leg, decoded) if found is None else found
    last = leg.frames[-1].t_ns
    usage = scan_.usage
    if usage is not None and usage.output_tokens is not None:
        tokens, estimated = usage.output_tokens, scan_.usage_estimated
    else:
        tokens, estimated = scan_.delta_count, True
    token_frames = scan_.token_frames
    window = token_frames[-1][0] - token_frames[0][0] if token_frames else None
    rate = None
    if window is not None and window > 0 and tokens >= 2:
        rate = (tokens - 1) / (window / 1e9)

    waits = _chunk_gaps(leg)
    gaps = waits[1:]  # between chunks
    silences = [(g, i) for i, g in enumerate(waits)]
    if leg.headers_ns is None:
        silences = silences[1:]  # no headers time: no first wait to count
    silence, chunk = max(silences, key=lambda s: s[0]) if silences else (None, None)
    # the silence ended with a chunk: its frame is the first SSE frame that chunk completed
    silence_frame = None
    if chunk is not None:
        row = bisect_left(decoded.chunks, chunk)
        silence_frame = row if row < len(decoded.frames) else None
    gaps_ms = [g / 1e6 for g in gaps]
    return LegTiming(
        streamed=True,
        frames=len(decoded.frames),
        headers_ms=_ms(leg.headers_ns),
        first_byte_ms=_ms(leg.frames[0].t_ns),
        first_data_ms=_ms(scan_.first_data),
        first_token_ms=_ms(scan_.first_token),
        first_reasoning_ms=_ms(scan_.first_reasoning),
        first_content_ms=_ms(scan_.first_content),
        first_tool_call_ms=_ms(scan_.first_tool),
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
        keepalives=len(scan_.keepalives),
        chunks=len(leg.frames),
    )


@dataclass(frozen=True, slots=True)
class LegSeries:
    """A streamed leg as series for a chart; times in ms since the flow started.

    - ``tokens``: ``(t_ms, cumulative output tokens)`` at each arrival that added tokens
      (the SSE frames completed by one chunk make one point), counted from the deltas as
      :func:`timing_of` estimates them (:meth:`Scan.take`); the provider's usage
      count, when there is one, may differ;
    - ``gaps``: ``(t_ms, gap_ms)`` for every captured chunk: the wait before it (the
      first chunk's since the headers, 0 when their time is unknown), so the longest
      gap is :attr:`LegTiming.longest_silence_ms` when the headers' time is known;
    - ``keepalives``: the times of comment-only frames;
    - ``total_ms``: when the leg ended (else its last chunk), None without frames;
    - ``gap_frames``: for each of ``gaps``, the first SSE frame its chunk completed (or
      the next), numbered as the frames table and :attr:`LegTiming.longest_silence_frame`
      number them; None past the last frame.
    """

    tokens: list[tuple[float, int]] = field(default_factory=list)
    gaps: list[tuple[float, float]] = field(default_factory=list)
    keepalives: list[float] = field(default_factory=list)
    total_ms: float | None = None
    gap_frames: list[int | None] = field(default_factory=list)

    @property
    def longest_gap(self) -> int | None:
        """The index in :attr:`gaps` of the longest gap (the first of equals), or None."""
        if not self.gaps:
            return None
        return max(range(len(self.gaps)), key=lambda i: self.gaps[i][1])

    @property
    def empty(self) -> bool:
        return not self.gaps


def series_of(leg: Leg, decoded: Decoded, found: Scan | None = None) -> LegSeries:
    """``leg`` as chart series from its decoding (and its :func:`scan`, when done)."""
    if leg.body is not None or not leg.frames:
        return LegSeries(total_ms=_ms(leg.ended_ns) if leg.body is None else None)
    scan_ = scan(leg, decoded) if found is None else found
    tokens: list[tuple[float, int]] = []
    count = 0
    for t, n in scan_.token_frames:
        count += n
        if tokens and tokens[-1][0] == t / 1e6:  # frames of one chunk: one point
            tokens[-1] = (t / 1e6, count)
        else:
            tokens.append((t / 1e6, count))
    gaps = [(f.t_ns / 1e6, g / 1e6) for f, g in zip(leg.frames, _chunk_gaps(leg), strict=True)]
    end = leg.ended_ns if leg.ended_ns is not None else leg.frames[-1].t_ns
    frames = [_first_frame(decoded, chunk) for chunk in range(len(gaps))]
    return LegSeries(tokens, gaps, [t / 1e6 for t in scan_.keepalives], end / 1e6, frames)


def _first_frame(decoded: Decoded, chunk: int) -> int | None:
    """The first SSE frame ``chunk`` completed, or the next one after it (as
    :attr:`LegTiming.longest_silence_frame` counts it); None past the last frame."""
    row = bisect_left(decoded.chunks, chunk)
    return row if row < len(decoded.frames) else None


def _body_timing(leg: Leg) -> LegTiming:
    tokens: int | None = None
    if leg.protocol in PROTOCOLS and leg.body:
        # not this protocol's response (an error, say): the tokens stay unknown
        response = get_codec(leg.protocol).read_body(leg.body).response
        usage = response.usage if response is not None else None
        tokens = usage.output_tokens if usage is not None else None
    return LegTiming(
        streamed=False,
        frames=0,
        headers_ms=_ms(leg.headers_ns),
        total_ms=_ms(leg.ended_ns),
        output_tokens=tokens,
    )


def overhead_ms(upstream: LegTiming, client: LegTiming) -> float | None:
    """What the proxy added before the first data frame: the client leg's first data
    frame minus the upstream leg's (None when either leg has none)."""
    if client.first_data_ms is None or upstream.first_data_ms is None:
        return None
    return client.first_data_ms - upstream.first_data_ms


__all__ = [
    "LegSeries",
    "LegTiming",
    "overhead_ms",
    "Scan",
    "percentile",
    "scan",
    "series_of",
    "timing_of",
]
