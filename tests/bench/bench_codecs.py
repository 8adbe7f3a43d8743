"""Benchmark: decode -> encode throughput of every protocol pair, in canonical events/s.

Not a test (nothing here is collected by pytest): run it and read the figures.

    .venv/bin/python -m tests.bench.bench_codecs [--chunks 20000] [--repeat 5]

For each source protocol a 20,000-chunk stream is produced by that protocol's own
encoder from a realistic canonical stream (a reasoning run, then answer text, then a
tool call with streamed arguments, usage, finish). Each frame is fed to the SSE decoder
as its own network chunk (how a streaming upstream delivers it), decoded with the source
codec and encoded with the target codec. Timing covers SSE framing + decode + encode;
the process is pinned to one core.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from streamscope.codecs import PROTOCOLS, EncodeOptions, get_codec
from streamscope.model.events import (
    End,
    Event,
    Finish,
    MessageStart,
    ReasoningDelta,
    ReasoningSignature,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from streamscope.wire import SSEDecoder

WORDS = "the quick brown fox jumps over a lazy dog while streaming tokens arrive".split()


def canonical_stream(chunks: int) -> list[Event]:
    """About ``chunks`` content events: 10% reasoning, 80% text, 10% tool arguments."""
    n_reason, n_tool = chunks // 10, chunks // 10
    n_text = chunks - n_reason - n_tool
    events: list[Event] = [MessageStart("msg_bench", "bench-model", 1_700_000_000)]
    events += [ReasoningDelta(f" {WORDS[i % len(WORDS)]}") for i in range(n_reason)]
    events.append(ReasoningSignature("sig-bench"))
    events += [TextDelta(f" {WORDS[i % len(WORDS)]}") for i in range(n_text)]
    events.append(ToolCallStart(0, "call_bench", "get_weather"))
    events.append(ToolCallDelta(0, '{"city": "'))
    events += [ToolCallDelta(0, "x") for _ in range(n_tool - 2)]
    events.append(ToolCallDelta(0, '"}'))
    events.append(ToolCallEnd(0))
    events += [Usage(1200, chunks), Finish("tool_calls"), End()]
    return events


def wire_stream(protocol: str, events: list[Event]) -> list[bytes]:
    enc = get_codec(protocol).stream_encoder(EncodeOptions(include_usage=True))
    frames: list[bytes] = []
    for ev in events:
        frames += enc.encode(ev)
    return frames + enc.finish()


def run_pair(chunks: list[bytes], source: str, target: str) -> tuple[float, int]:
    """Seconds for one pass, and the number of canonical events decoded."""
    src, dst = get_codec(source), get_codec(target)
    start = time.perf_counter()
    sse = SSEDecoder()
    decoder = src.stream_decoder()
    encoder = dst.stream_encoder(EncodeOptions(include_usage=True))
    n_events = 0
    out = 0
    for chunk in chunks:
        for frame in sse.feed(chunk, 0):
            for ev in decoder.decode(frame):
                n_events += 1
                out += len(encoder.encode(ev))
    for frame in sse.flush(0):
        for ev in decoder.decode(frame):
            n_events += 1
            out += len(encoder.encode(ev))
    for ev in decoder.finish():
        n_events += 1
        out += len(encoder.encode(ev))
    out += len(encoder.finish())
    return time.perf_counter() - start, n_events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    events = canonical_stream(args.chunks)
    streams = {p: wire_stream(p, events) for p in PROTOCOLS}
    print(f"decode -> encode, {args.chunks:,}-chunk stream, median of {args.repeat} runs, one core")
    print()
    print("| source -> target | frames in | events | median ms | events/s (median) |")
    print("|---|---:|---:|---:|---:|")
    for source in PROTOCOLS:
        for target in PROTOCOLS:
            times = []
            n = 0
            for _ in range(args.repeat):
                seconds, n = run_pair(streams[source], source, target)
                times.append(seconds)
            med = statistics.median(times)
            print(
                f"| {source} -> {target} | {len(streams[source]):,} | {n:,} "
                f"| {med * 1000:.0f} | {n / med:,.0f} |"
            )


if __name__ == "__main__":
    main()
