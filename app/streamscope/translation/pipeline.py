"""One proxied stream, frame by frame: upstream frames in, client bytes out. No I/O.

Two modes, as an upstream's ``mode`` says:

- **repair**: decode with the upstream's codec, encode with the client's; a broken
  upstream stream comes out well-formed.
- **passthrough** (only when client and upstream speak the same protocol): the client
  gets the upstream's bytes unchanged. Frames are decoded on the side until the first
  token (``model.events.is_token``: so time to first token is exact); after that only
  the protocol's terminator is looked for (``StreamDecoder.ends_stream``, no JSON
  parsing), and the rest is decoded only if the stream breaks (:meth:`settle`), to close
  it correctly.

Either way, when the upstream breaks (connection dropped, idle too long), :meth:`fail`
writes the client protocol's error frame and terminator, so no client is left hanging.
A stream that simply stops without its terminator is such a failure for a live client
(``on_incomplete="error"``, the proxy); ``translate`` of a trimmed recording closes it
cleanly instead (``on_incomplete="close"``), and the decoder's finding says so.
"""

from __future__ import annotations

from typing import Literal

from streamscope.codecs import Codec, EncodeOptions, StreamEncoder
from streamscope.findings import Finding
from streamscope.model.assemble import Assembler, merge_usage
from streamscope.model.events import Error, Event, Usage, is_token
from streamscope.wire import decode_all
from streamscope.wire.frame import Frame

USAGE_TAIL = 4  # frames at a passthrough stream's end that may carry its usage


