"""A relay that is wrong in known ways, for the audit's end-to-end tests.

A real HTTP server on 127.0.0.1 (the suite's own :class:`tests.upstream_server.UpstreamServer`:
chunked streams written and drained frame by frame, TCP_NODELAY on) that speaks OpenAI
Chat, Anthropic Messages and OpenAI Responses. It answers each request with a REAL
recording of that protocol from ``tests/fixtures`` (provenance in its ``SOURCES.md``)
chosen to fit the request (:func:`kind_of`: text, a long text, one tool call, parallel
calls, a call to a tool without arguments, the answer after a tool result, reasoning, an
answer cut by ``max_tokens``), as a stream or, when ``stream`` is false, as the whole
body the protocol's codec assembles from that recording. A wrong key is answered 401 and
an unknown model 404, each in the protocol's own error envelope.

Into the replayed bytes it injects ONE defect, chosen by the base URL's prefix
``/d/<defect>`` (:data:`DEFECTS`): ``http://127.0.0.1:PORT/d/no-done/v1`` is an OpenAI
relay that never sends ``data: [DONE]``. ``none`` is the recording as it was. A defect
that does not apply to a protocol has no route there (a 404), so a test cannot aim one
at the wrong protocol unseen. Each defect changes only what its name says: the rest of
every frame is the recording's bytes (a frame whose JSON is edited is written back
compact, the recordings' own form).

What each defect is expected to do to which client is not decided here: the tests take
it from the lint rule named in :attr:`Defect.rule` (whose profiles the real-client suites
prove) and from the audit's real clients.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from streamscope.codecs import get_codec
from streamscope.model.assemble import assemble
from streamscope.model.events import Error
from streamscope.recording import read_recording
from streamscope.wire import encode_frame
from streamscope.wire.frame import Frame
from tests.support import REPO
from tests.upstream_server import RecordedRequest, Script, UpstreamServer, run_in_thread

FIXTURES = REPO / "tests" / "fixtures"
KEY = "sk-relay-test-7f3a9c2e5b1d4086"  # the relay's one good key
PROTOCOLS = ("openai-chat", "anthropic", "responses")
PACE = 0.004  # seconds between two frames: a stream that arrives as one
BUFFER_DELAY = 1.0  # seconds the buffered defect holds the whole answer before one write
STREAM_HEADERS = {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
}

KINDS = ("text", "long", "tool", "parallel", "no-args", "tool-result", "reasoning", "length")
"""What a request asks for, as :func:`kind_of` reads it."""

# protocol -> kind -> recording (tests/fixtures/...). Where no recording of a protocol
# has the kind, the nearest one stands in (said in the comment).
RECORDINGS: dict[str, dict[str, str]] = {
    "openai-chat": {
        "text": "openai-chat/oai-py_text_usage_done.sse",
        "long": "openai-chat/oai-py_json-object-long.sse",
        "tool": "openai-chat/oai-py_tool-call-single.sse",
        "parallel": "openai-chat/oai-py_tool-calls-parallel.sse",
        "no-args": "openai-chat/oai-py_tool-call-single.sse",  # no Chat recording of one
        "tool-result": "openai-chat/oai-py_text_usage_done.sse",
        "reasoning": "openai-compatible-chat/vercel_deepseek-reasoner_reasoning-content.jsonl",
        "length": "openai-chat/oai-py_finish-length.sse",
    },
    "anthropic": {
        "text": "anthropic/vercel_text_sonnet45.jsonl",
        "long": "anthropic/vercel_thinking-signature_context-editing.jsonl",
        "tool": "anthropic/vercel_tool-use_json-other-tool.jsonl",
        "parallel": "anthropic/vercel_tool-use-first-block_caller.jsonl",
        "no-args": "anthropic/vercel_tool-use_no-args.jsonl",
        "tool-result": "anthropic/vercel_text_sonnet45.jsonl",
        "reasoning": "anthropic/vercel_thinking-signature_text.jsonl",
        # The one Anthropic recording cut by max_tokens (ant-py_max-tokens-mid-tool-json)
        # also never closes its block, a wire defect of its own: a clean relay cannot
        # answer with it, so the text stands in
        "length": "anthropic/vercel_text_sonnet45.jsonl",
    },
    "responses": {
        "text": "responses/vercel_openai-gpt41nano_text.jsonl",
        "long": "lmstudio/vercel_lmstudio-v1-responses_text.jsonl",  # LM Studio's /v1/responses
        "tool": "responses/vercel_azure-gpt51_function-call.jsonl",
        "parallel": "responses/vercel_azure-gpt51_function-call.jsonl",  # none has two calls
        "no-args": "responses/vercel_azure-gpt51_function-call.jsonl",
        "tool-result": "responses/vercel_openai-gpt41nano_text.jsonl",
        # a reasoning summary, then a call (the one with reasoning and text,
        # vercel_openai_reasoning_web-search_text, has web searches the AI SDK shows as
        # tool calls, which the audit's intended answer lacks: a break of no relay's)
        "reasoning": "responses/vercel_azure-codex_reasoning-summary_function-calls.step1.jsonl",
        "length": "responses/vercel_openai-gpt41nano_text.jsonl",  # none is cut by its limit
    },
}
MODELS: dict[str, str] = {
    "openai-chat": "relay-chat-model",
    "anthropic": "relay-claude-model",
    "responses": "relay-responses-model",
}
"""The one model the relay serves per protocol (any other is unknown: 404). Not a real
model's name: the recordings name their own, and an SDK warns of some by name."""

