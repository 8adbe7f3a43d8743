"""Every message for the client leaves through :func:`client_send`: headers masked and
the proxy's own added, body bytes masked also when a key is split across two chunks, the
exchange's status and ``answered`` set, and the tap told exactly what was sent."""

from __future__ import annotations

import asyncio
from typing import Any

from streamscope.proxy.exchange_record import Exchange
from streamscope.proxy.outbound import answer_headers, client_send
from streamscope.proxy.tap import NullTap
from streamscope.redact import Redactor

SECRET = "sk-upstream-0123456789abcdefghij"


class _Told(NullTap):
    __slots__ = ("messages",)

    def __init__(self) -> None:
        self.messages: list[Any] = []

    def client_message(self, message: Any) -> None:
        self.messages.append(message)


def _answer(messages: list[dict[str, Any]], origin: str | None) -> tuple[list[Any], Exchange]:
    exchange = Exchange("req-1", "POST", "/v1/chat/completions")
    tap = exchange.tap = _Told()
    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    tracked = client_send(
        send, exchange, Redactor([SECRET]), answer_headers(exchange.request_id, origin)
    )

    async def run() -> None:
        for message in messages:
            await tracked(dict(message))

    asyncio.run(run())
    assert tap.messages == sent  # the tap is told what went out, as it went
    return sent, exchange


def test_every_byte_leaves_masked_and_the_exchange_learns_its_status() -> None:
    half = len(SECRET) // 2
    sent, exchange = _answer(
        [
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"x-echo", SECRET.encode())],
            },
            {
                "type": "http.response.body",
                "body": f"a {SECRET[:half]}".encode(),
                "more_body": True,
            },
            {
                "type": "http.response.body",
                "body": f"{SECRET[half:]} b".encode(),
                "more_body": True,
            },
        ],
        origin=None,
    )
    assert exchange.status == 200 and not exchange.answered
    head = dict(sent[0]["headers"])
    assert SECRET.encode() not in head[b"x-echo"] and head[b"x-echo"].endswith(SECRET[-4:].encode())
    assert head[b"x-request-id"] == b"req-1" and b"access-control-allow-origin" not in head
    body = b"".join(m["body"] for m in sent[1:])
    assert SECRET.encode() not in body
    # (split across chunks, every byte of it is starred: the length stays true)
    assert body == b"a " + b"*" * len(SECRET) + b" b"


def test_the_last_body_message_marks_the_exchange_answered_and_cors_is_added() -> None:
    sent, exchange = _answer(
        [
            {"type": "http.response.start", "status": 201, "headers": []},
            {"type": "http.response.body", "body": b"{}", "more_body": False},
        ],
        origin="https://page.example",
    )
    assert exchange.status == 201 and exchange.answered
    head = dict(sent[0]["headers"])
    assert head[b"access-control-allow-origin"] == b"https://page.example"
    assert head[b"access-control-expose-headers"] == b"x-request-id"
    assert sent[-1]["body"] == b"{}"


def test_a_header_value_masked_once_is_remembered_and_a_key_is_masked_every_time() -> None:
    import streamscope.proxy.outbound as outbound

    start = {
        "type": "http.response.start",
        "status": 200,
        "headers": [(b"content-type", b"text/event-stream"), (b"x-echo", SECRET.encode())],
    }
    heads = [dict(_answer([start], origin=None)[0][0]["headers"]) for _ in range(2)]
    for head in heads:
        assert head[b"content-type"] == b"text/event-stream"
        assert SECRET.encode() not in head[b"x-echo"] and head[b"x-echo"].endswith(b"ghij")
    # (each answer here has its own redactor: what one remembers is its own)
    redactor = Redactor([SECRET])
    masked = outbound._header_masker(redactor)
    assert masked(SECRET.encode()) == outbound._header_masker(redactor)(SECRET.encode())
    assert outbound._masked_values[redactor] == {SECRET.encode(): masked(SECRET.encode())}
    for n in range(outbound.REMEMBERED + 1):  # bounded: forgotten once full
        masked(b"%d" % n)
    assert len(outbound._masked_values[redactor]) <= outbound.REMEMBERED
