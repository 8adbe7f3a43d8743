"""Gemini ``generateContent`` request bodies -> the canonical :class:`Request` (validating).

The body has no model and no stream flag: the path names both (``/v1beta/models/{model}:
streamGenerateContent``), so the caller passes them. What the codec maps is declared in
:mod:`.vocabulary`; everything else is carried, never refused:

- ``gemini_fields``: top-level fields with no canonical slot (``safetySettings``,
  ``cachedContent``, ...); ``gemini_generation``: the other ``generationConfig`` fields
  (``responseMimeType``, ``seed``, ...); ``gemini_thinking`` / ``gemini_tool_config``:
  the raw objects, so that a round trip keeps them as sent;
- ``gemini_tools``: the ``tools[]`` entries as laid out (function declarations by name,
  other tools such as ``googleSearch`` as they came), ``gemini_tool_fields``: a
  declaration's fields beyond name/description/schema (and its ``parameters`` in
  Gemini's own Schema form, which the canonical tool gets as JSON Schema);
- parts with no canonical slot (files, code execution, a part with fields the codec does
  not map) as :class:`OpaquePart` where they stood.

Turns: ``model`` is the assistant; a ``user`` (or old ``function``) turn's
``functionResponse`` parts become a canonical ``tool`` message, then the rest as a user
message. Gemini's calls need no id: a call without one gets a made-up id
(:data:`.common.MADE_UP_ID`) and a response without one answers the first unanswered
call of its name. A ``thoughtSignature`` is reasoning signed by Gemini
(a :class:`ThinkingPart`: the thought part's own, or an empty one before the part it
rode on); one the proxy wrapped for another provider is read back as that provider's
(:func:`.common.read_signature`) and joined to the unsigned reasoning just before it.
"""

from __future__ import annotations

import json
from typing import Any

from streamscope.codecs.gemini.common import MADE_UP_ID, PROTOCOL, read_signature
from streamscope.codecs.gemini.vocabulary import VOCABULARY
from streamscope.codecs.validate import (
    expect_list,
    expect_object,
    expect_str,
    opt_bool,
    opt_int,
    opt_number,
    opt_object,
    opt_str,
    opt_str_list,
    request_body,
)
from streamscope.model.events import JSON
from streamscope.model.request import (
    Carried,
    ImagePart,
    Message,
    OpaquePart,
    Part,
    Request,
    RequestError,
    TextPart,
    Thinking,
    ThinkingPart,
    ToolCallPart,
    ToolChoice,
    ToolDef,
    ToolResultPart,
)

FIELDS_KEY = "gemini_fields"
GENERATION_KEY = "gemini_generation"
THINKING_KEY = "gemini_thinking"
TOOL_CONFIG_KEY = "gemini_tool_config"
TOOLS_KEY = "gemini_tools"
TOOL_FIELDS_KEY = "gemini_tool_fields"
SYSTEM_KEY = "gemini_system"  # the systemInstruction's role, or all of it (non-text parts)

_KNOWN = VOCABULARY.mapped("request")
_GENERATION_MAPPED = VOCABULARY.mapped("generationConfig")
_SIGNED = frozenset({"thoughtSignature"})
# The API reads a field by its proto name too (protobuf's JSON mapping): google-genai
# 3.6.1 sends ``parameters_json_schema`` so when it calls /v1 (seen on the wire).
_SNAKE_SCHEMA = "parameters_json_schema"
_DECL_KNOWN = frozenset(
    {"name", "description", "parameters", "parametersJsonSchema", _SNAKE_SCHEMA}
)
_MODES: dict[str, Any] = {"AUTO": "auto", "ANY": "required", "NONE": "none", "VALIDATED": "auto"}


