"""Support for tests/proxy/test_plan_sdk_bodies.py and its explorer (sdk_refusals.py):
bodies the official SDKs build, sent through a real proxy to a scripted upstream.

- :func:`running`: one scripted :class:`~tests.upstream_server.UpstreamServer` playing
  every upstream protocol, answering 200 with a short valid answer of the protocol (a
  stream, or a whole body when asked for none), behind the seven upstreams of
  :data:`UPSTREAMS`, and a proxy in front. So a 4xx is the proxy's own.
- :func:`call`: the SDK's own request for some ``create()`` arguments, posted to the proxy
  with the local key; what the client got and what the upstream got.
- :func:`own_error_for_a_reference`: the one refusal allowed (an id of an
  earlier answer the proxy cannot resolve gets the Responses API's own error).
- :func:`unreported`: the fields of a translated body that the client codec's vocabulary
  does not map and the flow's request notes do not name.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from streamscope.codecs import EncodeOptions, get_codec
from streamscope.recording import read_recording
from streamscope.translation.offline import translate_frames
from tests.codecs import sdk_places
from tests.codecs.sdk_strategies import SdkRequest, sdk_request
from tests.proxy.harness import KEY, Running, make_config, proxied
from tests.upstream_server import (
    RecordedRequest,
    Script,
    UpstreamServer,
    fast_stream_script,
    run_in_thread,
)

CLIENTS = ("anthropic", "openai-chat", "responses")
# upstream name -> (protocol, mode); all of them the same scripted server.
UPSTREAMS = {
    "oa": ("openai-chat", "repair"),
    "an": ("anthropic", "repair"),
    "rs": ("responses", "repair"),
    "lm": ("lmstudio", "repair"),
    "oa-pt": ("openai-chat", "passthrough"),
    "an-pt": ("anthropic", "passthrough"),
    "rs-pt": ("responses", "passthrough"),
}
PATHS = {
    "openai-chat": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "responses": "/v1/responses",
    "lmstudio": "/api/v1/chat",
}
ROUTES = [
    (client, name)
    for client in CLIENTS
    for name, (protocol, mode) in UPSTREAMS.items()
    if mode == "repair" or protocol == client  # passthrough to another protocol is repair
]


def upstream_model(name: str) -> str:
    return f"m-{name}"


def client_model(name: str) -> str:
    """What the client asks for: ``upstream/model``, so the upstream gets another name."""
    return f"{name}/{upstream_model(name)}"


# -- the scripted upstream and the proxy ----------------------------------------------------


@dataclass(frozen=True)
class Answer:
    chunks: list[bytes]  # a short text stream in the protocol
    body: Any  # the same answer as a whole body


def answers() -> dict[str, Answer]:
    """A two-delta text answer in every protocol: the scripted Anthropic stream, and our
    pipeline's translation of it for the others (there is no other source for LM Studio's
    native stream), with each protocol's whole body written by its codec."""
    script = fast_stream_script(2, "anthropic")
    raw = b"".join(c for c in script.chunks if isinstance(c, bytes))
    frames = read_recording(raw, "anthropic").frames
    out = {}
    for protocol in PATHS:
        chunks, pipeline = translate_frames(frames, "anthropic", protocol)
        body = get_codec(protocol).encode_response(pipeline.assembler.response, EncodeOptions())
        out[protocol] = Answer(chunks, body)
    return out


def _handler(answer: Answer) -> Any:
    def handle(request: RecordedRequest) -> Script:
        body = request.json if isinstance(request.json, dict) else {}
        if body.get("stream") is True:
            return Script(chunks=list(answer.chunks))
        return Script(body_json=answer.body)

    return handle


@dataclass
class Env:
    proxy: Running
    upstream: UpstreamServer
    http: httpx.Client  # one client: a new one per call costs tens of ms (its TLS context)

    def admin(self, path: str) -> Any:
        r = self.http.get(self.proxy.url + path, headers={"authorization": f"Bearer {KEY}"})
        r.raise_for_status()
        return r.json()


@contextmanager
def running() -> Iterator[Env]:
    with run_in_thread() as up:
        for protocol, answer in answers().items():
            up.route("POST", PATHS[protocol], _handler(answer))
        base = {"openai-chat": up.url + "/v1", "responses": up.url + "/v1"}
        upstreams = [
            {
                "name": name,
                "protocol": protocol,
                "mode": mode,
                "base_url": base.get(protocol, up.url),
                "models": [upstream_model(name)],
                "accounts": [{"name": "main", "api_key": f"sk-upstream-{name}-0123456789"}],
            }
            for name, (protocol, mode) in UPSTREAMS.items()
        ]
        config = make_config(upstreams, keepalive_seconds=0)
        with proxied(config) as proxy, httpx.Client(timeout=30) as http:
            yield Env(proxy, up, http)
        assert up.errors == [], up.errors


# -- one call ---------------------------------------------------------------------------------


