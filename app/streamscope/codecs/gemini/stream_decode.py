"""Gemini ``streamGenerateContent`` stream -> canonical events.

The stream's contract, as Google sends it (``alt=sse``): every frame is ``data:`` with one
whole ``GenerateContentResponse`` (no ``event:`` names, no terminator: the body ends
after the chunk that carries a ``finishReason``, or after the ``promptFeedback`` of a
prompt blocked before any candidate). ``usageMetadata`` comes on every chunk and is
cumulative (the last one wins), so each chunk's counts are read before its content; a
function call arrives whole in one part (no argument deltas), and becomes a
ToolCallStart, one ToolCallDelta with its ``args`` as JSON text and a ToolCallEnd.
Vertex AI's streamed arguments (``streamFunctionCallArguments``: a call opened with
``willContinue``, then ``partialArgs`` by JSON path, then an empty ``functionCall``) are
put together here and go out as one delta too.

A part with ``thought: true`` is reasoning; a ``thoughtSignature`` is a
ReasoningSignature of origin ``gemini``: after a thought part's text (it closes that
reasoning), before any other part's events (the part it rides on follows), so that
the encoder can put it back on the part it came with. ``promptFeedback`` is carried as it
came and, with a ``blockReason``, is a content-filter finish. An ``{"error": {code,
message, status}}`` chunk is an Error. Fields with no canonical slot (a candidate's
``safetyRatings``, ``finishMessage``, ``citationMetadata``; a chunk's ``modelStatus``)
are Opaque events where they came; parts of kinds with no canonical slot (code
execution, an image the model made) are ServerTool blocks.
"""

from __future__ import annotations

import json
import re
from typing import Any

from streamscope.codecs.base import StreamDecoder
from streamscope.codecs.gemini.common import (
    FROM_GEMINI,
    KEEPALIVE,
    PROTOCOL,
    error_from_json,
    from_gemini,
    new_call_id,
    usage_from_json,
)
from streamscope.codecs.gemini.vocabulary import VOCABULARY
from streamscope.codecs.validate import as_int
from streamscope.model.events import (
    JSON,
    Event,
    Finish,
    MessageStart,
    Opaque,
    ReasoningDelta,
    ReasoningSignature,
    ServerTool,
    TextDelta,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from streamscope.wire.frame import Frame

_CHUNK_READ = frozenset(VOCABULARY.mapped("chunk")) | {"createTime"}
_CANDIDATE_READ = VOCABULARY.mapped("candidate")
_PATH_STEP = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\['([^']*)'\]")


class _Streamed:
    """A call whose arguments arrive as ``partialArgs`` (Vertex AI), put together."""

    __slots__ = ("key", "args", "continuing")

    def __init__(self, key: int, args: JSON) -> None:
        self.key = key
        self.args: Any = args
        self.continuing: str | None = None  # the path of a string still growing

    def apply(self, arg: JSON) -> bool:
        """One ``partialArgs`` entry; False when its path is not one this reads."""
        path = arg.get("jsonPath")
        if not isinstance(path, str) or not path.startswith("$"):
            return False
        steps: list[str | int] = []
        for m in _PATH_STEP.finditer(path, 1):
            steps.append(int(m[2]) if m[2] is not None else (m[1] or m[3] or ""))
        if not steps:
            return False
        if "stringValue" in arg:
            value: Any = arg["stringValue"]
        elif "numberValue" in arg:
            value = arg["numberValue"]
        elif "boolValue" in arg:
            value = arg["boolValue"]
        else:
            value = None
        node = self.args
        for step, after in zip(steps, steps[1:], strict=False):
            child: Any = [] if isinstance(after, int) else {}
            node = _slot(node, step, child)
            if node is None:
                return False
        last = steps[-1]
        if isinstance(value, str) and self.continuing == path:
            current = _get(node, last)
            value = (current if isinstance(current, str) else "") + value
        if _slot(node, last, value, replace=True) is None and value is not None:
            return False
        self.continuing = path if arg.get("willContinue") is True else None
        return True


def _get(node: Any, step: str | int) -> Any:
    if isinstance(node, dict):
        return node.get(step)
    if isinstance(node, list) and isinstance(step, int) and step < len(node):
        return node[step]
    return None


