"""JSON on the hot path: orjson where it can, the standard library where it cannot.

orjson writes what ``json.dumps(..., ensure_ascii=False, separators=(",", ":"))`` does
(compact, UTF-8, the same escapes; only a float's exponent is spelt ``1e-7`` for
``1e-07``) and reads what ``json.loads`` does, several times faster (measured: ~3x to
read a frame's data, ~8x to write a frame). What it refuses goes the standard way, which
takes it or says why in its own words: integers beyond 64 bits, lone surrogates, keys
that are not strings, NaN.

One thing orjson does not refuse but reads differently: an integer beyond 64 bits (below
-2**63 or above 2**64 - 1) becomes a float, its last digits lost. :func:`loads` (a whole
body: ``Codec.read_body``) reads text that may hold one (a run of 19 digits or more) the
standard way (:func:`may_hold_a_long_integer`). :func:`loads_frame`, for a stream frame's
data on the proxy's hot path, does not look: no protocol's stream field holds such a
number (ids are strings, tool arguments travel as JSON text inside strings, token counts
are small), and looking cost 10% of the translated throughput
(``tests/bench/bench_proxy.py``: 0.89 of direct with it, 0.98 without, the same run). A
frame relayed in passthrough keeps its bytes whatever they hold.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON, one line."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return _dumps(value).encode()


_DIGITS_AS_ZEROS = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19  # -2**63 - 1 has 19 digits; every 18-digit integer fits 64 bits


def may_hold_a_long_integer(text: str | bytes) -> bool:
    """Whether ``text`` has a run of 19 digits or more, so that orjson may read an integer
    in it as a float (a digit run in a string or a float's mantissa says so too: those are
    read the standard way, the same values, only slower). ~0.5 µs for a 300-byte frame."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return _LONG_NUMBER in raw.translate(_DIGITS_AS_ZEROS)


def loads(text: str | bytes) -> Any:
    """Parsed JSON; ``ValueError`` (the standard library's) when it is none."""
    if may_hold_a_long_integer(text):
        return json.loads(text)
    try:
        return orjson.loads(text)
    except ValueError:
        return json.loads(text)


def loads_frame(text: str | bytes) -> Any:
    """:func:`loads` for a stream frame's data, without the look for long integers (see
    the module docstring)."""
    try:
        return orjson.loads(text)
    except ValueError:
        return json.loads(text)


__all__ = ["dumps", "loads", "loads_frame", "may_hold_a_long_integer"]
