"""What one request will do, decided before anything is sent: :func:`make_plan`.

A pure function of the request (its headers, body and canonical form), the route the
router chose, the upstream and the proxy's settings. The exchange
(:mod:`streamscope.proxy.exchange`) then runs the plan: it holds no decision of its own
about protocols, modes or bodies.

- The upstream is asked in its own protocol (the demo speaks the client's).
- **The same protocol on both sides**, in either mode: the client's own body is sent, field
  for field, only its ``model`` replaced, streaming as the client asked; a body its SDK
  can build reaches the upstream as it was written, whatever the proxy knows of it.
  The modes differ in the answer: passthrough relays the upstream's bytes, repair
  re-encodes them.
- **Another protocol** (repair): the canonical request is translated
  (:func:`~streamscope.translation.request.translate_request`), always streaming and with
  usage (Anthropic and Responses clients need counts even when an OpenAI Chat client did
  not ask for them); a non-streaming client's answer is assembled from the stream. What
  the translation changed or left out are the plan's ``notes``, kept with the flow.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from streamscope.codecs import Codec, EncodeOptions, get_codec
from streamscope.config import ProxyConfig
from streamscope.model.request import Request, RequestNote
from streamscope.proxy.asgi import Scope, header
from streamscope.proxy.routing import Route
from streamscope.proxy.upstream import Upstream
from streamscope.translation.request import translate_request

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Plan:
    """What one request will do, decided before anything is sent (:func:`make_plan`): the
    codecs of both sides, the mode, the upstream's body and headers, how the client's
    answer is encoded, and the request's limits. Immutable; the exchange runs it."""

    client: Codec  # the protocol the client speaks
    upstream: Codec  # the protocol the upstream is asked in
    passthrough: bool
    body: JSON  # the upstream request's body
    stream: bool  # whether the upstream is asked for a stream
    options: EncodeOptions  # how the client's answer is encoded
    forward: dict[str, str]  # client headers the upstream gets too (same protocol only)
    commit_window: float  # the longest a stream's client waits before its stream starts
    read_limit: int  # the most of a whole upstream body read
    first_frame: float  # the first-byte budget
    notes: tuple[RequestNote, ...] = ()  # what translating the request changed or dropped

    @property
    def mode(self) -> str:
        return "passthrough" if self.passthrough else "repair"


def make_plan(
    scope: Scope,
    client: Codec,
    body: JSON,
    request: Request,
    route: Route,
    upstream: Upstream,
    proxy: ProxyConfig,
) -> Plan:
    target = get_codec(upstream.protocol_for(client.name, route.model))
    same = target.name == client.name
    passthrough = route.upstream.mode == "passthrough" and same
    notes: tuple[RequestNote, ...] = ()
    if same:
        upstream_body = {**body, "model": route.model}
    else:
        canonical = dataclasses.replace(request, model=route.model, stream=True, include_usage=True)
        translated = translate_request(canonical, target)
        # (the model as a body field: Gemini's, whose encoder leaves it to the path, too)
        upstream_body, notes = {**translated.body, "model": route.model}, translated.notes
    forward: dict[str, str] = {}
    if target.name == client.name:
        for name in client.forwarded_headers:
            value = header(scope, name.encode())
            if value is not None:
                forward[name] = value
    # A streaming client must hear something within the keepalive interval, even while
    # the account loop still waits for the upstream's first frame.
    window = proxy.commit_window_seconds
    if proxy.keepalive_seconds > 0:
        window = min(window, proxy.keepalive_seconds)
    return Plan(
        client=client,
        upstream=target,
        passthrough=passthrough,
        body=upstream_body,
        stream=request.stream if same else True,
        options=client.client_options(  # a client that reads only its own form
            EncodeOptions(
                include_usage=request.include_usage or client.requires_usage,
                model=request.model if request.model != route.model else None,
                request=request,
            ),
            header(scope, b"user-agent") or "",
        ),
        forward=forward,
        commit_window=window,
        read_limit=proxy.max_body_bytes * 4,
        first_frame=proxy.first_byte_timeout_seconds,
        notes=notes,
    )


__all__ = ["Plan", "make_plan"]
