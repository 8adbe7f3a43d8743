"""The capture store's summaries (capture/store.py): what a flow list needs without
reading the flow — the request line and which rule fired on which account."""

from __future__ import annotations

from streamscope.capture.info import FlowInfo
from streamscope.capture.recorder import FlowRecorder
from streamscope.capture.store import FlowStore
from streamscope.pool.state import Attempt
from streamscope.redact import Redactor


def test_a_summary_names_the_request_and_its_attempts() -> None:
    store = FlowStore(None, Redactor([]))
    try:
        rec = FlowRecorder("f1", "openai-chat", 1 << 20)
        rec.request("POST", "/v1/chat/completions", [], b'{"model":"m"}')
        rec.client_message({"type": "http.response.start", "status": 200, "headers": []})
        rec.client_message({"type": "http.response.body", "body": b"{}"})
        rec.done()
        attempts = [
            Attempt("f1", "demo", "exhausted", "exhausted", "disable", 429, 1.0, "quota"),
            Attempt("f1", "demo", "healthy", "ok", "use", 200, 2.0),
        ]
        store.submit(rec, FlowInfo(model="m", attempts=attempts))
        store.flush()
        summary = store.summary("f1")
        assert summary is not None
        assert (summary.method, summary.path) == ("POST", "/v1/chat/completions")
        assert summary.attempts == tuple(attempts)  # typed, as the proxy recorded them
        flow = store.get("f1")
        assert flow is not None and flow.info.attempts == attempts
    finally:
        store.close()


def test_the_proxys_store_keeps_2000_flows_and_500_mib_by_default() -> None:
    from streamscope.config import Config
    from streamscope.proxy.app import ProxyApp

    app = ProxyApp(Config())
    try:
        assert app.flows is not None
        assert (app.flows.max_flows, app.flows.max_bytes) == (2000, 500 * 1024 * 1024)
    finally:
        assert app.flows is not None
        app.flows.close()


def test_a_flow_from_a_file_is_stored_as_it_reads() -> None:
    # from_flow -> the store -> to_flow: every frame's bytes, time and first source,
    # including a client frame of the proxy's own (no source), several client frames from
    # one upstream frame, and a link that goes back (not representable: dropped).
    from tests.capture.test_har import all_flows, translated_flow

    flow = translated_flow()
    frames = flow.client_leg.frames
    frames[3].sources = (1,)  # after frames[2] from upstream frame 1 too
    frames[5].sources = (0,)  # back before a source already passed
    store = FlowStore(None, Redactor([]))
    try:
        summaries = store.add([flow, *all_flows()[1:]])
        assert [s.id for s in summaries] == ["f-1", "f-2", "f-3", "f-4"]
        assert all(s.imported for s in summaries)
        back = store.get("f-1")
    finally:
        store.close()
    assert back is not None and back.info.imported
    assert [(f.raw, f.t_ns) for f in back.client_leg.frames] == [(f.raw, f.t_ns) for f in frames]
    expected = [f.sources[:1] for f in frames]
    expected[5] = ()
    assert [f.sources for f in back.client_leg.frames] == expected
    assert [(f.raw, f.t_ns) for f in back.upstream_leg.frames] == [
        (f.raw, f.t_ns) for f in flow.upstream_leg.frames
    ]
    whole = flow.to_json()
    whole["legs"]["client"]["frames"][5]["sources"] = []
    assert back.to_json() == {**whole, "imported": True}


def test_a_stored_flow_from_a_file_has_its_secrets_masked() -> None:
    from tests.capture.test_har import translated_flow

    secret = "sk-planted-in-a-file-0123456789-qrst"
    flow = translated_flow()
    flow.request.url = f"/v1/messages?key={secret}&x=1"
    flow.request.headers.append(("Authorization", f"Bearer {secret}"))
    flow.client_leg.frames[1].raw = flow.client_leg.frames[1].raw.replace(
        b"message", secret.encode(), 1
    )
    store = FlowStore(None, Redactor([secret]))
    try:
        (summary,) = store.add([flow])
        back = store.get(summary.id)
    finally:
        store.close()
    assert back is not None
    assert back.request.url == "/v1/messages?key=…qrst&x=1"
    assert dict(back.request.headers)["Authorization"] == "Bearer …qrst"
    assert secret.encode() not in back.client_leg.raw()
    assert len(back.client_leg.raw()) == len(flow.client_leg.raw())  # masked in place
