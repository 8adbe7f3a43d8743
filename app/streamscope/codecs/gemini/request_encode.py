"""The canonical :class:`Request` -> a Gemini ``generateContent`` body.

The body has no model and no stream flag (the upstream's path says both). What a Gemini
client sent and the decoder carried (:mod:`.request`) goes back as it came; from another
protocol, what has no Gemini place is left out or changed, and said in the notes:

- a ``system`` message in the middle of the conversation goes as a user turn (Gemini
  has only ``systemInstruction``, before the conversation);
- tool results go in a user turn as ``functionResponse`` parts (consecutive results in
  one turn, as Gemini wants one response per call of the turn before), named after their
  call; a result's text that is a JSON object is the response, any other text
  ``{"output": text}`` (``{"error": text}`` for an error), Gemini's convention;
- tools go as ``functionDeclarations`` with ``parametersJsonSchema`` (JSON Schema as
  given); a freeform tool as a function taking ``{"input": string}``;
- reasoning goes back only when Gemini signed it; a signature rides on the part after it
  (Gemini hangs it on the function call it belongs to);
- ``tool_choice`` is ``functionCallingConfig`` (``required`` is ``ANY``, a named tool
  ``ANY`` with ``allowedFunctionNames``); thinking is ``thinkingConfig`` (a budget, else a
  level); a JSON response format is ``responseMimeType`` + ``responseJsonSchema``.
"""

from __future__ import annotations

import json
from typing import Any

from streamscope.codecs.content import split_data_url
from streamscope.codecs.gemini.common import PROTOCOL, wire_call_id
from streamscope.codecs.gemini.request import (
    FIELDS_KEY,
    GENERATION_KEY,
    SYSTEM_KEY,
    THINKING_KEY,
    TOOL_CONFIG_KEY,
    TOOL_FIELDS_KEY,
    TOOLS_KEY,
)
from streamscope.codecs.gemini.stream_encode import call_args
from streamscope.model.events import JSON
from streamscope.model.request import (
    ImagePart,
    OpaquePart,
    Part,
    Request,
    RequestNotes,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolDef,
    ToolResultPart,
)

TITLE = "Gemini"
_LEVELS = {"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH", "xhigh": "HIGH"}


