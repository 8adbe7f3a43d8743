"""A stream sent as one JSON array, element by element (Gemini's ``:streamGenerateContent``
without ``alt=sse``): bytes in, frames out, each with its exact bytes and arrival time.

Each element is a :class:`ArrayElement` frame whose ``data`` is the element's JSON text
and whose ``raw`` is every byte since the previous frame: the ``[`` or the ``,`` and the
whitespace before it, then the element. The closing ``]`` (with the whitespace before it)
is a frame of its own with no data, dispatched when it comes, and whatever follows it is
one more such frame at :meth:`JSONArrayReader.flush`. So the frames' ``raw`` joined is the
stream byte for byte, however it was cut into chunks, as with the SSE decoder.

The reader only finds where elements begin and end (strings, escapes and nesting); it
does not parse them: an element that is no JSON is still one element, and the codec's
decoder says what is wrong with it. What is off about the array itself is in
:attr:`JSONArrayReader.findings`: bytes before the ``[`` or after the ``]``, a stream that
ends inside an element or before its ``]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from streamscope.findings import Finding
from streamscope.wire.frame import Frame

_WS = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"
# What changes the reader's state: outside a string, brackets, braces, quotes and commas;
# inside one, its closing quote or an escape.
_OUTSIDE = re.compile(rb'[\[\]{}",]')
_INSIDE = re.compile(rb'["\\]')
_SCALAR_END = re.compile(rb"[\s,\]]")


@dataclass(slots=True)
class ArrayElement(Frame):
    """A frame of a JSON-array stream: one element (``data``), or the array's closing
    bracket (``data`` None). Readers of frames tell the two framings apart by this type."""


class JSONArrayReader:
    """Feed byte chunks with :meth:`feed`, call :meth:`flush` once at the end."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self._buf = bytearray()  # the bytes of the frame under way
        self._pos = 0  # scanned up to here in _buf
        self._opened = False  # the "[" was read
        self._closed = False  # the "]" was read
        self._start = -1  # where the element under way starts in _buf (-1: none)
        self._depth = 0
        self._in_string = False
        self._escape = False
        self._scalar = False  # the element is a bare number, true, false or null
        self._count = 0

    def feed(self, chunk: bytes, arrival_ns: int = 0) -> list[ArrayElement]:
        """The frames ``chunk`` completed, arrived at ``arrival_ns``."""
        if not chunk:
            return []
        self._buf += chunk
        out: list[ArrayElement] = []
        while self._pos < len(self._buf):
            if not self._step(out, arrival_ns):
                break
        return out

    def flush(self, arrival_ns: int = 0) -> list[ArrayElement]:
        """The bytes left at the end, as one frame (no data), with what is off about them."""
        if not self._buf:
            if not self._closed:
                self._note("unclosed-array", "the array has no closing ]")
            return []
        raw = bytes(self._buf)
        self._buf = bytearray()
        if self._start >= 0:
            self._note("cut-element", "the stream ends inside an element")
        elif not self._closed:
            self._note("unclosed-array", "the array has no closing ]")
        elif raw.strip(_WS):
            self._note("after-array", "bytes follow the array's closing ]")
        return [self._frame(raw, arrival_ns, None)]

    # -- scanning ---------------------------------------------------------------------------

    def _step(self, out: list[ArrayElement], at: int) -> bool:
        """Scan on from ``_pos``; False when the buffer is used up."""
        buf = self._buf
        if self._closed:
            self._pos = len(buf)  # (all of it goes to flush's frame)
            return False
        if self._start < 0:
            return self._between(out, at)
        if self._in_string:
            if self._escape:  # the escaped byte is never the string's end
                self._pos += 1
                self._escape = False
                return True
            found = _INSIDE.search(buf, self._pos)
            if found is None:
                self._pos = len(buf)
                return False
            self._pos = found.end()
            if found.group() == b"\\":
                self._escape = True
            else:
                self._in_string = False
                if self._depth == 0:
                    self._emit(out, at)
            return True
        if self._scalar:
            found = _SCALAR_END.search(buf, self._pos)
            if found is None:
                self._pos = len(buf)
                return False
            self._pos = found.start()
            self._emit(out, at)
            return True
        found = _OUTSIDE.search(buf, self._pos)
        if found is None:
            self._pos = len(buf)
            return False
        self._pos = found.end()
        char = found.group()
        if char == b'"':
            self._in_string = True
        elif char in (b"{", b"["):
            self._depth += 1
        elif char in (b"}", b"]"):
            self._depth -= 1
            if self._depth == 0:
                self._emit(out, at)
        return True

    def _between(self, out: list[ArrayElement], at: int) -> bool:
        """Outside any element: the ``[``, commas, whitespace, the ``]``, or an element's
        first byte."""
        buf = self._buf
        i = self._pos
        while i < len(buf) and buf[i] in _WS:
            i += 1
        if i == len(buf):
            self._pos = i
            return False
        byte = bytes(buf[i : i + 1])
        if not self._opened:
            if buf.startswith(_BOM, i):
                self._pos = i + len(_BOM)
                return True
            if byte == b"[":
                self._opened = True
                if i:
                    self._note("before-array", "bytes come before the array's [")
                self._pos = i + 1
                return True
            self._note("not-an-array", "the stream does not open with [")
            self._opened = True  # read on as if it had
        if byte == b",":
            self._pos = i + 1
            return True
        if byte == b"]":
            self._pos = i + 1
            self._closed = True
            raw = bytes(buf[: self._pos])
            del buf[: self._pos]
            self._pos = 0
            out.append(self._frame(raw, at, None))
            return True
        self._start = i
        self._pos = i + 1
        if byte == b'"':
            self._in_string = True
        elif byte in (b"{", b"["):
            self._depth = 1
        else:
            self._scalar = True
        return True

    def _emit(self, out: list[ArrayElement], at: int) -> None:
        buf = self._buf
        raw = bytes(buf[: self._pos])
        data = bytes(buf[self._start : self._pos]).decode("utf-8", errors="replace")
        del buf[: self._pos]
        self._pos, self._start, self._depth, self._scalar = 0, -1, 0, False
        out.append(self._frame(raw, at, data))

    def _frame(self, raw: bytes, at: int, data: str | None) -> ArrayElement:
        self._count += 1
        return ArrayElement(raw=raw, arrival_ns=at, data=data)

    def _note(self, code: str, message: str) -> None:
        self.findings.append(Finding(code, "error", message, self._count))


def read_array(data: bytes, arrival_ns: int = 0) -> list[ArrayElement]:
    """The frames of a whole JSON-array stream."""
    reader = JSONArrayReader()
    return reader.feed(data, arrival_ns) + reader.flush(arrival_ns)


def is_array_stream(content_type: str | None, chunks: Iterable[bytes]) -> bool:
    """Whether a streamed answer is one JSON array: served as JSON (``content_type``), its
    first bytes (``chunks``, in order) open an array. (An SSE stream served as JSON by
    mistake opens with a field, and is still read as SSE.)"""
    if not content_type:
        return False
    mime = content_type.split(";", 1)[0].strip().lower()
    if mime != "application/json" and not mime.endswith("+json"):
        return False
    for chunk in chunks:
        head = chunk.removeprefix(_BOM).lstrip(_WS)
        if head:
            return head[:1] == b"["
    return False


__all__ = ["ArrayElement", "JSONArrayReader", "is_array_stream", "read_array"]
