"""Committing to an upstream's answer (proxy/commit; its loop: proxy/attempts) when it
answers in a content-encoding the proxy cannot decode (it asked for
identity): the client gets a 502 ``upstream_unreadable`` naming the encoding, no other
account is tried and none is blamed (it is the server's doing, not the key's); a
rejection whose body is unreadable is still classified by its status."""

from __future__ import annotations

import gzip

from tests.proxy.pool_support import (
    account_states,
    admin_pool,
    chat,
    error_of,
    order,
    pool_proxy,
)
from tests.upstream_server import Script

BR = {"content-type": "text/event-stream", "content-encoding": "br"}


def _brotli_claimed(_req: object) -> Script:
    return Script(headers=BR, chunks=[gzip.compress(b"data: {}\n\n")])  # (not br at all)


def test_an_unreadable_stream_is_the_servers_fault_not_the_accounts() -> None:
    behaviour = {"a": _brotli_claimed, "b": _brotli_claimed}
    with pool_proxy(behaviour, "ab") as (running, up):
        for stream in (True, False):
            answer = chat(running, stream=stream)
            assert answer.status_code == 502
            error = error_of(answer)
            assert error["code"] == "upstream_unreadable"
            assert "content-encoding br" in error["message"]
        assert len(order(up)) == 2  # one try per request: another key would fare the same
        states = account_states(running)
        assert all(s["failures"] == {} and s["status"] == "active" for s in states.values())
        attempts = admin_pool(running)["attempts"]
        assert [(a["failure_class"], a["action"]) for a in attempts] == [
            ("unreadable", "return")
        ] * 2


def test_an_unreadable_rejection_is_classified_by_its_status() -> None:
    limited = Script(
        429,
        headers={"content-type": "application/json", "content-encoding": "br", "retry-after": "60"},
        chunks=[b"\x8b\x00not-brotli"],
    )
    behaviour = {"a": limited}
    with pool_proxy(behaviour, "ab") as (running, up):
        answer = chat(running)
        assert answer.status_code == 200  # a's 429 cooled a; b answered
        assert order(up) == ["a", "b"]
        a = account_states(running)["a"]
        assert a["status"] == "cooling"
        assert "content-encoding br" in a["last_error"]