LENGTH_AT_MOST = 32
"""A request whose output limit is this or less asks for an answer cut by it."""
LONG_AT_LEAST = 512
"""A request whose output limit is this or more (and no other feature) asks for a long text."""


# -- the defects ---------------------------------------------------------------------------


def _json(frame: Frame) -> Any:
    try:
        return json.loads(frame.data) if frame.data and frame.data != "[DONE]" else None
    except ValueError:
        return None


def _edited(frames: list[Frame], edit: Callable[[Any], bool]) -> list[bytes]:
    """Each frame's bytes, a frame whose JSON ``edit`` changed (it says so) written anew."""
    out = []
    for frame in frames:
        payload = _json(frame)
        if isinstance(payload, dict) and edit(payload):
            out.append(encode_frame(payload, frame.event))
        else:
            out.append(frame.raw)
    return out


def _drop_usage_choices(payload: dict[str, Any]) -> bool:
    if payload.get("choices") == [] and payload.get("usage"):
        del payload["choices"]
        return True
    return False


def _tool_index_from_1(payload: dict[str, Any]) -> bool:
    changed = False
    for choice in payload.get("choices") or []:
        for call in (choice.get("delta") or {}).get("tool_calls") or []:
            if isinstance(call.get("index"), int):
                call["index"] += 1
                changed = True
    return changed


def _drop_sequence_number(payload: dict[str, Any]) -> bool:
    return payload.pop("sequence_number", None) is not None


def _single_newlines(frames: list[Frame]) -> list[bytes]:
    # One "\n" ends each frame but the last, which keeps its blank line.
    raws = [f.raw for f in frames]
    return [r[:-1] if r.endswith(b"\n\n") else r for r in raws[:-1]] + raws[-1:]


@dataclass(frozen=True)
class Defect:
    """One classic defect: the protocols it is injected in, how, and the lint rule an
    audit names it by (None: no rule, as no client needs what it takes away)."""

    name: str
    protocols: tuple[str, ...]
    what: str
    rule: str | None
    edit: Callable[[list[Frame]], list[bytes]] = field(repr=False)
    buffered: bool = False


DEFECTS: dict[str, Defect] = {
    d.name: d
    for d in (
        Defect("none", PROTOCOLS, "the recording as it was", None, lambda fs: [f.raw for f in fs]),
        Defect(
            "usage-without-choices",
            ("openai-chat",),
            "the usage-only final chunk has no `choices` key",
            "chat.missing-choices",
            lambda fs: _edited(fs, _drop_usage_choices),
        ),
        Defect(
            "no-done",
            ("openai-chat",),
            "no `data: [DONE]` at the end",
            "chat.missing-done",
            lambda fs: [f.raw for f in fs if f.data != "[DONE]"],
        ),
        Defect(
            "single-newline",
            PROTOCOLS,
            "frames separated by a single newline instead of a blank line",
            "framing.single-newline",
            _single_newlines,
        ),
        Defect(
            "tool-index-from-1",
            ("openai-chat",),
            "tool-call indexes counted from 1",
            "chat.tool-index-not-dense",
            lambda fs: _edited(fs, _tool_index_from_1),
        ),
        Defect(
            "no-sequence-number",
            ("responses",),
            "no `sequence_number` on any event",
            "responses.missing-sequence-number",
            lambda fs: _edited(fs, _drop_sequence_number),
        ),
        Defect(
            "no-ping",
            ("anthropic",),
            "no `ping` event",
            None,  # docs/wire-contract.md: "`ping` may come at any point": no client needs one
            lambda fs: [f.raw for f in fs if f.event != "ping"],
        ),
        Defect(
            "buffered",
            PROTOCOLS,
            f"the whole answer in one write, after {BUFFER_DELAY:g} s",
            None,  # no lint rule reads arrival times this way: the audit's timing shows it
            lambda fs: [f.raw for f in fs],
            buffered=True,
        ),
    )
}


