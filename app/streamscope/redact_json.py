"""Secrets written the ways JSON text can hide them: with ``\\u`` escapes, or spelled
across the string values of a stream, a few characters a delta.

A client parses JSON before it shows anything, so ``"\\u0073k-…"`` is ``sk-…`` to it, and a
key sent as deltas of a few characters each is whole once the client joins them. Both
are invisible to a search of the raw bytes. This module gives :class:`~streamscope.redact.
Redactor` the views that show them:

- the **unescaped view** of a text (:func:`unescape`): ``\\u00XX`` escapes of printable
  ASCII (the only characters of a key; an escape of any other character cannot spell one)
  and ``\\/`` decoded, every other byte as it was, with a map back to the raw offsets. JSON
  encoders write printable ASCII as itself, so the view is looked at only when such an
  escape is there (Go's encoders write ``<>&`` so; those are rare);
- the **channel views** of a buffer (:func:`channel_runs`): the string values of each field
  that carries streamed text (``content``, ``text``, ``delta``, ``arguments``…: where
  every protocol's deltas put their characters), joined in order, per field name, as a
  client joins them. A run of :data:`MIN_RUN` characters or more of a secret (or all of
  a shorter one) across two strings or more of such a view is masked in every piece it
  spans (``*`` for each byte: sizes stay true), however short the pieces. (Within one
  string, the redactor's byte search is what masks.)

A run that crosses from one string into the next holds the pair of characters on both
sides of that edge: each edge's pair is looked up among the secrets' pairs, and only a
pair found there is grown into a run; only a run is mapped back to bytes. A view costs a
dictionary look-up per string.

:class:`StreamMasker` applies this to one response's client-bound chunks: each channel's
last characters carry over to the next chunk (a run that began in an earlier chunk is
masked from where the new chunk takes it up), and a chunk whose channel ends with the
first 3 to 11 characters of a secret is held back until the next chunk shows whether the
secret goes on. At most :data:`HOLD_CHUNKS` chunks are held, and a chunk that adds no
streamed text (a keepalive, a ping) releases them, so a stalled upstream never holds the
client's bytes. What still reaches a client (README, "Keys in what an upstream sends"):
the first one or two characters of a key a chunk ends with; its first 11 when frames
without streamed text stand between its pieces in separate reads; a key spelled across
two different fields, interleaved with other text of the same field, broken by other
characters every 11 or fewer, or written any other way.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from operator import itemgetter
from typing import Any

MIN_SECRET = 8  # (the redactor's: shorter secrets are masked only as whole tokens)
# A run of a secret in a channel's text is masked from this many characters (or the whole
# secret, if shorter): a run of 8 is ordinary text too often ("01234567" for a key that
# holds it), and a key written out in full is always this long.
MIN_RUN = 12
HOLD_FROM = 3  # a channel ending with this many of a key's first characters is held
HOLD_CHUNKS = 16  # chunks held back at most (a key sent a character a chunk needs 9)
HOLD_BYTES = 64 * 1024  # bytes held back at most

# The escapes a key's characters can hide behind (``\\\\`` is matched so that the
# backslash it writes never starts an escape of its own: ``\\\\u0073`` is text, not "s").
ESCAPE = re.compile(rb"\\(?:\\|/|u00([2-7][0-9a-fA-F]))")
ESCAPE_HINTS = (b"\\u00", b"\\/")

# A field whose string values carry a stream's text, and its value (raw).
FIELDS = b"content|text|delta|partial_json|arguments|thinking|reasoning_content|reasoning|refusal"
# (no space before the colon: no encoder writes one, and the look is a third faster)
FIELD = re.compile(b'"(' + FIELDS + rb')":\s*"([^"\\]*(?:\\.[^"\\]*)*)"', re.DOTALL)


def has_escape(value: bytes) -> bool:
    """Whether ``value`` may hold an escape that hides a key's character."""
    return (b"\\u00" in value or b"\\/" in value) and ESCAPE.search(value) is not None


@dataclass(slots=True)
class Unescaped:
    """A text's unescaped view and the way back: ``shifts`` are (view offset just after
    an escape, bytes the raw text is longer there), in order."""

    view: bytes
    starts: list[int]
    shifts: list[int]

    def source(self, offset: int) -> int:
        """The raw offset where the view's ``offset`` begins."""
        i = bisect_right(self.starts, offset)
        return offset + (self.shifts[i - 1] if i else 0)


def unescape(raw: bytes) -> Unescaped:
    """``raw``'s unescaped view (see the module docstring)."""
    out: list[bytes] = []
    starts: list[int] = []
    shifts: list[int] = []
    at = shift = size = 0
    for m in ESCAPE.finditer(raw):
        token, hexa = m.group(), m.group(1)
        if token == b"\\\\":  # (kept as it is: it only keeps its backslash from escaping)
            continue
        char = bytes([int(hexa, 16)]) if hexa is not None else token[1:]
        out += (raw[at : m.start()], char)
        size += m.start() - at + len(char)
        shift += len(token) - len(char)
        starts.append(size)
        shifts.append(shift)
        at = m.end()
    out.append(raw[at:])
    return Unescaped(b"".join(out), starts, shifts)


