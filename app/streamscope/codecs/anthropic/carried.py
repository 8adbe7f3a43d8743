"""What an Anthropic message or content block says beyond its canonical fields, kept so
the Anthropic encoder can write it back: a message's fields with no canonical slot
(``container``, ...) and what its usage says beyond the counts (:func:`message_meta`, for
the stream decoder and the response decoder alike), and a block's fields beyond those of
its mapped type (a ``tool_use``'s ``caller``, a text block's empty ``citations``:
:func:`block_extra`).
"""

from __future__ import annotations

from streamscope.codecs.anthropic.common import USAGE_COUNTS
from streamscope.model.events import JSON

_MESSAGE_FIELDS = frozenset(
    {"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"}
)


_BLOCK_FIELDS = {
    "text": frozenset({"type", "text"}),
    "thinking": frozenset({"type", "thinking", "signature"}),
    "redacted_thinking": frozenset({"type", "data"}),
    "tool_use": frozenset({"type", "id", "name", "input"}),
}


def block_extra(block: JSON) -> JSON:
    """What a block of a mapped type says beyond its canonical fields (a tool_use's
    ``caller``, a text block's empty ``citations``), with its type; {} when nothing."""
    known = _BLOCK_FIELDS.get(block.get("type"))  # type: ignore[arg-type]
    if known is None or known.issuperset(block):
        return {}
    extra = {k: v for k, v in block.items() if k not in known}
    if extra.get("citations"):  # (non-empty: they become Citation events)
        del extra["citations"]
    return {"type": block["type"], **extra} if extra else {}


def message_meta(msg: JSON) -> JSON:
    """What a message object says with no canonical slot (``container``, ...), with what
    its usage says beyond the counts under ``usage`` (``service_tier``, ``cache_creation``,
    ``server_tool_use``): ``MessageStart.meta["anthropic"]``, which the Anthropic encoder
    writes back."""
    meta: JSON = {k: v for k, v in msg.items() if k not in _MESSAGE_FIELDS}
    usage = msg.get("usage")
    if isinstance(usage, dict):
        extra = {k: v for k, v in usage.items() if k not in USAGE_COUNTS}
        if extra:
            meta["usage"] = extra
    return meta


__all__ = ["block_extra", "message_meta"]