def _slot(node: Any, step: str | int, value: Any, replace: bool = False) -> Any:
    """``node[step]``, set to ``value`` when missing (or always, ``replace``)."""
    if isinstance(node, dict) and isinstance(step, str):
        if replace or step not in node:
            node[step] = value
        return node[step]
    if isinstance(node, list) and isinstance(step, int):
        while len(node) <= step:
            node.append(None)
        if replace or node[step] is None:
            node[step] = value
        return node[step]
    return None


class GeminiStreamDecoder(StreamDecoder):
    protocol = PROTOCOL

    def __init__(self) -> None:
        super().__init__()
        self._started = False
        self._errored = False
        self._blocked = False
        self._seen: set[int] = set()
        self._finished: set[int] = set()
        self._called: set[int] = set()  # candidates that made function calls
        self._keys: dict[int, int] = {}  # candidate -> next tool-call index
        self._streamed: dict[int, _Streamed] = {}  # candidate -> call still streaming
        self._usage: Usage | None = None

    # -- framing ----------------------------------------------------------------------

    def ends_stream(self, frame: Frame) -> bool:
        data = frame.data or ""
        return '"finishReason"' in data or '"blockReason"' in data

    def is_error_frame(self, frame: Frame) -> bool:
        return (frame.data or "").lstrip().startswith('{"error"')

    @property
    def complete(self) -> bool:
        """Every candidate finished (or the prompt was blocked): the stream has no
        terminator of its own, so that is the whole answer."""
        if self._errored:
            return False
        return self._blocked or (bool(self._seen) and self._seen <= self._finished)

    # -- decoding ---------------------------------------------------------------------

    def decode_frame(self, frame: Frame) -> list[Event]:
        payload = self.parse_json(frame)
        if payload is None:
            return []
        if not isinstance(payload, dict):
            self.note("not-an-object", "error", "data is not a JSON object")
            return []
        if "error" in payload:
            self._errored = True
            return [error_from_json(payload["error"], json.dumps(payload))]
        if payload == KEEPALIVE:
            return []  # (a proxy's keepalive: the first chunk with ids is still to come)
        out: list[Event] = []
        if not self._started:
            self._start(payload, out)
        usage = payload.get("usageMetadata")
        if isinstance(usage, dict):
            counted = usage_from_json(usage)
            if counted is not None and counted != self._usage:
                self._usage = counted
                out.append(counted)
        extra = {k: v for k, v in payload.items() if k not in _CHUNK_READ}
        feedback = payload.get("promptFeedback")
        if feedback is not None:
            extra["promptFeedback"] = feedback
        if extra:
            out.append(Opaque(PROTOCOL, {"chunk": extra}))
        candidates = payload.get("candidates")
        if isinstance(candidates, list):
            for cand in candidates:
                if isinstance(cand, dict):
                    self._candidate(cand, out)
                else:
                    self.note("invalid-candidate", "error", "a candidate is not a JSON object")
        elif candidates is not None:
            self.note("invalid-candidates", "error", "candidates is not an array")
        if isinstance(feedback, dict) and isinstance(feedback.get("blockReason"), str):
            self._blocked = True
            out.append(Finish("content_filter", 0, native=feedback["blockReason"]))
        elif candidates is None and feedback is None:
            self.note_once("missing-candidates", "warning", "a chunk has no candidates")
        return out

    def _start(self, payload: JSON, out: list[Event]) -> None:
        rid, model = payload.get("responseId"), payload.get("modelVersion")
        if not isinstance(rid, str):
            self.note("missing-id", "warning", "the first chunk has no responseId")
            rid = ""
        if not isinstance(model, str):
            self.note("missing-model", "warning", "the first chunk has no modelVersion")
            model = ""
        created = payload.get("createTime")
        meta = {PROTOCOL: {"createTime": created}} if isinstance(created, str) else {}
        self._started = True
        out.append(MessageStart(rid, model, None, meta))

    def _candidate(self, cand: JSON, out: list[Event]) -> None:
        index = as_int(cand.get("index")) or 0
        self._seen.add(index)
        extra = {k: v for k, v in cand.items() if k not in _CANDIDATE_READ}
        if extra:
            out.append(Opaque(PROTOCOL, {"candidate": extra}, index))
        content = cand.get("content")
        if isinstance(content, dict):
            parts = content.get("parts")
            if parts and index in self._finished:
                self.note_once("content-after-finish", "warning", "content after finishReason")
            if isinstance(parts, list):
                for part in parts:
                    if isinstance(part, dict):
                        self._part(part, index, out)
                    else:
                        self.note("invalid-part", "error", "a part is not a JSON object")
            role = content.get("role")
            if role not in (None, "model"):
                self.note_once("unexpected-role", "warning", f"a candidate's role is {role!r}")
        reason = cand.get("finishReason")
        if reason is not None:
            self._finish(reason, index, out)

    def _part(self, part: JSON, choice: int, out: list[Event]) -> None:
        sig = part.get("thoughtSignature")
        if sig is not None and not isinstance(sig, str):
            self.note("invalid-signature", "error", "thoughtSignature is not a string")
            sig = None
        thought = part.get("thought") is True
        if sig and not thought:
            out.append(ReasoningSignature(sig, choice, PROTOCOL))
        text = part.get("text")
        if "text" in part:
            if not isinstance(text, str):
                self.note("invalid-text", "error", "a part's text is not a string")
            elif text:
                out.append(ReasoningDelta(text, choice) if thought else TextDelta(text, choice))
        elif isinstance(part.get("functionCall"), dict):
            self._call(part["functionCall"], choice, out)
        else:
            kinds = [k for k in part if k not in ("thoughtSignature", "thought")]
            if kinds:
                out.append(ServerTool(PROTOCOL, dict(part), choice))
        if sig and thought:
            out.append(ReasoningSignature(sig, choice, PROTOCOL))

    def _call(self, call: JSON, choice: int, out: list[Event]) -> None:
        name = call.get("name")
        streamed = self._streamed.get(choice)
        partial = call.get("partialArgs")
        if streamed is not None:
            if not name:
                if isinstance(partial, list):
                    for arg in partial:
                        if not isinstance(arg, dict) or not streamed.apply(arg):
                            self.note_once(
                                "invalid-partial-args", "error", "partialArgs it cannot place"
                            )
                if call.get("willContinue") is not True and not partial:
                    self._end_streamed(choice, out)
                return
            self._end_streamed(choice, out)  # a new call: the last one is over
        key = self._keys.get(choice, 0)
        self._keys[choice] = key + 1
        self._called.add(choice)
        cid = call.get("id")
        if not isinstance(name, str) or not name:
            self.note("tool-call-missing-name", "warning", f"function call {key} has no name")
            name = ""
        out.append(
            ToolCallStart(key, cid if isinstance(cid, str) and cid else new_call_id(), name, choice)
        )
        args = call.get("args")
        if args is not None and not isinstance(args, dict):
            self.note("invalid-args", "warning", f"the args of call {name!r} are no object")
        if call.get("willContinue") is True:
            self._streamed[choice] = _Streamed(key, dict(args) if isinstance(args, dict) else {})
            return
        text = json.dumps(args if args is not None else {}, ensure_ascii=False)
        out += [ToolCallDelta(key, text, choice), ToolCallEnd(key, choice)]

    def _end_streamed(self, choice: int, out: list[Event]) -> None:
        streamed = self._streamed.pop(choice, None)
        if streamed is not None:
            text = json.dumps(streamed.args, ensure_ascii=False)
            out += [ToolCallDelta(streamed.key, text, choice), ToolCallEnd(streamed.key, choice)]

    def _finish(self, reason: Any, index: int, out: list[Event]) -> None:
        if not isinstance(reason, str):
            self.note("invalid-finish-reason", "warning", "finishReason is not a string")
            reason = str(reason)
        if index in self._finished:
            self.note_once("duplicate-finish", "info", f"candidate {index} finished twice")
            return
        self._finished.add(index)
        self._end_streamed(index, out)
        if reason not in FROM_GEMINI and reason not in VOCABULARY.mapped("finishReason"):
            self.note("unknown-finish-reason", "info", f"unknown finishReason {reason!r}")
        out.append(Finish(from_gemini(reason, index in self._called), index, native=reason))

    def finish(self) -> list[Event]:
        out: list[Event] = []
        for choice in list(self._streamed):
            self.note("unended-call", "warning", "a call's streamed arguments never ended")
            self._end_streamed(choice, out)
        if not self.complete and not self._errored:
            self.note(
                "missing-terminator",
                "warning",
                "the gemini stream ended before a chunk with finishReason (Gemini has no "
                "terminator: that chunk is the last)",
            )
        return out


__all__ = ["GeminiStreamDecoder"]
