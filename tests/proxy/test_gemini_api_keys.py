"""No Gemini key leaves unmasked from Gemini's own endpoints, over real sockets.

A client calls the proxy's Gemini endpoints with its key as ``?key=`` (the way Google's
REST examples do) and as ``x-goog-api-key``: the SSE stream, the JSON-array stream, the
whole answer under ``/v1``, countTokens, the models list, and a refused wrong key. Its
prompt quotes a Google key, which the demo echoes back. The proxy (the front) asks a
second proxy serving the demo as its Gemini upstream, whose account key is Google-shaped.
Then everything both proxies show is read back: the client's answers, ``/admin/flows``,
each flow's JSON, HAR and ``.sse`` exports of both legs, the all-flows HAR,
``/admin/refusals``, the log, and every cell and byte of both capture files. No key is in
any of them, and the URL keeps its masked ``key=``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.proxy.demo_support import FAST
from tests.proxy.harness import KEY, make_config, proxied
from tests.support import sqlite_cells

PROMPT_KEY = "AIzaSyD7-Pr0mpt_kEyKeYkeyKEY012345678Ab"  # (39 characters: a Google key)
UPSTREAM_KEY = "AIzaSyE9-Upstr3am_KeYkeyKEY0123456789Cd"  # the front's account at the back
WRONG = "AIzaSyF1-Wr0ng_wrongWRONGwrongWRONG_012"  # a refused client's key
SECRETS = [KEY, PROMPT_KEY, UPSTREAM_KEY, WRONG]
BODY = {"contents": [{"role": "user", "parts": [{"text": f"my key is {PROMPT_KEY}"}]}]}
MODELS = "/v1beta/models/demo-chat"
# (method, path and query, the key header) of each call the client makes
CALLS = [
    ("POST", f"{MODELS}:streamGenerateContent?alt=sse&key={KEY}", None),
    ("POST", f"{MODELS}:streamGenerateContent?key={KEY}", None),  # the JSON array
    ("POST", f"/v1/models/demo-chat:generateContent?key={KEY}", None),
    ("POST", f"{MODELS}:streamGenerateContent?alt=sse", KEY),
    ("POST", f"{MODELS}:countTokens?key={KEY}", None),
    ("GET", f"/v1beta/models?key={KEY}", None),
    ("POST", f"{MODELS}:streamGenerateContent?key={WRONG}", None),
]


def _leaks(text: str | bytes) -> list[str]:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return [s for s in SECRETS if s in text]


class _Log(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def _shown(running_url: str) -> dict[str, Any]:
    """Everything the proxy at ``running_url`` shows of its flows, by place."""
    out: dict[str, Any] = {}
    with httpx.Client(base_url=running_url, headers={"authorization": f"Bearer {KEY}"}) as http:
        listed = http.get("/admin/flows").raise_for_status().json()
        out["/admin/flows"] = json.dumps(listed)
        ids = [f["id"] for f in listed["flows"]]
        out["flows"] = [http.get(f"/admin/flows/{i}").raise_for_status().json() for i in ids]
        out["flow JSON"] = json.dumps(out["flows"])
        out["HAR"] = "".join(http.get(f"/admin/flows/{i}.har").text for i in ids)
        out["all-flows HAR"] = http.get("/admin/flows.har").text
        out[".sse"] = b"".join(
            http.get(f"/admin/flows/{i}/{leg}.sse").content
            for i in ids
            for leg in ("client", "upstream")
        )
        out["/admin/refusals"] = http.get("/admin/refusals").text
    return out


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("captures")
    back_db, front_db = folder / "back.sqlite", folder / "front.sqlite"
    log = _Log()
    root = logging.getLogger()
    level = root.level
    root.addHandler(log)
    root.setLevel(logging.DEBUG)
    out: dict[str, Any] = {}
    try:
        demo = {"name": "demo", "protocol": "demo", "default": True, "demo": FAST}
        back_config = make_config([demo], api_keys=[KEY, UPSTREAM_KEY])
        with proxied(back_config, capture_path=back_db) as back:
            gem = {"name": "gem", "protocol": "gemini", "base_url": back.url, "default": True}
            gem["accounts"] = [{"api_key": UPSTREAM_KEY}]
            with proxied(make_config([gem]), capture_path=front_db) as front:
                answers = []
                for method, path, key in CALLS:
                    headers = {"x-goog-api-key": key} if key else {}
                    body = None if method == "GET" else json.dumps(BODY)
                    answers.append(
                        httpx.request(
                            method, front.url + path, content=body, headers=headers, timeout=30
                        )
                    )
                out["status"] = [a.status_code for a in answers]
                out["answers"] = [a.text for a in answers]
                out["client answers"] = "\n".join(a.text + str(a.headers) for a in answers)
                for running in (front, back):
                    assert running.server.app.flows is not None
                    running.server.app.flows.flush()
                out["front"], out["back"] = _shown(front.url), _shown(back.url)
    finally:
        root.removeHandler(log)
        root.setLevel(level)
    out["log"] = "\n".join(log.lines)
    out["SQLite cells"] = sqlite_cells(front_db) + sqlite_cells(back_db)
    out["SQLite files"] = b"".join(p.read_bytes() for p in folder.iterdir() if p.is_file())
    yield out


def test_the_calls_are_answered_and_the_wrong_key_refused(seen: dict[str, Any]) -> None:
    assert seen["status"] == [200, 200, 200, 200, 200, 200, 401]
    array = json.loads(seen["answers"][1])
    text = "".join(p.get("text", "") for a in array for p in a["candidates"][0]["content"]["parts"])
    # echoed, masked in place (the same length: the answer's sizes stay true)
    assert text.startswith(f'You said: "my key is {"*" * 35}{PROMPT_KEY[-4:]}".')


def test_no_key_anywhere_a_user_can_look(seen: dict[str, Any]) -> None:
    places = {"client answers": seen["client answers"], "log": seen["log"]}
    places |= {"SQLite cells": seen["SQLite cells"], "SQLite files": seen["SQLite files"]}
    for side in ("front", "back"):
        places |= {f"{side} {k}": v for k, v in seen[side].items() if k != "flows"}
    assert {p: _leaks(text) for p, text in places.items()} == {p: [] for p in places}
    # There was something to leak: the log has the calls, the exports the streams.
    assert ":streamGenerateContent" in seen["log"] and "refused=wrong-key" in seen["log"]
    assert b"You said: " in seen["front"][".sse"] and b"You said: " in seen["back"][".sse"]


def test_the_key_query_stays_in_the_url_masked(seen: dict[str, Any]) -> None:
    urls = sorted(f["request"]["url"] for f in seen["front"]["flows"])
    masked = f"key=…{KEY[-4:]}"
    assert urls == sorted(
        [
            f"{MODELS}:streamGenerateContent?alt=sse&{masked}",
            f"{MODELS}:streamGenerateContent?{masked}",
            f"/v1/models/demo-chat:generateContent?{masked}",
            f"{MODELS}:streamGenerateContent?alt=sse",
        ]
    )
    # The upstream was asked with its key in Google's header alone, masked in the flow.
    for flow in seen["front"]["flows"]:
        up = flow["upstream_request"]
        assert "key=" not in up["url"]
        headers = {k.lower(): v for k, v in up["headers"]}
        assert headers["x-goog-api-key"] == f"…{UPSTREAM_KEY[-4:]}"
