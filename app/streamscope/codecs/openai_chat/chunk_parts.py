"""The pieces an OpenAI Chat stream's chunks are assembled from, serialised once so that
each event costs one small ``json`` call for its delta: the chunk's head
(:func:`chunk_head`: id, object, created, model, and the fields the upstream's start
carried) and one choice's state on the wire (:class:`ChoiceState`: its prefix, its
calls' dense indexes, the fields it carries; :func:`written`, its next call's index).
"""

from __future__ import annotations

import json
import time
import uuid

from streamscope.codecs.openai_chat.common import PROTOCOL
from streamscope.model.events import JSON, MessageStart

dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""Compact JSON with text as it is (one encoder made once: it is called per event)."""


def chunk_head(start: MessageStart | None, model: str | None) -> str:
    """The start of every chunk, up to its choices (``'{"id":..,...,"choices":['``): the
    start's id, created time and carried ``service_tier``/``system_fingerprint``, and
    ``model`` (the name the client is shown) or the start's."""
    cid = start.id if start and start.id else "chatcmpl-" + uuid.uuid4().hex
    model = model or (start.model if start and start.model else "unknown")
    created = start.created if start and start.created is not None else int(time.time())
    head = (
        f'{{"id":{dumps(cid)},"object":"chat.completion.chunk",'
        f'"created":{int(created)},"model":{dumps(model)}'
    )
    meta = start.meta.get(PROTOCOL, {}) if start else {}
    for key in ("service_tier", "system_fingerprint"):
        value = meta.get(key)
        if isinstance(value, str):
            head += f',"{key}":{dumps(value)}'
    return head + ',"choices":['


class ChoiceState:
    """One choice as written so far: its pre-serialised prefix, its calls' dense indexes,
    the calls it holds or has not given arguments yet, and the fields it carries."""

    __slots__ = ("prefix", "finished", "tools", "made_calls", "silent", "custom", "whole", "extra")

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix  # '{"index":N,"delta":'
        self.finished = False
        self.tools: dict[int, int] = {}  # source key -> dense wire index
        self.made_calls = False
        self.silent: set[int] = set()  # tool calls (source keys) with no arguments yet
        # custom calls (source keys) -> None (input streams), or the held arguments
        self.custom: dict[int, list[str] | None] = {}
        # calls held to their end (options.whole_tool_calls): source key -> the call
        # (its arguments yet to come) and its arguments so far
        self.whole: dict[int, tuple[JSON, list[str]]] = {}
        self.extra = ""  # carried choice fields for its next chunk (',"k":v...')


def written(state: ChoiceState) -> int:
    """How many of the choice's calls are on the wire: the next call's dense index."""
    return sum(1 for dense in state.tools.values() if dense >= 0)


__all__ = ["ChoiceState", "chunk_head", "dumps", "written"]
