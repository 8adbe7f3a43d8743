"""A captured leg's frames decoded: :func:`decode_leg` reads a leg as SSE frames
(:func:`streamscope.capture.sse.leg_frames`) and runs the one frame -> event driver of
:mod:`streamscope.codecs.frames` over them (its names are re-exported here). A frame's
number is its index among the leg's SSE frames.
"""

from __future__ import annotations

from streamscope.capture.flow import Leg
from streamscope.capture.sse import leg_frames
from streamscope.codecs import PROTOCOLS
from streamscope.codecs.frames import Decoded, FrameReader, Numbered, decode_frames


def decode_leg(leg: Leg, protocol: str | None = None) -> Decoded:
    """A captured leg's SSE frames decoded with ``protocol`` (default: the leg's own, when
    known); a body leg has no frames."""
    if protocol is None and leg.protocol in PROTOCOLS:
        protocol = leg.protocol
    pairs = leg_frames(leg)
    frames = [f for _, f in pairs]
    if not frames:
        return Decoded(protocol)
    return decode_frames(frames, protocol, [c for c, _ in pairs])


__all__ = ["Decoded", "FrameReader", "Numbered", "decode_frames", "decode_leg"]