def escaped_spans(raw: bytes, secrets: Sequence[bytes]) -> list[tuple[int, int, bytes]]:
    """Where each of ``secrets`` stands in ``raw``'s unescaped view, as raw spans
    (start, end, the secret), for a text that holds an escape (:func:`has_escape`)."""
    un = unescape(raw)
    found: list[tuple[int, int, bytes]] = []
    for secret in secrets:
        i = un.view.find(secret)
        while i != -1:
            found.append((un.source(i), un.source(i + len(secret)), secret))
            i = un.view.find(secret, i + len(secret))
    return found


@dataclass(slots=True)
class Needles:
    """The redactor's secrets, made ready for run searches: every pair of adjacent
    characters of each (where a run that crosses a string's edge must cross it), and the
    3-character pieces that end a prefix that holds a chunk back."""

    secrets: list[bytes]
    longest: int
    pairs: dict[bytes, list[tuple[bytes, int]]]  # pair -> (secret, offset of its second)
    hold_ends: frozenset[bytes]

    @classmethod
    def of(cls, secrets: Sequence[bytes]) -> Needles:
        usable = [s for s in secrets if len(s) >= MIN_SECRET]
        pairs: dict[bytes, list[tuple[bytes, int]]] = {}
        for s in usable:
            for k in range(1, len(s)):
                pairs.setdefault(s[k - 1 : k + 1], []).append((s, k))
        ends = {s[j - HOLD_FROM : j] for s in usable for j in range(HOLD_FROM, _least(s))}
        return cls(usable, max(map(len, usable), default=0), pairs, frozenset(ends))

    def runs(self, view: bytes, edges: Sequence[int]) -> list[tuple[int, int]]:
        """Every run of a secret in ``view`` (merged) that crosses one of ``edges`` (where
        one string ends and the next begins) and is MIN_RUN characters or more, or all of
        a shorter secret. (Within one string, the redactor's byte search is what masks: a
        run of a key's characters inside one string is ordinary text, such as
        "key_0123456789abcd" beside a key that holds it.)"""
        runs: list[tuple[int, int]] = []
        pairs = self.pairs
        for edge in edges:
            for secret, k in pairs.get(view[edge - 1 : edge + 1], ()):
                a, b = _grow(view, edge, secret, k)
                if b - a >= _least(secret):
                    runs.append((a, b))
        return _merged(runs) if len(runs) > 1 else runs

    def held_prefix(self, view: bytes) -> bool:
        """Whether ``view`` ends with HOLD_FROM or more of a secret's first characters,
        fewer than a run that is masked (a key whose rest may come in the next chunk)."""
        if view[-HOLD_FROM:] not in self.hold_ends:
            return False
        for secret in self.secrets:
            for j in range(_least(secret) - 1, HOLD_FROM - 1, -1):
                if view.endswith(secret[:j]):
                    return True
        return False


def _least(secret: bytes) -> int:
    """The shortest run of ``secret`` that is masked."""
    return min(MIN_RUN, len(secret))


def _grow(view: bytes, i: int, secret: bytes, k: int) -> tuple[int, int]:
    """The run of ``secret`` through ``view[i]`` aligned with ``secret[k]``, grown as far
    as both agree both ways."""
    start, j = i, k
    while start > 0 and j > 0 and view[start - 1] == secret[j - 1]:
        start, j = start - 1, j - 1
    end, j = i, k
    while end < len(view) and j < len(secret) and view[end] == secret[j]:
        end, j = end + 1, j + 1
    return start, end


