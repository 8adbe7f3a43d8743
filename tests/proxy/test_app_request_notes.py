"""Nothing dropped silently, through a real proxy (app/streamscope/
proxy/app.py hands the translation's notes to the flow): an Anthropic client's server
tool, ``container`` and document block, sent to an OpenAI Chat upstream, are each named
as dropped in ``GET /admin/flows/{id}``, counted in the flow's summary, left out of what
the upstream got, and still there when the capture is read again after the proxy (and
its store) stopped and another opened the file. A same-protocol route has nothing to say,
and a note that quotes a secret the client sent is masked."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from streamscope.capture.store import FlowStore
from streamscope.redact import Redactor, mask
from tests.proxy.harness import make_config, proxied
from tests.proxy.request_notes_support import BODY, DROPPED, KEY, UPSTREAM_KEY, translating

NOTE_KEYS = {"field", "action", "why", "instead"}


def test_the_flow_lists_each_dropped_field_and_keeps_them(tmp_path: Path) -> None:
    capture = tmp_path / "flows.sqlite3"
    with translating(capture) as setup:
        r = setup.post(BODY)
        assert r.status_code == 200, r.text
        assert b"message_stop" in r.content  # the client got its whole answer
        flow_id = r.headers["x-request-id"]
        view = setup.admin(f"/admin/flows/{flow_id}")
        (sent,) = setup.upstream.requests
        summary = setup.admin(f"/admin/flows/{flow_id}/summary")
    notes = view["request_notes"]
    assert all(set(n) == NOTE_KEYS for n in notes), notes
    dropped = {n["field"]: n for n in notes if n["action"] == "dropped"}
    assert set(DROPPED) <= set(dropped), notes
    for field in DROPPED:
        assert dropped[field]["why"] and dropped[field]["instead"] is None
    assert "web_search" in dropped["tools[0]"]["why"]  # which tool it was
    assert "document" in dropped["messages[0].content[0]"]["why"]
    assert summary["request_changes"] == len(notes)
    # What the notes say is what the upstream got: none of it, the client tool kept.
    upstream_body = sent.json
    assert isinstance(upstream_body, dict) and "container" not in upstream_body
    assert [t["function"]["name"] for t in upstream_body["tools"]] == ["get_weather"]
    assert "Lyon." not in json.dumps(upstream_body)
    # The capture read again: the proxy stopped, its file opened by another store...
    store = FlowStore(capture, Redactor([]))
    try:
        flow = store.get(flow_id)
        assert flow is not None
        assert [n.to_json() for n in flow.info.request_notes] == notes
        listed = store.summary(flow_id)
        assert listed is not None and listed.request_changes == len(notes)
    finally:
        store.close()
    # ... and by a proxy serving from it again.
    with translating(capture) as again:
        assert again.admin(f"/admin/flows/{flow_id}")["request_notes"] == notes


def test_a_same_protocol_route_has_nothing_to_say() -> None:
    # The demo speaks the client's protocol: the body goes on as sent.
    demo = {"name": "demo", "protocol": "demo", "default": True}
    with proxied(make_config([demo])) as running:
        body = {**BODY, "model": "demo-chat"}
        headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
        r = httpx.post(running.url + "/v1/messages", json=body, headers=headers, timeout=30)
        assert r.status_code == 200, r.text
        auth = {"authorization": f"Bearer {KEY}"}
        flow_id = r.headers["x-request-id"]
        view = httpx.get(f"{running.url}/admin/flows/{flow_id}", headers=auth).json()
    assert view["request_notes"] == []


def test_a_note_quoting_a_secret_is_masked(tmp_path: Path) -> None:
    # A client names a server tool with the upstream's key (a mistake, or a probe): the
    # note that says it was dropped quotes the name, and is stored and shown masked.
    body = {**BODY, "tools": [{"type": "web_search_20250305", "name": UPSTREAM_KEY}]}
    capture = tmp_path / "flows.sqlite3"
    with translating(capture) as setup:
        r = setup.post(body)
        assert r.status_code == 200, r.text
        view = setup.admin(f"/admin/flows/{r.headers['x-request-id']}")
    assert UPSTREAM_KEY not in json.dumps(view)
    (note,) = [n for n in view["request_notes"] if n["field"] == "tools[0]"]
    assert mask(UPSTREAM_KEY) in note["why"]
    assert UPSTREAM_KEY.encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir())