# -- recordings ---------------------------------------------------------------------------


@cache
def recorded_frames(source: str) -> tuple[Frame, ...]:
    """A recording's frames as the wire carries them (the last given its blank line)."""
    frames = read_recording((FIXTURES / source).read_bytes()).frames
    last = frames[-1]
    if not last.raw.endswith(b"\n\n"):
        tail = b"\n" if last.raw.endswith(b"\n") else b"\n\n"
        frames[-1] = Frame(raw=last.raw + tail, arrival_ns=0, event=last.event, data=last.data)
    return tuple(frames)


def _usage_only(frame: Frame) -> bool:
    payload = _json(frame)
    return isinstance(payload, dict) and payload.get("choices") == [] and bool(payload.get("usage"))


def stream_bytes(defect: str, protocol: str, kind: str, usage: bool = True) -> list[bytes]:
    """The chunks the relay writes for a stream: one per frame (one in all when buffered).
    ``usage`` False: a Chat request that asked no usage, answered without the recording's
    usage-only chunk, as OpenAI does."""
    frames = list(recorded_frames(RECORDINGS[protocol][kind]))
    if not usage:
        frames = [f for f in frames if not _usage_only(f)]
    chunks = DEFECTS[defect].edit(frames)
    return [b"".join(chunks)] if DEFECTS[defect].buffered else chunks


def whole_body(protocol: str, kind: str) -> dict[str, Any]:
    """The non-streaming body of the recording: its events assembled, encoded by the codec."""
    codec = get_codec(protocol)
    frames = list(recorded_frames(RECORDINGS[protocol][kind]))
    return codec.encode_response(assemble(codec.stream_decoder().decode_stream(frames)))


# -- reading a request ---------------------------------------------------------------------


def _limit(protocol: str, body: dict[str, Any]) -> int | None:
    names = {
        "openai-chat": ("max_completion_tokens", "max_tokens"),
        "anthropic": ("max_tokens",),
        "responses": ("max_output_tokens",),
    }[protocol]
    return next((v for n in names if isinstance(v := body.get(n), int)), None)


def _tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    tools = body.get("tools")
    return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []


def _schema(protocol: str, tool: dict[str, Any]) -> Any:
    if protocol == "openai-chat":
        function = tool.get("function")
        return function.get("parameters") if isinstance(function, dict) else None
    return tool.get("input_schema") if protocol == "anthropic" else tool.get("parameters")


def _after_tool_result(protocol: str, body: dict[str, Any]) -> bool:
    if protocol == "responses":
        items = body.get("input")
        last = items[-1] if isinstance(items, list) and items else None
        return isinstance(last, dict) and last.get("type") == "function_call_output"
    messages = body.get("messages")
    last = messages[-1] if isinstance(messages, list) and messages else None
    if not isinstance(last, dict):
        return False
    if protocol == "openai-chat":
        return last.get("role") == "tool"
    content = last.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _reasoning(protocol: str, body: dict[str, Any]) -> bool:
    if protocol == "anthropic":
        thinking = body.get("thinking")
        return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
    if protocol == "responses":
        return isinstance(body.get("reasoning"), dict)
    return "reasoning_effort" in body or isinstance(body.get("reasoning"), dict)


def kind_of(protocol: str, body: dict[str, Any]) -> str:
    """What the request asks for (:data:`KINDS`), read from its body alone."""
    tools = _tools(body)
    limit = _limit(protocol, body)
    if _after_tool_result(protocol, body):
        return "tool-result"
    if tools:
        schemas = [_schema(protocol, t) for t in tools]
        if any(isinstance(s, dict) and not s.get("properties") for s in schemas):
            return "no-args"
        return "parallel" if len(tools) > 1 else "tool"
    if _reasoning(protocol, body):
        return "reasoning"
    if limit is not None and limit <= LENGTH_AT_MOST:
        return "length"
    if limit is not None and limit >= LONG_AT_LEAST:
        return "long"
    return "text"


# -- answering -----------------------------------------------------------------------------

PATHS = {
    "openai-chat": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "responses": "/v1/responses",
}


def _error(protocol: str, status: int, error: Error) -> Script:
    return Script(status, body_json=get_codec(protocol).encode_error(error))