def schema_to_json(schema: Any) -> Any:
    """Gemini's Schema (OpenAPI's subset, ``type`` in capitals) as JSON Schema."""
    if isinstance(schema, list):
        return [schema_to_json(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: JSON = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            out[key] = value.lower()
        elif key == "properties" and isinstance(value, dict):
            out[key] = {k: schema_to_json(v) for k, v in value.items()}
        elif key in ("items", "anyOf"):
            out[key] = schema_to_json(value)
        else:
            out[key] = value
    return out


def result_content(response: JSON | None) -> tuple[list[TextPart], bool]:
    """A functionResponse's ``response`` as a result's text, and whether it is an error:
    Gemini's convention is ``{"output": ...}`` or ``{"error": ...}``; any other object
    is the text as JSON."""
    if response is None:
        return [], False
    if len(response) == 1:
        ((key, value),) = response.items()
        if key in ("output", "error") and isinstance(value, str) and not _is_object(value):
            return [TextPart(value)], key == "error"
    return [TextPart(json.dumps(response, ensure_ascii=False))], False


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


class _Turns:
    """Reads ``contents`` into canonical messages, pairing responses with their calls."""

    def __init__(self, req: Request) -> None:
        self.req = req
        self.unanswered: list[ToolCallPart] = []

    def content(self, raw: Any, path: str) -> None:
        content = expect_object(raw, path)
        role = opt_str(content.get("role"), f"{path}.role") or "user"
        if role not in ("user", "model", "function"):
            raise RequestError(f"{path}.role must be 'user' or 'model'", f"{path}.role")
        parts = expect_list(content.get("parts"), f"{path}.parts")
        if role == "model":
            self.req.messages.append(Message("assistant", self.model_parts(parts, path)))
            return
        results: list[Part] = []
        rest: list[Part] = []
        for j, raw_part in enumerate(parts):
            p = f"{path}.parts[{j}]"
            part = expect_object(raw_part, p)
            if isinstance(part.get("functionResponse"), dict) and set(part) == {"functionResponse"}:
                results.append(self.result(part["functionResponse"], f"{p}.functionResponse"))
            else:
                rest.append(self.user_part(part, p))
        if results:
            self.req.messages.append(Message("tool", results))
        if rest or not results:
            self.req.messages.append(Message("user", rest))

    def user_part(self, part: JSON, path: str) -> Part:
        if set(part) == {"text"}:
            return TextPart(expect_str(part["text"], f"{path}.text"))
        blob = part.get("inlineData")
        if (
            set(part) == {"inlineData"}
            and isinstance(blob, dict)
            and set(blob) <= {"mimeType", "data"}
        ):
            media = expect_str(blob.get("mimeType"), f"{path}.inlineData.mimeType")
            data = expect_str(blob.get("data"), f"{path}.inlineData.data")
            if media.startswith("image/"):
                return ImagePart(data=data, media_type=media)
        return OpaquePart(PROTOCOL, part, path)  # files, audio, documents, ...

    def result(self, fr: JSON, path: str) -> ToolResultPart:
        name = expect_str(fr.get("name"), f"{path}.name")
        call_id = opt_str(fr.get("id"), f"{path}.id")
        response = opt_object(fr.get("response"), f"{path}.response")
        content: list[TextPart | ImagePart | OpaquePart] = []
        texts, is_error = result_content(response)
        content += texts
        extra = {k: v for k, v in fr.items() if k not in ("name", "id", "response")}
        if extra:  # (multimodal parts, scheduling, willContinue)
            content.append(OpaquePart(PROTOCOL, {"functionResponse": extra}, path))
        call = next((c for c in self.unanswered if c.name == name), None)
        if call_id is not None:
            call = next((c for c in self.unanswered if c.id == call_id), call)
        if call is not None:
            self.unanswered.remove(call)
        if call_id is None:
            call_id = call.id if call is not None else f"{MADE_UP_ID}{path}"
        return ToolResultPart(call_id, content, is_error)

    def model_parts(self, parts: list[Any], path: str) -> list[Part]:
        out: list[Part] = []
        self.unanswered = []
        for j, raw_part in enumerate(parts):
            p = f"{path}.parts[{j}]"
            part = expect_object(raw_part, p)
            sig = opt_str(part.get("thoughtSignature"), f"{p}.thoughtSignature")
            thought = opt_bool(part.get("thought"), f"{p}.thought") is True
            if thought and set(part) <= {"text", "thought"} | _SIGNED:
                text = expect_str(part.get("text"), f"{p}.text")
                out.append(ThinkingPart(text, origin=PROTOCOL))
                if sig:
                    self.sign(out, sig, own=True)
                continue
            if sig:
                self.sign(out, sig, own=False)
            body = {k: v for k, v in part.items() if k != "thoughtSignature"}
            if set(body) == {"text"}:
                out.append(TextPart(expect_str(body["text"], f"{p}.text")))
            elif set(body) == {"functionCall"} and set(
                expect_object(body["functionCall"], f"{p}.functionCall")
            ) <= {"name", "args", "id"}:
                out.append(self.call(body["functionCall"], f"{p}.functionCall", p))
            else:
                out.append(OpaquePart(PROTOCOL, body, p))
        return out

    def call(self, fc: JSON, path: str, where: str) -> ToolCallPart:
        name = expect_str(fc.get("name"), f"{path}.name")
        args = opt_object(fc.get("args"), f"{path}.args")
        call_id = opt_str(fc.get("id"), f"{path}.id") or f"{MADE_UP_ID}{where}"
        part = ToolCallPart(call_id, name, json.dumps(args or {}, ensure_ascii=False))
        self.unanswered.append(part)
        return part

    @staticmethod
    def sign(out: list[Part], sig: str, own: bool) -> None:
        """A signature on a part: on the thought just read (``own``), or an empty
        reasoning of its own before the part it rode on; another provider's joins the
        unsigned reasoning before it, where its provider signed it."""
        signed = read_signature(sig)
        last = out[-1] if out else None
        if signed.origin == PROTOCOL:
            if own and isinstance(last, ThinkingPart):
                last.signature = sig
            else:
                out.append(ThinkingPart("", sig, origin=PROTOCOL))
            return
        if isinstance(last, ThinkingPart) and last.signature is None and last.redacted is None:
            target = last
        else:
            target = ThinkingPart("")
            out.append(target)
        target.origin, target.item_id = signed.origin, signed.item_id
        if signed.redacted:
            target.redacted = signed.signature
        else:
            target.signature = signed.signature


def _system(value: Any, req: Request) -> None:
    system = expect_object(value, "systemInstruction")
    parts = expect_list(system.get("parts"), "systemInstruction.parts")
    texts = [p for p in parts if isinstance(p, dict) and set(p) == {"text"}]
    if len(texts) != len(parts) or not set(system) <= {"parts", "role"}:
        req.carry(PROTOCOL, SYSTEM_KEY, "systemInstruction", system, "a system instruction")
    elif "role" in system:
        req.extra[SYSTEM_KEY] = {"role": system["role"]}
    for i, p in enumerate(texts):
        req.system.append(TextPart(expect_str(p.get("text"), f"systemInstruction.parts[{i}].text")))


def _tools(value: Any, req: Request) -> None:
    layout: list[JSON] = []
    fields: dict[str, JSON] = {}
    for i, raw in enumerate(expect_list(value, "tools")):
        path = f"tools[{i}]"
        tool = expect_object(raw, path)
        entry: JSON = {}
        for key, item in tool.items():
            if key != "functionDeclarations":
                entry[key] = item
                req.carried.append(Carried(PROTOCOL, f"{path}.{key}", f"the {key} tool"))
                continue
            names: list[str] = []
            for j, decl_raw in enumerate(expect_list(item, f"{path}.{key}")):
                p = f"{path}.{key}[{j}]"
                decl = expect_object(decl_raw, p)
                name = expect_str(decl.get("name"), f"{p}.name")
                desc = opt_str(decl.get("description"), f"{p}.description")
                schema_key = _SNAKE_SCHEMA if _SNAKE_SCHEMA in decl else "parametersJsonSchema"
                schema = opt_object(decl.get(schema_key), f"{p}.{schema_key}")
                native = opt_object(decl.get("parameters"), f"{p}.parameters")
                params = schema or schema_to_json(native) or {"type": "object", "properties": {}}
                req.tools.append(ToolDef(name, desc, params))
                rest = {k: v for k, v in decl.items() if k not in _DECL_KNOWN}
                if native is not None and schema is None:
                    rest["parameters"] = native
                if rest:
                    fields[name] = rest
                names.append(name)
            entry[key] = names
        layout.append(entry)
    req.extra[TOOLS_KEY] = layout
    if fields:
        req.extra[TOOL_FIELDS_KEY] = fields


def _tool_config(value: Any, req: Request) -> None:
    config = expect_object(value, "toolConfig")
    req.extra[TOOL_CONFIG_KEY] = config
    fcc = opt_object(config.get("functionCallingConfig"), "toolConfig.functionCallingConfig")
    for key in config:
        if key != "functionCallingConfig":
            req.carried.append(Carried(PROTOCOL, f"toolConfig.{key}", "a tool setting"))
    if fcc is None:
        return
    path = "toolConfig.functionCallingConfig"
    mode = opt_str(fcc.get("mode"), f"{path}.mode")
    allowed = opt_str_list(fcc.get("allowedFunctionNames"), f"{path}.allowedFunctionNames")
    if mode in _MODES:
        choice = ToolChoice(_MODES[mode])
        if mode == "ANY" and allowed and len(allowed) == 1:
            choice = ToolChoice("tool", allowed[0])
        elif allowed:
            req.carried.append(Carried(PROTOCOL, f"{path}.allowedFunctionNames", "allowed tools"))
        if mode == "VALIDATED":
            req.carried.append(Carried(PROTOCOL, f"{path}.mode", "validated function calling"))
        req.tool_choice = choice
    for key in fcc:
        if key not in ("mode", "allowedFunctionNames"):
            req.carried.append(Carried(PROTOCOL, f"{path}.{key}", "a function-calling setting"))


def _thinking(value: Any, req: Request) -> None:
    config = expect_object(value, "generationConfig.thinkingConfig")
    req.extra[THINKING_KEY] = config
    path = "generationConfig.thinkingConfig"
    budget = opt_int(config.get("thinkingBudget"), f"{path}.thinkingBudget")
    include = opt_bool(config.get("includeThoughts"), f"{path}.includeThoughts")
    level = opt_str(config.get("thinkingLevel"), f"{path}.thinkingLevel")
    thinking = Thinking()
    if budget == 0:
        thinking.enabled = False
    elif budget == -1:  # dynamic: the model decides
        thinking.enabled, thinking.adaptive = True, True
    elif budget is not None:
        thinking.enabled, thinking.budget_tokens = True, budget
    if level is not None:
        thinking.effort = level.lower()
    if include:
        thinking.summary = "auto"
    req.thinking = thinking


def _generation(value: Any, req: Request) -> None:
    config = expect_object(value, "generationConfig")
    path = "generationConfig"
    req.max_tokens = opt_int(config.get("maxOutputTokens"), f"{path}.maxOutputTokens")
    req.temperature = opt_number(config.get("temperature"), f"{path}.temperature")
    req.top_p = opt_number(config.get("topP"), f"{path}.topP")
    top_k = opt_number(config.get("topK"), f"{path}.topK")
    req.top_k = None if top_k is None else int(top_k)
    req.stop = opt_str_list(config.get("stopSequences"), f"{path}.stopSequences") or []
    req.n = opt_int(config.get("candidateCount"), f"{path}.candidateCount")
    if config.get("thinkingConfig") is not None:
        _thinking(config["thinkingConfig"], req)
    for key, item in config.items():
        if key not in _GENERATION_MAPPED:
            req.extra.setdefault(GENERATION_KEY, {})[key] = item
            req.carried.append(Carried(PROTOCOL, f"{path}.{key}", "a generation setting"))


def decode_request(body: JSON, model: str = "", stream: bool = False) -> Request:
    """Parse a generateContent body for ``model`` (from the path; ``stream``: the path was
    ``:streamGenerateContent``); raises RequestError naming a field of the wrong type or
    missing. Values are the upstream's to judge."""
    body = request_body(body)
    req = Request(model=model, stream=stream, protocol=PROTOCOL)
    if body.get("systemInstruction") is not None:
        _system(body["systemInstruction"], req)
    turns = _Turns(req)
    for i, content in enumerate(expect_list(body.get("contents"), "contents")):
        turns.content(content, f"contents[{i}]")
    if body.get("tools") is not None:
        _tools(body["tools"], req)
    if body.get("toolConfig") is not None:
        _tool_config(body["toolConfig"], req)
    if body.get("generationConfig") is not None:
        _generation(body["generationConfig"], req)
    for key, value in body.items():
        if key not in _KNOWN:
            req.carry(PROTOCOL, FIELDS_KEY, key, value, "a Gemini field")
    return req


from streamscope.codecs.gemini.request_encode import encode_request  # noqa: E402

__all__ = ["decode_request", "encode_request", "result_content", "schema_to_json"]
