"""JSON that can be stored and sent on: no lone surrogates, bounded nesting.

Python's ``json`` accepts ``"\\ud800"`` (a lone UTF-16 surrogate, as an escape or as
UTF-8-encoded surrogate bytes, which ``json.loads(bytes)`` decodes with
``surrogatepass``), but such a string cannot be encoded as UTF-8 again: the proxy's
upstream request, the capture and the exports would all fail later with a
``UnicodeEncodeError`` (a 500). Deep nesting fails the same way, as a ``RecursionError``
in whichever step first recurses. Both are the sender's mistake: :func:`check_text`
turns them into ``ValueError`` with one line saying why, at the door.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

from streamscope.wire.jsontext import may_hold_a_long_integer

# Cheap pre-check: a surrogate escape (\uD800-\uDFFF) or UTF-8-encoded surrogate bytes
# (ED A0-BF). Most bodies have neither, and then nothing more is done.
_MAYBE_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


def maybe_surrogates(raw: bytes) -> bool:
    return _MAYBE_SURROGATE.search(raw) is not None


def check_text(value: Any) -> None:
    """Raise ``ValueError`` if a string (or key) in ``value`` holds a lone surrogate, or
    ``value`` nests too deeply to encode again."""
    try:
        json.dumps(value, ensure_ascii=False, check_circular=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(exc.object[exc.start])
        raise ValueError(f"a string holds a lone surrogate (\\u{code:04x})") from None
    except RecursionError:
        raise ValueError("nesting too deep") from None


def _reject_constant(name: str) -> Any:
    # Python's json takes NaN/Infinity; they are not JSON and no upstream would accept them.
    raise ValueError(f"{name} is not a JSON value")


def loads(raw: bytes) -> Any:
    """``raw`` parsed as strict JSON: ``ValueError`` (one line) for anything else,
    including NaN/Infinity, lone surrogates and nesting too deep for Python."""
    # orjson first (several times faster; it refuses NaN, lone surrogates and nesting
    # beyond 1,024). What it refuses, anything nested deeply enough to come near Python's
    # own limit, and integers beyond 64 bits (which orjson reads as floats) go the
    # standard way, which says why or takes it.
    if raw.count(b"[") + raw.count(b"{") < 500 and not may_hold_a_long_integer(raw):
        try:
            return orjson.loads(raw)
        except ValueError:
            pass
    try:
        value = json.loads(raw, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("nesting too deep") from None
    if maybe_surrogates(raw):
        check_text(value)
    return value


__all__ = ["check_text", "loads", "maybe_surrogates"]
