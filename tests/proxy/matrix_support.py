"""Support for the SDK matrix test (tests/proxy/test_exchange_sdk_matrix.py).

- :class:`Case`: one upstream stream (a real recording, replayed in the upstream kind's
  own protocol) and the model name that selects it at the scripted upstream.
- :func:`upstream_handler`: one route handler for every upstream path; it picks the
  stream by the model name the proxy sent (``request.json["model"]``), so one
  :class:`~tests.upstream_server.UpstreamServer` serves every upstream of the config.
- :func:`want`: what an official SDK must assemble from a case, computed from the bytes
  the upstream sends with our own decoder and assembler (``expected()`` of
  tests/translation/sdk_expect.py, with its per-target refusal and partial-JSON rules).
- :func:`call_sdk`: one request through the proxy with an official SDK client over real
  sockets, streaming (``.stream()`` helper) or not (``.create()``), and the result in the
  normalised shape of tests/sdk_clients.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import anthropic
import openai

from streamscope.codecs import EncodeOptions, get_codec
from streamscope.config import OLD_KIND
from streamscope.model.response import ReasoningOut, Response
from streamscope.recording import read_recording
from streamscope.translation.offline import translate_frames
from tests import sdk_clients
from tests.support import FIXTURES, load
from tests.translation.sdk_expect import expected
from tests.upstream_server import RecordedRequest, Script

# Client name (as the test ids say it) -> the protocol it speaks.
CLIENT_PROTOCOL = {"chat": "openai-chat", "messages": "anthropic", "responses": "responses"}
# Upstream kind -> the path the upstream must be asked on (base URLs as in the config:
# openai/responses include /v1, anthropic/lmstudio are the server root).
KIND_PATH = {
    "openai": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "responses": "/v1/responses",
    "lmstudio": "/api/v1/chat",
}
MAX_TOKENS = 333


@dataclass(frozen=True, eq=False)
class Case:
    """One upstream stream: ``source`` (under tests/fixtures) as the ``kind`` upstream
    named ``upstream`` sends it, selected by ``upstream_model``; ``client_model`` is what
    the client asks for (the bare model, ``upstream/model``, or an alias: see the test's
    config)."""

    id: str
    kind: str
    upstream: str
    source: str
    upstream_model: str
    client_model: str
    covers: tuple[str, ...]  # what the stream must carry: text, reasoning, refusal, tools
    min_tools: int = 0
    passthrough: bool = False

    @property
    def protocol(self) -> str:
        return OLD_KIND.get(self.kind, self.kind)  # the matrix names upstreams as 0.1 did

    @cached_property
    def chunks(self) -> list[bytes]:
        """The upstream's stream, one chunk per frame.

        A recording of the kind's own protocol is replayed byte for byte (a last frame
        without its blank line gets it, as tests/fixtures/SOURCES.md says). A recording of
        another protocol is translated into the kind's protocol with our pipeline: there is
        no real capture of LM Studio's native ``/api/v1/chat`` stream (only the
        doc-examples catalogue, which is no stream), and no real Responses capture with
        parallel function calls.
        """
        rec = load(FIXTURES / self.source)
        if rec.protocol != self.protocol:
            out, _ = translate_frames(rec.frames, rec.protocol, self.protocol)
            return out
        frames = [f.raw for f in rec.frames]
        if frames and not frames[-1].endswith((b"\n\n", b"\r\n\r\n")):
            frames[-1] += b"\n" if frames[-1].endswith(b"\n") else b"\n\n"
        return frames

    @property
    def translated(self) -> bool:
        return load(FIXTURES / self.source).protocol != self.protocol

    @cached_property
    def response(self) -> Response:
        """The upstream stream decoded and assembled by our own codec of its protocol."""
        rec = read_recording(b"".join(self.chunks), self.protocol)
        _, pipeline = translate_frames(rec.frames, self.protocol, self.protocol)
        return pipeline.assembler.response

    @cached_property
    def source_response(self) -> Response:
        """The recording itself decoded and assembled (before any translation)."""
        rec = load(FIXTURES / self.source)
        _, pipeline = translate_frames(rec.frames, rec.protocol, rec.protocol)
        return pipeline.assembler.response

    @cached_property
    def json_body(self) -> Any:
        """The upstream's non-streaming answer (passthrough ``create()``): the same
        response as the stream, as the kind's protocol writes a complete body. The
        recordings are streams, so this body is written by our own codec
        (``encode_response``), not captured."""
        return get_codec(self.protocol).encode_response(self.response, EncodeOptions())


def upstream_handler(cases: list[Case]) -> Any:
    """A route handler answering each request with the case its ``model`` names: the
    stream, or (a passthrough request with ``stream`` false) the JSON body."""
    by_model = {c.upstream_model: c for c in cases}
    if len(by_model) != len(cases):
        raise ValueError("every case needs its own upstream model name")

    def handle(request: RecordedRequest) -> Script:
        body = request.json if isinstance(request.json, dict) else {}
        case = by_model.get(str(body.get("model")))
        if case is None:
            msg = f"scripted upstream: no stream for model {body.get('model')!r}"
            return Script(404, body_json={"error": {"message": msg, "type": "not_found"}})
        if body.get("stream") is not True:
            return Script(body_json=case.json_body)
        return Script(chunks=list(case.chunks))

    return handle


# -- what the SDK must assemble --------------------------------------------------------------


def want(case: Case, client: str) -> dict[str, Any]:
    """``expected()`` of the upstream's stream for this client's protocol."""
    return expected(case.response, CLIENT_PROTOCOL[client])


def signatures(resp: Response) -> list[str]:
    return [
        p.signature for p in resp.choice(0).parts if isinstance(p, ReasoningOut) and p.signature
    ]


def got(result: dict[str, Any]) -> dict[str, Any]:
    """The fields ``expected()`` describes, from a normalised SDK result."""
    out = {k: result.get(k, "") for k in ("text", "reasoning", "refusal", "tool_calls")}
    out["usage"] = result["usage"] or (0, 0)
    return out


# -- the official SDKs over real sockets ---------------------------------------------------


_chat = sdk_clients.chat_summary
_messages = sdk_clients.message_summary
_responses = sdk_clients.response_summary


def call_sdk(
    client: str, stream: bool, proxy_url: str, key: str, model: str, system: str, user: str
) -> dict[str, Any]:
    """One request through the proxy with the client's official SDK; normalised result.

    Every request carries a system prompt, a user message and a token limit, so the
    test can see them arrive at the upstream in the upstream's protocol.
    """
    if client == "messages":
        with anthropic.Anthropic(api_key=key, base_url=proxy_url, max_retries=0, timeout=30) as ac:
            kwargs: dict[str, Any] = {
                "model": model,
                "system": system,
                "max_tokens": MAX_TOKENS,
                "messages": [{"role": "user", "content": user}],
            }
            if stream:
                with ac.messages.stream(**kwargs) as s:
                    return _messages(s.get_final_message())
            return _messages(ac.messages.create(**kwargs))
    with openai.OpenAI(api_key=key, base_url=proxy_url + "/v1", max_retries=0, timeout=30) as oc:
        if client == "chat":
            messages: Any = [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ]
            if stream:
                with oc.chat.completions.stream(
                    model=model,
                    messages=messages,
                    max_completion_tokens=MAX_TOKENS,
                    stream_options={"include_usage": True},
                ) as s:
                    return _chat(s.get_final_completion())
            return _chat(
                oc.chat.completions.create(
                    model=model, messages=messages, max_completion_tokens=MAX_TOKENS
                )
            )
        if client == "responses":
            if stream:
                with oc.responses.stream(
                    model=model, instructions=system, input=user, max_output_tokens=MAX_TOKENS
                ) as s:
                    return _responses(s.get_final_response())
            return _responses(
                oc.responses.create(
                    model=model, instructions=system, input=user, max_output_tokens=MAX_TOKENS
                )
            )
    raise ValueError(f"unknown client {client!r}")


# -- what the upstream received ----------------------------------------------------------


def text_of(content: Any) -> str:
    """The text of a message content: a string, or a list of text parts (any protocol)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p.get("text", "")
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def prompt_seen(kind: str, body: dict[str, Any]) -> tuple[str, str, Any]:
    """(system text, user text, token limit) of an upstream request body, read the way the
    kind's protocol carries them; raises KeyError/TypeError when the shape is not it."""
    if kind == "openai":
        msgs = body["messages"]
        system = "".join(
            text_of(m["content"]) for m in msgs if m["role"] in ("system", "developer")
        )
        user = "".join(text_of(m["content"]) for m in msgs if m["role"] == "user")
        return system, user, body.get("max_completion_tokens", body.get("max_tokens"))
    if kind == "anthropic":
        user = "".join(text_of(m["content"]) for m in body["messages"] if m["role"] == "user")
        return text_of(body.get("system", "")), user, body["max_tokens"]
    if kind == "responses":
        items = body["input"]
        if isinstance(items, str):
            user = items
        else:
            user = "".join(text_of(i.get("content")) for i in items if i.get("role") == "user")
        return body.get("instructions", ""), user, body["max_output_tokens"]
    if kind == "lmstudio":
        return body.get("system_prompt", ""), text_of(body["input"]), body["max_output_tokens"]
    raise ValueError(kind)


# Top-level fields that belong to another protocol's request and must not be sent.
FOREIGN_FIELDS = {
    "openai": {"input", "system", "instructions", "system_prompt", "max_output_tokens"},
    "anthropic": {
        "input",
        "instructions",
        "system_prompt",
        "stream_options",
        "max_output_tokens",
        "max_completion_tokens",
    },
    "responses": {"messages", "system", "system_prompt", "stream_options", "max_tokens"},
    "lmstudio": {"messages", "system", "instructions", "stream_options", "max_tokens"},
}
