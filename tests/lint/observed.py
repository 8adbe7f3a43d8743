"""A stream as the structural checks see it (``lint.stream.Observed``), built the way
``lint.check.lint`` builds it: the frames, their JSON payloads, and the events the
protocol's decoder makes of them, each with its frame number."""

from __future__ import annotations

from streamscope.codecs.frames import decode_frames
from streamscope.lint.stream import Observed, frame_payloads
from streamscope.wire import decode_all


def observe(data: bytes, protocol: str) -> Observed:
    frames = decode_all(data)
    obs = Observed(protocol, frames, frame_payloads(frames))
    obs.events = list(decode_frames(frames, protocol).events)
    return obs
