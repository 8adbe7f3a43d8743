"""The Anthropic stream's message and blocks as they go on the wire (strict:
docs/wire-contract.md#anthropic-messages), for the stream encoder: ``message_start``
(with the usage known so far, the input estimated and said so when none is, and what an
Anthropic upstream's message carried: :func:`with_meta`) then a ``ping``; blocks with
dense indexes from 0 that never overlap; a thinking block closed with its
``signature_delta`` (another provider's signature in its envelope); a tool block closed
with the fragment its input still needs; calls waiting for their block written when
another part comes.
"""

from __future__ import annotations

import dataclasses

from streamscope.codecs.anthropic.common import PROTOCOL, new_message_id, usage_to_wire
from streamscope.codecs.base import EncodeOptions, StreamEncoder
from streamscope.codecs.tool_calls import INPUT_CLOSE, INPUT_OPEN
from streamscope.model import signature
from streamscope.model.estimate import NOTE_BYTES, input_estimate
from streamscope.model.events import JSON, Usage
from streamscope.wire import encode_frame

_PING = encode_frame({"type": "ping"}, "ping")


def frame(data: JSON) -> bytes:
    """``data`` as a frame whose ``event:`` is its type (as Anthropic writes every one)."""
    return encode_frame(data, data["type"])


def with_meta(message: JSON, meta: object) -> None:
    """Write what an Anthropic upstream's message said with no canonical slot
    (``MessageStart.meta["anthropic"]``: its fields, and its usage's beyond the counts
    under ``usage``) into ``message``, never over a field already there."""
    if not isinstance(meta, dict):
        return
    for key, value in meta.items():
        if key != "usage":
            message.setdefault(key, value)
    usage, extra = message.get("usage"), meta.get("usage")
    if isinstance(usage, dict) and isinstance(extra, dict):
        for key, value in extra.items():
            usage.setdefault(key, value)


class Tool:
    """A tool call's block as written: its wire id and name, and where it stands."""

    __slots__ = ("id", "name", "state", "said", "wrap")

    def __init__(self, tid: str, name: str, wrap: bool = False) -> None:
        self.id = tid
        self.name = name
        self.state = "pending"  # -> "open" -> "closed"
        self.said = False  # an input_json_delta went out
        self.wrap = wrap  # a freeform call: its raw input goes out as {"input": text}


class BlockWriter(StreamEncoder):
    """The Anthropic stream's message and blocks as they go on the wire (see the module
    docstring); :class:`~streamscope.codecs.anthropic.stream_encode.AnthropicStreamEncoder`
    maps the canonical events onto them."""

    def __init__(self, options: EncodeOptions | None = None) -> None:
        super().__init__(options)
        self._id: str | None = None
        self._model: str | None = None
        self._usage: Usage | None = None
        self._started = False
        self._next = 0  # next wire block index
        self._open: str | None = None  # text, refusal, thinking, tool, redacted, server
        self._index = -1  # wire index of the open block
        self._signature: list[str] = []
        self._signer: tuple[str | None, str | None] = (None, None)  # (origin, item id)
        self._tool: int | None = None  # source index of the open tool block
        self._tools: dict[int, Tool] = {}
        self._pending: list[int] = []
        self._meta: object = None  # MessageStart.meta["anthropic"]: an upstream's extras
        self._block_extra: JSON = {}  # a carried block's extras, for the next of its type

    def _start(self, out: list[bytes]) -> None:
        self._started = True
        message: JSON = {
            "id": self._id or new_message_id(),
            "type": "message",
            "role": "assistant",
            "model": self.options.model or self._model or "unknown",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage_to_wire(self._usage),
        }
        if self._usage is None or self._usage.input_tokens is None:  # estimated, said so
            known = self._usage or Usage()
            estimate = input_estimate(self.options.request)
            message["usage"] = usage_to_wire(dataclasses.replace(known, input_tokens=estimate))
            out.append(NOTE_BYTES)
        with_meta(message, self._meta)
        out.append(frame({"type": "message_start", "message": message}))
        out.append(_PING)

    def _close(self, out: list[bytes]) -> None:
        if self._open is None:
            return
        index = self._index
        if self._open == "thinking":
            sig = "".join(self._signature)
            origin, item_id = self._signer
            if sig and origin is not None:  # another provider's: in its envelope
                sig = signature.for_client(signature.Signed(origin, sig, item_id), PROTOCOL)
            out.append(
                frame(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "signature_delta", "signature": sig},
                    }
                )
            )
        elif self._open == "tool" and self._tool is not None:
            tool = self._tools[self._tool]
            if tool.wrap:  # close the {"input": "...} the fragments opened
                tail = INPUT_CLOSE if tool.said else INPUT_OPEN + INPUT_CLOSE
                out.append(self._delta({"type": "input_json_delta", "partial_json": tail}))
            elif not tool.said:  # a call with no arguments: Anthropic sends one empty delta
                out.append(self._delta({"type": "input_json_delta", "partial_json": ""}))
            tool.state = "closed"
            self._tool = None
        out.append(frame({"type": "content_block_stop", "index": index}))
        self._open = None

    def _settle(self, out: list[bytes]) -> None:
        """Before a part that is not a tool call: close the open block, flush waiting calls."""
        if not self._started:
            self._start(out)
        self._close(out)
        for source in self._pending:
            self._open_tool(out, source)
            self._close(out)
        self._pending.clear()

    def _open_block(self, out: list[bytes], kind: str, block: JSON) -> int:
        held = self._block_extra
        if held and held.get("type") == block.get("type"):
            self._block_extra = {}
            for key, value in held.items():
                block.setdefault(key, value)
        index = self._index = self._next
        self._next += 1
        self._open = kind
        out.append(frame({"type": "content_block_start", "index": index, "content_block": block}))
        return index

    def _open_tool(self, out: list[bytes], source: int) -> None:
        tool = self._tools[source]
        tool.state = "open"
        self._tool = source
        self._open_block(
            out, "tool", {"type": "tool_use", "id": tool.id, "name": tool.name, "input": {}}
        )

    def _delta(self, delta: JSON) -> bytes:
        return frame({"type": "content_block_delta", "index": self._index, "delta": delta})


__all__ = ["BlockWriter", "Tool", "frame", "with_meta"]
