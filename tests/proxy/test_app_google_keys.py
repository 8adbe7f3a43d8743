"""Google API keys masked everywhere a user can look, over real sockets: the
real proxy (``streamscope.proxy.app``) with its capture in a SQLite file, a scripted
upstream on its own port, a client sending Google-style.

The client sends the proxy's local key as ``x-goog-api-key`` or ``?key=``, a real
Google key's shape (``AIza…``, never configured anywhere) in the URL and in its prompt,
and another Google credential in an ``x-goog-api-key`` header the proxy does not read;
the upstream echoes the prompt (in a stream, and in a 400 error's message) and answers
with an ``x-goog-api-key`` header of its own. Then everything is read back: each
client's answer, every cell of the capture's SQLite file and its raw bytes, the flow as
the store gives it and the window's flow header line, ``/admin/flows``, each flow's
JSON and HAR export (``request.url`` and ``queryString``), ``/admin/refusals`` and the
log. No key appears in any of them, and each is there in its masked form.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest

from streamscope.capture.flow import Flow
from streamscope.capture.summary import FlowSummary
from streamscope.gui.flow_header import header_text
from tests.capture.test_recorder import _config, proxied
from tests.proxy.harness import KEY
from tests.support import sqlite_cells
from tests.upstream_server import RecordedRequest, Script, fast_stream_script, run_in_thread

GOOGLE = "AIzaSyC4-Gg1e_kEyKeYkeyKEY0123456789xyZ"  # in the URL and the prompt
WRONG = "AIzaSyWRONG-wrongWRONGwrongWRONGwrong_0"  # a refused client's key
OTHER = "goog-credential-the-proxy-never-reads-7777"  # an unread x-goog-api-key
ECHOED = "goog-credential-of-the-upstream-8888"  # the upstream's x-goog-api-key
SECRETS = [GOOGLE, WRONG, OTHER, ECHOED, KEY]


def _upstream(req: RecordedRequest) -> Script:
    prompt = req.json["messages"][0]["content"]
    if prompt.startswith("fail"):  # an upstream that quotes the request in its error
        message = f"invalid request: could not parse {prompt!r}"
        return Script(400, body_json={"error": {"message": message, "type": "invalid"}})
    frames = fast_stream_script(2).chunks
    echo = {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": f"you said {prompt}"}}],
    }
    chunk = b"data: " + json.dumps(echo).encode() + b"\n\n"
    return Script(chunks=[frames[0], chunk, *frames[1:]], headers={"x-goog-api-key": ECHOED})


def _chat(url: str, prompt: str, query: str = "", **headers: str) -> httpx.Response:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": prompt}]}
    return httpx.post(url + "/v1/chat/completions" + query, json=body, headers=headers, timeout=30)


def _leaks(data: str | bytes) -> list[str]:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return [s for s in SECRETS if s in text]


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Serve the requests, then gather everything a user could see, by place."""
    folder = tmp_path_factory.mktemp("capture")
    db = folder / "flows.sqlite3"
    stream = logging.StreamHandler(log := _Log())
    root = logging.getLogger()
    root.addHandler(stream)
    level = root.level
    root.setLevel(logging.DEBUG)
    out: dict[str, Any] = {}
    try:
        with run_in_thread() as up, proxied(_config(up.url), capture_path=db) as (server, _):
            up.route("POST", "/v1/chat/completions", _upstream)
            url, admin = server.url, {"authorization": f"Bearer {KEY}"}
            by_header = _chat(
                url, f"my key is {GOOGLE}", f"?alt=sse&key={GOOGLE}", **{"x-goog-api-key": KEY}
            )
            by_query = _chat(url, "hello", f"?key={KEY}", **{"x-goog-api-key": ""})
            unread = _chat(url, "hi", "", **{"x-api-key": KEY, "x-goog-api-key": OTHER})
            failed = _chat(url, f"fail {GOOGLE}", "", **{"x-goog-api-key": KEY})
            refused = [
                _chat(url, "x", "", **{"x-goog-api-key": WRONG}),
                _chat(url, "x", f"?key={WRONG}"),
            ]
            answers = [by_header, by_query, unread, failed]
            out["client"] = [r.text + str(r.headers) for r in answers + refused]
            out["status"] = [r.status_code for r in answers + refused]
            ids = [r.headers["x-request-id"] for r in answers]
            assert server.app.flows is not None
            server.app.flows.flush()
            out["flows"] = [server.app.flows.get(i) for i in ids]
            get = lambda path: httpx.get(url + path, headers=admin, timeout=10)  # noqa: E731
            out["listed"] = get("/admin/flows").json()
            out["details"] = [get(f"/admin/flows/{i}").text for i in ids]
            out["hars"] = [get(f"/admin/flows/{i}.har").json() for i in ids]
            out["refusals"] = get("/admin/refusals").text
    finally:
        root.removeHandler(stream)
        root.setLevel(level)
    out["log"] = log.getvalue()
    out["cells"] = sqlite_cells(db)
    out["files"] = b"".join(p.read_bytes() for p in folder.iterdir() if p.is_file())
    return out


