"""Translation between protocols: decode with the source codec, encode with the target's.

This is the only translation path in StreamScope. It works frame by frame (the proxy
feeds it as frames arrive) and keeps the findings of both sides.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from streamscope.codecs import EncodeOptions, get_codec
from streamscope.findings import Finding
from streamscope.model.assemble import Assembler
from streamscope.model.events import Event
from streamscope.wire.frame import Frame


class StreamTranslator:
    """Decode ``source`` frames, encode ``target`` frames; one instance per stream.

    :attr:`assembler` holds the snapshot of what the stream amounts to so far.
    """

    def __init__(self, source: str, target: str, options: EncodeOptions | None = None) -> None:
        self.source = source
        self.target = target
        self.options = options or EncodeOptions()
        self.assembler = Assembler()
        self.decoder = get_codec(source).stream_decoder()
        self.encoder = get_codec(target).stream_encoder(self.options)

    def _encode(self, events: list[Event]) -> list[bytes]:
        out: list[bytes] = []
        for ev in events:
            self.assembler.feed(ev)
            out += self.encoder.encode(ev)
        return out

    def feed(self, frame: Frame) -> list[bytes]:
        """Target frames for one source frame."""
        return self._encode(self.decoder.decode(frame))

    def finish(self) -> list[bytes]:
        """End of the source stream: the target stream is completed and terminated."""
        out = self._encode(self.decoder.finish())
        return out + self.encoder.finish()

    @property
    def findings(self) -> list[Finding]:
        return self.decoder.findings + self.encoder.findings


def translate_frames(
    frames: Iterable[Frame], source: str, target: str, options: EncodeOptions | None = None
) -> Iterator[bytes]:
    """Translate a whole recorded stream; findings are lost (use StreamTranslator for them)."""
    t = StreamTranslator(source, target, options or EncodeOptions())
    for frame in frames:
        yield from t.feed(frame)
    yield from t.finish()
