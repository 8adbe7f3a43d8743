"""Requests that fail before any stream starts, over real sockets: errors
before the stream, and local auth.

Every failure must reach the client as the envelope of the protocol its endpoint speaks,
with the right HTTP status, ``Content-Type: application/json`` and an ``X-Request-ID``:

    /v1/chat/completions, /v1/responses  {"error": {"message", "type", "code", "param"}}
    /v1/messages                         {"type": "error", "error": {"type", "message"}}
    /api/v1/chat                         {"error": {"type", "message", ["code"], ["param"]}}

Also: the DNS-rebinding Host guard, CORS preflight (no key) versus real requests (key),
and upstream HTTP errors translated into the client's envelope with the upstream's status
and message. The official SDKs are shown once each to raise their typed errors.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from streamscope.config import OLD_KIND
from tests.proxy.harness import Running, make_config, proxied
from tests.upstream_server import (
    RecordedRequest,
    Script,
    UpstreamServer,
    fast_stream_script,
    fast_stream_text,
    run_in_thread,
)

ENDPOINTS = {
    "chat": "/v1/chat/completions",
    "responses": "/v1/responses",
    "messages": "/v1/messages",
    "lmstudio": "/api/v1/chat",
}
CLIENTS = list(ENDPOINTS)
SMALL_LIMIT = 1000
OK_MODEL = "gpt-ok"  # served by the working openai upstream "ok"
HTML_PAGE = b"<!DOCTYPE html>\n<html><body><h1>503 Service Unavailable</h1>nginx</body></html>\n"

# Upstream errors before the stream: (status, upstream error type) per case, and the
# message the upstream puts in its own protocol's body.
UPSTREAM_ERRORS = {
    400: ("invalid_request_error", "upstream says: messages[0] is malformed"),
    429: ("rate_limit_error", "upstream says: slow down, 5 requests per minute"),
    500: ("api_error", "upstream says: internal meltdown"),
}
# Each client protocol is given an upstream of another protocol.
CROSS_UPSTREAM = {
    "chat": "anthropic",
    "responses": "anthropic",
    "messages": "openai",
    "lmstudio": "openai",
}


def body_for(client: str, model: str | None = OK_MODEL, **extra: Any) -> dict[str, Any]:
    """A minimal valid request body for the client protocol."""
    if client in ("chat", "messages"):
        body: dict[str, Any] = {"messages": [{"role": "user", "content": "hi"}]}
        if client == "messages":
            body["max_tokens"] = 16
    else:
        body = {"input": "hi"}
    if model is not None:
        body["model"] = model
    body.update(extra)
    return body


def envelope(r: httpx.Response, client: str, status: int) -> dict[str, Any]:
    """Check that ``r`` is the client protocol's JSON error envelope with ``status``;
    return its inner error object."""
    assert r.status_code == status, r.text
    assert r.headers["content-type"].split(";")[0].strip() == "application/json", r.headers
    assert r.headers.get("x-request-id"), "no X-Request-ID on an error response"
    assert "Traceback" not in r.text
    body = r.json()  # must parse
    if client == "messages":
        assert set(body) == {"type", "error"}, body
        assert body["type"] == "error"
        err = body["error"]
        assert set(err) == {"type", "message"}, err
    elif client in ("chat", "responses"):
        assert set(body) == {"error"}, body
        err = body["error"]
        assert set(err) == {"message", "type", "code", "param"}, err
    else:
        assert set(body) == {"error"}, body
        err = body["error"]
        assert {"type", "message"} <= set(err) <= {"type", "message", "code", "param"}, err
    assert isinstance(err["type"], str) and err["type"]
    assert isinstance(err["message"], str) and err["message"]
    return err


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def upstream_error_body(kind: str, status: int) -> dict[str, Any]:
    etype, message = UPSTREAM_ERRORS[status]
    if kind == "anthropic":
        return {"type": "error", "error": {"type": etype, "message": message}}
    return {"error": {"message": message, "type": etype, "code": None, "param": None}}


@pytest.fixture(scope="module")
def up() -> Iterator[UpstreamServer]:
    with run_in_thread() as server:
        server.route("POST", "/ok/v1/chat/completions", fast_stream_script(2))
        server.route(
            "POST",
            "/html/v1/chat/completions",
            Script(503, headers={"content-type": "text/html"}, chunks=[HTML_PAGE]),
        )
        server.route(
            "POST",
            "/htmlpt/v1/chat/completions",
            Script(503, headers={"content-type": "text/html"}, chunks=[HTML_PAGE]),
        )
        for status in UPSTREAM_ERRORS:
            server.route(
                "POST",
                f"/e-anthropic-{status}/v1/messages",
                Script(status, body_json=upstream_error_body("anthropic", status)),
            )
            server.route(
                "POST",
                f"/e-openai-{status}/v1/chat/completions",
                Script(status, body_json=upstream_error_body("openai", status)),
            )
        yield server


def upstream_tables(up: UpstreamServer) -> list[dict[str, Any]]:
    tables: list[dict[str, Any]] = [
        {
            "name": "ok",
            "protocol": "openai-chat",
            "base_url": up.url + "/ok/v1",
            "models": [OK_MODEL],
            "accounts": [{"api_key": "sk-upstream-ok"}],
        },
        {
            "name": "html",
            "protocol": "openai-chat",
            "base_url": up.url + "/html/v1",
            "models": ["html-model"],
        },
        {
            "name": "htmlpt",
            "protocol": "openai-chat",
            "base_url": up.url + "/htmlpt/v1",
            "models": ["html-pt-model"],
            "mode": "passthrough",
        },
        {
            "name": "dead",
            "protocol": "openai-chat",
            "base_url": f"http://127.0.0.1:{free_port()}/v1",
            "models": ["dead-model"],
        },
    ]
    for kind in ("anthropic", "openai"):
        for status in UPSTREAM_ERRORS:
            base = up.url + f"/e-{kind}-{status}" + ("/v1" if kind == "openai" else "")
            tables.append(
                {
                    "name": f"e-{kind}-{status}",
                    "protocol": OLD_KIND.get(kind, kind),
                    "base_url": base,
                    "models": [f"m-{kind}-{status}"],
                }
            )
    return tables


@pytest.fixture(scope="module")
def proxy(up: UpstreamServer) -> Iterator[Running]:
    """Default body limit (32 MiB); no default upstream, so unknown models are 404."""
    with proxied(make_config(upstream_tables(up))) as running:
        yield running


@pytest.fixture(scope="module")
def small(up: UpstreamServer) -> Iterator[Running]:
    """The same upstreams with ``max_body_bytes = 1000``."""
    with proxied(make_config(upstream_tables(up), max_body_bytes=SMALL_LIMIT)) as running:
        yield running


@pytest.fixture(scope="module")
def http(proxy: Running) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=proxy.url, timeout=20, trust_env=False) as client:
        yield client


def auth(p: Running) -> dict[str, str]:
    return {"authorization": f"Bearer {p.key}"}


def posts_since(up: UpstreamServer, n: int) -> list[RecordedRequest]:
    return [r for r in up.requests[n:] if r.method == "POST"]


# -- malformed bodies ------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("raw", [b"{bad json", b"", b'{"model": "gpt-ok",', b"\xff\xfe\x00"])
def test_malformed_json_is_400(
    http: httpx.Client, proxy: Running, up: UpstreamServer, client: str, raw: bytes
) -> None:
    n = len(up.requests)
    r = http.post(
        ENDPOINTS[client], content=raw, headers={**auth(proxy), "content-type": "application/json"}
    )
    err = envelope(r, client, 400)
    assert "JSON" in err["message"]
    assert err["type"] in ("invalid_request_error", "invalid_request")
    assert posts_since(up, n) == [], "a malformed request reached the upstream"


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("value", [[1, 2], "a string", None, 42])
def test_body_not_an_object_is_400(
    http: httpx.Client, proxy: Running, client: str, value: Any
) -> None:
    r = http.post(
        ENDPOINTS[client],
        content=json.dumps(value).encode(),
        headers={**auth(proxy), "content-type": "application/json"},
    )
    err = envelope(r, client, 400)
    assert "object" in err["message"]


WRONG_TYPES = [
    ("chat", "messages", "hello"),
    ("chat", "max_tokens", "5"),
    ("chat", "temperature", "hot"),
    ("responses", "input", 5),
    ("responses", "max_output_tokens", "5"),
    ("messages", "messages", "hello"),
    ("messages", "max_tokens", "5"),
    ("lmstudio", "input", 5),
    ("lmstudio", "max_output_tokens", "5"),
]


@pytest.mark.parametrize(("client", "field", "value"), WRONG_TYPES)
def test_wrong_types_are_400_naming_the_param(
    http: httpx.Client, proxy: Running, up: UpstreamServer, client: str, field: str, value: Any
) -> None:
    n = len(up.requests)
    r = http.post(ENDPOINTS[client], json=body_for(client, **{field: value}), headers=auth(proxy))
    err = envelope(r, client, 400)
    assert field in err["message"]
    if client != "messages":  # Anthropic's envelope has no param
        assert err["param"] == field
    assert posts_since(up, n) == []


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("model", [None, 7, ["gpt-ok"]], ids=["absent", "int", "list"])
def test_missing_or_mistyped_model_is_400(
    http: httpx.Client, proxy: Running, client: str, model: Any
) -> None:
    body = body_for(client, model=None)
    if model is not None:
        body["model"] = model
    r = http.post(ENDPOINTS[client], json=body, headers=auth(proxy))
    err = envelope(r, client, 400)
    assert "model" in err["message"]
    if client != "messages":
        assert err["param"] == "model"


@pytest.mark.parametrize("client", ["chat", "responses", "messages", "lmstudio"])
def test_empty_model_is_400(http: httpx.Client, proxy: Running, client: str) -> None:
    r = http.post(ENDPOINTS[client], json=body_for(client, model=""), headers=auth(proxy))
    err = envelope(r, client, 400)
    assert "model" in err["message"]
    if client != "messages":
        assert err["param"] == "model"


@pytest.mark.parametrize("client", CLIENTS)
def test_unknown_model_without_default_is_404_model_not_found(
    http: httpx.Client, proxy: Running, client: str
) -> None:
    r = http.post(ENDPOINTS[client], json=body_for(client, "no-such-model"), headers=auth(proxy))
    err = envelope(r, client, 404)
    assert "no-such-model" in err["message"]
    if client == "messages":
        assert err["type"] == "not_found_error"
    else:
        assert err["code"] == "model_not_found"


def test_deeply_nested_json_is_400_not_500(http: httpx.Client, proxy: Running) -> None:
    """A client sending pathological nesting gets a client error, not a 500."""
    depth = 5000
    raw = b'{"model":"gpt-ok","messages":' + b"[" * depth + b"]" * depth + b"}"
    r = http.post(ENDPOINTS["chat"], content=raw, headers=auth(proxy))
    envelope(r, "chat", 400)


@pytest.mark.parametrize("constant", [b"NaN", b"Infinity", b"-Infinity"])
def test_non_json_constants_are_400(
    http: httpx.Client, proxy: Running, up: UpstreamServer, constant: bytes
) -> None:
    n = len(up.requests)
    raw = b'{"model":"gpt-ok","messages":[{"role":"user","content":"hi"}],"temperature":'
    r = http.post(ENDPOINTS["chat"], content=raw + constant + b"}", headers=auth(proxy))
    forwarded = [q.body for q in posts_since(up, n)]
    envelope(r, "chat", 400)
    assert forwarded == []


# -- local auth --------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_missing_key_is_401(http: httpx.Client, up: UpstreamServer, client: str) -> None:
    n = len(up.requests)
    r = http.post(ENDPOINTS[client], json=body_for(client))
    err = envelope(r, client, 401)
    assert err["type"] == "authentication_error" or client == "lmstudio"
    assert "key" in err["message"].lower()
    assert posts_since(up, n) == []


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("style", ["bearer", "x-api-key"])
def test_wrong_key_is_401(
    http: httpx.Client, proxy: Running, up: UpstreamServer, client: str, style: str
) -> None:
    wrong = proxy.key[:-1] + ("x" if proxy.key[-1] != "x" else "y")
    headers = {"authorization": f"Bearer {wrong}"} if style == "bearer" else {"x-api-key": wrong}
    n = len(up.requests)
    r = http.post(ENDPOINTS[client], json=body_for(client), headers=headers)
    err = envelope(r, client, 401)
    assert "key" in err["message"].lower()
    assert wrong not in r.text, "the rejected key is echoed back"
    assert posts_since(up, n) == []


def test_wrong_key_on_models_list_is_401(http: httpx.Client) -> None:
    envelope(http.get("/v1/models", headers={"x-api-key": "sk-nope"}), "chat", 401)


@pytest.mark.parametrize(
    "headers",
    [
        lambda k: {"authorization": f"Bearer {k}"},
        lambda k: {"authorization": f"bearer {k}"},
        lambda k: {"x-api-key": k},
    ],
    ids=["Authorization-Bearer", "authorization-bearer-lowercase", "x-api-key"],
)
def test_right_key_in_either_header_is_accepted(
    http: httpx.Client, proxy: Running, up: UpstreamServer, headers: Any
) -> None:
    n = len(up.requests)
    r = http.post(ENDPOINTS["chat"], json=body_for("chat"), headers=headers(proxy.key))
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["content"] == fast_stream_text(2)
    sent = posts_since(up, n)
    assert [q.path for q in sent] == ["/ok/v1/chat/completions"]
    # The upstream gets its own account key, never the proxy's local key.
    assert sent[0].headers["authorization"] == "Bearer sk-upstream-ok"
    assert proxy.key not in json.dumps(sent[0].headers)


# -- body size limit -----------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENTS)
def test_body_over_limit_with_content_length_is_413(
    small: Running, up: UpstreamServer, client: str
) -> None:
    body = body_for(client, filler="x" * (SMALL_LIMIT * 2))
    n = len(up.requests)
    with httpx.Client(base_url=small.url, timeout=20, trust_env=False) as c:
        r = c.post(ENDPOINTS[client], json=body, headers=auth(small))
    assert "content-length" in r.request.headers
    err = envelope(r, client, 413)
    assert str(SMALL_LIMIT) in err["message"]
    assert posts_since(up, n) == []


@pytest.mark.parametrize("client", CLIENTS)
def test_body_over_limit_chunked_is_413(small: Running, up: UpstreamServer, client: str) -> None:
    raw = json.dumps(body_for(client, filler="x" * (SMALL_LIMIT * 3))).encode()

    def pieces() -> Iterator[bytes]:
        for i in range(0, len(raw), 200):
            yield raw[i : i + 200]

    n = len(up.requests)
    with httpx.Client(base_url=small.url, timeout=20, trust_env=False) as c:
        r = c.post(
            ENDPOINTS[client],
            content=pieces(),
            headers={**auth(small), "content-type": "application/json"},
        )
    assert r.request.headers.get("transfer-encoding") == "chunked"
    assert "content-length" not in r.request.headers
    err = envelope(r, client, 413)
    assert str(SMALL_LIMIT) in err["message"]
    assert posts_since(up, n) == []


def test_body_under_limit_passes(small: Running) -> None:
    with httpx.Client(base_url=small.url, timeout=20, trust_env=False) as c:
        r = c.post(ENDPOINTS["chat"], json=body_for("chat", user="u" * 200), headers=auth(small))
    assert r.status_code == 200, r.text


def test_declared_huge_body_is_refused_without_reading_it(small: Running) -> None:
    """A 1 GB Content-Length is answered 413 at once: the proxy does not wait for (or
    buffer) a body it will refuse."""
    url = httpx.URL(small.url)
    head = (
        f"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:{url.port}\r\n"
        f"x-api-key: {small.key}\r\ncontent-type: application/json\r\n"
        "content-length: 1000000000\r\n\r\n"
    ).encode()
    with socket.create_connection((url.host, url.port), timeout=10) as sock:
        sock.sendall(head + b'{"model":')
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        head_part, _, rest = data.partition(b"\r\n\r\n")
        lines = head_part.decode("latin-1").split("\r\n")
        assert lines[0].startswith("HTTP/1.1 413"), lines[0]
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])
        }
        length = int(headers["content-length"])
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
    assert headers["content-type"] == "application/json"
    body = json.loads(rest[:length])
    assert body["type"] == "error" and body["error"]["type"] == "request_too_large"


# -- Host guard (DNS rebinding) --------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "evil.example.com",
        "evil.example.com:{port}",
        "127.0.0.1.nip.io:{port}",
        "localhost.evil.example:{port}",
    ],
)
@pytest.mark.parametrize("client", CLIENTS)
def test_foreign_host_is_403_even_with_the_key(
    http: httpx.Client, proxy: Running, up: UpstreamServer, host: str, client: str
) -> None:
    port = httpx.URL(proxy.url).port
    n = len(up.requests)
    r = http.post(
        ENDPOINTS[client],
        json=body_for(client),
        headers={**auth(proxy), "host": host.format(port=port)},
    )
    err = envelope(r, client, 403)
    assert "allowed_hosts" in err["message"]
    assert posts_since(up, n) == []


def test_foreign_host_cannot_list_models_or_preflight(http: httpx.Client, proxy: Running) -> None:
    r = http.get("/v1/models", headers={**auth(proxy), "host": "evil.example.com"})
    envelope(r, "chat", 403)
    r = http.options(
        ENDPOINTS["chat"],
        headers={
            "host": "evil.example.com",
            "origin": "http://evil.example.com",
            "access-control-request-method": "POST",
        },
    )
    assert r.status_code == 403
    assert r.json()["error"]["type"] == "permission_error"


@pytest.mark.parametrize(
    "host",
    [
        "localhost:{port}",
        "127.0.0.1:{port}",
        "[::1]:{port}",
        "localhost",
        "LOCALHOST:{port}",
        "app.localhost:{port}",
    ],
)
def test_loopback_hosts_are_accepted(http: httpx.Client, proxy: Running, host: str) -> None:
    port = httpx.URL(proxy.url).port
    r = http.post(
        ENDPOINTS["chat"],
        json=body_for("chat"),
        headers={**auth(proxy), "host": host.format(port=port)},
    )
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["content"] == fast_stream_text(2)


def test_allowed_hosts_admits_that_name(up: UpstreamServer) -> None:
    config = make_config(upstream_tables(up), allowed_hosts=["myhost.lan"])
    with proxied(config) as p, httpx.Client(base_url=p.url, timeout=20, trust_env=False) as c:
        port = httpx.URL(p.url).port
        for host in ("myhost.lan", f"myhost.lan:{port}", f"localhost:{port}"):
            r = c.post(ENDPOINTS["chat"], json=body_for("chat"), headers={**auth(p), "host": host})
            assert r.status_code == 200, (host, r.text)
        r = c.post(
            ENDPOINTS["chat"],
            json=body_for("chat"),
            headers={**auth(p), "host": f"otherhost.lan:{port}"},
        )
        envelope(r, "chat", 403)


def test_allowed_hosts_match_case_insensitively(up: UpstreamServer) -> None:
    """Host names are case-insensitive and browsers send them lower-cased; a user who
    copies ``Johns-MacBook.local`` from ``hostname`` into allowed_hosts must be let in."""
    config = make_config(upstream_tables(up), allowed_hosts=["Johns-MacBook.local"])
    with proxied(config) as p, httpx.Client(base_url=p.url, timeout=20, trust_env=False) as c:
        r = c.post(
            ENDPOINTS["chat"],
            json=body_for("chat"),
            headers={**auth(p), "host": f"johns-macbook.local:{httpx.URL(p.url).port}"},
        )
    assert r.status_code == 200, r.text


# -- CORS ----------------------------------------------------------------------------------

ORIGIN = "http://localhost:5173"


@pytest.mark.parametrize("client", CLIENTS)
def test_preflight_needs_no_key(http: httpx.Client, up: UpstreamServer, client: str) -> None:
    n = len(up.requests)
    r = http.options(
        ENDPOINTS[client],
        headers={
            "origin": ORIGIN,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type, x-api-key, anthropic-version",
        },
    )
    assert r.status_code == 204, r.text
    assert r.headers["access-control-allow-origin"] == ORIGIN
    assert "POST" in r.headers["access-control-allow-methods"]
    allowed = {h.strip().lower() for h in r.headers["access-control-allow-headers"].split(",")}
    assert {"content-type", "x-api-key", "anthropic-version"} <= allowed
    assert r.headers.get("x-request-id")
    assert r.content == b""
    assert len(up.requests) == n


@pytest.mark.parametrize("client", CLIENTS)
def test_cors_request_without_key_is_401_readable_by_the_page(
    http: httpx.Client, client: str
) -> None:
    r = http.post(ENDPOINTS[client], json=body_for(client), headers={"origin": ORIGIN})
    envelope(r, client, 401)
    assert r.headers["access-control-allow-origin"] == ORIGIN


def test_cors_request_with_key_is_served_with_the_header(
    http: httpx.Client, proxy: Running
) -> None:
    r = http.post(
        ENDPOINTS["chat"], json=body_for("chat"), headers={**auth(proxy), "origin": ORIGIN}
    )
    assert r.status_code == 200, r.text
    assert r.headers["access-control-allow-origin"] == ORIGIN
    assert "x-request-id" in r.headers["access-control-expose-headers"].lower()
    assert r.json()["choices"][0]["message"]["content"] == fast_stream_text(2)


def test_options_without_origin_is_not_a_free_pass(http: httpx.Client) -> None:
    """Only a CORS preflight (with Origin) skips the key."""
    r = http.options(ENDPOINTS["chat"])
    envelope(r, "chat", 401)


# -- paths and methods ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "client"),
    [
        ("/nope", "chat"),
        ("/v1/chat", "chat"),
        ("/v1/completions", "chat"),
        ("/v2/messages", "messages"),  # looks like Anthropic's: its envelope
        ("/v1/v1/messages", "messages"),
        ("/v1/v1/chat/completions", "chat"),
        ("/", "chat"),
    ],
)
def test_unknown_path_is_404_envelope(
    http: httpx.Client, proxy: Running, path: str, client: str
) -> None:
    for method in ("GET", "POST"):
        r = http.request(method, path, json={} if method == "POST" else None, headers=auth(proxy))
        err = envelope(r, client, 404)
        assert path in err["message"]


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_wrong_method_on_a_post_endpoint_is_405(
    http: httpx.Client, proxy: Running, client: str, method: str
) -> None:
    r = http.request(method, ENDPOINTS[client], headers=auth(proxy))
    err = envelope(r, client, 405)
    assert method in err["message"]


def test_post_on_models_is_405(http: httpx.Client, proxy: Running) -> None:
    envelope(http.post("/v1/models", json={}, headers=auth(proxy)), "chat", 405)


# -- upstream errors before the stream ---------------------------------------------------------


@pytest.mark.parametrize("status", list(UPSTREAM_ERRORS))
@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("stream", [False, True], ids=["non-stream", "stream"])
def test_upstream_error_status_becomes_the_clients_envelope(
    http: httpx.Client,
    proxy: Running,
    up: UpstreamServer,
    client: str,
    status: int,
    stream: bool,
) -> None:
    kind = CROSS_UPSTREAM[client]
    n = len(up.requests)
    r = http.post(
        ENDPOINTS[client],
        json=body_for(client, f"m-{kind}-{status}", stream=stream),
        headers=auth(proxy),
    )
    err = envelope(r, client, status)
    assert UPSTREAM_ERRORS[status][1] in err["message"]
    sent = posts_since(up, n)
    assert sent and sent[0].path.startswith(f"/e-{kind}-{status}/")


def test_upstream_rate_limit_type_survives_translation(http: httpx.Client, proxy: Running) -> None:
    r = http.post(ENDPOINTS["chat"], json=body_for("chat", "m-anthropic-429"), headers=auth(proxy))
    assert envelope(r, "chat", 429)["type"] == "rate_limit_error"
    r = http.post(
        ENDPOINTS["messages"], json=body_for("messages", "m-openai-429"), headers=auth(proxy)
    )
    assert envelope(r, "messages", 429)["type"] == "rate_limit_error"


@pytest.mark.parametrize("client", CLIENTS)
def test_unreachable_upstream_is_502(http: httpx.Client, proxy: Running, client: str) -> None:
    r = http.post(
        ENDPOINTS[client], json=body_for(client, "dead-model", stream=True), headers=auth(proxy)
    )
    err = envelope(r, client, 502)
    assert "dead" in err["message"]


@pytest.mark.parametrize("client", CLIENTS)
def test_upstream_html_error_page_still_gives_a_json_envelope(
    http: httpx.Client, proxy: Running, client: str
) -> None:
    r = http.post(ENDPOINTS[client], json=body_for(client, "html-model"), headers=auth(proxy))
    envelope(r, client, 503)


def test_passthrough_upstream_html_error_page_still_gives_a_json_envelope(
    http: httpx.Client, proxy: Running
) -> None:
    """Same protocol on both sides, passthrough mode: the upstream's HTML page must not
    reach the client either ("never HTML")."""
    r = http.post(ENDPOINTS["chat"], json=body_for("chat", "html-pt-model"), headers=auth(proxy))
    envelope(r, "chat", 503)


# -- X-Request-ID ----------------------------------------------------------------------------


def test_every_response_carries_a_distinct_request_id(
    http: httpx.Client, proxy: Running, small: Running
) -> None:
    key = auth(proxy)
    responses = [
        http.post(ENDPOINTS["chat"], json=body_for("chat"), headers=key),  # 200 JSON
        http.post(ENDPOINTS["chat"], json=body_for("chat", stream=True), headers=key),  # SSE
        http.get("/v1/models", headers=key),
        http.options(
            "/v1/messages", headers={"origin": ORIGIN, "access-control-request-method": "POST"}
        ),
        http.post(ENDPOINTS["messages"], content=b"{", headers=key),  # 400
        http.post(ENDPOINTS["responses"], json=body_for("responses")),  # 401
        http.post(ENDPOINTS["lmstudio"], json={}, headers={**key, "host": "evil.example"}),
        http.get("/nope", headers=key),  # 404
        http.get(ENDPOINTS["chat"], headers=key),  # 405
        http.post(ENDPOINTS["chat"], json=body_for("chat", "m-anthropic-500"), headers=key),
    ]
    with httpx.Client(base_url=small.url, timeout=20, trust_env=False) as c:
        responses.append(c.post(ENDPOINTS["chat"], content=b"x" * 5000, headers=key))  # 413
    statuses = [r.status_code for r in responses]
    assert statuses == [200, 200, 200, 204, 400, 401, 403, 404, 405, 500, 413]
    assert responses[1].headers["content-type"].startswith("text/event-stream")
    ids = [r.headers.get("x-request-id") for r in responses]
    assert all(ids), ids
    assert len(set(ids)) == len(ids)


# -- the official SDKs raise their typed errors -------------------------------------------------


def test_openai_sdk_raises_typed_errors(proxy: Running) -> None:
    with openai.OpenAI(api_key="sk-not-the-key", base_url=proxy.v1, max_retries=0) as client:
        with pytest.raises(openai.AuthenticationError) as auth_err:
            client.chat.completions.create(
                model=OK_MODEL, messages=[{"role": "user", "content": "hi"}]
            )
    assert auth_err.value.status_code == 401
    assert auth_err.value.code == "invalid_api_key"
    assert "not one of the proxy's local keys" in auth_err.value.message

    with openai.OpenAI(api_key=proxy.key, base_url=proxy.v1, max_retries=0) as client:
        with pytest.raises(openai.NotFoundError) as nf:
            client.responses.create(model="no-such-model", input="hi")
        assert nf.value.code == "model_not_found"
        assert "no-such-model" in nf.value.message
        with pytest.raises(openai.RateLimitError) as rl:
            client.chat.completions.create(
                model="m-anthropic-429", messages=[{"role": "user", "content": "hi"}], stream=True
            )
        assert UPSTREAM_ERRORS[429][1] in rl.value.message
        with pytest.raises(openai.BadRequestError) as br:
            client.chat.completions.create(model=OK_MODEL, messages="hi")  # type: ignore[arg-type]
        assert br.value.param == "messages"


def test_anthropic_sdk_raises_typed_errors(proxy: Running) -> None:
    with anthropic.Anthropic(api_key=proxy.key, base_url=proxy.url, max_retries=0) as client:
        with pytest.raises(anthropic.NotFoundError) as nf:
            client.messages.create(
                model="no-such-model", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
            )
        assert nf.value.status_code == 404
        assert "no-such-model" in nf.value.message
        assert nf.value.body["error"]["type"] == "not_found_error"  # type: ignore[index]
        with pytest.raises(anthropic.InternalServerError) as ise:
            client.messages.create(
                model="m-openai-500", max_tokens=16, messages=[{"role": "user", "content": "hi"}]
            )
        assert ise.value.status_code == 500
        assert UPSTREAM_ERRORS[500][1] in ise.value.message
    with anthropic.Anthropic(api_key="sk-ant-wrong", base_url=proxy.url, max_retries=0) as bad:
        with pytest.raises(anthropic.AuthenticationError) as ae:
            bad.messages.create(
                model=OK_MODEL, max_tokens=16, messages=[{"role": "user", "content": "hi"}]
            )
    assert "not one of the proxy's local keys" in ae.value.message
