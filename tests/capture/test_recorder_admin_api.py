"""Capture through a real proxy, continued: the upstream request stored as the
upstream received it, the client's query string kept (keys masked), whether a summary's
tokens are estimated, HAR export of a selection, and import of HAR and ``.sse`` files
into the store (``POST /admin/flows/import``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from streamscope.config import AccountConfig
from streamscope.proxy.server import ProxyServer
from tests.capture.test_har import CHAT_SSE, devtools_har, har_problems
from tests.capture.test_recorder import UPSTREAM_KEY, N, _config, _flow, _flows, proxied
from tests.proxy.harness import KEY
from tests.upstream_server import RecordedRequest, Script, fast_stream_script, run_in_thread

PROMPT = 'héllo wörld — 日本語 🙂 "quoted" \\ slash'
HEADERS = {"x-api-key": KEY}


@pytest.fixture
def upstream() -> Iterator[Any]:
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", fast_stream_script(N))
        yield up


def _get(server: ProxyServer, path: str) -> httpx.Response:
    return httpx.get(server.url + path, headers=HEADERS, timeout=10)


def _chat(server: ProxyServer, content: str = "x", query: str = "") -> httpx.Response:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": content}]}
    return httpx.post(
        server.url + "/v1/chat/completions" + query, json=body, headers=HEADERS, timeout=10
    )


def _import(server: ProxyServer, data: bytes, content_type: str, query: str = "") -> httpx.Response:
    headers = {**HEADERS, "content-type": content_type}
    return httpx.post(
        server.url + "/admin/flows/import" + query, content=data, headers=headers, timeout=10
    )


# -- the upstream request as sent ---------------------------------------------------------


def test_the_upstream_request_is_stored_as_the_upstream_received_it(upstream: Any) -> None:
    # An Anthropic client through an OpenAI Chat upstream: the body sent on is the
    # proxy's own serialisation; what is stored must be those bytes, not a re-dump.
    with proxied(_config(upstream.url)) as (server, _):
        r = httpx.post(
            server.url + "/v1/messages",
            json={
                "model": "m",
                "max_tokens": 20,
                "stream": True,
                "messages": [{"role": "user", "content": PROMPT}],
            },
            headers={**HEADERS, "anthropic-version": "2023-06-01"},
        )
        assert r.status_code == 200
        (summary,) = _flows(server)
        flow = _flow(server, summary["id"])
    (received,) = upstream.requests
    assert isinstance(received, RecordedRequest) and "日本語 🙂".encode() in received.body
    sent = flow.upstream_request
    assert sent is not None
    assert sent.body == received.body
    assert sent.url == upstream.url + received.path
    # Every header as it went out (httpx's own included), the upstream key masked.
    stored = {name.lower(): value for name, value in sent.headers}
    assert stored == {**received.headers, "authorization": "Bearer …" + UPSTREAM_KEY[-4:]}
    assert received.headers["authorization"] == f"Bearer {UPSTREAM_KEY}"
    assert {"host", "content-length", "user-agent"} <= set(stored)


def test_a_retried_request_is_stored_as_the_last_attempt_sent_it() -> None:
    # Two accounts: the first is refused (401 moves on), the second answers. The stored
    # request is the one that got the answer, with its own (masked) key.
    second = "sk-upstream-SECOND-9876543210fedcba-yyyy"
    with run_in_thread() as up:
        up.route(
            "POST",
            "/v1/chat/completions",
            lambda req: (
                Script(status=401, body_json={"error": {"message": "bad key"}})
                if UPSTREAM_KEY in req.headers.get("authorization", "")
                else fast_stream_script(N)
            ),
        )
        config = _config(up.url)
        config.upstreams[0].accounts.append(AccountConfig(name="second", api_key=second))
        with proxied(config) as (server, _):
            assert _chat(server, PROMPT).status_code == 200
            (summary,) = _flows(server)
            flow = _flow(server, summary["id"])
        received = up.requests
    assert [r.headers["authorization"][-4:] for r in received] == ["zzzz", "yyyy"]
    assert flow.upstream_request is not None
    assert flow.upstream_request.body == received[-1].body
    stored = {name.lower(): value for name, value in flow.upstream_request.headers}
    assert stored == {**received[-1].headers, "authorization": "Bearer …yyyy"}
    assert [a.account for a in flow.info.attempts] == ["main", "second"]


# -- the client's request line -----------------------------------------------------------


def test_the_query_string_is_kept_with_its_keys_masked(upstream: Any) -> None:
    query = f"?beta=true&key=AIzaSECRET0123456789&access_token=tok-SECRET-abcd&x=1&mine={KEY}"
    with proxied(_config(upstream.url)) as (server, _):
        r = _chat(server, query=query)
        assert r.status_code == 200
        (summary,) = _flows(server)
        flow = _flow(server, summary["id"])
        listed = _get(server, "/admin/flows").text
        har = _get(server, f"/admin/flows/{summary['id']}.har").json()
    expected = f"/v1/chat/completions?beta=true&key=…6789&access_token=…abcd&x=1&mine=…{KEY[-4:]}"
    assert flow.request.url == expected
    assert summary["path"] == expected
    request = har["log"]["entries"][0]["request"]
    assert request["url"].endswith(expected)
    assert {q["name"]: q["value"] for q in request["queryString"]} == {
        "beta": "true",
        "key": "…6789",
        "access_token": "…abcd",
        "x": "1",
        "mine": f"…{KEY[-4:]}",
    }
    for secret in ("AIzaSECRET0123456789", "tok-SECRET-abcd", KEY):
        assert secret not in listed and secret not in json.dumps(har)


def test_a_request_without_a_query_has_its_path_alone(upstream: Any) -> None:
    with proxied(_config(upstream.url)) as (server, _):
        _chat(server)
        (summary,) = _flows(server)
    assert summary["path"] == "/v1/chat/completions"


# -- tokens: counted or estimated ---------------------------------------------------------


def _no_usage_stream() -> Script:
    chunks = [
        b"data: "
        + json.dumps(
            {
                "id": "c",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        ).encode()
        + b"\n\n"
        for delta, finish in [
            ({"role": "assistant", "content": "a "}, None),
            ({"content": "b "}, None),
            ({"content": "c "}, None),
            ({}, "stop"),
        ]
    ]
    return Script(chunks=[*chunks, b"data: [DONE]\n\n"])


def test_the_summary_says_whether_its_tokens_are_estimated(upstream: Any) -> None:
    upstream.route(
        "POST",
        "/v1/chat/completions",
        lambda req: (
            _no_usage_stream()
            if req.json["messages"][0]["content"] == "guess"
            else fast_stream_script(N)
        ),
    )
    with proxied(_config(upstream.url, mode="passthrough")) as (server, _):
        counted = _chat(server, "count").headers["x-request-id"]
        guessed = _chat(server, "guess").headers["x-request-id"]
        _flows(server)
        listed = {f["id"]: f for f in _get(server, "/admin/flows").json()["flows"]}
    # The upstream's usage: counted. No usage anywhere: the deltas, counted by the linter.
    assert listed[counted]["tokens_estimated"] is False and listed[counted]["tokens"]
    assert listed[guessed]["tokens_estimated"] is True and listed[guessed]["tokens"] == 3


# -- HAR export of a selection ------------------------------------------------------------


def test_a_selection_of_flows_exports_as_one_har_log(upstream: Any) -> None:
    with proxied(_config(upstream.url)) as (server, _):
        ids = [_chat(server, f"q{i}").headers["x-request-id"] for i in range(3)]
        _flows(server)
        chosen = _get(server, f"/admin/flows.har?ids={ids[2]},{ids[0]}")
        everything = _get(server, "/admin/flows.har").json()
        newest = _get(server, "/admin/flows.har?limit=1").json()
        missing = _get(server, f"/admin/flows.har?ids={ids[0]},nope")
        single = _get(server, f"/admin/flows/{ids[1]}.har").json()

    def flow_ids(har: Any) -> list[str]:
        return [e["_streamscope"]["flow_id"] for e in har["log"]["entries"]]

    assert chosen.status_code == 200 and chosen.headers["content-type"] == "application/json"
    har = chosen.json()
    assert har_problems(har) == []
    # Client and upstream entries of each flow, in the order asked for.
    assert flow_ids(har) == [ids[2], ids[2], ids[0], ids[0]]
    prompts = [
        json.loads(e["request"]["postData"]["text"])["messages"][0]["content"]
        for e in har["log"]["entries"]
        if e["_streamscope"]["leg"] == "client"
    ]
    assert prompts == ["q2", "q0"]
    assert har_problems(everything) == [] and flow_ids(everything) == [
        i for i in ids for _ in range(2)
    ]  # every flow, oldest first
    assert flow_ids(newest) == [ids[2], ids[2]]
    assert missing.status_code == 404 and "'nope'" in missing.json()["error"]["message"]
    assert flow_ids(single) == [ids[1], ids[1]]


# -- import ---------------------------------------------------------------------------------


def _legs(flow: Any) -> Any:
    return {
        name: [(f.raw, f.t_ns, f.sources) for f in getattr(flow, f"{name}_leg").frames]
        for name in ("upstream", "client")
    }


def test_an_exported_har_imports_back_into_the_store(upstream: Any) -> None:
    with proxied(_config(upstream.url)) as (server, _):
        ids = [_chat(server, PROMPT).headers["x-request-id"] for _ in range(2)]
        _flows(server)
        before = {i: _flow(server, i) for i in ids}
        exported = _get(server, "/admin/flows.har").content
        cleared = httpx.delete(server.url + "/admin/flows", headers=HEADERS).json()
        assert cleared == {"deleted": 2} and _get(server, "/admin/flows").json()["total"] == 0
        r = _import(server, exported, "application/json")
        listed = _get(server, "/admin/flows").json()
        after = {i: _flow(server, i) for i in ids}
        detail = _get(server, f"/admin/flows/{ids[0]}").json()
    assert r.status_code == 201
    assert r.json()["imported"] == 2 and {f["id"] for f in r.json()["flows"]} == set(ids)
    assert listed["total"] == 2 and all(f["imported"] for f in listed["flows"])
    assert {f["id"] for f in listed["flows"]} == set(ids)
    for flow_id in ids:
        old, new = before[flow_id], after[flow_id]
        assert new.info.imported and not old.info.imported
        assert _legs(new) == _legs(old) and new.client_leg.raw() == old.client_leg.raw()
        assert new.upstream_request == old.upstream_request and new.request == old.request
        assert new.to_json() == {**old.to_json(), "imported": True}
    assert detail["imported"] is True
    assert [f["raw_b64"] for f in detail["legs"]["client"]["frames"]] == [
        f["raw_b64"] for f in before[ids[0]].to_json()["legs"]["client"]["frames"]
    ]
    # Its summary is computed as a captured flow's is: status, verdict, tokens.
    summary = next(f for f in listed["flows"] if f["id"] == ids[0])
    assert summary["status"] == 200 and summary["verdict"] is not None
    assert summary["tokens"] == N and summary["tokens_estimated"] is True


def test_importing_a_flow_that_is_still_stored_adds_a_copy(upstream: Any) -> None:
    with proxied(_config(upstream.url)) as (server, _):
        flow_id = _chat(server).headers["x-request-id"]
        _flows(server)
        r = _import(server, _get(server, f"/admin/flows/{flow_id}.har").content, "")
        (copy,) = r.json()["flows"]
        listed = _get(server, "/admin/flows").json()["flows"]
        original, imported = _flow(server, flow_id), _flow(server, copy["id"])
    assert copy["id"] != flow_id and [f["id"] for f in listed] == [copy["id"], flow_id]
    assert [f["imported"] for f in listed] == [True, False]
    assert _legs(imported) == _legs(original) and not original.info.imported


def test_an_sse_file_imports_as_a_flow_of_that_leg(upstream: Any) -> None:
    data = CHAT_SSE.read_bytes()
    with proxied(_config(upstream.url)) as (server, _):
        typed = _import(server, data, "text/event-stream")
        sniffed = _import(server, data, "application/octet-stream")
        listed = _get(server, "/admin/flows").json()["flows"]
        flows = [_flow(server, r.json()["flows"][0]["id"]) for r in (typed, sniffed)]
        exported = _get(server, f"/admin/flows/{flows[0].id}/upstream.sse").content
    assert typed.status_code == sniffed.status_code == 201
    for flow in flows:
        assert flow.info.imported and flow.info.outcome is None
        assert flow.upstream_leg.raw() == flow.client_leg.raw() == data
        assert flow.upstream_leg.protocol == flow.client_protocol == "openai-chat"
    assert exported == data
    assert [f["imported"] for f in listed] == [True, True]
    assert all(f["client_protocol"] == "openai-chat" and f["verdict"] for f in listed)


def test_an_imported_devtools_har_has_its_secrets_masked(upstream: Any) -> None:
    har = devtools_har()
    entry = har["log"]["entries"][0]
    entry["request"]["headers"].append({"name": "Authorization", "value": f"Bearer {KEY}"})
    entry["request"]["url"] += "?api_key=sk-in-the-query-0000-wxyz"
    with proxied(_config(upstream.url)) as (server, _):
        r = _import(server, json.dumps(har).encode(), "application/har+json")
        stored = [_flow(server, f["id"]) for f in r.json()["flows"]]
        listed = _get(server, "/admin/flows").text
    assert r.status_code == 201 and len(stored) == len(har["log"]["entries"])
    first = stored[0]
    assert dict(first.request.headers)["Authorization"] == "Bearer …" + KEY[-4:]
    assert first.request.url.endswith("?api_key=…wxyz")
    text = json.dumps([f.to_json() for f in stored]) + listed
    assert KEY not in text and "sk-in-the-query" not in text


@pytest.mark.parametrize(
    ("data", "content_type", "query", "message"),
    [
        (b"", "text/event-stream", "", "empty"),
        (b"hello, not a stream\n", "text/plain", "", "no SSE data frames"),
        (b"{not json", "application/har+json", "", "not a HAR file"),
        (b'{"log": {}}', "application/json", "", "no log.entries"),
        (b"data: {}\n\n", "text/event-stream", "?protocol=bedrock", "unknown protocol"),
    ],
)
def test_import_refuses_what_it_cannot_read(
    upstream: Any, data: bytes, content_type: str, query: str, message: str
) -> None:
    with proxied(_config(upstream.url)) as (server, _):
        r = _import(server, data, content_type, query)
        total = _get(server, "/admin/flows").json()["total"]
        wrong_method = httpx.put(server.url + "/admin/flows/import", headers=HEADERS)
    assert r.status_code == 400 and message in r.json()["error"]["message"]
    assert total == 0
    assert wrong_method.status_code == 405