class StreamPipeline:
    """One stream, translated frame by frame (see the module docstring): ``feed`` an
    upstream frame, get the client's bytes; ``finish`` when the upstream ends, ``fail``
    when it breaks. ``source`` and ``target`` are the two sides' codecs (the same one in
    passthrough). No I/O: the proxy's relay drives it, and ``translate`` over a recording."""

    def __init__(
        self,
        source: Codec,
        target: Codec,
        *,
        passthrough: bool = False,
        options: EncodeOptions | None = None,
        on_incomplete: Literal["error", "close"] = "error",
    ) -> None:
        if passthrough and source.name != target.name:
            raise ValueError("passthrough needs the same protocol on both sides")
        self.source, self.target = source, target
        self.passthrough = passthrough
        self.on_incomplete = on_incomplete
        self.options = options or EncodeOptions()
        self.decoder = source.stream_decoder()
        self._assembler = Assembler()
        self._encoder: StreamEncoder | None = (
            None if passthrough else target.stream_encoder(self.options)
        )
        self._events: list[Event] = []  # passthrough only: to close a broken stream
        self._backlog: list[Frame] = []  # passthrough only: forwarded, not decoded yet
        self.closed = False  # the client stream is complete (terminator written)
        # the arrival of the first frame with a token (model.events.is_token): the TTFT
        self.first_token_ns: int | None = None
        self.failure: Error | None = None  # the proxy's own reason the stream broke (fail)
        self._prior_error: Error | None = None  # the upstream's error before that failure

    # -- feeding ------------------------------------------------------------------------

    def _decode(self, frame: Frame) -> list[Event]:
        events = self.decoder.decode(frame)
        feed = self._assembler.feed
        for ev in events:
            feed(ev)
        if self.first_token_ns is None and events and any(map(is_token, events)):
            self.first_token_ns = frame.arrival_ns
        return events

    def feed(self, frame: Frame) -> list[bytes]:
        """Client bytes for one upstream frame."""
        if self.closed:
            return []
        if self._encoder is None:
            # Passthrough forwards everything up to the upstream's own terminator, also
            # what follows an error frame (Responses: error, then response.failed).
            if self.first_token_ns is None:
                self._events += self._decode(frame)
                self.closed = self.decoder.terminated
            else:
                self._backlog.append(frame)
                self.closed = self.decoder.ends_stream(frame)
            return [frame.raw]
        events = self._decode(frame)
        out: list[bytes] = []
        encode = self._encoder.encode
        for ev in events:
            out += encode(ev)
        if not out and events:  # (the stream opened, and no content yet: open it now)
            out = self._encoder.opening()
        if self.decoder.terminated or self._assembler.error is not None:
            out += self._encoder.finish()
            self.closed = True
        return out

    def finish(self) -> list[bytes]:
        """The upstream stream ended. If it ended without its terminator, the client gets
        an error (an interrupted answer must not look complete)."""
        if self.closed:
            return []
        self.settle()
        for ev in self.decoder.finish():
            self._assembler.feed(ev)
        error = self._assembler.error
        if self._encoder is None and error is not None and not self.decoder.terminated:
            # The upstream's error frame went through unchanged, but its terminator never
            # came: write what the protocol wants after an error frame, nothing before it.
            self.closed = True
            closing = self._replayed().encode(error)
            is_error = self.decoder.is_error_frame  # passthrough: one protocol both sides
            at = [i for i, raw in enumerate(closing) if any(map(is_error, decode_all(raw)))]
            return closing[at[0] + 1 :] if at else closing
        incomplete = not self.decoder.complete and error is None
        if incomplete and self.on_incomplete == "error":
            return self.fail(
                Error(
                    f"the upstream ({self.source.name}) stream ended before it was complete",
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
        self.settle()
        self.closed = True
        self.failure = error
        self._prior_error = self._assembler.error  # the upstream's, if it sent one
        self._assembler.feed(error)
        encoder = self._encoder or self._replayed()
        return encoder.encode(error) + encoder.finish()

    @property
    def usage(self) -> Usage | None:
        """Token usage so far, without settling a passthrough stream: the frames that
        carry usage come last (OpenAI's usage chunk, Anthropic's message_delta,
        Responses' response.completed, LM Studio's chat.end), so only the last few
        forwarded frames are read, by a throwaway decoder."""
        usage = self._assembler.response.usage
        if self._backlog:
            tail = self.source.stream_decoder()
            for frame in self._backlog[-USAGE_TAIL:]:
                for ev in tail.decode(frame):
                    if isinstance(ev, Usage):
                        usage = merge_usage(usage, ev)
        return usage

    @property
    def error(self) -> Error | None:
        """The error the stream ended with, as far as it was decoded (the proxy's own
        failures always are: :meth:`fail` settles first)."""
        return self._assembler.error

    @property
    def upstream_error(self) -> Error | None:
        """The error the upstream itself sent in the stream (an error event or frame,
        Responses' ``response.failed``), not one the proxy wrote (:meth:`fail`). In
        passthrough the frames forwarded without decoding are not decoded for this:
        only the last few, by a throwaway decoder, where a stream's error ending is."""
        error = self._assembler.error
        if error is not None and error is not self.failure:
            return error
        if self._prior_error is not None:
            return self._prior_error
        if self._backlog:
            tail = self.source.stream_decoder()
            for frame in self._backlog[-USAGE_TAIL:]:
                for ev in tail.decode(frame):
                    if isinstance(ev, Error):
                        return ev
        return None

    @property
    def assembler(self) -> Assembler:
        """What the stream amounts to so far (in passthrough, decoding what is pending)."""
        self.settle()
        return self._assembler

    def settle(self) -> None:
        """Passthrough: decode the frames that were forwarded without decoding."""
        backlog, self._backlog = self._backlog, []
        for frame in backlog:
            self._events += self._decode(frame)

    def _replayed(self) -> StreamEncoder:
        """Passthrough: an encoder brought to the state of what was forwarded (its output
        discarded), so frames it adds fit the stream (Responses numbers its events, LM
        Studio's chat.end sums up the output)."""
        encoder = self.target.stream_encoder(self.options)
        for ev in self._events:
            if not isinstance(ev, Error):
                encoder.encode(ev)
        return encoder

    @property
    def findings(self) -> list[Finding]:
        encoder = self._encoder.findings if self._encoder is not None else []
        return self.decoder.findings + encoder