class _Writer:
    def __init__(self, request: Request, notes: RequestNotes) -> None:
        self.request = request
        self.notes = notes
        self.own = request.protocol == PROTOCOL
        self.names: dict[str, str] = {}  # call id -> the function's name

    # -- parts ------------------------------------------------------------------------

    def text(self, part: TextPart) -> JSON:
        if part.cache_control is not None:
            self.notes.dropped("cache_control", f"{TITLE} has no cache breakpoints")
        return {"text": part.text}

    def image(self, part: ImagePart) -> JSON:
        if part.data is not None:
            return {"inlineData": {"mimeType": part.media_type or "image/png", "data": part.data}}
        url = part.url or ""
        inline = split_data_url(url)
        if inline is not None:
            return {"inlineData": {"mimeType": inline[0] or "image/png", "data": inline[1]}}
        self.notes.changed("image url", f"{TITLE} reads images by file URI", "fileData")
        file: JSON = {"fileUri": url}
        if part.media_type:
            file["mimeType"] = part.media_type
        return {"fileData": file}

    def opaque(self, part: OpaquePart) -> JSON | None:
        if part.protocol == PROTOCOL:
            return dict(part.payload)
        self.notes.foreign(part, TITLE)
        return None

    def call(self, part: ToolCallPart) -> JSON:
        self.names[part.id] = part.wire_name
        if part.custom:
            args: JSON = {"input": part.arguments}
        else:
            args, whole = call_args(part.arguments)
            if not whole:
                self.notes.changed(
                    f"tool call {part.id}", "its arguments are no JSON object", "`arguments`"
                )
        fc: JSON = {"name": part.wire_name, "args": args}
        wire_id = wire_call_id(part.id)
        if wire_id is not None:
            fc["id"] = wire_id
        return {"functionCall": fc}

    def result(self, part: ToolResultPart) -> JSON:
        name = self.names.get(part.call_id, "")
        if not name:
            self.notes.changed(
                f"tool result {part.call_id}", "it answers no call of the conversation", "no name"
            )
        fr: JSON = {"name": name}
        wire_id = wire_call_id(part.call_id)
        if wire_id is not None:
            fr["id"] = wire_id
        text = part.text
        if part.is_error:
            fr["response"] = {"error": text}
        elif text.strip() and _object(text) is not None:
            fr["response"] = _object(text)
        elif part.content or text:
            fr["response"] = {"output": text}
        else:
            fr["response"] = {}
        for item in part.content:
            if isinstance(item, OpaquePart) and item.protocol == PROTOCOL:
                extra = item.payload.get("functionResponse")
                if isinstance(extra, dict):
                    fr.update(extra)
            elif isinstance(item, OpaquePart):
                self.notes.foreign(item, TITLE)
            elif isinstance(item, ImagePart):
                self.notes.dropped(
                    f"tool result {part.call_id} image", f"{TITLE} takes a response as JSON"
                )
        if part.cache_control is not None:
            self.notes.dropped("cache_control", f"{TITLE} has no cache breakpoints")
        return {"functionResponse": fr}

    def thinking(self, part: ThinkingPart, before_call: bool) -> tuple[JSON | None, str | None]:
        """A thought part (or None) and the signature for the next part (or None)."""
        if part.origin != PROTOCOL:
            if part.origin is not None and (part.signature or part.redacted):
                self.notes.foreign_reasoning(part, TITLE)
            elif part.text:
                self.notes.dropped("reasoning", f"reasoning {TITLE} did not sign: not sent back")
            return None, None
        sig = part.signature or None
        if not part.text:
            return None, sig
        thought: JSON = {"text": part.text, "thought": True}
        if sig is not None and not (before_call and not self.own):
            thought["thoughtSignature"] = sig
            sig = None
        return thought, sig

    # -- turns ------------------------------------------------------------------------

    def parts(self, parts: list[Part]) -> list[JSON]:
        out: list[JSON] = []
        pending: str | None = None
        for k, part in enumerate(parts):
            wire: JSON | None
            sig: str | None = None  # (a thought's signature, for the part after it)
            if isinstance(part, ThinkingPart):
                after = parts[k + 1] if k + 1 < len(parts) else None
                wire, sig = self.thinking(part, isinstance(after, ToolCallPart))
            elif isinstance(part, TextPart):
                wire = self.text(part)
            elif isinstance(part, ImagePart):
                wire = self.image(part)
            elif isinstance(part, ToolCallPart):
                wire = self.call(part)
            elif isinstance(part, ToolResultPart):
                wire = self.result(part)
            else:
                wire = self.opaque(part)
            if wire is not None:
                if pending is not None and "thoughtSignature" not in wire:
                    wire["thoughtSignature"] = pending
                    pending = None
                out.append(wire)
            if sig is not None:
                if pending is not None:  # two in a row: the first on a part of its own
                    out.append({"text": "", "thoughtSignature": pending})
                pending = sig
        if pending is not None:
            out.append({"text": "", "thoughtSignature": pending})
        return out

    def contents(self) -> list[JSON]:
        out: list[JSON] = []
        merge = False  # the last turn holds tool results: results and a user turn join it
        for msg in self.request.messages:
            parts = self.parts(msg.parts)
            role = "model" if msg.role == "assistant" else "user"
            if msg.role == "system":
                self.notes.changed(
                    "system message", f"{TITLE} takes instructions only before the conversation",
                    "a user turn",
                )  # fmt: skip
            if merge and msg.role in ("tool", "user") and out:
                out[-1]["parts"] += parts
            else:
                out.append({"role": role, "parts": parts})
            merge = msg.role == "tool"
        return out

    # -- settings ---------------------------------------------------------------------

    def tools(self, body: JSON) -> None:
        fields: dict[str, JSON] = self.request.extra.get(TOOL_FIELDS_KEY, {}) if self.own else {}
        decls = {
            t.wire_name: self.declaration(t, fields.get(t.wire_name, {}))
            for t in self.request.tools
        }
        layout = self.request.extra.get(TOOLS_KEY) if self.own else None
        tools: list[JSON] = []
        if isinstance(layout, list):
            for entry in layout:
                tool = dict(entry)
                if "functionDeclarations" in tool:
                    names = tool["functionDeclarations"]
                    tool["functionDeclarations"] = [decls.pop(n) for n in names if n in decls]
                tools.append(tool)
        if decls:
            tools.append({"functionDeclarations": list(decls.values())})
        if tools:
            body["tools"] = tools

    def declaration(self, tool: ToolDef, fields: JSON) -> JSON:
        decl: JSON = {"name": tool.wire_name}
        if tool.description is not None:
            decl["description"] = tool.description
        params: Any = tool.parameters
        if tool.custom:
            self.notes.changed(
                f"tool {tool.name!r}", f"{TITLE} has no freeform tools", "a function of {input}"
            )
            params = {"type": "object", "properties": {"input": {"type": "string"}}}
        if "parameters" in fields:
            decl["parameters"] = fields["parameters"]
        else:
            decl["parametersJsonSchema"] = params
        decl.update({k: v for k, v in fields.items() if k != "parameters"})
        if tool.strict:
            self.notes.dropped(f"tool {tool.name!r} strict", f"{TITLE} has no strict flag")
        if tool.cache_control is not None:
            self.notes.dropped("cache_control", f"{TITLE} has no cache breakpoints")
        return decl

    def tool_config(self, body: JSON) -> None:
        raw = self.request.extra.get(TOOL_CONFIG_KEY) if self.own else None
        if isinstance(raw, dict):
            body["toolConfig"] = raw
            return
        choice = self.request.tool_choice
        if choice is None:
            return
        modes = {"auto": "AUTO", "none": "NONE", "required": "ANY", "tool": "ANY"}
        config: JSON = {"mode": modes[choice.mode]}
        if choice.mode == "tool" and choice.name:
            config["allowedFunctionNames"] = [choice.name]
        if choice.parallel is False:
            self.notes.dropped("parallel tool calls", f"{TITLE} cannot forbid parallel calls")
        body["toolConfig"] = {"functionCallingConfig": config}

    def generation(self, body: JSON) -> None:
        req = self.request
        config: JSON = {}
        if req.max_tokens is not None:
            config["maxOutputTokens"] = req.max_tokens
        for key, value in (
            ("temperature", req.temperature),
            ("topP", req.top_p),
            ("topK", req.top_k),
        ):
            if value is not None:
                config[key] = value
        if req.stop:
            config["stopSequences"] = list(req.stop)
        if req.n is not None:
            config["candidateCount"] = req.n
        thinking = self.thinking_config()
        if thinking is not None:
            config["thinkingConfig"] = thinking
        fmt = req.response_format
        if self.own:
            config.update(req.extra.get(GENERATION_KEY, {}))
        elif isinstance(fmt, dict) and fmt.get("type") in ("json_schema", "json_object"):
            config["responseMimeType"] = "application/json"
            schema = fmt.get("json_schema")
            if isinstance(schema, dict) and isinstance(schema.get("schema"), dict):
                config["responseJsonSchema"] = schema["schema"]
        if config:
            body["generationConfig"] = config

    def thinking_config(self) -> JSON | None:
        raw = self.request.extra.get(THINKING_KEY) if self.own else None
        if isinstance(raw, dict):
            return raw
        thinking = self.request.thinking
        if thinking is None:
            return None
        config: JSON = {}
        if thinking.enabled is False or thinking.effort == "none":
            config["thinkingBudget"] = 0
        elif thinking.budget_tokens is not None:
            config["thinkingBudget"] = thinking.budget_tokens
        elif thinking.effort in _LEVELS:
            config["thinkingLevel"] = _LEVELS[thinking.effort]
        elif thinking.adaptive:
            config["thinkingBudget"] = -1
        if thinking.summary is not None and thinking.enabled is not False:
            config["includeThoughts"] = True
        return config or None


def _object(text: str) -> JSON | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def encode_request(request: Request, notes: RequestNotes | None = None) -> JSON:
    """The generateContent body for a canonical request (no model, no stream flag: the
    upstream's path carries them)."""
    notes = notes if notes is not None else RequestNotes()
    writer = _Writer(request, notes)
    body: JSON = {"contents": writer.contents()}
    system = request.extra.get(SYSTEM_KEY, {}) if writer.own else {}
    if "systemInstruction" in system:
        body["systemInstruction"] = system["systemInstruction"]
    elif request.system:
        instruction: JSON = {"parts": [writer.text(p) for p in request.system]}
        if "role" in system:
            instruction["role"] = system["role"]
        body["systemInstruction"] = instruction
    writer.tools(body)
    writer.tool_config(body)
    writer.generation(body)
    if writer.own:
        body.update(request.extra.get(FIELDS_KEY, {}))
    if request.user is not None or request.metadata:
        notes.dropped("user", f"{TITLE} takes no end-user id or metadata")
    return body


__all__ = ["encode_request"]