class _Log:
    """A text sink for a logging handler (io.StringIO without the typing fuss)."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def write(self, text: str) -> None:
        self.parts.append(text)

    def flush(self) -> None:
        pass

    def getvalue(self) -> str:
        return "".join(self.parts)


def test_google_style_clients_are_answered_and_wrong_keys_refused(seen: dict[str, Any]) -> None:
    assert seen["status"] == [200, 200, 200, 400, 401, 401]


def test_no_key_in_any_answer_export_listing_log_or_stored_byte(seen: dict[str, Any]) -> None:
    places = {
        "client answers": "\n".join(seen["client"]),
        "/admin/flows": json.dumps(seen["listed"], ensure_ascii=False),
        "flow JSON": "\n".join(seen["details"]),
        "HAR": json.dumps(seen["hars"], ensure_ascii=False),
        "/admin/refusals": seen["refusals"],
        "log": seen["log"],
        "SQLite cells": seen["cells"],
        "SQLite files": seen["files"],
    }
    assert {place: _leaks(text) for place, text in places.items()} == {p: [] for p in places}
    # The log did record the requests (so there was something to leak).
    assert "POST /v1/chat/completions" in seen["log"]
    assert "refused=wrong-key" in seen["log"]


def test_the_key_query_parameter_is_masked_in_the_flow_its_summary_and_har(
    seen: dict[str, Any],
) -> None:
    by_header, by_query = seen["flows"][:2]
    google, local = f"key=…{GOOGLE[-4:]}", f"key=…{KEY[-4:]}"
    assert by_header.request.url == f"/v1/chat/completions?alt=sse&{google}"
    assert by_query.request.url == f"/v1/chat/completions?{local}"
    paths = {s["path"] for s in seen["listed"]["flows"]}
    assert {by_header.request.url, by_query.request.url} <= paths
    # The window's flow header shows the stored request line.
    line = header_text(by_header, FlowSummary(by_header.id))
    assert line.startswith(f"POST /v1/chat/completions?alt=sse&{google}") and not _leaks(line)
    request = seen["hars"][0]["log"]["entries"][0]["request"]
    assert request["url"].endswith(f"/v1/chat/completions?alt=sse&{google}")
    assert request["queryString"] == [
        {"name": "alt", "value": "sse"},
        {"name": "key", "value": f"…{GOOGLE[-4:]}"},
    ]


def test_x_goog_api_key_headers_are_masked_on_both_sides(seen: dict[str, Any]) -> None:
    def header(headers: list[tuple[str, str]]) -> str:
        return dict((k.lower(), v) for k, v in headers)["x-goog-api-key"]

    by_header: Flow = seen["flows"][0]
    unread: Flow = seen["flows"][2]
    assert header(by_header.request.headers) == f"…{KEY[-4:]}"
    assert header(unread.request.headers) == f"…{OTHER[-4:]}"  # unread, still a credential
    assert header(unread.upstream_leg.headers) == f"…{ECHOED[-4:]}"  # the upstream's own
    har_headers = seen["hars"][2]["log"]["entries"][0]["request"]["headers"]
    assert {"name": "x-goog-api-key", "value": f"…{OTHER[-4:]}"} in har_headers


def test_a_google_key_in_bodies_is_masked_in_place(seen: dict[str, Any]) -> None:
    by_header: Flow = seen["flows"][0]
    failed: Flow = seen["flows"][3]
    same_length = ("*" * 35 + GOOGLE[-4:]).encode()
    assert b"my key is " + same_length in by_header.request.body
    assert b"you said my key is " + same_length in by_header.upstream_leg.raw()
    assert b"you said my key is " + same_length in by_header.client_leg.raw()
    assert same_length in failed.upstream_leg.raw()
    # The client's stream was masked on its way out (the same length); the error the
    # proxy wrote from the upstream's quotes it as every message does (its last four).
    assert "you said my key is " + same_length.decode() in seen["client"][0]
    assert f"could not parse 'fail …{GOOGLE[-4:]}'" in seen["client"][3]
    # The 400's outcome, logged and listed, quotes the key masked to its last four.
    assert f"fail …{GOOGLE[-4:]}" in seen["log"]
    summary = next(s for s in seen["listed"]["flows"] if s["id"] == failed.id)
    assert f"…{GOOGLE[-4:]}" in summary["outcome_detail"]
