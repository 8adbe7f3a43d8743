"""Offline translation of a recorded stream (the ``translate`` command's core).

There is one translation path in StreamScope,
:class:`~streamscope.translation.pipeline.StreamPipeline`; this module only drives it over
a whole recording.
"""

from __future__ import annotations

from collections.abc import Iterable

from streamscope.codecs import EncodeOptions, get_codec
from streamscope.translation.pipeline import StreamPipeline
from streamscope.wire.frame import Frame


def translate_frames(
    frames: Iterable[Frame], source: str, target: str, options: EncodeOptions | None = None
) -> tuple[list[bytes], StreamPipeline]:
    """The target stream's frames for a recorded source stream, and the pipeline (its
    findings and assembled response). A recording that stops early is closed cleanly."""
    pipeline = StreamPipeline(
        get_codec(source), get_codec(target), options=options, on_incomplete="close"
    )
    out: list[bytes] = []
    for frame in frames:
        out += pipeline.feed(frame)
    out += pipeline.finish()
    return out, pipeline
