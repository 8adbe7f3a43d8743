"""Incremental SSE decoder on bytes: any chunking in, frames with their exact bytes out.

Works on bytes rather than text so that a UTF-8 character split across two chunks is
never decoded half-way (line breaks are ASCII and cannot occur inside a multi-byte
sequence), and so the raw bytes of every frame are kept as they arrived.

Line ends may be LF, CRLF or CR (the SSE spec allows all three, mixed). A CR at the very
end of a chunk is held back until the next byte shows whether an LF follows.

NOTE: a pending line that never ends would grow without bound; ``max_line_bytes``
turns that into a clear ``FrameTooLarge`` error instead. The same bound applies to a
frame's total size, which guards a frame of endless short lines too.
"""

from __future__ import annotations

import time

from streamscope.findings import Finding
from streamscope.wire.frame import Frame

DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
_BOM = b"\xef\xbb\xbf"


class FrameTooLarge(ValueError):
    """A line or frame exceeded the decoder's size limit; decoding cannot go on."""

    def __init__(self, size: int, limit: int, what: str = "line") -> None:
        super().__init__(
            f"SSE {what} of more than {limit} bytes (at least {size} received without an end); "
            "refusing to buffer it"
        )
        self.size = size
        self.limit = limit


class SSEDecoder:
    """Feed byte chunks with :meth:`feed`, call :meth:`flush` once at end of stream.

    Findings (a missing final blank line, invalid UTF-8, a BOM) are collected in
    :attr:`findings`; frame indexes in them count the frames this decoder produced.
    """

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.max_line_bytes = max_line_bytes
        self.findings: list[Finding] = []
        self._partial: list[bytes] = []  # pieces of the current unfinished line
        self._partial_len = 0
        self._raw: list[bytes] = []  # raw lines of the frame being built
        self._raw_len = 0
        self._has_fields = False
        self._event: str | None = None
        self._data: list[str] | None = None
        self._id: str | None = None
        self._retry: int | None = None
        self._comments: list[str] = []
        self._first_line = True
        self._count = 0
        self._closed = False

    # -- public API -----------------------------------------------------------------

    def feed(self, chunk: bytes, arrival_ns: int | None = None) -> list[Frame]:
        """Decode one chunk; return the frames it completed (possibly none)."""
        if self._closed:
            raise RuntimeError("feed() after flush()")
        if arrival_ns is None:
            arrival_ns = time.monotonic_ns()
        if not chunk:
            return []
        if self._partial:
            self._partial.append(chunk)
            self._partial_len += len(chunk)
            # Nothing to do until a line break arrives (cheap check on the new piece only,
            # except for a CR held back at the end of the previous piece).
            if b"\n" not in chunk and b"\r" not in chunk and not self._partial[-2].endswith(b"\r"):
                self._check_partial()
                return []
            buf = b"".join(self._partial)
            self._partial.clear()
            self._partial_len = 0
        else:
            buf = chunk
        return self._consume(buf, arrival_ns)

    def flush(self, arrival_ns: int | None = None) -> list[Frame]:
        """End of stream: deliver what is pending, reporting an unterminated final frame."""
        if self._closed:
            return []
        self._closed = True
        if arrival_ns is None:
            arrival_ns = time.monotonic_ns()
        out: list[Frame] = []
        if self._partial:
            tail = b"".join(self._partial)
            self._partial.clear()
            self._partial_len = 0
            # A lone CR held back is a complete line end.
            self._line(tail, tail.rstrip(b"\r\n"), arrival_ns, out)
        if self._has_fields:
            self.findings.append(
                Finding(
                    "unterminated-final-frame",
                    "warning",
                    "the stream ended without the blank line that dispatches its last frame; "
                    "strict clients (the AI SDK) never see that frame",
                    self._count,
                )
            )
            out.append(self._dispatch(arrival_ns, terminated=False))
        elif self._raw:
            # Only stray blank lines remain: keep their bytes so nothing is lost.
            out.append(self._dispatch(arrival_ns, terminated=True))
        return out

    # -- internals ------------------------------------------------------------------

    def _check_partial(self) -> None:
        if self._partial_len > self.max_line_bytes:
            raise FrameTooLarge(self._partial_len, self.max_line_bytes)

    def _consume(self, buf: bytes, arrival_ns: int) -> list[Frame]:
        out: list[Frame] = []
        if self._first_line and buf[:1] != _BOM[:1]:
            self._first_line = False  # (no BOM: the first line needs no special look)
        if not self._raw and not self._first_line and b"\r" not in buf:
            done = self._whole_frames(buf, arrival_ns, out)
            if done == len(buf):
                return out
            buf = buf[done:]
        lines = buf.splitlines(keepends=True)
        last = lines[-1]
        # The last piece is incomplete if it has no line end, or ends in a CR that an
        # LF in the next chunk may still complete.
        if not last.endswith(b"\n"):
            lines.pop()
            self._partial.append(last)
            self._partial_len = len(last)
            self._check_partial()
        for line in lines:
            self._line(line, line.rstrip(b"\r\n"), arrival_ns, out)
        return out

    def _whole_frames(self, buf: bytes, arrival_ns: int, out: list[Frame]) -> int:
        """The fast path for the common case, between frames and with LF line ends: each
        block up to a blank line made only of ``data:`` and ``event:`` lines becomes a
        frame without going line by line. Returns how many bytes it took; the rest (a
        partial frame, or a block with anything else in it) goes the general way, which
        gives the same frames.

        NOTE: measured on a 20,000-frame chat stream, ~3x faster than the line-by-line
        path, which was a tenth of the proxy's time on a bulk stream."""
        pos = 0
        limit = self.max_line_bytes
        while (end := buf.find(b"\n\n", pos)) != -1:
            if end - pos > limit:
                break
            event = data = None
            for line in buf[pos:end].split(b"\n"):
                if line[:5] == b"data:":
                    value = line[6:] if line[5:6] == b" " else line[5:]
                    data = value if data is None else data + b"\n" + value
                elif line[:6] == b"event:":
                    event = line[7:] if line[6:7] == b" " else line[6:]
                else:
                    return pos  # a comment, an id, a blank line, ...: the general way
            try:
                text = data.decode() if data is not None else None
                name = event.decode() if event is not None else None
            except UnicodeDecodeError:
                return pos
            out.append(Frame(buf[pos : end + 2], arrival_ns, name, text))
            self._count += 1
            pos = end + 2
        return pos

    def _line(self, raw: bytes, content: bytes, arrival_ns: int, out: list[Frame]) -> None:
        if len(content) > self.max_line_bytes:
            raise FrameTooLarge(len(content), self.max_line_bytes)
        if self._first_line:
            self._first_line = False
            if content.startswith(_BOM):
                content = content[3:]
                self.findings.append(
                    Finding("bom", "info", "the stream starts with a UTF-8 byte order mark", 0)
                )
        self._raw.append(raw)
        self._raw_len += len(raw)
        if self._raw_len > self.max_line_bytes:
            raise FrameTooLarge(self._raw_len, self.max_line_bytes, "frame")
        if not content:
            if self._has_fields:
                out.append(self._dispatch(arrival_ns, terminated=True))
            return
        self._has_fields = True
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            text = content.decode("utf-8", errors="replace")
            self.findings.append(
                Finding("invalid-utf8", "error", "a line is not valid UTF-8", self._count)
            )
        if text[0] == ":":
            self._comments.append(text[1:].removeprefix(" "))
            return
        name, sep, value = text.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            if self._data is None:
                self._data = [value]
            else:
                self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self._retry = int(value)
        else:
            self.findings.append(
                Finding("unknown-field", "warning", f"unknown SSE field {name!r}", self._count)
            )

    def _dispatch(self, arrival_ns: int, terminated: bool) -> Frame:
        frame = Frame(
            raw=b"".join(self._raw),
            arrival_ns=arrival_ns,
            event=self._event,
            data=None if self._data is None else "\n".join(self._data),
            id=self._id,
            retry=self._retry,
            comments=tuple(self._comments) if self._comments else (),
            terminated=terminated,
        )
        self._count += 1
        self._raw = []
        self._raw_len = 0
        self._has_fields = False
        self._event = None
        self._data = None
        self._id = None
        self._retry = None
        if self._comments:
            self._comments = []
        return frame


def decode_all(
    data: bytes, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, *, arrival_ns: int = 0
) -> list[Frame]:
    """Decode a complete byte string in one go, every frame stamped ``arrival_ns``
    (findings are dropped; the class keeps them)."""
    decoder = SSEDecoder(max_line_bytes)
    return decoder.feed(data, arrival_ns) + decoder.flush(arrival_ns)
