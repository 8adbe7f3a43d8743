"""One proxied stream, frame by frame: upstream frames in, client bytes out. No I/O.

Two modes, as an upstream's ``mode`` says:

- **repair**: decode with the upstream's codec, encode with the client's; a broken
  upstream stream comes out well-formed.
- **passthrough** (only when client and upstream speak the same protocol): the client
  gets the upstream's bytes unchanged. The frames are still decoded on the side, so the
  pipeline knows whether the stream ended properly and can close it correctly if not.

Either way, when the upstream breaks (connection dropped, idle too long), :meth:`fail`
writes the client protocol's error frame and terminator, so no client is left hanging.
A stream that simply stops without its terminator is such a failure for a live client
(``on_incomplete="error"``, the proxy); ``translate`` of a trimmed recording closes it
cleanly instead (``on_incomplete="close"``), and the decoder's finding says so.
"""

from __future__ import annotations

from typing import Literal

from streamscope.codecs import EncodeOptions, StreamEncoder, get_codec
from streamscope.findings import Finding
from streamscope.model.assemble import Assembler
from streamscope.model.events import Error, Event
from streamscope.wire.frame import Frame


class StreamPipeline:
    def __init__(
        self,
        source: str,
        target: str,
        *,
        passthrough: bool = False,
        options: EncodeOptions | None = None,
        on_incomplete: Literal["error", "close"] = "error",
    ) -> None:
        if passthrough and source != target:
            raise ValueError("passthrough needs the same protocol on both sides")
        self.source, self.target = source, target
        self.passthrough = passthrough
        self.on_incomplete = on_incomplete
        self.options = options or EncodeOptions()
        self.decoder = get_codec(source).stream_decoder()
        self.assembler = Assembler()
        self._encoder: StreamEncoder | None = (
            None if passthrough else get_codec(target).stream_encoder(self.options)
        )
        self._events: list[Event] = []  # passthrough only: to close a broken stream
        self.closed = False  # the client stream is complete (terminator written)
        self.first_content_ns: int | None = None

    # -- feeding ------------------------------------------------------------------------

    def _decode(self, frame: Frame) -> list[Event]:
        events = self.decoder.decode(frame)
        feed = self.assembler.feed
        for ev in events:
            feed(ev)
        if self.first_content_ns is None and events and any(_is_content(e) for e in events):
            self.first_content_ns = frame.arrival_ns
        return events

    def feed(self, frame: Frame) -> list[bytes]:
        """Client bytes for one upstream frame."""
        if self.closed:
            return []
        events = self._decode(frame)
        if self._encoder is None:
            self._events += events
            if self.decoder.terminated or self.assembler.response.error is not None:
                self.closed = self.decoder.terminated
            return [frame.raw]
        out: list[bytes] = []
        encode = self._encoder.encode
        for ev in events:
            out += encode(ev)
        if self.decoder.terminated or self.assembler.response.error is not None:
            out += self._encoder.finish()
            self.closed = True
        return out

    def finish(self) -> list[bytes]:
        """The upstream stream ended. If it ended without its terminator, the client gets
        an error (an interrupted answer must not look complete)."""
        if self.closed:
            return []
        for ev in self.decoder.finish():
            self.assembler.feed(ev)
        incomplete = not self.decoder.terminated and self.assembler.response.error is None
        if incomplete and self.on_incomplete == "error":
            return self.fail(
                Error(
                    f"the upstream ({self.source}) stream ended before it was complete",
                    "api_error",
                    "upstream_incomplete",
                )
            )
        self.closed = True
        if self._encoder is None:
            return []
        return self._encoder.finish()

    def fail(self, error: Error) -> list[bytes]:
        """The stream broke: the client protocol's error frame(s) and terminator."""
        if self.closed:
            return []
        self.closed = True
        self.assembler.feed(error)
        encoder = self._encoder
        if encoder is None:
            # Passthrough: rebuild the encoder's state from what was forwarded, so the
            # error frame fits the stream (Responses numbers its events, LM Studio's
            # chat.end sums up the output), then write only the new frames.
            encoder = get_codec(self.target).stream_encoder(self.options)
            for ev in self._events:
                encoder.encode(ev)
        return encoder.encode(error) + encoder.finish()

    @property
    def findings(self) -> list[Finding]:
        encoder = self._encoder.findings if self._encoder is not None else []
        return self.decoder.findings + encoder


def _is_content(ev: Event) -> bool:
    return ev.type in (
        "text_delta",
        "reasoning_delta",
        "refusal_delta",
        "tool_call_start",
        "tool_call_delta",
    )
