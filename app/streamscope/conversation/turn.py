"""The proxy's two hooks into the Responses conversation state: :func:`begin_turn`
before a request is read, and :meth:`Turn.recording` around the client's answer.

:func:`begin_turn` looks up what a Responses request refers to (``item_reference``,
``previous_response_id``), routes its ``model`` to learn the upstream, and resolves
(:mod:`~streamscope.conversation.resolve`): the :class:`Turn` holds the body the decoder
reads, the body the upstream is sent and the notes on what changed. A request of any
other protocol, or with nothing to resolve, costs a scan of its input.

:meth:`Turn.recording` wraps the ASGI ``send`` of one exchange. It keeps the answer when
the client's body ends, from the client-bound bytes, before that end is sent: a stream's
``response.completed`` (or ``response.incomplete``) frame, its last (passthrough decodes
no upstream frame on its hot path; this keeps a reference to each chunk and reads the
last), or a whole answer's JSON body. A client that takes the body's end as the end of
its step (openai-python and the AI SDK, as the tests run them) finds the answer kept when
it sends the next. A request with ``store: false`` is not kept, as the API keeps none.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from streamscope.config import UpstreamConfig
from streamscope.conversation.answers import JSON, Answer
from streamscope.conversation.resolve import Note, Target, is_reference, resolve, wanted
from streamscope.conversation.store import Conversations
from streamscope.model.request import RequestNote
from streamscope.wire import decode_all, jsontext

log = logging.getLogger("streamscope.proxy")
Message = Any  # an ASGI message (a mutable mapping)
PROTOCOL = "responses"
ENDS = (b"response.completed", b"response.incomplete")
END_TYPES = tuple(end.decode() for end in ENDS)
KEPT = ("completed", "incomplete")
COLON = ord(":")


Send = Callable[[Message], Awaitable[None]]


class _Route(Protocol):
    @property
    def upstream(self) -> UpstreamConfig: ...

    @property
    def model(self) -> str: ...


class _Router(Protocol):
    async def resolve(self, model: str) -> _Route: ...


class _Upstream(Protocol):
    def protocol_for(self, client_protocol: str, model: str) -> str: ...


@dataclass(slots=True)
class Turn:
    """One request's part in a conversation: the body the upstream gets (``body``), the
    body the decoder reads (``decoded``: the whole conversation), what resolution changed
    for the upstream (``notes``: field, why, what went instead), and where its answer is
    kept (None: nowhere)."""

    body: JSON
    decoded: JSON
    notes: list[Note] = field(default_factory=list)
    store: Conversations | None = None

    def recording(self, send: Send, upstream: str, passthrough: bool) -> Send:
        """``send`` that also keeps the answer (served by ``upstream``; ``passthrough``:
        the client gets the upstream's own ids)."""
        if self.store is None:
            return send
        return _Recorder(send, self, self.store, upstream, passthrough)

    def input_items(self) -> list[Any]:
        value = self.decoded.get("input")
        if isinstance(value, str):
            return [{"role": "user", "content": value}]
        return list(value) if isinstance(value, list) else []


async def begin_turn(
    store: Conversations | None,
    protocol: str,
    body: Any,
    router: _Router,
    upstreams: Mapping[str, _Upstream],
) -> Turn:
    """The :class:`Turn` of a request of ``protocol`` (see the module docstring). Raises
    ``ProxyError``: the Responses API's not-found errors for ids that cannot be resolved
    on the route, a 400 for malformed references, and the router's own errors."""
    if protocol != PROTOCOL or store is None or not isinstance(body, dict):
        return Turn(body, body)
    keep = store if body.get("store") is not False else None
    items = body.get("input")
    refers = isinstance(items, list) and any(is_reference(i) for i in items)
    model = body.get("model")
    if not (refers or body.get("previous_response_id") is not None):
        return Turn(body, body, store=keep)
    if not isinstance(model, str) or not model.strip():
        return Turn(body, body, store=keep)  # (the decoder says what the model must be)
    route = await router.resolve(model)
    config = route.upstream
    asked_in = upstreams[config.name].protocol_for(PROTOCOL, route.model)
    target = Target(config.name, asked_in, asked_in == PROTOCOL and not config.is_demo)
    refs, previous = wanted(body)
    found = await store.find([previous] if previous is not None else [], refs)
    done = resolve(body, found, target, store.limits)
    return Turn(done.body, done.decoded, done.notes, keep)


class _Recorder:
    """An exchange's ``send`` that keeps its Responses answer (:meth:`Turn.recording`).

    NOTE: a stream's closing frame is its last, and no frame is split across two sends:
    the last chunk holds it. So a chunk costs one reference kept (no search: searching
    each chunk for the frame's name cost ~1 µs a chunk, ~1 ns a byte of a burst), and
    the last chunk is read once, when the body ends, before that end goes to the client.
    """

    def __init__(
        self, send: Send, turn: Turn, store: Conversations, upstream: str, passthrough: bool
    ) -> None:
        self._send = send
        self._turn = turn
        self._store = store
        self._upstream = upstream
        self._passthrough = passthrough
        # What looks at the next message: True when it may complete the answer (None: done).
        self._watch: Callable[[Message], bool] | None = self._start
        self._whole: list[bytes] = []
        self._last = b""  # a stream's last chunk with anything in it

    def __call__(self, message: Message) -> Awaitable[None]:
        # (no coroutine of its own for a message that completes nothing: most of them)
        watch = self._watch
        if watch is not None and watch(message):
            return self._kept_then_sent(message)
        return self._send(message)

    def _start(self, message: Message) -> bool:
        if message["type"] != "http.response.start" or message["status"] != 200:
            self._watch = None  # (an error is no answer)
            return False
        kind = next((v for k, v in message.get("headers", ()) if k == b"content-type"), b"")
        self._watch = self._chunk if b"event-stream" in bytes(kind) else self._part
        return False

    def _chunk(self, message: Message) -> bool:
        body = message.get("body")
        if body and body[0] != COLON:  # (a keepalive comment is no frame)
            self._last = body
        return not message.get("more_body", False)

    def _part(self, message: Message) -> bool:
        body = message.get("body", b"")
        if body:
            self._whole.append(bytes(body))
        return not message.get("more_body", False)

    async def _kept_then_sent(self, message: Message) -> None:
        if self._watch == self._part:
            self._watch = None
            await self._from_body(b"".join(self._whole))
        else:
            self._watch = None
            await self._from_frames(bytes(self._last))
        await self._send(message)

    async def _from_frames(self, chunk: bytes) -> None:
        for frame in reversed(decode_all(chunk)):
            if frame.data is None or not any(end in frame.raw for end in ENDS):
                continue
            try:
                payload = jsontext.loads(frame.data)
            except ValueError:
                continue
            if isinstance(payload, dict) and payload.get("type") in END_TYPES:
                await self._keep(payload.get("response"))
                return

    async def _from_body(self, raw: bytes) -> None:
        try:
            payload = jsontext.loads(raw)
        except ValueError:
            return
        if isinstance(payload, dict) and payload.get("object") == "response":
            await self._keep(payload)

    async def _keep(self, response: Any) -> None:
        if not isinstance(response, dict):
            return
        rid, output = response.get("id"), response.get("output")
        if not isinstance(rid, str) or not rid or not isinstance(output, list):
            return
        if response.get("status") not in KEPT:
            return
        self._watch = None
        items = [item for item in output if isinstance(item, dict)]
        answer = Answer(rid, self._turn.input_items(), items, self._upstream, self._passthrough)
        try:
            await self._store.keep(answer)
        except Exception:  # (the client's answer goes on whatever happens here)
            log.exception("conversation state: keeping answer %s failed", rid)


def turn_notes(notes: list[Note]) -> list[RequestNote]:
    """Resolution's notes as the flow keeps them: an item left out (what went instead
    says ``nothing: ...``) is dropped, anything else changed."""
    out: list[RequestNote] = []
    for fld, why, instead in notes:
        if instead.startswith("nothing:"):
            out.append(RequestNote(fld, "dropped", f"{why} ({instead[8:].strip()})"))
        else:
            out.append(RequestNote(fld, "changed", why, instead))
    return out


__all__ = ["Turn", "begin_turn", "turn_notes"]