@dataclass
class Call:
    sent: SdkRequest
    status: int
    answer: bytes
    upstream: RecordedRequest | None  # what the upstream got, if the call reached it

    @property
    def error(self) -> dict[str, Any]:
        """The error object of the proxy's answer (empty when there is none)."""
        try:
            body = json.loads(self.answer)
        except ValueError:
            return {}
        error = body.get("error") if isinstance(body, dict) else None
        return error if isinstance(error, dict) else {}

    def shown(self) -> str:
        return (
            f"\nthe client sent {self.sent.path}: {self.sent.content.decode()}"
            f"\nthe proxy answered {self.status}: {self.answer[:600].decode(errors='replace')}"
        )


def call(env: Env, protocol: str, kwargs: dict[str, Any]) -> Call:
    """The SDK's request for ``kwargs``, posted to the proxy with the local key."""
    sent = sdk_request(protocol, kwargs)
    headers = {
        k: v
        for k, v in sent.headers.items()
        if k.lower() not in ("host", "content-length", "authorization", "x-api-key")
    }
    if protocol == "anthropic":
        headers["x-api-key"] = KEY
    else:
        headers["authorization"] = f"Bearer {KEY}"
    before = len(env.upstream.requests)
    r = env.http.post(env.proxy.url + sent.path, content=sent.content, headers=headers)
    got = env.upstream.requests[before:]
    assert len(got) <= 1, f"one call made {len(got)} upstream requests"
    return Call(sent, r.status_code, r.content, got[0] if got else None)


def own_error_for_a_reference(c: Call) -> bool:
    """A Responses request naming an earlier answer (``previous_response_id``) or item
    (``item_reference``) the proxy cannot resolve gets the Responses API's own error:
    400 ``previous_response_not_found``, or 404 ``Item with id … not
    found`` (``param: input``). Random ids are unknown, so this refusal is the right one."""
    body = c.sent.json
    error = c.error
    if c.status == 400 and "previous_response_id" in body:
        return error.get("code") == "previous_response_not_found"
    if c.status == 404 and isinstance(body.get("input"), list):
        message = str(error.get("message", ""))
        return error.get("param") == "input" and message.startswith("Item with id")
    return False


# -- what a translation reported ----------------------------------------------------------------


def notes_of(env: Env) -> list[dict[str, Any]]:
    """The newest flow's request notes (a call just made is the newest flow)."""
    newest = env.admin("/admin/flows?limit=1")["flows"][0]["id"]
    flow = env.admin(f"/admin/flows/{newest}")
    assert "request_notes" in flow, (
        "the flow records no request_notes (GET /admin/flows/{id} has no such key)"
    )
    return list(flow["request_notes"])


def covered(path: str, notes: list[dict[str, Any]]) -> bool:
    """Whether a note names ``path`` or an element that holds it."""
    for note in notes:
        field = str(note.get("field", ""))
        if path == field or path.startswith((field + ".", field + "[")):
            return True
    return False


def unreported(protocol: str, body: dict[str, Any], notes: list[dict[str, Any]]) -> list[str]:
    """The fields of ``body`` that are neither mapped by ``protocol``'s codec nor named in
    ``notes``: each top-level field, and each name at a place of the vocabulary (those of
    vocabulary.py's list, and the proposed ones a codec declares)."""
    vocabulary = getattr(get_codec(protocol), "vocabulary", None)
    assert vocabulary is not None, f"the {protocol} codec declares no vocabulary yet"
    proposed = [p for p in sdk_places.MISSING_PLACES[protocol] if p.name in vocabulary.places]
    out = []
    for place in (*sdk_places.PLACES[protocol], *proposed):
        if place.root != "request":
            continue
        for path, name in sdk_places.locate(protocol, place, body):
            if value_at(body, path) is None:
                continue  # a null carries nothing across
            handling = vocabulary.handling(place.name, name)
            if handling == "mapped" or covered(path, notes):
                continue
            out.append(f"{path} ({place.name} {name!r}: {handling or 'unknown'})")
    return out


def value_at(body: Any, path: str) -> Any:
    """The value at a client path (``messages[1].content[0]``, ``output_config.effort``)."""
    at = body
    for part in path.replace("[", ".[").split("."):
        if not part:
            continue
        if part.startswith("["):
            at = at[int(part[1:-1])]
        else:
            at = at.get(part) if isinstance(at, dict) else None
    return at


def differences(got: Any, want: Any, path: str = "") -> list[str]:
    """Where two JSON values differ, as client paths (``+input``: only in ``got``)."""
    if isinstance(got, dict) and isinstance(want, dict):
        out = []
        for k in sorted(set(got) | set(want), key=str):
            sub = f"{path}.{k}" if path else str(k)
            if k not in want:
                out.append(f"+{sub}")
            elif k not in got:
                out.append(f"-{sub}")
            else:
                out += differences(got[k], want[k], sub)
        return out
    if isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        pairs = enumerate(zip(got, want, strict=True))
        return [d for i, (g, w) in pairs for d in differences(g, w, f"{path}[{i}]")]
    same = got == want and type(got) is type(want)
    return [] if same else [f"~{path or '(body)'}"]


__all__ = [
    "CLIENTS",
    "PATHS",
    "ROUTES",
    "UPSTREAMS",
    "Call",
    "Env",
    "call",
    "client_model",
    "differences",
    "notes_of",
    "own_error_for_a_reference",
    "running",
    "unreported",
    "upstream_model",
]
