"""The proxy's hooks into the conversation state: which requests are resolved (and routed
to learn their upstream), and which answers are kept from the bytes the client gets — a
stream's closing frame or a whole body, never an error, a failed answer or a request
with ``store: false`` — with the client's bytes passed on unchanged."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from streamscope.config import UpstreamConfig
from streamscope.conversation.answers import MIB, Limits
from streamscope.conversation.store import Conversations
from streamscope.conversation.turn import begin_turn
from streamscope.wire import encode_frame, jsontext

LIMITS = Limits(100, 3600, MIB)
USER = {"role": "user", "content": "hi"}


@dataclass(frozen=True)
class Route:
    upstream: UpstreamConfig
    model: str


class Router:
    def __init__(self, upstream: UpstreamConfig) -> None:
        self.upstream = upstream
        self.asked: list[str] = []

    async def resolve(self, model: str) -> Route:
        self.asked.append(model)
        return Route(self.upstream, model.split("/")[-1])


class Speaks:
    def __init__(self, protocol: str | None) -> None:
        self.protocol = protocol

    def protocol_for(self, client_protocol: str, model: str) -> str:
        return self.protocol or client_protocol  # (None: the demo's way)


def routed(protocol: str, name: str = "up", **kw: Any) -> tuple[Router, dict[str, Speaks]]:
    if protocol == "demo":
        config = UpstreamConfig(name=name, protocol="demo")
        return Router(config), {name: Speaks(None)}
    config = UpstreamConfig(name=name, protocol=protocol, base_url="http://127.0.0.1:9", **kw)
    return Router(config), {name: Speaks(protocol)}


def response(rid: str, status: str = "completed") -> dict[str, Any]:
    item = {"id": f"msg_{rid}", "type": "message", "role": "assistant", "content": []}
    return {"id": rid, "object": "response", "status": status, "output": [item]}


class Client:
    """The messages the client was sent."""

    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def __call__(self, message: Any) -> None:
        self.messages.append(message)


def start(status: int = 200, kind: bytes = b"text/event-stream") -> dict[str, Any]:
    return {"type": "http.response.start", "status": status, "headers": [(b"content-type", kind)]}


def chunk(data: bytes, more: bool = True) -> dict[str, Any]:
    return {"type": "http.response.body", "body": data, "more_body": more}


async def test_other_protocols_and_plain_requests_are_not_routed_twice() -> None:
    store = Conversations(LIMITS, bytes)
    router, upstreams = routed("anthropic")
    chat = {"model": "m", "messages": [], "previous_response_id": "x"}
    turn = await begin_turn(store, "openai-chat", chat, router, upstreams)
    assert turn.body is chat and turn.decoded is chat and turn.store is None
    plain = {"model": "m", "input": [USER]}
    turn = await begin_turn(store, "responses", plain, router, upstreams)
    assert turn.body is plain and turn.store is store and router.asked == []
    odd = await begin_turn(store, "responses", ["not", "an", "object"], router, upstreams)
    assert odd.store is None
    off = await begin_turn(store, "responses", {**plain, "store": False}, router, upstreams)
    assert off.store is None  # nothing kept, as the API keeps nothing


async def test_a_reference_is_routed_and_resolved_for_its_upstream() -> None:
    store = Conversations(LIMITS, bytes)
    client = Client()
    router, upstreams = routed("anthropic", "ant")
    first = await begin_turn(
        store, "responses", {"model": "ant/m", "input": "hi"}, router, upstreams
    )
    send = first.recording(client, "ant", passthrough=False)
    await send(start(200, b"application/json"))
    await send(chunk(jsontext.dumps(response("resp_1")), more=False))
    again = {"model": "ant/m", "input": [{"type": "item_reference", "id": "msg_resp_1"}, USER]}
    turn = await begin_turn(store, "responses", again, router, upstreams)
    assert router.asked == ["ant/m"]
    assert turn.decoded["input"] == [response("resp_1")["output"][0], USER]
    assert turn.notes and turn.notes[0][0] == "input[0]"
    chained = {"model": "ant/m", "input": "and?", "previous_response_id": "resp_1"}
    turn = await begin_turn(store, "responses", chained, router, upstreams)
    assert turn.decoded["input"] == [
        {"role": "user", "content": "hi"},
        response("resp_1")["output"][0],
        {"role": "user", "content": "and?"},
    ]


@pytest.mark.parametrize(
    ("protocol", "mode", "kept"),
    [("responses", "passthrough", True), ("responses", "repair", False), ("demo", "repair", False)],
)
async def test_only_a_responses_upstream_with_its_own_ids_gets_them_back(
    protocol: str, mode: str, kept: bool
) -> None:
    store = Conversations(LIMITS, bytes)
    router, upstreams = (
        routed(protocol, "r", mode=mode) if protocol != "demo" else routed("demo", "r")
    )
    first = await begin_turn(store, "responses", {"model": "m", "input": "hi"}, router, upstreams)
    send = first.recording(Client(), "r", passthrough=mode == "passthrough")
    await send(start(200, b"application/json"))
    await send(chunk(jsontext.dumps(response("resp_1")), more=False))
    again = {"model": "m", "input": [{"type": "item_reference", "id": "msg_resp_1"}]}
    turn = await begin_turn(store, "responses", again, router, upstreams)
    assert (turn.body == again) is kept


async def test_a_streams_closing_frame_is_kept_and_every_byte_passes_unchanged() -> None:
    store = Conversations(LIMITS, bytes)
    router, upstreams = routed("anthropic")
    turn = await begin_turn(store, "responses", {"model": "m", "input": [USER]}, router, upstreams)
    client = Client()
    send = turn.recording(client, "up", passthrough=False)
    talk = {"type": "response.output_text.delta", "delta": 'it says "response.completed"'}
    frames = [
        start(),
        chunk(encode_frame(talk, talk["type"])),  # the name in a delta: read, not taken
        chunk(b": keepalive\n\n"),
        chunk(
            encode_frame({"type": "response.output_item.done"}, "response.output_item.done")
            + encode_frame({"type": "response.completed", "response": response("resp_s")})
        ),  # a burst: several frames in one send, the last one without an event line
        chunk(b"", more=False),
    ]
    for message in frames:
        await send(message)
    assert client.messages == frames
    found = await store.find(["resp_s"], ["msg_resp_s"])
    assert found.answers["resp_s"].input == [USER]
    assert found.answers["resp_s"].upstream == "up"
    assert found.items["msg_resp_s"].passthrough is False


@pytest.mark.parametrize(
    ("head", "body", "kept"),
    [
        (start(200, b"application/json"), response("r", "incomplete"), True),
        (start(200, b"application/json"), response("r", "failed"), False),
        (start(400, b"application/json"), response("r"), False),
        (start(200, b"application/json"), {"error": {"message": "no"}}, False),
        (start(), {"type": "response.failed", "response": response("r", "failed")}, False),
    ],
    ids=["incomplete", "failed", "an-error-status", "not-a-response", "failed-stream"],
)
async def test_what_is_kept(head: Any, body: Any, kept: bool) -> None:
    store = Conversations(LIMITS, bytes)
    router, upstreams = routed("anthropic")
    turn = await begin_turn(store, "responses", {"model": "m", "input": "q"}, router, upstreams)
    send = turn.recording(Client(), "up", passthrough=True)
    await send(head)
    data = encode_frame(body, body.get("type")) if b"event" in head["headers"][0][1] else None
    await send(chunk(data if data is not None else jsontext.dumps(body), more=False))
    assert bool((await store.find(["r"], [])).answers) is kept


async def test_a_whole_body_in_several_chunks_is_kept() -> None:
    store = Conversations(LIMITS, bytes)
    router, upstreams = routed("anthropic")
    turn = await begin_turn(store, "responses", {"model": "m", "input": "q"}, router, upstreams)
    send = turn.recording(Client(), "up", passthrough=True)
    raw = jsontext.dumps(response("resp_w"))
    await send(start(200, b"application/json"))
    await send(chunk(raw[:10]))
    await send(chunk(raw[10:], more=False))
    assert (await store.find(["resp_w"], [])).answers["resp_w"].passthrough is True


async def test_the_answer_is_kept_before_the_client_sees_its_end() -> None:
    store = Conversations(LIMITS, bytes)
    router, upstreams = routed("anthropic")
    turn = await begin_turn(store, "responses", {"model": "m", "input": "q"}, router, upstreams)
    seen: list[bool] = []

    async def client(message: Any) -> None:
        seen.append(bool((await store.find(["resp_e"], [])).answers))

    send = turn.recording(client, "up", passthrough=True)
    closing = {"response": response("resp_e"), "type": "response.completed"}  # type last
    await send(start())
    await send(chunk(encode_frame({"type": "response.created"}) + encode_frame(closing)))
    await send(chunk(b": keepalive\n\n"))
    await send(chunk(b"", more=False))
    assert seen == [False, False, False, True]
