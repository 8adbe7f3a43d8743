"""Pieces the codecs' frame previews share (:meth:`Codec.preview`): a frame's payload in
a few words, so a table of frames shows what differs between them."""

from __future__ import annotations

import json
from typing import Any

from streamscope.model.events import JSON

ARGS = 60  # characters of a tool call's arguments shown in an item's summary


def text_of(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def obj_of(value: Any) -> JSON:
    return value if isinstance(value, dict) else {}


def int_of(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def usage_text(usage: Any, inp: str, out: str) -> str | None:
    """``usage 12→34`` (``?`` for a count the frame does not give)."""
    if not isinstance(usage, dict):
        return None
    i, o = int_of(usage.get(inp)), int_of(usage.get(out))
    if i is None and o is None:
        return None
    return f"usage {'?' if i is None else i}→{'?' if o is None else o}"


def error_text(payload: JSON) -> str:
    error = payload.get("error")
    if isinstance(error, dict):
        kind = text_of(error.get("type")) or text_of(error.get("code"))
        message = text_of(error.get("message")) or json.dumps(error, ensure_ascii=False)
        return f"error: {kind}: {message}" if kind else f"error: {message}"
    if isinstance(error, str):
        return f"error: {error}"
    text = text_of(payload.get("message"))
    return f"error: {text}" if text else "error"


def join(parts: list[str]) -> str:
    return " · ".join(p for p in parts if p)


def summary(parts: list[str], items: Any, usage: str | None, empty: str) -> str | None:
    """A frame's parts (and its usage) joined; ``empty`` when it holds an empty list of
    ``items`` and nothing else; None when it shows nothing this protocol knows."""
    text = join([*parts, usage or ""])
    if text:
        return text
    return empty if isinstance(items, list) and not items else None


def short(text: str, limit: int = ARGS) -> str:
    """``text`` as it is, or cut to ``limit`` characters whose last is an ellipsis (…):
    the one truncation of the tree (previews, cells, findings, CLI lines)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = [
    "ARGS",
    "JSON",
    "error_text",
    "int_of",
    "join",
    "obj_of",
    "short",
    "summary",
    "text_of",
    "usage_text",
]