def _merged(runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(runs):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


@dataclass(slots=True)
class _Piece:
    """A string value of a channel: where its raw text starts in the buffer, and its view."""

    at: int
    text: Unescaped | None  # None: no escape, the view is the raw text
    view: bytes


_NAME, _VALUE = itemgetter(0), itemgetter(1)


def _views(buffer: bytes) -> dict[bytes, list[bytes]]:
    """Each channel's string values in ``buffer``, unescaped (the fast look)."""
    pairs = FIELD.findall(buffer)
    if not pairs:
        return {}
    names = set(map(_NAME, pairs))  # (C-level passes: no Python step per string)
    if len(names) == 1:  # (one field: the usual)
        found = {names.pop(): list(map(_VALUE, pairs))}
    else:
        found = {}
        for name, value in pairs:
            found.setdefault(name, []).append(value)
    if b"\\" not in buffer:  # (no escape in any of them)
        return found
    for values in found.values():
        if has_escape(b"".join(values)):  # (one may hide a key: an escaped newline cannot)
            values[:] = [unescape(v).view if has_escape(v) else v for v in values]
    return found


def _pieces(buffer: bytes) -> dict[bytes, list[_Piece]]:
    """Each channel's string values in ``buffer`` with where they are (the slow look)."""
    pieces: dict[bytes, list[_Piece]] = {}
    for m in FIELD.finditer(buffer):
        raw = m.group(2)
        text = unescape(raw) if has_escape(raw) else None
        view = text.view if text is not None else raw
        pieces.setdefault(m.group(1), []).append(_Piece(m.start(2), text, view))
    return pieces


def _edges(first: int, values: list[bytes]) -> list[int]:
    """Where each string of a view begins after ``first`` characters of context (the
    first string's own start only when context precedes it)."""
    edges = list(accumulate(map(len, values[:-1]), initial=first))
    return edges if first else edges[1:]


def channel_runs(
    buffer: bytes, needles: Needles, context: dict[bytes, bytes] | None = None
) -> tuple[list[tuple[int, int]], dict[bytes, bytes]]:
    """The raw spans of ``buffer`` to mask (runs of a secret across the strings of a
    channel view, with ``context``: each channel's text before this buffer, which is not
    masked again), and each channel's whole view (context and this buffer's text)."""
    context = context or {}
    views = _views(buffer) if needles.secrets else {}
    whole = dict(context)
    hits = []
    for name, values in views.items():
        before = context.get(name, b"")
        whole[name] = view = before + b"".join(values)
        if needles.runs(view, _edges(len(before), values)):
            hits.append(name)
    spans: list[tuple[int, int]] = []
    if not hits:
        return spans, whole
    for name, pieces in _pieces(buffer).items():
        if name not in hits:
            continue
        at = first = len(context.get(name, b""))
        bounds = []
        for piece in pieces:
            bounds.append((at, at + len(piece.view), piece))
            at += len(piece.view)
        edges = _edges(first, [p.view for p in pieces])
        for a, b in needles.runs(whole[name], edges):
            for start, end, piece in bounds:
                lo, hi = max(a, start) - start, min(b, end) - start
                if lo >= hi:
                    continue
                if piece.text is not None:
                    lo, hi = piece.text.source(lo), piece.text.source(hi)
                spans.append((piece.at + lo, piece.at + hi))
    return spans, whole


def starred(value: bytes, spans: list[tuple[int, int]]) -> bytes:
    """``value`` with every span's bytes replaced by ``*`` (the same object: none)."""
    if not spans:
        return value
    out = bytearray(value)
    for a, b in spans:
        out[a:b] = b"*" * (b - a)
    return bytes(out)


class StreamMasker:
    """One response's client-bound chunks, masked across their boundaries (see the module
    docstring). ``feed`` each chunk as it would be sent; it gives what to send now (none
    while a chunk is held back), each chunk as it came, masked."""

    def __init__(self, mask: Callable[[bytes], bytes], needles: Needles) -> None:
        self._mask = mask  # the redactor's same-length mask of one buffer
        self._needles = needles
        self._held: list[bytes] = []
        self._context: dict[bytes, bytes] = {}

    def feed(self, chunk: bytes, more: bool = True) -> list[bytes]:
        if not self._needles.secrets:
            return [self._mask(chunk)] if chunk else [chunk]
        self._held.append(chunk)
        buffer = b"".join(self._held)
        spans, whole = channel_runs(buffer, self._needles, self._context)
        if more and self._hold(chunk, whole, len(buffer)):
            return []
        masked = starred(self._mask(buffer), spans)
        out, at = [], 0
        for held in self._held:
            out.append(masked[at : at + len(held)])
            at += len(held)
        keep = self._needles.longest
        self._context = {n: v[-keep:] for n, v in whole.items()}
        self._held = []
        return out

    def messages(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        """:meth:`feed` for an ASGI ``http.response.body`` message: the messages to send
        now (the same one when nothing was masked or held)."""
        more = message.get("more_body", False)
        body = message.get("body", b"")
        parts = self.feed(body, more)
        if len(parts) == 1 and parts[0] is body:
            return [message]
        last = len(parts) - 1
        return [{**message, "body": p, "more_body": more or i < last} for i, p in enumerate(parts)]

    def _hold(self, chunk: bytes, whole: dict[bytes, bytes], size: int) -> bool:
        if len(self._held) >= HOLD_CHUNKS or size > HOLD_BYTES:
            return False
        held = [n for n, v in whole.items() if self._needles.held_prefix(v)]
        if not held:
            return False
        fresh = _views(chunk)  # (a chunk with no streamed text releases what is held)
        return any(fresh.get(n) for n in held)


__all__ = [
    "HOLD_CHUNKS",
    "Needles",
    "StreamMasker",
    "Unescaped",
    "channel_runs",
    "escaped_spans",
    "has_escape",
    "starred",
    "unescape",
]
