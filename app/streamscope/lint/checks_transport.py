"""Checks of the HTTP answer around the frames: the response headers that keep proxies
from buffering a stream, silences between frames long enough for an idle timeout, and
the envelope of an error body.

Each protocol's error envelope is not restated here: it is read off the protocol's codec
(:meth:`~streamscope.codecs.base.Codec.encode_error`), by encoding two different errors
and comparing. A leaf that holds the message is the message; one that changes with the
error is a field (the error type); one that stays the same is a constant (Anthropic's
``"type": "error"``); a null is optional.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.lint.stream import Hit
from streamscope.model.events import Error
from streamscope.wire.frame import Frame

HeaderPairs = list[tuple[str, str]]
Headers = Mapping[str, str] | Iterable[tuple[str, str]]

LONG_SILENCE_S = 30.0
"""The default silence threshold: half the 60 s idle timeout common to proxies and load
balancers (nginx's ``proxy_read_timeout``, AWS ALB)."""


def header_pairs(headers: Headers | None) -> HeaderPairs | None:
    """Response headers as (lower-case name, value) pairs (None: not known)."""
    if headers is None:
        return None
    items = headers.items() if isinstance(headers, Mapping) else headers
    return [(str(k).lower(), str(v)) for k, v in items]


def header(pairs: HeaderPairs, name: str) -> str | None:
    """Every value of a header, joined with commas as HTTP allows (None: absent)."""
    values = [v for k, v in pairs if k == name]
    return ", ".join(values) if values else None


# -- buffering headers -----------------------------------------------------------------


def buffering_headers(pairs: HeaderPairs) -> list[Hit]:
    """A streamed answer must say `Cache-Control: no-cache` and `X-Accel-Buffering: no`."""
    cache_control = header(pairs, "cache-control")
    accel = header(pairs, "x-accel-buffering")
    missing: list[str] = []
    directives = [d.strip().lower() for d in (cache_control or "").split(",")]
    if "no-cache" not in directives:
        seen = f" (it is {cache_control!r})" if cache_control is not None else ""
        missing.append(f"`Cache-Control: no-cache`{seen}")
    if accel is None or accel.strip().lower() != "no":
        seen = f" (it is {accel!r})" if accel is not None else ""
        missing.append(f"`X-Accel-Buffering: no`{seen}")
    if not missing:
        return []
    return [Hit("framing.buffering-headers", None, f"the answer lacks {' and '.join(missing)}")]


# -- silences --------------------------------------------------------------------------


def long_silences(frames: list[Frame], threshold_s: float | None) -> list[Hit]:
    """Each gap between two frames (keepalive comments are frames) over ``threshold_s``,
    pointing at the frame that ended it.

    Frames without real arrival times (a file read without timing, a HAR entry without
    per-frame times) all have the same time, so no gap is found in them.
    """
    if threshold_s is None:
        return []
    limit = threshold_s * 1e9
    hits: list[Hit] = []
    for index in range(1, len(frames)):
        gap = frames[index].arrival_ns - frames[index - 1].arrival_ns
        if gap > limit:
            hits.append(
                Hit(
                    "framing.long-silence",
                    index,
                    f"nothing arrived for {gap / 1e9:.1f} s before this frame (after frame "
                    f"{index - 1}; threshold {threshold_s:g} s)",
                )
            )
    return hits


# -- error envelopes -------------------------------------------------------------------

Path = tuple[str, ...]
_FIRST = Error("\x00first error", "invalid_request_error")
_SECOND = Error("\x00second error", "not_found_error")
_BLANK = "…"


@dataclass(frozen=True, slots=True)
class Envelope:
    """Where a protocol's error body carries the message, its other fields and its
    constants, and the body's shape for messages (``{"error": {"message": "…", …}}``)."""

    message: Path
    fields: tuple[Path, ...]
    constants: tuple[tuple[Path, Any], ...]
    shape: str


def _leaves(value: Any, path: Path = ()) -> dict[Path, Any]:
    if not isinstance(value, dict):
        return {path: value}
    out: dict[Path, Any] = {}
    for key, item in value.items():
        out.update(_leaves(item, (*path, str(key))))
    return out


def _at(value: Any, path: Path) -> Any:
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


@cache
def envelope(protocol: str) -> Envelope:
    """The error envelope of a protocol, as its codec writes errors."""
    codec = get_codec(protocol)
    first = _leaves(codec.encode_error(_FIRST))
    second = _leaves(codec.encode_error(_SECOND))
    message = next(p for p, v in first.items() if v == _FIRST.message)
    fields = tuple(
        p for p, v in first.items() if p != message and isinstance(v, str) and v != second.get(p)
    )
    constants = tuple((p, v) for p, v in first.items() if v is not None and v == second.get(p))
    fixed = dict(constants)
    skeleton: dict[str, Any] = {}
    for path in first:
        if path == message or path in fields or path in fixed:
            node = skeleton
            for key in path[:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = fixed.get(path, _BLANK)
    return Envelope(message, fields, constants, json.dumps(skeleton, ensure_ascii=False))


def _reads_message(env: Envelope, body: Any) -> bool:
    text = _at(body, env.message)
    return (
        isinstance(text, str)
        and bool(text)
        and all(_at(body, path) == value for path, value in env.constants)
    )


def _preview(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    return repr(text if len(text) <= 80 else text[:77] + "...")


def error_envelope(body: bytes, protocol: str | None) -> list[Hit]:
    """An error body that is no JSON, or not in the envelope of ``protocol`` (of any
    protocol when it is unknown), or that lacks a field of the envelope."""
    protocols = [protocol] if protocol is not None else list(PROTOCOLS)
    shapes = " or ".join(dict.fromkeys(envelope(p).shape for p in protocols))
    if not body.strip():
        return [Hit("framing.error-envelope", None, f"the error body is empty, not {shapes}")]
    try:
        parsed: Any = json.loads(body)
    except ValueError:
        what = f"the error body {_preview(body)} is not JSON, let alone {shapes}"
        return [Hit("framing.error-envelope", None, what)]
    readable = [p for p in protocols if _reads_message(envelope(p), parsed)]
    if not readable:
        where = f"the {get_codec(protocol).title}" if protocol is not None else "any"
        what = f"the error body {_preview(body)} is not in {where} error envelope {shapes}"
        return [Hit("framing.error-envelope", None, what)]
    if protocol is None:
        return []  # the message is readable in some protocol's envelope: which is unknown
    env = envelope(protocol)
    missing = [".".join(p) for p in env.fields if not _at(parsed, p)]
    if not missing:
        return []
    what = f"the error body has no {', '.join(missing)} (the envelope is {env.shape})"
    return [Hit("framing.error-envelope-fields", None, what)]