def _key_of(protocol: str, req: RecordedRequest) -> str:
    if protocol == "anthropic" and "x-api-key" in req.headers:
        return req.headers["x-api-key"]
    return req.headers.get("authorization", "").removeprefix("Bearer ").strip()


@dataclass
class Served:
    """One answer the relay gave (for the tests to check what it chose)."""

    defect: str
    protocol: str
    kind: str  # a KINDS value, or "bad-key" / "unknown-model" / "bad-request"
    stream: bool
    recording: str = ""


class DefectRelay:
    """The relay's routes on an :class:`UpstreamServer`; :attr:`served` lists its answers."""

    def __init__(self, server: UpstreamServer, pace: float = PACE) -> None:
        self.server = server
        self.pace = pace
        self.served: list[Served] = []
        for name, defect in DEFECTS.items():
            for protocol in defect.protocols:
                self.server.route(
                    "POST", f"/d/{name}{PATHS[protocol]}", self._handler(name, protocol)
                )
            self.server.route("GET", f"/d/{name}/v1/models", self._models)

    @property
    def url(self) -> str:
        return self.server.url

    def base_url(self, defect: str, protocol: str) -> str:
        """The base URL a client (or ``streamscope audit --url``) of ``protocol`` is given."""
        return get_codec(protocol).sdk_base_url(f"{self.server.url}/d/{defect}")

    def _models(self, req: RecordedRequest) -> Script:
        protocol = "anthropic" if "x-api-key" in req.headers else "openai-chat"
        if _key_of(protocol, req) != KEY:
            return self._bad_key(protocol)
        names = [(m, "relay") for m in MODELS.values()]
        return Script(body_json=get_codec(protocol).models_body(names))

    def _bad_key(self, protocol: str) -> Script:
        if protocol == "anthropic":
            return _error(protocol, 401, Error("invalid x-api-key", "authentication_error"))
        message = "Incorrect API key provided. You can find your API key in your account."
        return _error(protocol, 401, Error(message, "invalid_request_error", "invalid_api_key"))

    def _handler(self, defect: str, protocol: str) -> Callable[[RecordedRequest], Script]:
        def answer(req: RecordedRequest) -> Script:
            return self.answer(defect, protocol, req)

        return answer

    def answer(self, defect: str, protocol: str, req: RecordedRequest) -> Script:
        body = req.json
        stream = isinstance(body, dict) and body.get("stream") is True
        if _key_of(protocol, req) != KEY:
            self.served.append(Served(defect, protocol, "bad-key", stream))
            return self._bad_key(protocol)
        if not isinstance(body, dict):
            self.served.append(Served(defect, protocol, "bad-request", stream))
            error = Error("The request body is not a JSON object.", "invalid_request_error")
            return _error(protocol, 400, error)
        model = body.get("model")
        if model != MODELS[protocol]:
            self.served.append(Served(defect, protocol, "unknown-model", stream))
            if protocol == "anthropic":
                return _error(protocol, 404, Error(f"model: {model}", "not_found_error"))
            message = f"The model `{model}` does not exist or you do not have access to it."
            return _error(protocol, 404, Error(message, "invalid_request_error", "model_not_found"))
        kind = kind_of(protocol, body)
        source = RECORDINGS[protocol][kind]
        self.served.append(Served(defect, protocol, kind, stream, source))
        if not stream:
            return Script(body_json=whole_body(protocol, kind))
        options = body.get("stream_options")
        usage = protocol != "openai-chat" or (
            isinstance(options, dict) and options.get("include_usage") is True
        )
        chunks = stream_bytes(defect, protocol, kind, usage)
        if DEFECTS[defect].buffered:
            return Script(headers=STREAM_HEADERS, chunks=[BUFFER_DELAY, *chunks])
        paced: list[bytes | float] = []
        for chunk in chunks:
            paced += [chunk, self.pace]
        return Script(headers=STREAM_HEADERS, chunks=paced[:-1])


@contextmanager
def running_relay(pace: float = PACE) -> Iterator[DefectRelay]:
    """The relay on its own loop in a thread, for the block's length."""
    with run_in_thread() as server:
        yield DefectRelay(server, pace)


__all__ = [
    "BUFFER_DELAY",
    "DEFECTS",
    "KEY",
    "KINDS",
    "MODELS",
    "PROTOCOLS",
    "RECORDINGS",
    "Defect",
    "DefectRelay",
    "Served",
    "kind_of",
    "recorded_frames",
    "running_relay",
    "stream_bytes",
    "whole_body",
]
